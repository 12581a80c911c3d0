// Local memory, a __constant__ table, generic pointers, dynamic shared memory, a struct
// parameter and __noinline__ functions (calls the front end inlines).
// nvcc -arch=sm_80 -ptx -lineinfo -fmad=false spaces.cu -o spaces.ptx
struct Params { float scale; int offset; double bias; };
__constant__ float table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
extern __shared__ float dyn[];

__device__ __noinline__ float pick(const float *p, int i) { return p[i]; }

__device__ __noinline__ int clamp_index(int i, int n) {
  if (i < 0) return 0;
  if (i >= n) return n - 1;
  return i;
}

__global__ void spaces(const float *in, float *out, Params s, int n, int use_shared) {
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  float frame[16];
  for (int i = 0; i < 16; i++) frame[i] = in[(t + i) % n] * s.scale;
  dyn[threadIdx.x] = in[t % n] + s.offset;
  __syncthreads();
  const float *src = use_shared ? dyn : in;
  int j = use_shared ? (threadIdx.x ^ 1) : clamp_index(t - 3, n);
  float a = pick(src, j);
  int k = ((int)in[t % n]) & 15;
  out[t] = a + frame[k] + table[t % 8] + (float)s.bias;
}
