// A register-bank-bound loop for the RBA scheduler (sub-core paper Section IV).
//
// Each thread runs four independent FMA chains whose multiplicands are loop-invariant
// registers, so every loop instruction reads three distinct registers and a warp can issue
// its four FMAs back to back: the operand collector's two banks per sub-core, not the
// dependences, limit the issue rate. Which registers share a bank differs between warps
// (bank = (register + warp slot) mod banks), the case RBA's bank-aware scores exploit.
extern "C" __global__ void bankconflict(float *__restrict__ out, const float *__restrict__ in,
                                        int n, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = in[i];
    float p = x * 0.5f, q = x * 0.25f, r = x + 0.5f, s = x - 0.5f;
    float t = x * 0.75f, u = x + 0.25f, v = x - 0.25f, w = x * 0.125f;
    float a = x, b = x + 1.0f, c = x + 2.0f, d = x + 3.0f;
    for (int k = 0; k < iters; k++) {
        a = fmaf(p, q, a);
        b = fmaf(r, s, b);
        c = fmaf(t, u, c);
        d = fmaf(v, w, d);
    }
    out[i] = (a + b) + (c + d);
}
