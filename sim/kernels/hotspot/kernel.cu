// Hotspot-like 2D stencil (after Rodinia's hotspot): one explicit time step of
//   t' = t + cap * (power + (n + s - 2t) * ry + (e + w - 2t) * rx + (amb - t) * rz)
// on a rows x cols grid, neighbours clamped at the border. The intrinsics fix the
// rounding order (no contraction) so numpy reproduces every bit.
extern "C" __global__ void hotspot(float *__restrict__ out, const float *__restrict__ temp,
                                   const float *__restrict__ power, int rows, int cols,
                                   float cap, float rx, float ry, float rz, float amb)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= rows || c >= cols)
        return;
    int i = r * cols + c;
    float t = temp[i];
    float n = r > 0 ? temp[i - cols] : t;
    float s = r < rows - 1 ? temp[i + cols] : t;
    float w = c > 0 ? temp[i - 1] : t;
    float e = c < cols - 1 ? temp[i + 1] : t;
    float t2 = __fmul_rn(2.0f, t);
    float dy = __fmul_rn(__fsub_rn(__fadd_rn(n, s), t2), ry);
    float dx = __fmul_rn(__fsub_rn(__fadd_rn(e, w), t2), rx);
    float dz = __fmul_rn(__fsub_rn(amb, t), rz);
    float delta = __fadd_rn(__fadd_rn(__fadd_rn(power[i], dy), dx), dz);
    out[i] = __fadd_rn(t, __fmul_rn(cap, delta));
}
