// Vector loads/stores and the SFU functions, each one PTX instruction (inline asm).
// nvcc -arch=sm_80 -ptx -lineinfo math.cu -o math.ptx
#define F1(name, op) \
  __device__ __forceinline__ float name(float x) { float r; asm(op " %0, %1;" : "=f"(r) : "f"(x)); return r; }
F1(sqrt_rn, "sqrt.rn.f32")
F1(rcp_rn, "rcp.rn.f32")
F1(sqrt_approx, "sqrt.approx.f32")
F1(rcp_approx, "rcp.approx.f32")
F1(rsqrt_approx, "rsqrt.approx.f32")
F1(ex2_approx, "ex2.approx.f32")
F1(lg2_approx, "lg2.approx.f32")
F1(sin_approx, "sin.approx.f32")
F1(cos_approx, "cos.approx.f32")

__global__ void math(const float4 *in, float4 *exact, float4 *approx, float *trig, double2 *wide,
                     int n) {
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  if (t >= n) return;
  float4 q = in[t];
  exact[t] = make_float4(sqrt_rn(q.x), rcp_rn(q.y), sqrtf(q.z), __fdiv_rn(1.0f, q.w));
  approx[t] = make_float4(sqrt_approx(q.x), rcp_approx(q.y), rsqrt_approx(q.z),
                          ex2_approx(q.w - 2.0f));
  trig[3 * t + 0] = lg2_approx(q.x);
  trig[3 * t + 1] = sin_approx(q.y);
  trig[3 * t + 2] = cos_approx(q.z);
  double2 d = wide[t];
  wide[t] = make_double2(sqrt((double)d.y), 1.0 / d.x);
}
