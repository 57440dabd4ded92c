/* SPDX-License-Identifier: BSD-3-Clause */
/*
** core_linear.c - `loom demo linear`: a core.linear object made from a
** safetensors file the demo writes (and removes), checked against a plain
** C loop.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "demo.h"

DEMO_DEFINE("linear", 40, "core.linear", "core.linear with weights from a safetensors file");

/* Write weight [3,4] and bias [3] to DIR/linear.safetensors. */
static int write_linear_weights(const char *path, const float *w, const float *b)
{
    const int64_t ws[2] = { 3, 4 }, bs[1] = { 3 };
    loom_tensor *wt = demo_f32(2, ws, w), *bt = demo_f32(1, bs, b);
    const char *names[2] = { "weight", "bias" };
    const loom_tensor *tensors[2] = { wt, bt };
    int rc = DEMO_OK;

    if (wt == NULL || bt == NULL)
        rc = DEMO_FAIL;
    else if (loom_safetensors_write(path, names, tensors, 2) != LOOM_OK)
        rc = demo_fail();
    loom_tensor_free(wt);
    loom_tensor_free(bt);
    return rc;
}

int demo_run(void)
{
    const float w[12] = { 1, 0, 0, 0,   0, 1, 0, 0,   0.5f, 0.5f, 0.5f, 0.5f };
    const float b[3] = { 0.1f, 0.2f, 0.3f };
    const float xv[8] = { 1, 2, 3, 4,   -1, -2, -3, -4 };
    const int64_t xs[2] = { 2, 4 };
    const char *tmp = getenv("TMPDIR");
    char dir[512], path[600];
    loom_tensor *x = NULL, *out = NULL;
    loom_object *obj = NULL;
    loom_call_options opts = LOOM_CALL_OPTIONS_INIT;
    int rc;

    snprintf(dir, sizeof dir, "%s/loom-demo-XXXXXX", tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "loom: cannot create a temporary directory from %s\n", dir);
        return DEMO_FAIL;
    }
    snprintf(path, sizeof path, "%s/linear.safetensors", dir);
    rc = write_linear_weights(path, w, b);
    if (rc == DEMO_OK && loom_object_create(&obj, "core.linear", NULL, path) != LOOM_OK)
        rc = demo_fail();
    if (rc == DEMO_OK && (x = demo_f32(2, xs, xv)) == NULL)
        rc = DEMO_FAIL;
    if (rc == DEMO_OK) {
        const loom_tensor *in[1] = { x };
        opts.object = obj;
        if (loom_run("core.linear", in, 1, NULL, &out, 1, &opts) != LOOM_OK)
            rc = demo_fail();
    }
    if (rc == DEMO_OK) {
        const float *y = loom_data(out);
        double diff = 0;
        demo_record("linear");
        printf("  weights written to %s (weight [3,4], bias [3]),\n"
               "  mapped by the core.linear object; output = input @ weight^T + bias\n", path);
        demo_show("input", x);
        demo_show("output", out);
        for (int r = 0; r < 2; r++) {
            for (int o = 0; o < 3; o++) {
                double acc = b[o];
                for (int i = 0; i < 4; i++)
                    acc += (double)xv[r * 4 + i] * (double)w[o * 4 + i];
                diff = fmax(diff, fabs(acc - (double)y[r * 3 + o]));
            }
        }
        printf("  max |difference| to a plain C loop: %.2g\n", diff);
    }
    loom_tensor_free(out);
    loom_tensor_free(x);
    loom_object_free(obj);
    unlink(path);
    rmdir(dir);
    return rc;
}
