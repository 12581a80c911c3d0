// Breadth-first search, one level per launch (after Rodinia's bfs): every vertex of the
// frontier claims its unvisited neighbours with atomicCAS on their cost (the first claim
// wins; the level is the same whoever wins), marks them in the next frontier and raises the
// `changed` flag. The host clears the flag, launches, swaps the two frontier buffers and
// repeats until no launch raised the flag.
extern "C" __global__ void bfs(const int *__restrict__ row_start, const int *__restrict__ edges,
                               int *cost, int *frontier, int *next, int *changed, int vertices,
                               int level)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= vertices || !frontier[v])
        return;
    frontier[v] = 0;
    for (int e = row_start[v]; e < row_start[v + 1]; e++) {
        int u = edges[e];
        if (atomicCAS(&cost[u], -1, level + 1) == -1) {
            next[u] = 1;
            atomicExch(changed, 1);
        }
    }
}
