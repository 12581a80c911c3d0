// Gaussian elimination, one column per launch (after Rodinia's gaussian, Fan1 and Fan2 in
// one kernel): for pivot column t, every element (i, j) below the pivot row and right of
// column t - 1 of the augmented n x (n + 1) matrix becomes a[i][j] - (a[i][t] / a[t][t]) *
// a[t][j]; the rest is copied. The host swaps the two matrices between launches (the
// kernel reads one and writes the other, so no element is read after it is written).
extern "C" __global__ void gaussian(const float *__restrict__ a, float *__restrict__ out, int n,
                                    int t)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int width = n + 1;
    if (i >= n || j >= width)
        return;
    float value = a[i * width + j];
    if (i > t && j >= t) {
        float multiplier = __fdiv_rn(a[i * width + t], a[t * width + t]);
        value = __fmaf_rn(-multiplier, a[t * width + j], value);
    }
    out[i * width + j] = value;
}
