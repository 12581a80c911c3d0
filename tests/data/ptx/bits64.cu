// 64-bit bit fields and carries, prmt modes, lop3 tables, clamped funnel shifts and setp
// combinations, each one PTX instruction (inline asm).
// nvcc -arch=sm_80 -ptx -lineinfo bits64.cu -o bits64.ptx
typedef unsigned long long u64;

__global__ void bits64(const u64 *a, const u64 *b, const unsigned *c, u64 *out, int n) {
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  if (t >= n) return;
  u64 x = a[t], y = b[t], r;
  unsigned z = c[t], lo = (unsigned)x, hi = (unsigned)(x >> 32), w = (unsigned)y, s;
  u64 *o = out + 24 * t;
  asm("bfe.u64 %0, %1, %2, %3;" : "=l"(r) : "l"(x), "r"(z & 0x7f), "r"((z >> 8) & 0x7f)); o[0] = r;
  asm("bfe.s64 %0, %1, %2, %3;" : "=l"(r) : "l"(x), "r"(z & 0x7f), "r"((z >> 8) & 0x7f)); o[1] = r;
  asm("bfi.b64 %0, %1, %2, %3, %4;" : "=l"(r) : "l"(x), "l"(y), "r"(z & 0xff), "r"(z >> 24));
  o[2] = r;
  asm("add.cc.u64 %0, %1, %2;" : "=l"(r) : "l"(x), "l"(y)); o[3] = r;
  asm("{\n\t.reg .u64 t;\n\tadd.cc.u64 t, %1, %2;\n\taddc.u64 %0, %1, 0;\n\t}" : "=l"(r)
      : "l"(x), "l"(y)); o[4] = r;
  asm("{\n\t.reg .u64 t;\n\tsub.cc.u64 t, %1, %2;\n\tsubc.cc.u64 t, %2, %1;\n\t"
      "subc.u64 %0, 0, 0;\n\t}" : "=l"(r) : "l"(x), "l"(y)); o[5] = r;
  asm("{\n\t.reg .u64 t;\n\tmad.hi.cc.u64 t, %1, %2, %1;\n\tmadc.lo.u64 %0, %1, %2, %2;\n\t}"
      : "=l"(r) : "l"(x), "l"(y)); o[6] = r;
  asm("prmt.b32.b4e %0, %1, %2, %3;" : "=r"(s) : "r"(lo), "r"(hi), "r"(z)); o[7] = s;
  asm("prmt.b32.rc8 %0, %1, %2, %3;" : "=r"(s) : "r"(lo), "r"(hi), "r"(z)); o[8] = s;
  asm("prmt.b32.ecl %0, %1, %2, %3;" : "=r"(s) : "r"(lo), "r"(hi), "r"(z)); o[9] = s;
  asm("prmt.b32.ecr %0, %1, %2, %3;" : "=r"(s) : "r"(lo), "r"(hi), "r"(z)); o[10] = s;
  asm("prmt.b32.rc16 %0, %1, %2, %3;" : "=r"(s) : "r"(lo), "r"(hi), "r"(z)); o[11] = s;
  asm("lop3.b32 %0, %1, %2, %3, 0xCA;" : "=r"(s) : "r"(lo), "r"(hi), "r"(w)); o[12] = s;
  asm("lop3.b32 %0, %1, %2, %3, 0x1B;" : "=r"(s) : "r"(lo), "r"(hi), "r"(w)); o[13] = s;
  asm("lop3.b32 %0, %1, %2, %3, 0x00;" : "=r"(s) : "r"(lo), "r"(hi), "r"(w)); o[14] = s;
  asm("shf.l.clamp.b32 %0, %1, %2, %3;" : "=r"(s) : "r"(lo), "r"(hi), "r"(z & 63)); o[15] = s;
  asm("shf.r.wrap.b32 %0, %1, %2, %3;" : "=r"(s) : "r"(lo), "r"(hi), "r"(z)); o[16] = s;
  asm("{\n\t.reg .pred p, q, c;\n\tsetp.ne.u32 c, %3, 0;\n\tsetp.lt.xor.u32 p|q, %1, %2, c;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t@q add.u32 %0, %0, 2;\n\t}" : "=r"(s) : "r"(lo), "r"(hi),
      "r"(z & 1)); o[17] = s;
  asm("{\n\t.reg .pred p, c;\n\tsetp.ne.u32 c, %3, 0;\n\tsetp.ge.or.s32 p, %1, %2, c;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(s) : "r"(lo), "r"(hi), "r"(z & 2)); o[18] = s;
  asm("{\n\t.reg .pred p, c;\n\tsetp.ne.u32 c, %3, 0;\n\tsetp.gt.and.u64 p, %1, %2, c;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(s) : "l"(x), "l"(y), "r"(z & 4)); o[19] = s;
  asm("{\n\t.reg .b16 h, k;\n\tmov.b32 {h, k}, %1;\n\tmov.b32 %0, {k, h};\n\t}" : "=r"(s)
      : "r"(lo)); o[20] = s;
  asm("{\n\t.reg .b32 p, q;\n\tmov.b64 {p, q}, %1;\n\tmov.b64 %0, {q, p};\n\t}" : "=l"(r)
      : "l"(x)); o[21] = r;
  o[22] = __popcll(x) + 100ull * __clzll(x);
  o[23] = __brevll(x);
}
