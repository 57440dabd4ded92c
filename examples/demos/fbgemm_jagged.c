/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fbgemm_jagged.c - `loom demo jagged`: a jagged round trip, values ->
** padded dense -> values.
*/
#include <stdio.h>
#include <string.h>

#include "demo.h"

DEMO_DEFINE("jagged", 80, "fbgemm.jagged_to_padded_dense,fbgemm.dense_to_jagged",
            "jagged rows to a padded dense tensor and back");

/* values [total_L, D] with per-row lengths -> padded [B, max_L, D] -> values. */
int demo_run(void)
{
    enum { NB = 5, D = 3, MAXL = 4 };
    const int64_t lengths[NB] = { 2, 0, 4, 1, 6 };
    int64_t offsets[NB + 1] = { 0 };
    for (int b = 0; b < NB; b++)
        offsets[b + 1] = offsets[b] + lengths[b];
    const int64_t vshape[2] = { offsets[NB], D }, oshape[1] = { NB + 1 };
    loom_tensor *values = demo_f32(2, vshape, NULL), *off = demo_tensor(LOOM_DTYPE_I64, 1, oshape);
    loom_tensor *dense = NULL, *back = NULL;
    loom_attrs *a = NULL;
    const int64_t max_lengths[1] = { MAXL };
    int rc = values && off && loom_attrs_new(&a) == LOOM_OK
                     && loom_attrs_set_ints(a, "max_lengths", max_lengths, 1) == LOOM_OK
                     && loom_attrs_set_float(a, "padding_value", -1.0) == LOOM_OK
                 ? DEMO_OK
                 : DEMO_FAIL;
    if (rc == DEMO_OK) {
        float *v = loom_data(values);
        for (int64_t i = 0; i < loom_numel(values); i++)
            v[i] = (float)(i / D + 1);
        memcpy(loom_data(off), offsets, sizeof offsets);
        printf("  %d rows of lengths 2 0 4 1 6 (values f32[%lld, %d], row r holds r+1)\n", NB,
               (long long)offsets[NB], D);
        const loom_tensor *in[2] = { values, off };
        if (loom_run("fbgemm.jagged_to_padded_dense", in, 2, a, &dense, 1, NULL) != LOOM_OK)
            rc = demo_fail();
        else
            demo_record("jagged_to_padded_dense");
    }
    if (rc == DEMO_OK) {
        const float *d = loom_data(dense);
        printf("  jagged_to_padded_dense(max_lengths=[%d], padding_value=-1): f32[%lld, %lld, %lld]; "
               "first column per row:\n", MAXL, (long long)dense->shape[0], (long long)dense->shape[1],
               (long long)dense->shape[2]);
        for (int b = 0; b < NB; b++) {
            printf("    row %d:", b);
            for (int l = 0; l < MAXL; l++)
                printf(" %4.0f", d[(b * MAXL + l) * D]);
            printf("%s\n", lengths[b] > MAXL ? "   (truncated)" : "");
        }
        const loom_tensor *in[2] = { dense, off };
        if (loom_run("fbgemm.dense_to_jagged", in, 2, NULL, &back, 1, NULL) != LOOM_OK)
            rc = demo_fail();
        else
            demo_record("dense_to_jagged");
    }
    if (rc == DEMO_OK)
        printf("  dense_to_jagged back: f32[%lld, %lld] (rows past max_lengths come back as 0)\n",
               (long long)back->shape[0], (long long)back->shape[1]);
    loom_attrs_free(a);
    loom_tensor_free(values);
    loom_tensor_free(off);
    loom_tensor_free(dense);
    loom_tensor_free(back);
    return rc;
}
