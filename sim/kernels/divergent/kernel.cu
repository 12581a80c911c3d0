// Divergent branches inside a loop: the Collatz trajectory of each input, bounded by
// `limit` steps. The loop trip count and both branch directions depend on the lane's
// value; a second, nested branch classifies every odd value by its residue mod 3.
extern "C" __global__ void divergent(unsigned int *__restrict__ steps,
                                     unsigned int *__restrict__ odd3,
                                     const unsigned int *__restrict__ in, int n, int limit)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned int x = in[i];
    unsigned int count = 0, mod3 = 0;
    while (x != 1 && count < limit) {
        if (x & 1) {
            if (x % 3 == 0)
                mod3++;
            x = 3 * x + 1;
        } else {
            x >>= 1;
        }
        count++;
    }
    steps[i] = count;
    odd3[i] = mod3;
}
