/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dlrm_interaction.c - DLRM's InteractionArch (dlrm.h) and its backward,
** per sample. Z_0 is the dense arch's output x[b], Z_f (f = 1..F) the
** pooled feature f-1 of e[b]. The output row is x[b] then Z_i . Z_j for
** 0 <= i < j <= F, i-major (torch.triu_indices(F+1, F+1, offset=1)); each
** dot product is one f32 sum in d order, as a row of torch's bmm.
*/
#include <string.h>

#include "dlrm.h"

static inline const float *row(const float *x, const float *e, int64_t b, int64_t i, int64_t F, int64_t D)
{
    return i == 0 ? x + b * D : e + (b * F + i - 1) * D;
}

void rec_dlrm_interact(const float *x, const float *e, float *out, int64_t F, int64_t D, int64_t b0, int64_t b1)
{
    const int64_t width = D + F * (F + 1) / 2;
    for (int64_t b = b0; b < b1; b++) {
        float *o = out + b * width;
        memcpy(o, x + b * D, (size_t)D * sizeof(float));
        o += D;
        for (int64_t i = 0; i <= F; i++) {
            const float *zi = row(x, e, b, i, F, D);
            for (int64_t j = i + 1; j <= F; j++) {
                const float *zj = row(x, e, b, j, F, D);
                float s = 0.0f;
                for (int64_t d = 0; d < D; d++)
                    s += zi[d] * zj[d];
                *o++ = s;
            }
        }
    }
}

void rec_dlrm_interact_backward(const float *x, const float *e, const float *g, float *gx, float *ge, int64_t F,
                                int64_t D, int64_t b0, int64_t b1)
{
    const int64_t width = D + F * (F + 1) / 2;
    for (int64_t b = b0; b < b1; b++) {
        const float *gr = g + b * width;
        /* the dense features pass straight through to the output's first D columns */
        memcpy(gx + b * D, gr, (size_t)D * sizeof(float));
        memset(ge + b * F * D, 0, (size_t)(F * D) * sizeof(float));
        gr += D;
        for (int64_t i = 0; i <= F; i++) {
            const float *zi = row(x, e, b, i, F, D);
            float *gi = i == 0 ? gx + b * D : ge + (b * F + i - 1) * D;
            for (int64_t j = i + 1; j <= F; j++) {
                const float *zj = row(x, e, b, j, F, D);
                float *gj = ge + (b * F + j - 1) * D;
                const float s = *gr++;
                for (int64_t d = 0; d < D; d++) {
                    gi[d] += s * zj[d];
                    gj[d] += s * zi[d];
                }
            }
        }
    }
}
