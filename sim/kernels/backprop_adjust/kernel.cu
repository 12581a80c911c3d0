// Backprop weight adjustment (after Rodinia's bpnn_adjust_weights): every weight of the
// input -> hidden layer moves by eta * delta[hidden] * input[unit] plus momentum times its
// previous change, which is kept for the next step. The intrinsics fix the rounding order.
#define HIDDEN 16

extern "C" __global__ void backprop_adjust(float *__restrict__ weights,
                                           float *__restrict__ old_change,
                                           const float *__restrict__ delta,
                                           const float *__restrict__ input, float eta,
                                           float momentum)
{
    int unit = blockIdx.y * blockDim.y + threadIdx.y;
    int hidden = threadIdx.x;
    int i = unit * HIDDEN + hidden;
    float change = __fadd_rn(__fmul_rn(__fmul_rn(eta, delta[hidden]), input[unit]),
                             __fmul_rn(momentum, old_change[i]));
    weights[i] = __fadd_rn(weights[i], change);
    old_change[i] = change;
}
