/* SPDX-License-Identifier: BSD-3-Clause */
/*
** vit_posembed.c - the ViT position embedding at another grid (vit.h:
** vit_interpolate_pos): torchvision's interpolate_embeddings reshapes the
** grid rows to [1, d, g0, g0] and calls F.interpolate(size=g,
** mode="bicubic", align_corners=True). ATen's CPU kernel (HelperInterpCubic)
** computes, per axis, src = scale * i with scale = (in - 1) / (out - 1) in
** f32, index = floor(src) (at most in - 1), t = clamp(src - index, 0, 1),
** the four cubic-convolution weights of t (A = -0.75) on the taps
** index - 1 .. index + 2 clamped to [0, in - 1]; then sums the x taps of
** each of the four rows in order, weighted by the y taps, in f32.
*/
#include <math.h>
#include <string.h>

#include "vit.h"

#define CUBIC_A -0.75f

static float cubic1(float x) { return ((CUBIC_A + 2) * x - (CUBIC_A + 3)) * x * x + 1; }
static float cubic2(float x) { return ((CUBIC_A * x - 5 * CUBIC_A) * x + 8 * CUBIC_A) * x - 4 * CUBIC_A; }

/* The taps and weights of output index i of an axis in -> out. */
static void axis_taps(int64_t in, int64_t out, int64_t i, int64_t idx[4], float w[4])
{
    float scale = out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f;
    float src = scale * (float)i;
    int64_t index = (int64_t)floorf(src);
    if (index > in - 1)
        index = in - 1;
    float t = src - (float)index;
    t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    w[0] = cubic2(t + 1.0f);
    w[1] = cubic1(t);
    w[2] = cubic1(1.0f - t);
    w[3] = cubic2(2.0f - t);
    for (int j = 0; j < 4; j++) {
        int64_t k = index - 1 + j;
        idx[j] = k < 0 ? 0 : k > in - 1 ? in - 1 : k;
    }
}

void vit_interpolate_pos(const float *pos, int64_t g0, int64_t g, int64_t d, float *out)
{
    memcpy(out, pos, (size_t)d * sizeof(float));
    const float *grid = pos + d;        /* row y * g0 + x, channel c */
    for (int64_t oy = 0; oy < g; oy++) {
        int64_t iy[4], ix[4];
        float wy[4], wx[4];
        axis_taps(g0, g, oy, iy, wy);
        for (int64_t ox = 0; ox < g; ox++) {
            axis_taps(g0, g, ox, ix, wx);
            float *o = out + (1 + oy * g + ox) * d;
            for (int64_t c = 0; c < d; c++) {
                float acc = 0.0f;
                for (int a = 0; a < 4; a++) {
                    const float *row = grid + iy[a] * g0 * d + c;
                    float r = row[ix[0] * d] * wx[0];
                    for (int b = 1; b < 4; b++)
                        r += row[ix[b] * d] * wx[b];
                    acc = a == 0 ? r * wy[0] : acc + r * wy[a];
                }
                o[c] = acc;
            }
        }
    }
}
