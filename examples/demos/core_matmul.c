/* SPDX-License-Identifier: BSD-3-Clause */
/*
** core_matmul.c - `loom demo matmul`: core.matmul on every CPU backend
** loaded (cpu, onednn), the best of a few timed calls each, with a
** cross-check of each backend against the first.
*/
#include <math.h>
#include <stdio.h>

#include "demo.h"

DEMO_DEFINE("matmul", 10, "core.matmul", "core.matmul on every CPU backend");

#define MM 256

/* Best of a few calls into a preallocated output, in seconds. */
static int time_matmul(const loom_tensor *const in[2], loom_tensor *out, const char *backend, double *best)
{
    loom_call_options opts = LOOM_CALL_OPTIONS_INIT;
    opts.backend = backend;
    *best = INFINITY;
    for (int rep = 0; rep < 6; rep++) {
        double t0 = demo_now();
        if (loom_run("core.matmul", in, 2, NULL, &out, 1, &opts) != LOOM_OK)
            return demo_fail();
        double dt = demo_now() - t0;
        if (rep > 0 && dt < *best)        /* the first call warms caches and pools */
            *best = dt;
    }
    return DEMO_OK;
}

int demo_run(void)
{
    static const char *const backends[] = { "cpu", "onednn" };
    const int64_t shape[2] = { MM, MM };
    loom_tensor *a = demo_f32(2, shape, NULL), *b = demo_f32(2, shape, NULL);
    loom_tensor *ref = NULL, *out = NULL;
    int rc = a != NULL && b != NULL ? DEMO_OK : DEMO_FAIL;

    if (rc == DEMO_OK) {
        float *pa = loom_data(a), *pb = loom_data(b);
        for (int64_t i = 0; i < MM * MM; i++) {
            pa[i] = demo_random();
            pb[i] = demo_random();
        }
        printf("  [%d x %d] @ [%d x %d], f32, random values in [-1, 1)\n", MM, MM, MM, MM);
    }
    for (size_t k = 0; rc == DEMO_OK && k < sizeof backends / sizeof backends[0]; k++) {
        const loom_tensor *in[2] = { a, b };
        loom_dispatch_info d = LOOM_DISPATCH_INFO_INIT;
        double best;
        char label[32];

        if (!demo_has_backend("core.matmul", backends[k])) {
            printf("  %-7s no kernel loaded for this backend\n", backends[k]);
            continue;
        }
        loom_tensor_free(out);
        out = demo_f32(2, shape, NULL);
        if (out == NULL || (rc = time_matmul(in, out, backends[k], &best)) != DEMO_OK) {
            rc = DEMO_FAIL;
            break;
        }
        loom_last_dispatch(&d);
        printf("  %-7s %-24s %8.3f ms  %7.2f GFLOP/s", backends[k], d.impl != NULL ? d.impl : "?",
               best * 1e3, 2.0 * MM * MM * MM / best * 1e-9);
        snprintf(label, sizeof label, "matmul (%s)", backends[k]);
        demo_record(label);
        if (ref == NULL) {
            ref = out;
            out = NULL;
            printf("\n");
        } else {
            const float *r = loom_data(ref), *o = loom_data(out);
            double diff = 0;
            for (int64_t i = 0; i < MM * MM; i++)
                diff = fmax(diff, fabs((double)r[i] - (double)o[i]));
            printf("  max |difference| to %s: %.2g\n", backends[0], diff);
        }
    }
    loom_tensor_free(out);
    loom_tensor_free(ref);
    loom_tensor_free(a);
    loom_tensor_free(b);
    return rc;
}
