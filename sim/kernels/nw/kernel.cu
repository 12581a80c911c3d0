// Needleman-Wunsch alignment (after Rodinia's nw): the (n + 1) x (n + 1) score matrix is cut
// into 16 x 16 tiles; launch `diagonal` computes the tiles of that anti-diagonal of tiles
// (the host loops over them, launching one block per tile: block b takes tile column
// b + max(0, diagonal - tiles + 1)), and a block of 16 threads fills its tile in shared
// memory along the tile's own anti-diagonals, a barrier after each:
//   s[i][j] = max(s[i-1][j-1] + ref[i][j], s[i-1][j] - penalty, s[i][j-1] - penalty).
#define BS 16

extern "C" __global__ void nw(int *score, const int *__restrict__ reference, int n,
                              int penalty, int diagonal)
{
    __shared__ int s[BS + 1][BS + 1];
    __shared__ int ref[BS][BS];
    int tiles = n / BS;
    int bx = blockIdx.x + max(0, diagonal - tiles + 1);
    int by = diagonal - bx;
    if (by < 0 || by >= tiles)
        return;
    int tx = threadIdx.x;
    int width = n + 1;
    int corner = by * BS * width + bx * BS;
    for (int i = 0; i < BS; i++)
        ref[i][tx] = reference[(by * BS + i) * n + bx * BS + tx];
    s[tx + 1][0] = score[corner + (tx + 1) * width];
    s[0][tx + 1] = score[corner + tx + 1];
    if (tx == 0)
        s[0][0] = score[corner];
    __syncthreads();
    for (int d = 0; d < 2 * BS - 1; d++) {
        int i = tx + 1, j = d - tx + 1;
        if (j >= 1 && j <= BS) {
            int best = s[i - 1][j - 1] + ref[i - 1][j - 1];
            best = max(best, s[i - 1][j] - penalty);
            s[i][j] = max(best, s[i][j - 1] - penalty);
        }
        __syncthreads();
    }
    for (int i = 1; i <= BS; i++)
        score[corner + i * width + tx + 1] = s[i][tx + 1];
}
