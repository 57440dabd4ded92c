/* SPDX-License-Identifier: BSD-3-Clause */
/*
** conv_transpose_cuda_kernels.cu - vision.conv_transpose2d on the device:
** one thread per output element gathers what the cpu kernel scatters. An
** output row oy receives kernel row ki from input row iy exactly when
** oy + ph - ki dh = iy sh (and alike for columns), so each thread walks its
** taps, keeps those whose offset divides by the stride, and sums
** x * w over the group's input channels in f32, the bias first.
*/
#include <cuda_runtime.h>

#include "conv_transpose_cuda_kernels.h"

#define CT_THREADS 256

static __global__ void conv_transpose_kernel(lcu_conv_transpose_args a)
{
    const int64_t total = a.n * a.cout * a.ho * a.wo;
    const int64_t cin_g = a.cin / a.groups, cout_g = a.cout / a.groups;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t ox = e % a.wo, oy = (e / a.wo) % a.ho, co = (e / (a.wo * a.ho)) % a.cout;
        const int64_t n = e / (a.wo * a.ho * a.cout), g = co / cout_g, c = co % cout_g;
        float acc = a.bias != NULL ? a.bias[co] : 0.0f;
        for (int64_t ki = 0; ki < a.kh; ki++) {
            const int64_t ty = oy + a.ph - ki * a.dh;
            if (ty < 0 || ty % a.sh != 0 || ty / a.sh >= a.h)
                continue;
            const int64_t iy = ty / a.sh;
            for (int64_t kj = 0; kj < a.kw; kj++) {
                const int64_t tx = ox + a.pw - kj * a.dw;
                if (tx < 0 || tx % a.sw != 0 || tx / a.sw >= a.w)
                    continue;
                const int64_t ix = tx / a.sw;
                for (int64_t i = 0; i < cin_g; i++) {
                    const int64_t ci = g * cin_g + i;
                    acc += a.x[((n * a.cin + ci) * a.h + iy) * a.w + ix]
                           * a.weight[((ci * cout_g + c) * a.kh + ki) * a.kw + kj];
                }
            }
        }
        a.y[e] = acc;
    }
}

extern "C" int lcu_conv_transpose2d(const lcu_conv_transpose_args *a, void *stream)
{
    const int64_t total = a->n * a->cout * a->ho * a->wo;
    if (total == 0)
        return 0;
    const int64_t want = (total + CT_THREADS - 1) / CT_THREADS;
    const unsigned blocks = (unsigned)(want < 65535 ? want : 65535);
    conv_transpose_kernel<<<blocks, CT_THREADS, 0, (cudaStream_t)stream>>>(*a);
    return (int)cudaGetLastError();
}
