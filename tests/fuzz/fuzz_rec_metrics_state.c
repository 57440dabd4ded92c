/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_rec_metrics_state.c - feeds: the rec pack's checkpoint reader,
** rec.metrics_load_state. The first bytes choose the object (n_tasks 1-3,
** window_size 1-64) and how many real batches it sees first; then either
** (mode bit clear) the rest edits a real checkpoint of that object: pairs
** of (position, new value) over its f64 entries, values that may be NaN,
** infinities, negatives, fractions or huge counts, and an optional cut or
** extension of its length; or (mode bit set) the rest is the whole state,
** read as raw f64s. The state goes into a fresh object of the same
** configuration.
** Asserts: no sanitizer report (the state is an exact-size heap block); a
** refused state sets a message; an accepted one leaves an object that
** computes, takes another batch, and checkpoints again, with every byte
** of the results read.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

#define N_BATCH 8

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("core,fbgemm,rec");
    FZ_CHECK(loom_op_find("rec.metrics_load_state") != NULL, "the rec pack did not load");
    return 0;
}

static loom_status method(loom_object *o, const char *op, const loom_tensor *const *in, int32_t n_in,
                          loom_tensor **out, int32_t n_out)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    return loom_run(op, in, n_in, NULL, out, n_out, &opt);
}

/* One batch of predictions and labels for T tasks, made from a seed. */
static void update(loom_object *o, int64_t T, uint32_t seed)
{
    int64_t shape[2] = { T, N_BATCH };
    loom_tensor *p = NULL, *y = NULL;
    FZ_CHECK(loom_tensor_new(&p, LOOM_DTYPE_F32, 2, shape, NULL) == LOOM_OK, "tensor");
    FZ_CHECK(loom_tensor_new(&y, LOOM_DTYPE_F32, 2, shape, NULL) == LOOM_OK, "tensor");
    for (int64_t i = 0; i < T * N_BATCH; i++) {
        seed = seed * 1664525u + 1013904223u;
        ((float *)loom_data(p))[i] = (float)(seed >> 8) / 16777216.0f;
        ((float *)loom_data(y))[i] = (float)((seed >> 3) & 1);
    }
    const loom_tensor *in[2] = { p, y };
    FZ_CHECK(method(o, "rec.metrics_update", in, 2, NULL, 0) == LOOM_OK, "update: %s", loom_last_error());
    loom_tensor_free(p);
    loom_tensor_free(y);
}

static loom_object *make(int64_t T, int64_t W)
{
    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    FZ_CHECK(loom_attrs_set_int(a, "n_tasks", T) == LOOM_OK, "n_tasks");
    FZ_CHECK(loom_attrs_set_int(a, "window_size", W) == LOOM_OK, "window_size");
    loom_object *o = NULL;
    FZ_CHECK(loom_object_create(&o, "rec.metrics", a, NULL) == LOOM_OK, "create: %s", loom_last_error());
    loom_attrs_free(a);
    return o;
}

static loom_tensor *checkpoint(loom_object *o)
{
    loom_tensor *s = NULL;
    FZ_CHECK(method(o, "rec.metrics_state", NULL, 0, &s, 1) == LOOM_OK, "state: %s", loom_last_error());
    fz_touch_tensor(s);
    return s;
}

/* An edited entry: mostly small whole numbers (the counts the reader checks), sometimes special values. */
static double take_value(fz_cursor *c, double old)
{
    const uint8_t k = fz_u8(c);
    switch (k % 8) {
    case 0: return NAN;
    case 1: return k & 8 ? INFINITY : -INFINITY;
    case 2: return old + (k & 8 ? 0.5 : -1);
    case 3: return (double)fz_u32(c) * (k & 8 ? 1e9 : 1);
    case 4: return -(double)(k >> 3);
    default: return (double)(k >> 3);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_cursor c = { data, size };
    const uint8_t cfg = fz_u8(&c), batches = fz_u8(&c);
    const int64_t T = 1 + cfg % 3, W = 1 + (cfg >> 2) % 64;
    loom_object *src = make(T, W);
    for (int i = 0; i < batches % 12; i++)
        update(src, T, (uint32_t)i * 7919u + batches);
    loom_tensor *real = checkpoint(src);
    loom_object_free(src);

    int64_t n = loom_numel(real);
    loom_tensor *state = NULL;
    if (batches & 0x80) {                          /* the whole state from the input */
        n = (int64_t)(c.n / sizeof(double));
        FZ_CHECK(loom_tensor_new(&state, LOOM_DTYPE_F64, 1, &n, NULL) == LOOM_OK, "tensor");
        if (n > 0)
            memcpy(loom_data(state), c.p, (size_t)n * sizeof(double));
    } else {                                       /* edits of the real one, then a cut or an extension */
        const uint8_t resize = fz_u8(&c);
        int64_t m = n;
        if (resize & 1)
            m = n - (int64_t)(resize >> 1) % (n + 1);
        else if (resize & 2)
            m = n + (resize >> 2) % 8;
        FZ_CHECK(loom_tensor_new(&state, LOOM_DTYPE_F64, 1, &m, NULL) == LOOM_OK, "tensor");
        double *d = loom_data(state);
        for (int64_t i = 0; i < m; i++)
            d[i] = i < n ? ((const double *)loom_data(real))[i] : 0;
        while (c.n >= 2 && m > 0) {
            const int64_t at = (int64_t)fz_u8(&c) % m;
            d[at] = take_value(&c, d[at]);
        }
    }
    loom_tensor_free(real);

    loom_object *dst = make(T, W);
    const loom_tensor *in[1] = { state };
    if (method(dst, "rec.metrics_load_state", in, 1, NULL, 0) != LOOM_OK) {
        FZ_CHECK(loom_last_error()[0] != '\0', "a refused state set no message");
        fz_debug("refused: %s", loom_last_error());
    } else {
        loom_tensor *out[2] = { NULL, NULL };
        FZ_CHECK(method(dst, "rec.metrics_compute", NULL, 0, out, 2) == LOOM_OK, "compute: %s", loom_last_error());
        fz_touch_tensor(out[0]);
        fz_touch_tensor(out[1]);
        loom_tensor_free(out[0]);
        loom_tensor_free(out[1]);
        update(dst, T, 12345u);
        loom_tensor_free(checkpoint(dst));
    }
    loom_tensor_free(state);
    loom_object_free(dst);
    return 0;
}
