// IMGVF-like motion-gradient vector flow (after the shape of Rodinia leukocyte's IMGVF
// kernel): one block iterates one 32 x 32 cell in shared memory. Each iteration moves every
// value v towards its eight neighbours, each difference weighted by a smooth Heaviside step
// of its projection on the image gradient (so the flow follows edges), then pulls it back
// towards the image: v' = u - (1 / lambda) I (u - I), u = v + (mu / lambda) sum H(d . g) d.
// A thread keeps PIX pixels (their image value and gradient in registers across
// iterations), which makes the kernel register-bound like the original (53 registers per ptxas -v).
#define SIDE 32
#define ROWS 16
#define PIX (SIDE / ROWS)

__device__ float heaviside(float z, float inv_eps)
{
    float s = __fmul_rn(z, inv_eps);
    return __fmaf_rn(0.5f, __fdiv_rn(s, __fadd_rn(1.0f, fabsf(s))), 0.5f);
}

__device__ float flow(float d, float direction, float inv_eps)
{
    return __fmul_rn(heaviside(__fmul_rn(d, direction), inv_eps), d);
}

extern "C" __global__ void imgvf(float *__restrict__ out, const float *__restrict__ image,
                                 int iters, float mu_over_lambda, float one_over_lambda,
                                 float inv_eps)
{
    __shared__ float v[SIDE][SIDE];
    int x = threadIdx.x;
    const float *cell = image + blockIdx.x * SIDE * SIDE;
    float img[PIX], gx[PIX], gy[PIX], fresh[PIX];
    int left = max(x - 1, 0), right = min(x + 1, SIDE - 1);
    for (int p = 0; p < PIX; p++) {
        int y = threadIdx.y + p * ROWS;
        int up = max(y - 1, 0), down = min(y + 1, SIDE - 1);
        img[p] = cell[y * SIDE + x];
        gx[p] = __fsub_rn(cell[y * SIDE + right], cell[y * SIDE + left]);
        gy[p] = __fsub_rn(cell[down * SIDE + x], cell[up * SIDE + x]);
        v[y][x] = img[p];
    }
    __syncthreads();
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int p = 0; p < PIX; p++) {
            int y = threadIdx.y + p * ROWS;
            int up = max(y - 1, 0), down = min(y + 1, SIDE - 1);
            float old = v[y][x];
            float sum = flow(__fsub_rn(v[up][x], old), -gy[p], inv_eps);
            sum = __fadd_rn(sum, flow(__fsub_rn(v[down][x], old), gy[p], inv_eps));
            sum = __fadd_rn(sum, flow(__fsub_rn(v[y][left], old), -gx[p], inv_eps));
            sum = __fadd_rn(sum, flow(__fsub_rn(v[y][right], old), gx[p], inv_eps));
            sum = __fadd_rn(sum, flow(__fsub_rn(v[up][left], old),
                                      __fsub_rn(-gx[p], gy[p]), inv_eps));
            sum = __fadd_rn(sum, flow(__fsub_rn(v[up][right], old),
                                      __fsub_rn(gx[p], gy[p]), inv_eps));
            sum = __fadd_rn(sum, flow(__fsub_rn(v[down][left], old),
                                      __fsub_rn(gy[p], gx[p]), inv_eps));
            sum = __fadd_rn(sum, flow(__fsub_rn(v[down][right], old),
                                      __fadd_rn(gx[p], gy[p]), inv_eps));
            float u = __fmaf_rn(mu_over_lambda, sum, old);
            fresh[p] = __fsub_rn(u, __fmul_rn(__fmul_rn(one_over_lambda, img[p]),
                                              __fsub_rn(u, img[p])));
        }
        __syncthreads();
#pragma unroll
        for (int p = 0; p < PIX; p++)
            v[threadIdx.y + p * ROWS][x] = fresh[p];
        __syncthreads();
    }
    for (int p = 0; p < PIX; p++) {
        int y = threadIdx.y + p * ROWS;
        out[blockIdx.x * SIDE * SIDE + y * SIDE + x] = v[y][x];
    }
}
