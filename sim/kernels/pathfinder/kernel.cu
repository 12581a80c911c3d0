// Pathfinder, one row per launch (after Rodinia's pathfinder, without its pyramid of rows
// per launch): the cheapest path cost to each column of row `row` is the wall's cost there
// plus the least of the previous row's three neighbouring costs, read through shared memory
// with a one-column halo. The host swaps the two cost rows between launches.
#define BLOCK 128
#define INF 0x7fffffff

extern "C" __global__ void pathfinder(const int *__restrict__ wall, const int *__restrict__ src,
                                      int *__restrict__ dst, int cols, int row)
{
    __shared__ int prev[BLOCK + 2];
    int tx = threadIdx.x;
    int c = blockIdx.x * BLOCK + tx;
    prev[tx + 1] = c < cols ? src[c] : INF;
    if (tx == 0)
        prev[0] = c > 0 && c - 1 < cols ? src[c - 1] : INF;
    if (tx == BLOCK - 1)
        prev[BLOCK + 1] = c + 1 < cols ? src[c + 1] : INF;
    __syncthreads();
    if (c < cols)
        dst[c] = wall[row * cols + c] + min(prev[tx], min(prev[tx + 1], prev[tx + 2]));
}
