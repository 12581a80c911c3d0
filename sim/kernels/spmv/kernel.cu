// Sparse matrix-vector product, CSR, one thread per row (Parboil's spmv shape in CSR rather
// than JDS): y[r] = sum of value[e] * x[column[e]] over the row's entries, in order.
extern "C" __global__ void spmv(float *__restrict__ y, const int *__restrict__ row_start,
                                const int *__restrict__ column,
                                const float *__restrict__ value, const float *__restrict__ x,
                                int rows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float sum = 0.0f;
    for (int e = row_start[r]; e < row_start[r + 1]; e++)
        sum = __fmaf_rn(value[e], x[column[e]], sum);
    y[r] = sum;
}
