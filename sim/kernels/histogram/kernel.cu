// 256-bin histogram of bytes (Parboil's histo shape): each block counts its grid-stride
// share of the words' four bytes into a shared-memory histogram with atomicAdd, then adds
// its non-zero bins to the global histogram with atomicAdd.
#define BINS 256

extern "C" __global__ void histogram(unsigned int *bins, const unsigned int *__restrict__ words,
                                     int n)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned int w = words[i];
        atomicAdd(&local[w & 0xff], 1u);
        atomicAdd(&local[(w >> 8) & 0xff], 1u);
        atomicAdd(&local[(w >> 16) & 0xff], 1u);
        atomicAdd(&local[w >> 24], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (local[b])
            atomicAdd(&bins[b], local[b]);
}
