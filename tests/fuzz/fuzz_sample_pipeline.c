/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_sample_pipeline.c - feeds: the JSON pipeline of
** vision.transform_sample (the input is the attribute's text), run on a
** small sample: a uint8 image [3, 12, 14], two boxes, a mask per box and
** their labels, seeded; then on a batch [2, 3, 12, 14] with its two class
** labels (MixUp and CutMix's input). Asserts: no sanitizer report; a
** refused pipeline sets a message; a pipeline that runs gives four outputs
** whose every byte reads back (fz_touch_tensor), boxes [M, 4] with M
** labels, or the batch's labels as [2] int64 or, mixed, [2, K]. Sizes stay
** small because the allocation limit (8 MB a block, FZ_MAX_ALLOC) refuses
** a Resize or Pad to a huge canvas.
*/
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

static loom_tensor *image, *boxes, *masks, *labels, *batch, *classes;

static loom_tensor *make(loom_dtype dt, int32_t ndim, const int64_t *shape)
{
    loom_tensor *t = NULL;
    FZ_CHECK(loom_tensor_new(&t, dt, ndim, shape, NULL) == LOOM_OK, "tensor");
    return t;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* 8 MB a block: a canvas of about 1600 x 1600 x 3 bytes at most. A
    ** Resize to 8799 x 8799 fits the default 256M but takes over 10 s
    ** under ASan, a timeout that says nothing about the parser */
    setenv("FZ_MAX_ALLOC", "8M", 1);
    fz_init("core,vision");
    FZ_CHECK(loom_op_find("vision.transform_sample") != NULL, "the vision pack did not load");
    image = make(LOOM_DTYPE_U8, 3, (const int64_t[]){ 3, 12, 14 });
    boxes = make(LOOM_DTYPE_F32, 2, (const int64_t[]){ 2, 4 });
    masks = make(LOOM_DTYPE_U8, 3, (const int64_t[]){ 2, 12, 14 });
    labels = make(LOOM_DTYPE_I64, 1, (const int64_t[]){ 2 });
    uint8_t *px = loom_data(image), *m = loom_data(masks);
    for (int i = 0; i < 3 * 12 * 14; i++)
        px[i] = (uint8_t)(i * 29 + 7);
    for (int i = 0; i < 2 * 12 * 14; i++)
        m[i] = (uint8_t)(i % 5 == 0);
    const float b[8] = { 1, 2, 8, 9, 4.5f, 0, 13, 11.5f };
    memcpy(loom_data(boxes), b, sizeof b);
    ((int64_t *)loom_data(labels))[0] = 3;
    ((int64_t *)loom_data(labels))[1] = 7;
    batch = make(LOOM_DTYPE_U8, 4, (const int64_t[]){ 2, 3, 12, 14 });
    classes = make(LOOM_DTYPE_I64, 1, (const int64_t[]){ 2 });
    memcpy(loom_data(batch), px, 3 * 12 * 14);
    memcpy((uint8_t *)loom_data(batch) + 3 * 12 * 14, px, 3 * 12 * 14);
    ((int64_t *)loom_data(classes))[0] = 1;
    ((int64_t *)loom_data(classes))[1] = 4;
    return 0;
}

/* One run of the pipeline on the inputs; batch: the batch and its classes. */
static void run_once(const loom_attrs *a, const loom_tensor *const in[4], int is_batch)
{
    loom_tensor *out[4] = { NULL, NULL, NULL, NULL };
    const loom_status st = loom_run("vision.transform_sample", in, 4, a, out, 4, NULL);
    if (st != LOOM_OK) {
        FZ_CHECK(strcmp(loom_status_name(st), "?") != 0, "unknown status %d", (int)st);
        FZ_CHECK(loom_last_error()[0] != '\0', "status %d without a message", (int)st);
    } else {
        for (int k = 0; k < 4; k++) {
            FZ_CHECK(out[k] != NULL, "output %d missing", k);
            fz_touch_tensor(out[k]);
        }
        FZ_CHECK(out[1]->ndim == 2 && out[1]->shape[1] == 4, "boxes are not [M, 4]");
        if (is_batch)
            FZ_CHECK(out[3]->shape[0] == 2 && (out[3]->ndim == 1 || out[3]->ndim == 2), "the batch's labels are not "
                     "[2] or [2, K]");
        else
            FZ_CHECK(out[3]->shape[0] == out[1]->shape[0], "%lld labels for %lld boxes", (long long)out[3]->shape[0],
                     (long long)out[1]->shape[0]);
    }
    for (int k = 0; k < 4; k++)
        loom_tensor_free(out[k]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_cursor cur = { data, size };
    char *text = fz_str(&cur, 0, 4096);
    FZ_CHECK(text != NULL, "out of memory");
    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    FZ_CHECK(loom_attrs_set_string(a, "pipeline", text) == LOOM_OK, "pipeline");
    const loom_tensor *in[4] = { image, boxes, masks, labels };
    run_once(a, in, 0);
    const loom_tensor *in_batch[4] = { batch, NULL, NULL, classes };
    run_once(a, in_batch, 1);
    loom_attrs_free(a);
    free(text);
    return 0;
}
