/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_vision_transformers.c - feeds: the weights file of the vision pack's
** transformer classes. The first byte of an input chooses the class (bit 0:
** vision.vision_transformer with the tiny test architecture, patch 8,
** 2 layers, 2 heads, hidden 16, mlp 32; else vision.swin_transformer with
** patch 4, embed 8, depths 2-2, heads 2-4, window 4) and the side of the
** square image of one call (bits 1-2: 8, 16, 24 or 32 pixels); the rest is
** the safetensors file loom_object_create reads (torchvision's state_dict
** keys: every key, dtype and shape checked, the position embedding's grid,
** Swin's relative_position_index range-checked). When the object is
** created, one forward runs on an input f32 [1, 3, side, side].
** Asserts: no sanitizer report (the weights are read from fuzz_util's
** exact-size copy of the file); a failed create leaves no object and sets a
** message; a call either succeeds with logits f32 [1, classes] whose every
** byte is read or fails with a message.
*/
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("vision");
    FZ_CHECK(loom_op_find("vision.vision_transformer") != NULL, "the vision pack did not load");
    return 0;
}

static loom_attrs *vit_attrs(void)
{
    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    loom_attrs_set_int(a, "patch_size", 8);
    loom_attrs_set_int(a, "num_layers", 2);
    loom_attrs_set_int(a, "num_heads", 2);
    loom_attrs_set_int(a, "hidden_dim", 16);
    loom_attrs_set_int(a, "mlp_dim", 32);
    return a;
}

static loom_attrs *swin_attrs(void)
{
    loom_attrs *a = NULL;
    const int64_t patch = 4, depths[2] = { 2, 2 }, heads[2] = { 2, 4 }, window = 4;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    loom_attrs_set_ints(a, "patch_size", &patch, 1);
    loom_attrs_set_int(a, "embed_dim", 8);
    loom_attrs_set_ints(a, "depths", depths, 2);
    loom_attrs_set_ints(a, "num_heads", heads, 2);
    loom_attrs_set_ints(a, "window_size", &window, 1);
    return a;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const int vit = data[0] & 1;
    const int64_t side = 8 * (1 + ((data[0] >> 1) & 3));
    const char *cls = vit ? "vision.vision_transformer" : "vision.swin_transformer";
    const char *path = fz_file(data + 1, size - 1);
    loom_attrs *a = vit ? vit_attrs() : swin_attrs();
    loom_object *obj = (loom_object *)1;
    loom_status s = loom_object_create(&obj, cls, a, path);
    loom_attrs_free(a);
    fz_debug("create %s: %s %s", cls, loom_status_name(s), s == LOOM_OK ? "" : loom_last_error());
    if (s != LOOM_OK) {
        FZ_CHECK(obj == NULL, "failed create left an object");
        FZ_CHECK(loom_last_error()[0] != '\0', "failure %s without a message", loom_status_name(s));
        return 0;
    }
    const int64_t xs[4] = { 1, 3, side, side };
    loom_tensor *x = NULL, *y = NULL;
    FZ_CHECK(loom_tensor_new(&x, LOOM_DTYPE_F32, 4, xs, NULL) == LOOM_OK, "input");
    for (int64_t i = 0; i < 3 * side * side; i++)
        ((float *)loom_data(x))[i] = (float)(i % 5) - 2.0f;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    const loom_tensor *in[1] = { x };
    s = loom_run(cls, in, 1, NULL, &y, 1, &opt);
    fz_debug("call on f32[1, 3, %lld, %lld]: %s %s", (long long)side, (long long)side, loom_status_name(s),
             s == LOOM_OK ? "" : loom_last_error());
    if (s == LOOM_OK) {
        FZ_CHECK(y->ndim == 2 && y->shape[0] == 1, "logits shape");
        fz_touch_tensor(y);
        loom_tensor_free(y);
    } else {
        FZ_CHECK(loom_last_error()[0] != '\0', "failure %s without a message", loom_status_name(s));
    }
    loom_tensor_free(x);
    loom_object_free(obj);
    return 0;
}
