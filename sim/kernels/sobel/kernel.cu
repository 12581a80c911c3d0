// Sobel filter after the WIR paper's Fig. 3 (the CUDA SDK's SobelShared).
//
// A block of blockDim.x x blockDim.y threads filters a tile of 4 * blockDim.x pixels by
// blockDim.y rows: it stages the tile plus a one-pixel halo in shared memory
// (SharedPitch bytes per row; thread row y stages image row v into shared row y + 1,
// the first and last thread rows also the halo rows), waits at the barrier, then each thread walks its row with
// `for (ib = threadIdx.x; ib < BlockWidth; ib += blockDim.x)` computing four pixels per
// step with ComputeSobel. Pixels outside the image read as 0.
#define MAX_PITCH 160

__device__ unsigned char ComputeSobel(unsigned char ul, unsigned char um, unsigned char ur,
                                      unsigned char ml, unsigned char mm, unsigned char mr,
                                      unsigned char ll, unsigned char lm, unsigned char lr,
                                      float fScale)
{
    short Horz = ur + 2 * mr + lr - ul - 2 * ml - ll;
    short Vert = ul + 2 * um + ur - ll - 2 * lm - lr;
    short Sum = (short)(fScale * (abs((int)Horz) + abs((int)Vert)));
    if (Sum < 0)
        return 0;
    else if (Sum > 0xff)
        return 0xff;
    return (unsigned char)Sum;
}

__device__ unsigned char pixel(const unsigned char *img, int x, int y, int w, int h)
{
    return (x >= 0 && x < w && y >= 0 && y < h) ? img[y * w + x] : 0;
}

extern "C" __global__ void sobel(unsigned char *__restrict__ out,
                                 const unsigned char *__restrict__ img, int w, int h,
                                 float fScale)
{
    __shared__ unsigned char LocalBlock[MAX_PITCH * 34];
    int BlockWidth = 4 * blockDim.x;
    int SharedPitch = BlockWidth + 2;
    int u = blockIdx.x * BlockWidth;
    int v = blockIdx.y * blockDim.y + threadIdx.y;
    int SharedIdx = threadIdx.y * SharedPitch;

    for (int ib = threadIdx.x; ib < SharedPitch; ib += blockDim.x) {
        LocalBlock[SharedIdx + SharedPitch + ib] = pixel(img, u + ib - 1, v, w, h);
        if (threadIdx.y == 0)
            LocalBlock[ib] = pixel(img, u + ib - 1, v - 1, w, h);
        if (threadIdx.y == blockDim.y - 1)
            LocalBlock[SharedIdx + 2 * SharedPitch + ib] = pixel(img, u + ib - 1, v + 1, w, h);
    }
    __syncthreads();

    for (int ib = threadIdx.x; ib < BlockWidth / 4; ib += blockDim.x) {
        for (int k = 0; k < 4; k++) {
            int c = 4 * ib + k;
            unsigned char pix00 = LocalBlock[SharedIdx + c + 0 * SharedPitch + 0];
            unsigned char pix01 = LocalBlock[SharedIdx + c + 0 * SharedPitch + 1];
            unsigned char pix02 = LocalBlock[SharedIdx + c + 0 * SharedPitch + 2];
            unsigned char pix10 = LocalBlock[SharedIdx + c + 1 * SharedPitch + 0];
            unsigned char pix11 = LocalBlock[SharedIdx + c + 1 * SharedPitch + 1];
            unsigned char pix12 = LocalBlock[SharedIdx + c + 1 * SharedPitch + 2];
            unsigned char pix20 = LocalBlock[SharedIdx + c + 2 * SharedPitch + 0];
            unsigned char pix21 = LocalBlock[SharedIdx + c + 2 * SharedPitch + 1];
            unsigned char pix22 = LocalBlock[SharedIdx + c + 2 * SharedPitch + 2];
            int x = u + c;
            if (x < w && v < h)
                out[v * w + x] = ComputeSobel(pix00, pix01, pix02, pix10, pix11, pix12,
                                              pix20, pix21, pix22, fScale);
        }
    }
}
