/* SPDX-License-Identifier: BSD-3-Clause */
/*
** vision_deform.c - `loom demo deform`: deform_conv2d with zero offsets,
** which must equal a plain convolution.
*/
#include <math.h>
#include <stdio.h>

#include "demo.h"

DEMO_DEFINE("deform", 60, "vision.deform_conv2d", "deform_conv2d with zero offsets is a convolution");

static int run1(const char *op, const loom_tensor *const *in, int32_t n, loom_attrs *attrs, loom_tensor **out,
                const char *label)
{
    if (loom_run(op, in, n, attrs, out, 1, NULL) != LOOM_OK)
        return demo_fail();
    demo_record(label);
    return DEMO_OK;
}

/* deform_conv2d with zero offsets and no mask samples the regular grid: it
** is a plain convolution, computed here directly to compare. */
int demo_run(void)
{
    enum { N = 1, CI = 8, CO = 6, H = 12, W = 12, K = 3 };
    const int64_t ishape[4] = { N, CI, H, W }, wshape[4] = { CO, CI, K, K };
    const int64_t oshape[4] = { N, 2 * K * K, H, W };
    loom_tensor *x = demo_f32(4, ishape, NULL), *w = demo_f32(4, wshape, NULL);
    loom_tensor *off = demo_f32(4, oshape, NULL), *y = NULL;
    loom_attrs *attrs = NULL;
    const int64_t one[2] = { 1, 1 };
    int rc = x && w && off && loom_attrs_new(&attrs) == LOOM_OK
                     && loom_attrs_set_ints(attrs, "padding", one, 2) == LOOM_OK
                 ? DEMO_OK
                 : DEMO_FAIL;
    if (rc == DEMO_OK) {
        float *px = loom_data(x), *pw = loom_data(w);
        for (int64_t i = 0; i < loom_numel(x); i++)
            px[i] = demo_random();
        for (int64_t i = 0; i < loom_numel(w); i++)
            pw[i] = demo_random();
        const loom_tensor *in[3] = { x, off, w };
        rc = run1("vision.deform_conv2d", in, 3, attrs, &y, "deform_conv2d");
    }
    if (rc == DEMO_OK) {
        const float *px = loom_data(x), *pw = loom_data(w), *py = loom_data(y);
        double worst = 0;
        for (int co = 0; co < CO; co++)
            for (int i = 0; i < H; i++)
                for (int j = 0; j < W; j++) {
                    double acc = 0;
                    for (int ci = 0; ci < CI; ci++)
                        for (int a = 0; a < K; a++)
                            for (int b = 0; b < K; b++) {
                                int yi = i + a - 1, xj = j + b - 1;
                                if (yi >= 0 && yi < H && xj >= 0 && xj < W)
                                    acc += (double)pw[((co * CI + ci) * K + a) * K + b]
                                           * (double)px[(ci * H + yi) * W + xj];
                            }
                    worst = fmax(worst, fabs(acc - (double)py[(co * H + i) * W + j]));
                }
        printf("  deform_conv2d f32[1,8,12,12] * f32[6,8,3,3], padding 1, zero offsets\n"
               "  max |difference| to a direct 3x3 convolution: %.2g\n", worst);
        if (worst > 1e-4)
            rc = DEMO_FAIL;
    }
    loom_attrs_free(attrs);
    loom_tensor_free(x);
    loom_tensor_free(w);
    loom_tensor_free(off);
    loom_tensor_free(y);
    return rc;
}
