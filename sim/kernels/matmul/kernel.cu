// Tiled matrix multiply C = A * B (n x n, n a multiple of 16) with 16 x 16 shared tiles.
// The inner product accumulates with fmaf in k order, so numpy reproduces every bit.
#define TILE 16

extern "C" __global__ void matmul(float *__restrict__ C, const float *__restrict__ A,
                                  const float *__restrict__ B, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < n / TILE; t++) {
        As[ty][tx] = A[row * n + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            sum = fmaf(As[ty][k], Bs[k][tx], sum);
        __syncthreads();
    }
    C[row * n + col] = sum;
}
