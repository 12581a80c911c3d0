// Backprop layer forward (after Rodinia's bpnn_layerforward): a 16 x 16 block multiplies 16
// input units by their 16 x 16 slice of the input -> hidden weights in shared memory, then
// sums each hidden unit's column by a tree over the rows (a barrier per level), one partial
// sum per hidden unit and block. The intrinsics fix the rounding order (no contraction).
#define HIDDEN 16

extern "C" __global__ void backprop_forward(float *__restrict__ partial,
                                            const float *__restrict__ input,
                                            const float *__restrict__ weights)
{
    __shared__ float node[HIDDEN];
    __shared__ float product[HIDDEN][HIDDEN];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * HIDDEN + ty;
    if (tx == 0)
        node[ty] = input[row];
    __syncthreads();
    product[ty][tx] = __fmul_rn(weights[row * HIDDEN + tx], node[ty]);
    __syncthreads();
    for (int step = 2; step <= HIDDEN; step *= 2) {
        if (ty % step == 0)
            product[ty][tx] = __fadd_rn(product[ty][tx], product[ty + step / 2][tx]);
        __syncthreads();
    }
    if (ty == 0)
        partial[blockIdx.y * HIDDEN + tx] = product[0][tx];
}
