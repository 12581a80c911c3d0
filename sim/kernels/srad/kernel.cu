// SRAD, one diffusion step (after Rodinia's srad, its two kernels fused): each pixel's
// diffusion coefficient comes from the instantaneous coefficient of variation
//   q = sqrt((G2 / 2 - L^2 / 16) / (1 + L / 4)^2),
// G2 = |grad J|^2 / J^2 and L = laplacian(J) / J over the four neighbours (clamped at the
// border), as c(q) = exp(-(q^2 - q0^2) / (q0^2 (1 + q0^2))) capped at 1 (Yu and Acton's
// exponential form; Rodinia clamps c to [0, 1], and an exponential is never negative); the
// update J + lambda / 4 * (cN dN + cS dS + cW dW + cE dE) takes the
// south and east coefficients of the neighbours, recomputed here instead of a second
// launch. Everything but the exponential is correctly rounded (intrinsics: no contraction).
// The exponential is __expf (ex2.approx of x log2(e)): expf compiles to a sequence with
// fma.rm.f32, a rounding mode gpurf's PTX subset does not take yet.
__device__ float coefficient(const float *__restrict__ j, int r, int c, int rows, int cols,
                             float q0sqr)
{
    float jc = j[r * cols + c];
    float dn = __fsub_rn(j[max(r - 1, 0) * cols + c], jc);
    float ds = __fsub_rn(j[min(r + 1, rows - 1) * cols + c], jc);
    float dw = __fsub_rn(j[r * cols + max(c - 1, 0)], jc);
    float de = __fsub_rn(j[r * cols + min(c + 1, cols - 1)], jc);
    float g2 = __fdiv_rn(__fadd_rn(__fadd_rn(__fmul_rn(dn, dn), __fmul_rn(ds, ds)),
                                   __fadd_rn(__fmul_rn(dw, dw), __fmul_rn(de, de))),
                         __fmul_rn(jc, jc));
    float l = __fdiv_rn(__fadd_rn(__fadd_rn(dn, ds), __fadd_rn(dw, de)), jc);
    float num = __fsub_rn(__fmul_rn(0.5f, g2), __fmul_rn(0.0625f, __fmul_rn(l, l)));
    float den = __fadd_rn(1.0f, __fmul_rn(0.25f, l));
    float q = sqrtf(fmaxf(__fdiv_rn(num, __fmul_rn(den, den)), 0.0f));
    float x = __fdiv_rn(__fsub_rn(__fmul_rn(q, q), q0sqr),
                        __fmul_rn(q0sqr, __fadd_rn(1.0f, q0sqr)));
    return fminf(__expf(-x), 1.0f);
}

extern "C" __global__ void srad(float *__restrict__ out, const float *__restrict__ j, int rows,
                                int cols, float q0sqr, float lambda)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= rows || c >= cols)
        return;
    int south = min(r + 1, rows - 1), east = min(c + 1, cols - 1);
    float jc = j[r * cols + c];
    float dn = __fsub_rn(j[max(r - 1, 0) * cols + c], jc);
    float ds = __fsub_rn(j[south * cols + c], jc);
    float dw = __fsub_rn(j[r * cols + max(c - 1, 0)], jc);
    float de = __fsub_rn(j[r * cols + east], jc);
    float here = coefficient(j, r, c, rows, cols, q0sqr);
    float cs = coefficient(j, south, c, rows, cols, q0sqr);
    float ce = coefficient(j, r, east, rows, cols, q0sqr);
    float d = __fadd_rn(__fadd_rn(__fmul_rn(here, dn), __fmul_rn(cs, ds)),
                        __fadd_rn(__fmul_rn(here, dw), __fmul_rn(ce, de)));
    out[r * cols + c] = __fadd_rn(jc, __fmul_rn(__fmul_rn(0.25f, lambda), d));
}
