/* SPDX-License-Identifier: BSD-3-Clause */
/*
** core_add.c - `loom demo add`: core.add with broadcasting, and its alpha
** attribute.
*/
#include <stdio.h>

#include "demo.h"

DEMO_DEFINE("add", 20, "core.add", "core.add with broadcasting");

int demo_run(void)
{
    const float xv[6] = { 1, 2, 3, 4, 5, 6 }, yv[3] = { 10, 20, 30 };
    const int64_t xs[2] = { 2, 3 }, ys[1] = { 3 };
    loom_tensor *x = demo_f32(2, xs, xv), *y = demo_f32(1, ys, yv), *out = NULL;
    loom_attrs *attrs = NULL;
    int rc = x != NULL && y != NULL ? DEMO_OK : DEMO_FAIL;
    const loom_tensor *in[2] = { x, y };

    if (rc == DEMO_OK && loom_run("core.add", in, 2, NULL, &out, 1, NULL) != LOOM_OK)
        rc = demo_fail();
    if (rc == DEMO_OK) {
        demo_record("add (broadcast)");
        printf("  other [3] is broadcast over each row of input [2,3]:\n");
        demo_show("input", x);
        demo_show("other", y);
        demo_show("output", out);
        loom_tensor_free(out);
        out = NULL;
        if (loom_attrs_new(&attrs) != LOOM_OK || loom_attrs_set_float(attrs, "alpha", -1.0) != LOOM_OK
            || loom_run("core.add", in, 2, attrs, &out, 1, NULL) != LOOM_OK)
            rc = demo_fail();
    }
    if (rc == DEMO_OK) {
        demo_record("add (alpha=-1)");
        printf("  with attribute alpha = -1 (input - other):\n");
        demo_show("output", out);
    }
    loom_attrs_free(attrs);
    loom_tensor_free(out);
    loom_tensor_free(x);
    loom_tensor_free(y);
    return rc;
}
