/* SPDX-License-Identifier: BSD-3-Clause */
/*
** core_cast.c - `loom demo cast`: a round trip f32 -> bf16 -> f32 through
** core.cast, and the rounding it shows.
*/
#include <math.h>
#include <stdio.h>

#include "demo.h"

DEMO_DEFINE("cast", 30, "core.cast", "core.cast f32 -> bf16 -> f32: what bf16 keeps");

static loom_status cast_to(const loom_tensor *in, const char *dtype, loom_tensor **out)
{
    loom_attrs *attrs = NULL;
    loom_status st = loom_attrs_new(&attrs);
    if (st == LOOM_OK)
        st = loom_attrs_set_string(attrs, "dtype", dtype);
    if (st == LOOM_OK)
        st = loom_run("core.cast", &in, 1, attrs, out, 1, NULL);
    loom_attrs_free(attrs);
    return st;
}

int demo_run(void)
{
    const float v[7] = { 1.0f, 3.14159265f, 0.1f, 1000.1f, 65504.0f, 1e-8f, -2.71828183f };
    const int64_t shape[1] = { 7 };
    loom_tensor *x = demo_f32(1, shape, v), *half = NULL, *back = NULL;
    int rc = x != NULL ? DEMO_OK : DEMO_FAIL;

    if (rc == DEMO_OK && cast_to(x, "bf16", &half) != LOOM_OK)
        rc = demo_fail();
    if (rc == DEMO_OK)
        demo_record("cast f32->bf16");
    if (rc == DEMO_OK && cast_to(half, "f32", &back) != LOOM_OK)
        rc = demo_fail();
    if (rc == DEMO_OK) {
        const float *r = loom_data(back);
        demo_record("cast bf16->f32");
        printf("  bf16 keeps f32's 8-bit exponent but only 8 significant bits,\n"
               "  rounded to nearest even: about 2-3 decimal digits survive.\n");
        printf("  %16s %16s %12s\n", "f32", "after bf16", "rel. error");
        for (int i = 0; i < 7; i++)
            printf("  %16.9g %16.9g %12.2e\n", (double)v[i], (double)r[i],
                   fabs((double)r[i] - (double)v[i]) / fabs((double)v[i]));
    }
    loom_tensor_free(back);
    loom_tensor_free(half);
    loom_tensor_free(x);
    return rc;
}
