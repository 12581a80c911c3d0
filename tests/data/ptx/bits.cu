// Bit and carry instructions (intrinsics and inline asm) and a two-destination setp.
// nvcc -arch=sm_80 -ptx -lineinfo bits.cu -o bits.ptx
__global__ void bits(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *out,
                     unsigned long long *out64, int n) {
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  if (t >= n) return;
  unsigned x = a[t], y = b[t], z = c[t], r;
  unsigned *o = out + 17 * t;
  o[0] = __popc(x);
  o[1] = __clz(x);
  o[2] = __brev(x);
  o[3] = __byte_perm(x, y, z);
  o[4] = __funnelshift_l(x, y, z);
  o[5] = __funnelshift_rc(x, y, z);
  asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y & 0x3f), "r"(z & 0x3f)); o[6] = r;
  asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y & 0x3f), "r"(z & 0x3f)); o[7] = r;
  asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(x), "r"(y), "r"(z & 0x3f), "r"((z >> 8) & 0x3f));
  o[8] = r;
  asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r) : "r"(x), "r"(y), "r"(z)); o[9] = r;
  asm("lop3.b32 %0, %1, %2, %3, 0xE8;" : "=r"(r) : "r"(x), "r"(y), "r"(z)); o[10] = r;
  asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(z)); o[11] = r;
  asm("{\n\t.reg .pred p, q;\n\tsetp.lt.s32 p|q, %1, %2;\n\tselp.u32 %0, 1, 2, p;\n\t"
      "@q add.u32 %0, %0, 10;\n\t}" : "=r"(r) : "r"(x), "r"(y));
  o[12] = r;
  unsigned lo, hi;
  asm("add.cc.u32 %0, %2, %4;\n\taddc.u32 %1, %3, %5;" : "=r"(lo), "=r"(hi)
      : "r"(x), "r"(y), "r"(z), "r"(x ^ z));
  o[13] = lo; o[14] = hi;
  asm("sub.cc.u32 %0, %2, %4;\n\tsubc.u32 %1, %3, %5;" : "=r"(lo), "=r"(hi)
      : "r"(x), "r"(y), "r"(z), "r"(x ^ z));
  o[15] = lo ^ hi;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(z)); o[16] = r;
  asm("mad.lo.cc.u32 %0, %2, %3, %4;\n\tmadc.hi.u32 %1, %2, %3, %5;" : "=r"(lo), "=r"(hi)
      : "r"(x), "r"(y), "r"(z), "r"(x ^ y));
  unsigned long long w = ((unsigned long long)y << 32) | x;
  out64[4 * t + 0] = ((unsigned long long)hi << 32) | lo;
  out64[4 * t + 1] = __popcll(w) + 100ull * __clzll(w);
  out64[4 * t + 2] = __brevll(w);
  out64[4 * t + 3] = w + ((unsigned long long)z << 32 | y);
}
