// CUDA math library functions (their PTX mixes SFU approximations, carry arithmetic, local
// frames, copysign, testp, sad and mul24) and integer intrinsics, one result each.
// nvcc -arch=sm_80 -ptx -lineinfo libm.cu -o libm.ptx
__global__ void libm(const float *x, float *y, const double *d, double *e, int *k) {
  int t = threadIdx.x;
  float a = x[t], b = x[t + 32], u = x[t + 64];
  float *o = y + 24 * t;
  o[0] = powf(a, b);     o[1] = atan2f(a, b);   o[2] = logf(a);       o[3] = log1pf(a);
  o[4] = tanhf(u);       o[5] = erff(u);        o[6] = floorf(u);     o[7] = ceilf(u);
  o[8] = roundf(u);      o[9] = truncf(u);      o[10] = fmodf(a, b);  o[11] = cbrtf(u);
  o[12] = hypotf(a, b);  o[13] = expm1f(u);     o[14] = asinf(u);     o[15] = acosf(u);
  o[16] = atanf(a);      o[17] = sinhf(u);      o[18] = log10f(a);    o[19] = copysignf(a, u);
  o[20] = fdimf(a, b);   o[21] = rintf(u * 4);  o[22] = sinf(a * 100); o[23] = cosf(b * 1000);
  double p = d[t];
  double *q = e + 8 * t;
  q[0] = exp(p); q[1] = log(p); q[2] = sin(p); q[3] = cos(p); q[4] = pow(p, 1.5);
  q[5] = tanh(p); q[6] = atan2(p, 2.0); q[7] = rsqrt(p);
  k[4 * t + 0] = __mul24(t - 16, 1000);
  k[4 * t + 1] = __umulhi(t * 123456789u, 987654321u);
  k[4 * t + 2] = __sad(t, 17, 5);
  k[4 * t + 3] = isfinite(u / (t - 7.0f)) + 2 * isnan(sqrtf(u));
}
