// Inclusive prefix sum per block with warp shuffles (the CUDA samples' shfl_scan shape):
// each warp scans its 32 values with __shfl_up_sync, warp totals go through shared memory
// and are scanned by warp 0, and every warp adds the total of the warps before it. The last
// thread stores the block's total (a second pass would add those to later blocks).
extern "C" __global__ void scan(int *__restrict__ out, int *__restrict__ block_sums,
                                const int *__restrict__ in, int n)
{
    __shared__ int warp_sums[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int v = i < n ? in[i] : 0;
    for (int d = 1; d < 32; d <<= 1) {
        int up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d)
            v += up;
    }
    if (lane == 31)
        warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int s = lane < blockDim.x / 32 ? warp_sums[lane] : 0;
        for (int d = 1; d < 32; d <<= 1) {
            int up = __shfl_up_sync(0xffffffffu, s, d);
            if (lane >= d)
                s += up;
        }
        warp_sums[lane] = s;
    }
    __syncthreads();
    if (warp > 0)
        v += warp_sums[warp - 1];
    if (i < n)
        out[i] = v;
    if (threadIdx.x == blockDim.x - 1)
        block_sums[blockIdx.x] = v;
}
