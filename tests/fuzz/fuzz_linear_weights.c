/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_linear_weights.c - feeds: the core pack's weights file. The first
** byte of an input chooses the batch of one call; the rest is the
** safetensors file that loom_object_create(&obj, "core.linear", NULL, path)
** reads ('weight' f32 [out, in], optional 'bias' f32 [out]). When the
** object is created, one core.linear call runs on an input f32 [B, in]
** (when it is small enough to allocate).
** Asserts: no sanitizer report (the weights are read from fuzz_util's
** exact-size copy of the file); a failed create leaves no object and sets
** a message; the call succeeds with an output f32 [B, out] whose every byte
** is read.
*/
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

#define MAX_INPUT_ELEMS 65536

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("core");
    FZ_CHECK(loom_op_find("core.linear") != NULL, "the core pack did not load");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const int64_t B = data[0] & 3;
    const char *path = fz_file(data + 1, size - 1);

    loom_object *obj = (loom_object *)1;
    loom_status s = loom_object_create(&obj, "core.linear", NULL, path);
    fz_debug("create: %s %s", loom_status_name(s), s == LOOM_OK ? "" : loom_last_error());
    if (s != LOOM_OK) {
        FZ_CHECK(obj == NULL, "failed create left an object");
        FZ_CHECK(loom_last_error()[0] != '\0', "failure %s without a message", loom_status_name(s));
        return 0;
    }

    /* in and out from the file, as loom's reader sees it */
    loom_safetensors *st = NULL;
    const loom_tensor *w = NULL;
    FZ_CHECK(loom_safetensors_open(&st, path) == LOOM_OK && loom_safetensors_get(st, "weight", &w) == LOOM_OK,
             "an object over a file without 'weight'");
    const int64_t out_f = w->shape[0], in_f = w->shape[1];
    loom_safetensors_close(st);

    if (in_f <= MAX_INPUT_ELEMS / 4 && out_f <= MAX_INPUT_ELEMS) {
        const int64_t xs[2] = { B, in_f };
        loom_tensor *x = NULL, *y = NULL;
        FZ_CHECK(loom_tensor_new(&x, LOOM_DTYPE_F32, 2, xs, NULL) == LOOM_OK, "input");
        for (int64_t i = 0; i < B * in_f; i++)
            ((float *)loom_data(x))[i] = (float)(i % 7) - 3.0f;
        loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
        opt.object = obj;
        const loom_tensor *in[1] = { x };
        s = loom_run("core.linear", in, 1, NULL, &y, 1, &opt);
        fz_debug("call on f32[%lld, %lld]: %s", (long long)B, (long long)in_f, loom_status_name(s));
        FZ_CHECK(s == LOOM_OK, "core.linear on f32[%lld, %lld]: %s", (long long)B, (long long)in_f,
                 loom_status_name(s));
        FZ_CHECK(y->ndim == 2 && y->shape[0] == B && y->shape[1] == out_f, "output shape");
        fz_touch_tensor(y);
        loom_tensor_free(y);
        loom_tensor_free(x);
    }
    loom_object_free(obj);
    return 0;
}
