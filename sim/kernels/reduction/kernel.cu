// Shared-memory tree reduction (CUDA SDK reduce1 style): each block of 256 threads sums
// its 256 inputs by halving strides, with a divergent `tid < s` test and a barrier in
// every step of the loop; thread 0 stores the block's partial sum.
extern "C" __global__ void reduction(float *__restrict__ partial, const float *__restrict__ in,
                                     int n)
{
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        partial[blockIdx.x] = sdata[0];
}
