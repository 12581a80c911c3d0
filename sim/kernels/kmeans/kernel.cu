// k-means assignment step (after Rodinia's kmeans kernel): each thread takes one point
// (features stored feature-major, as Rodinia transposes them) and finds the nearest of the
// clusters by squared Euclidean distance; the first cluster wins a tie.
extern "C" __global__ void kmeans(int *__restrict__ membership,
                                  const float *__restrict__ features,
                                  const float *__restrict__ clusters, int points, int k,
                                  int dims)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= points)
        return;
    int best = 0;
    float best_distance = 3.402823466e+38f;
    for (int c = 0; c < k; c++) {
        float distance = 0.0f;
        for (int f = 0; f < dims; f++) {
            float diff = __fsub_rn(features[f * points + p], clusters[c * dims + f]);
            distance = __fmaf_rn(diff, diff, distance);
        }
        if (distance < best_distance) {
            best_distance = distance;
            best = c;
        }
    }
    membership[p] = best;
}
