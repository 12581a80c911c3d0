// LU decomposition, the diagonal step (after Rodinia's lud_diagonal): a block of 16 threads
// factorises one 16 x 16 tile of the matrix's diagonal in shared memory (Doolittle, no
// pivoting: L below the diagonal with a unit diagonal, U on and above it), a barrier after
// each half-step. Block b takes the tile at (16 b, 16 b), so one launch factorises every
// diagonal tile independently.
#define BS 16

extern "C" __global__ void lud(float *m, int n)
{
    __shared__ float tile[BS][BS];
    int tx = threadIdx.x;
    int offset = blockIdx.x * BS;
    for (int i = 0; i < BS; i++)
        tile[i][tx] = m[(offset + i) * n + offset + tx];
    __syncthreads();
    for (int i = 0; i < BS - 1; i++) {
        if (tx > i) {
            for (int j = 0; j < i; j++)
                tile[tx][i] = __fmaf_rn(-tile[tx][j], tile[j][i], tile[tx][i]);
            tile[tx][i] = __fdiv_rn(tile[tx][i], tile[i][i]);
        }
        __syncthreads();
        if (tx > i) {
            for (int j = 0; j < i + 1; j++)
                tile[i + 1][tx] = __fmaf_rn(-tile[i + 1][j], tile[j][tx], tile[i + 1][tx]);
        }
        __syncthreads();
    }
    for (int i = 0; i < BS; i++)
        m[(offset + i) * n + offset + tx] = tile[i][tx];
}
