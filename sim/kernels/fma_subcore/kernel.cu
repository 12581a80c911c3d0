// The sub-core paper's FMA microbenchmark (Section III-B, Figs. 3-4).
//
// A 32-warp thread block holds 8 compute warps and 24 empty warps. Warp w computes when
// w % stride == 0 and w / stride < 8: stride 1 puts the compute warps at 0..7 (balanced:
// two per sub-core under round-robin assignment), stride 4 at 0, 4, ..., 28 (unbalanced:
// all on sub-core 0). Each compute thread performs `iters` dependent FMAs on registers;
// every thread then waits at the block barrier and exits; compute threads store their
// result after the barrier so the work cannot be optimized away.
extern "C" __global__ void fma_subcore(float *__restrict__ out, int iters, int stride,
                                       float a, float b)
{
    int warp = threadIdx.x / 32;
    bool compute = warp % stride == 0 && warp / stride < 8;
    float acc = (float)threadIdx.x;
    if (compute) {
        for (int k = 0; k < iters; k++)
            acc = fmaf(acc, a, b);
    }
    __syncthreads();
    if (compute)
        out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
