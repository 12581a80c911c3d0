// Mixed FFMA / IMAD throughput kernel: four float and four integer multiply-add chains per
// thread, interleaved and each reading a neighbour chain, so every cycle has independent
// three-operand instructions whose sources sit in different registers: the register file's
// banks (two per Volta sub-core) are read as hard as the issue rate allows. The integers are
// unsigned so that their products wrap (no undefined overflow).
extern "C" __global__ void ffma_imad(float *__restrict__ fout,
                                     unsigned int *__restrict__ iout,
                                     const float *__restrict__ fin,
                                     const unsigned int *__restrict__ iin, int n, int iters,
                                     float a, unsigned int b)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float f0 = fin[i], f1 = __fadd_rn(f0, 1.0f), f2 = __fadd_rn(f0, 2.0f),
          f3 = __fadd_rn(f0, 3.0f);
    unsigned int k0 = iin[i], k1 = k0 ^ 0x5555, k2 = k0 + 7, k3 = k0 * 3;
    for (int it = 0; it < iters; it++) {
        f0 = __fmaf_rn(f0, a, f1);
        k0 = k0 * b + k1;
        f1 = __fmaf_rn(f1, a, f2);
        k1 = k1 * b + k2;
        f2 = __fmaf_rn(f2, a, f3);
        k2 = k2 * b + k3;
        f3 = __fmaf_rn(f3, a, f0);
        k3 = k3 * b + k0;
    }
    fout[i] = __fadd_rn(__fadd_rn(f0, f1), __fadd_rn(f2, f3));
    iout[i] = (k0 ^ k1) + (k2 ^ k3);
}
