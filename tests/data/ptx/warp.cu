// Warp shuffles (up/down/xor/idx with a width) and votes, and a shuffle reduction.
// nvcc -arch=sm_80 -ptx -lineinfo warp.cu -o warp.ptx
__global__ void warp(const int *in, const int *deltas, int *out, int *sums, int width) {
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  int v = in[t];
  int d = deltas[t];
  out[7 * t + 0] = __shfl_up_sync(0xffffffff, v, d, width);
  out[7 * t + 1] = __shfl_down_sync(0xffffffff, v, d, width);
  out[7 * t + 2] = __shfl_xor_sync(0xffffffff, v, d, width);
  out[7 * t + 3] = __shfl_sync(0xffffffff, v, d, width);
  out[7 * t + 4] = __ballot_sync(0xffffffff, v & 1);
  out[7 * t + 5] = __all_sync(0xffffffff, v > -1000) + 2 * __any_sync(0xffffffff, v > 900)
                   + 4 * __uni_sync(0xffffffff, v & 2);
  out[7 * t + 6] = __activemask();
  int s = v;
  for (int offset = 16; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffff, s, offset);
  if ((threadIdx.x & 31) == 0) sums[t / 32] = s;
}
