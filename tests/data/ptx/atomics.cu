// Atomics on global and shared memory: every integer operation, f32 and u64 add.
// nvcc -arch=sm_80 -ptx -lineinfo atomics.cu -o atomics.ptx
__global__ void atomics(unsigned *hist, int *ints, float *fsum, unsigned *old_out,
                        unsigned long long *wide, const unsigned *keys, int n) {
  __shared__ unsigned bins[8];
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  if (threadIdx.x < 8) bins[threadIdx.x] = 0;
  __syncthreads();
  if (t < n) {
    unsigned k = keys[t];
    old_out[t] = atomicAdd(&hist[k % 16], 1u);
    atomicAdd(&bins[k % 8], k);
    atomicMax(&ints[0], (int)k - 500);
    atomicMin(&ints[1], (int)k - 500);
    atomicAnd((unsigned *)&ints[2], k | 0xffff0000u);
    atomicOr((unsigned *)&ints[3], 1u << (k % 32));
    atomicXor((unsigned *)&ints[4], k);
    atomicInc((unsigned *)&ints[5], 37u);
    atomicDec((unsigned *)&ints[6], 37u);
    atomicCAS(&ints[7], 0, t + 1);
    atomicExch(&ints[8], 5);
    atomicAdd(fsum, 0.5f * (k % 4));
    atomicAdd(wide, (unsigned long long)k << 20);
  }
  __syncthreads();
  if (threadIdx.x < 8) atomicAdd(&hist[16 + threadIdx.x], bins[threadIdx.x]);
}
