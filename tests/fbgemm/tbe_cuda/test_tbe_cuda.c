/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_tbe_cuda.c - conformance of the cuda forward of fbgemm.tbe
** (plugins/fbgemm/tbe/cuda) with the cpu kernel, for every weight type.
**
** The reference is the fbgemm.tbe op of fbgemm.so on the cpu, through the
** public API. Each batch is checked on the cuda side twice:
**  - the kernel launcher of the fbgemm-cuda kernels library, called
**    directly with the same table bytes laid out on the device as
**    tbe_cuda.h says (the kernels alone, independent of the pack glue);
**  - the fbgemm.tbe op through loom_run with its inputs on the cuda device
**    and the backend forced to "cuda": the kernel of fbgemm-cuda.so runs on
**    the object made by fbgemm.so (one pack family, so the dispatcher hands
**    it the object's state), mirroring the tables on the device itself.
** The numerics are the cpu kernel's operation for operation, so outputs must
** be identical bytes.
**
** Covered: FP32 FP16 BF16 FP8 INT8 INT4 INT2; pooling sum / mean (with and
** without per-sample weights) / none; outputs fp32 / fp16 / bf16; i32 and
** i64 indices; empty bags, pruned (-1) indices, dims needing two chunks and
** partial groups; VBE; the ignore-mode repairs and the fatal flags.
** Built twice (meson.build): against the CUDA runtime, where every test is
** skipped with a message when no device exists; and against emu/, which
** runs the same kernels on the host (TBE_TEST_EMULATED: the launcher only,
** as loom's own cuda device is the real one).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cuda_runtime.h>

#include "tu_ops.h"
#include "tbe_cuda.h"

enum { FP32 = 0, FP16 = 1, INT8 = 2, INT4 = 3, INT2 = 4, BF16 = 5, FP8 = 6 };
static const char *const wt_names[] = { "fp32", "fp16", "int8", "int4", "int2", "bf16", "fp8" };
static const int all_types[] = { FP32, FP16, BF16, FP8, INT8, INT4, INT2 };

#define NT 2                    /* tables = features */

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int64_t row_bytes(int wt, int64_t dim)
{
    switch (wt) {
    case FP32: return 4 * dim;
    case FP16:
    case BF16: return 2 * dim;
    case FP8: return dim;
    case INT8: return dim + 4;
    case INT4: return dim / 2 + 4;
    default: return dim / 4 + 4;
    }
}

static int have_device(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        (void)cudaGetLastError();
        return 0;
    }
    return 1;
}

#define SKIP_WITHOUT_DEVICE()                                                   \
    do {                                                                        \
        if (!have_device()) {                                                   \
            print_message("no CUDA device: the cuda TBE kernel was not run\n"); \
            skip();                                                             \
        }                                                                       \
    } while (0)

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess)                                                                \
            fail_msg("%s: %s", #call, cudaGetErrorString(e_));                                \
    } while (0)

/* ------------------------------------------------------------- tables */

typedef struct tables {
    int wt;
    int64_t dim[NT], rows[NT], rb[NT];
    uint8_t *host[NT];
    char path[96];
} tables;

static uint16_t small_half(void)
{
    return (uint16_t)(0x2000u + (next() % 0x1800u) + (next() % 2 ? 0x8000u : 0));
}

static void make_tables(tables *tb, int wt, int64_t d0, int64_t d1)
{
    static int serial;
    loom_tensor *t[NT];
    const char *names[NT] = { "table.0", "table.1" };
    tb->wt = wt;
    tb->dim[0] = d0;
    tb->dim[1] = d1;
    for (int i = 0; i < NT; i++) {
        tb->rows[i] = 50 + 30 * i;
        tb->rb[i] = row_bytes(wt, tb->dim[i]);
        int64_t shape[2] = { tb->rows[i], tb->rb[i] };
        assert_int_equal(loom_tensor_new(&t[i], LOOM_DTYPE_U8, 2, shape, NULL), LOOM_OK);
        uint8_t *d = t[i]->data;
        for (int64_t r = 0; r < tb->rows[i]; r++) {
            uint8_t *row = d + r * tb->rb[i];
            for (int64_t j = 0; j < tb->rb[i]; j++)
                row[j] = (uint8_t)next();
            for (int64_t j = 0; j < tb->dim[i]; j++) {
                float f = (float)((int64_t)(next() % 4001) - 2000) / 512.0f;
                uint32_t u;
                memcpy(&u, &f, 4);
                if (wt == FP32)
                    memcpy(row + 4 * j, &f, 4);
                else if (wt == BF16 || wt == FP16) {
                    /* bf16: the top half; fp16: a small normal half */
                    uint16_t h = wt == BF16 ? (uint16_t)(u >> 16) : small_half();
                    memcpy(row + 2 * j, &h, 2);
                }
            }
            if (wt == INT8 || wt == INT4 || wt == INT2) {
                uint16_t s = small_half(), b = small_half();
                memcpy(row, &s, 2);
                memcpy(row + 2, &b, 2);
            }
        }
        tb->host[i] = malloc((size_t)(tb->rows[i] * tb->rb[i]));
        memcpy(tb->host[i], d, (size_t)(tb->rows[i] * tb->rb[i]));
    }
    snprintf(tb->path, sizeof tb->path, "/tmp/loom_tbe_cuda_%d_%d.safetensors", (int)getpid(), serial++);
    assert_int_equal(loom_safetensors_write(tb->path, names, (const loom_tensor *const *)t, NT), LOOM_OK);
    for (int i = 0; i < NT; i++)
        loom_tensor_free(t[i]);
}

static void free_tables(tables *tb)
{
    unlink(tb->path);
    for (int i = 0; i < NT; i++)
        free(tb->host[i]);
}

/* cache_load_factor < 1: a cached object (the cuda kernel keeps its tables
** in managed memory, tbe_cuda_pack.c). */
static loom_object *make_object_cached(const tables *tb, double cache_load_factor)
{
    char tys[32];
    snprintf(tys, sizeof tys, "%s,%s", wt_names[tb->wt], wt_names[tb->wt]);
    loom_attrs *a = NULL;
    loom_object *o = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "weights_tys", tys), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "embedding_dims", tb->dim, NT), LOOM_OK);
    assert_int_equal(loom_attrs_set_float(a, "cache_load_factor", cache_load_factor), LOOM_OK);
    if (loom_object_create(&o, "fbgemm.tbe", a, tb->path) != LOOM_OK)
        fail_msg("fbgemm.tbe create (%s): %s", wt_names[tb->wt], loom_last_error());
    loom_attrs_free(a);
    return o;
}

static loom_object *make_object(const tables *tb) { return make_object_cached(tb, 1.0); }

/* ------------------------------------------------------------- a batch */

typedef struct batch {
    int64_t B, R;               /* R > 0: VBE with bsz[NT][R] */
    int64_t bsz[NT][3];
    int64_t n_bags, n;
    int64_t offs[NT * 40 + 1];
    int64_t idx[NT * 40 * 8];
    float psw[NT * 40 * 8];
    int with_psw, i64;
} batch;

static void make_batch(batch *bt, const tables *tb, int64_t B, int64_t R, int with_psw, int i64)
{
    memset(bt, 0, sizeof *bt);
    bt->B = B;
    bt->R = R;
    bt->with_psw = with_psw;
    bt->i64 = i64;
    int64_t k = 0;
    bt->offs[0] = 0;
    for (int f = 0; f < NT; f++) {
        int64_t bags = B;
        if (R > 0) {
            bags = 0;
            for (int64_t r = 0; r < R; r++)
                bags += (bt->bsz[f][r] = (int64_t)(next() % 6));
        }
        for (int64_t b = 0; b < bags; b++, k++) {
            int64_t L = (int64_t)(next() % 8);
            for (int64_t l = 0; l < L; l++) {
                bt->idx[bt->n] = next() % 11 == 0 ? -1 : (int64_t)(next() % (uint64_t)tb->rows[f]);
                bt->psw[bt->n] = (float)((int64_t)(next() % 33) - 16) / 8.0f;
                bt->n++;
            }
            bt->offs[k + 1] = bt->n;
        }
    }
    bt->n_bags = k;
}

static loom_tensor *host_index_tensor(const int64_t *v, int64_t n, int i64)
{
    loom_tensor *t = NULL;
    assert_int_equal(loom_tensor_new(&t, i64 ? LOOM_DTYPE_I64 : LOOM_DTYPE_I32, 1, &n, NULL), LOOM_OK);
    for (int64_t i = 0; i < n; i++) {
        if (i64)
            ((int64_t *)t->data)[i] = v[i];
        else
            ((int32_t *)t->data)[i] = (int32_t)v[i];
    }
    return t;
}

/* The fbgemm.tbe op through the public API, with its inputs on device (NULL:
** the host) and backend forced unless NULL; on success *host_out is the
** output copied to the host. Returns loom_run's status. */
static loom_status api_run(loom_object *o, const batch *bt, const char *pooling, const char *out_dtype,
                           const char *bounds, const char *backend, const loom_dl_device *device,
                           loom_tensor **host_out)
{
    loom_tensor *ind = host_index_tensor(bt->idx, bt->n, bt->i64);
    loom_tensor *off = host_index_tensor(bt->offs, bt->n_bags + 1, bt->i64);
    loom_tensor *psw = NULL, *vbe = NULL, *out = NULL;
    if (bt->with_psw) {
        int64_t n = bt->n;
        assert_int_equal(loom_tensor_new(&psw, LOOM_DTYPE_F32, 1, &n, NULL), LOOM_OK);
        memcpy(psw->data, bt->psw, (size_t)n * sizeof(float));
    }
    if (bt->R > 0) {
        int64_t shape[2] = { NT, bt->R };
        assert_int_equal(loom_tensor_new(&vbe, LOOM_DTYPE_I64, 2, shape, NULL), LOOM_OK);
        for (int f = 0; f < NT; f++)
            for (int64_t r = 0; r < bt->R; r++)
                ((int64_t *)vbe->data)[f * bt->R + r] = bt->bsz[f][r];
    }
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "pooling_mode", pooling), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "output_dtype", out_dtype), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "bounds_check_mode", bounds), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    opt.backend = backend;
    loom_tensor *in[4] = { ind, off, psw, vbe };
    for (int i = 0; device != NULL && i < 4; i++) {
        loom_tensor *moved = NULL;
        if (in[i] != NULL && loom_tensor_copy_to(&moved, in[i], device) != LOOM_OK)
            fail_msg("input %d to the device: %s", i, loom_last_error());
        loom_tensor_free(in[i]);
        in[i] = moved;
    }
    loom_status st = loom_run("fbgemm.tbe", (const loom_tensor *const *)in, 4, a, &out, 1, &opt);
    if (st == LOOM_OK && device != NULL) {
        loom_tensor *host = NULL;
        if (loom_tensor_copy_to(&host, out, NULL) != LOOM_OK)
            fail_msg("output to the host: %s", loom_last_error());
        loom_tensor_free(out);
        out = host;
    }
    loom_attrs_free(a);
    for (int i = 0; i < 4; i++)
        loom_tensor_free(in[i]);
    *host_out = out;
    return st;
}

/* api_run that must succeed on backend; returns the host output. */
static loom_tensor *api_forward(loom_object *o, const batch *bt, const char *pooling, const char *out_dtype,
                                const char *bounds, const char *backend, const loom_dl_device *device)
{
    loom_tensor *out = NULL;
    if (api_run(o, bt, pooling, out_dtype, bounds, backend, device, &out) != LOOM_OK)
        fail_msg("%s fbgemm.tbe: %s", backend, loom_last_error());
    loom_dispatch_info di = LOOM_DISPATCH_INFO_INIT;
    assert_int_equal(loom_last_dispatch(&di), LOOM_OK);
    assert_string_equal(di.backend, backend);
    return out;
}

static loom_tensor *cpu_forward(loom_object *o, const batch *bt, const char *pooling, const char *out_dtype,
                                const char *bounds)
{
    return api_forward(o, bt, pooling, out_dtype, bounds, "cpu", NULL);
}

/* The first cuda device loom reports; 0 when none (or in the emulated build,
** where only the launcher runs). */
static int loom_cuda_device(loom_dl_device *out)
{
#ifndef TBE_TEST_EMULATED
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &di) == LOOM_OK && di.device.device_type == LOOM_DEVICE_CUDA) {
            *out = di.device;
            return 1;
        }
    }
#endif
    (void)out;
    return 0;
}

/* ---------------------------------------------------------- cuda side */

static void *to_dev(const void *src, size_t bytes)
{
    void *d = NULL;
    CK(cudaMalloc(&d, bytes > 0 ? bytes : 1));
    if (bytes > 0)
        CK(cudaMemcpy(d, src, bytes, cudaMemcpyHostToDevice));
    return d;
}

/* Run the launcher; returns the output bytes (malloc) and the flags. */
static void *cuda_forward(const tables *tb, const batch *bt, int pooling, int out_kind, size_t out_bytes,
                          fbg_cuda_flags *flags_out)
{
    void *rows[NT];
    fbg_cuda_feature feat[NT];
    int64_t d_off = 0, total_D = tb->dim[0] + tb->dim[1];
    for (int t = 0; t < NT; t++) {
        int64_t stride = (tb->rb[t] + 15) / 16 * 16;
        CK(cudaMalloc(&rows[t], (size_t)(tb->rows[t] * stride)));
        CK(cudaMemset(rows[t], 0, (size_t)(tb->rows[t] * stride)));
        CK(cudaMemcpy2D(rows[t], (size_t)stride, tb->host[t], (size_t)tb->rb[t], (size_t)tb->rb[t],
                        (size_t)tb->rows[t], cudaMemcpyHostToDevice));
        feat[t] = (fbg_cuda_feature){ .rows = rows[t], .n_rows = tb->rows[t], .stride = stride, .d_offset = d_off,
                                      .dim = (int32_t)tb->dim[t], .wtype = tb->wt };
        d_off += tb->dim[t];
    }
    int32_t idx32[sizeof bt->idx / sizeof bt->idx[0]], off32[sizeof bt->offs / sizeof bt->offs[0]];
    for (int64_t i = 0; i < bt->n; i++)
        idx32[i] = (int32_t)bt->idx[i];
    for (int64_t i = 0; i <= bt->n_bags; i++)
        off32[i] = (int32_t)bt->offs[i];
    const size_t es = bt->i64 ? 8 : 4;

    fbg_tbe_cuda_args a;
    memset(&a, 0, sizeof a);
    a.features = to_dev(feat, sizeof feat);
    a.n_features = NT;
    a.index_is_i64 = bt->i64;
    a.indices = to_dev(bt->i64 ? (const void *)bt->idx : (const void *)idx32, (size_t)bt->n * es);
    a.offsets = to_dev(bt->i64 ? (const void *)bt->offs : (const void *)off32, (size_t)(bt->n_bags + 1) * es);
    a.n_indices = bt->n;
    a.n_bags = bt->n_bags;
    a.per_sample_weights = bt->with_psw ? to_dev(bt->psw, (size_t)bt->n * sizeof(float)) : NULL;
    a.pooling = pooling;
    a.output_kind = out_kind;
    CK(cudaMalloc(&a.output, out_bytes > 0 ? out_bytes : 1));
    CK(cudaMemset(a.output, 0xA5, out_bytes > 0 ? out_bytes : 1));
    a.B = bt->B;
    a.total_D = total_D;
    a.fp8_ebits = 4;
    a.fp8_bias = 7;
    int64_t vb[NT + 1], vr[NT * 4], vo[3 * NT + 1];
    if (bt->R > 0) {
        const int64_t R = bt->R;
        vb[0] = 0;
        for (int f = 0; f < NT; f++) {
            vr[f * (R + 1)] = 0;
            for (int64_t r = 0; r < R; r++)
                vr[f * (R + 1) + r + 1] = vr[f * (R + 1) + r] + bt->bsz[f][r];
            vb[f + 1] = vb[f] + vr[f * (R + 1) + R];
        }
        vo[0] = 0;
        for (int64_t r = 0; r < R; r++)
            for (int f = 0; f < NT; f++)
                vo[r * NT + f + 1] = vo[r * NT + f] + bt->bsz[f][r] * tb->dim[f];
        a.vbe = 1;
        a.vbe_ranks = (int32_t)R;
        a.B = 0;
        a.vbe_B_offsets = to_dev(vb, sizeof(int64_t) * (NT + 1));
        a.vbe_B_offsets_rank = to_dev(vr, sizeof(int64_t) * (size_t)(NT * (R + 1)));
        a.vbe_output_offsets = to_dev(vo, sizeof(int64_t) * (size_t)(R * NT + 1));
    }
    CK(cudaMalloc((void **)&a.fixed_offsets, sizeof(int64_t) * (size_t)(bt->n_bags + 1)));
    CK(cudaMalloc((void **)&a.flags, sizeof(fbg_cuda_flags)));

    int e = fbg_tbe_cuda_forward(&a, NULL);
    if (e != 0)
        fail_msg("launch: %s", fbg_tbe_cuda_error_string(e));
    CK(cudaDeviceSynchronize());
    void *out = malloc(out_bytes > 0 ? out_bytes : 1);
    CK(cudaMemcpy(out, a.output, out_bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(flags_out, a.flags, sizeof *flags_out, cudaMemcpyDeviceToHost));

    void *to_free[] = { (void *)a.features, (void *)a.indices, (void *)a.offsets, (void *)a.per_sample_weights,
                        a.output, (void *)a.vbe_B_offsets, (void *)a.vbe_B_offsets_rank,
                        (void *)a.vbe_output_offsets, a.fixed_offsets, a.flags, rows[0], rows[1] };
    for (size_t i = 0; i < sizeof to_free / sizeof to_free[0]; i++)
        if (to_free[i] != NULL)
            cudaFree(to_free[i]);
    return out;
}

static int pooling_code(const char *p) { return strcmp(p, "sum") == 0 ? 0 : strcmp(p, "mean") == 0 ? 1 : 2; }
static int out_code(const char *o) { return strcmp(o, "fp32") == 0 ? 0 : strcmp(o, "fp16") == 0 ? 1 : 2; }

/* cpu op vs cuda launcher on one batch: identical bytes. */
static void compare(const tables *tb, loom_object *o, const batch *bt, const char *pooling, const char *out_dtype,
                    const char *bounds, fbg_cuda_flags *flags)
{
    loom_tensor *want = cpu_forward(o, bt, pooling, out_dtype, bounds);
    size_t bytes = loom_tensor_nbytes(want);
    fbg_cuda_flags fl;
    uint8_t *got = cuda_forward(tb, bt, pooling_code(pooling), out_code(out_dtype), bytes, &fl);
    if (memcmp(got, want->data, bytes) != 0) {
        size_t i = 0;
        while (((const uint8_t *)want->data)[i] == got[i])
            i++;
        fail_msg("%s %s -> %s%s%s: cuda differs from cpu first at byte %zu of %zu", wt_names[tb->wt], pooling,
                 out_dtype, bt->with_psw ? " (weighted)" : "", bt->R > 0 ? " (VBE)" : "", i, bytes);
    }
    if (flags != NULL)
        *flags = fl;
    free(got);
    loom_dl_device dev;
    if (loom_cuda_device(&dev)) {
        loom_tensor *api = api_forward(o, bt, pooling, out_dtype, bounds, "cuda", &dev);
        assert_int_equal(loom_tensor_nbytes(api), bytes);
        const uint8_t *g = api->data, *w = want->data;
        for (size_t i = 0; i < bytes; i++)
            if (g[i] != w[i])
                fail_msg("%s %s -> %s%s%s: loom_run on cuda differs from cpu first at byte %zu of %zu",
                         wt_names[tb->wt], pooling, out_dtype, bt->with_psw ? " (weighted)" : "",
                         bt->R > 0 ? " (VBE)" : "", i, bytes);
        loom_tensor_free(api);
    }
    loom_tensor_free(want);
}

/* ----------------------------------------------------------------- tests */

static void test_every_type_pooled(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    for (size_t i = 0; i < sizeof all_types / sizeof all_types[0]; i++) {
        tables tb;
        /* 136: two chunks; 22: a partial group of 4 (INT2 needs D % 4 == 0) */
        make_tables(&tb, all_types[i], 136, all_types[i] == INT2 ? 24 : 22);
        loom_object *o = make_object(&tb);
        batch bt;
        make_batch(&bt, &tb, 7, 0, 0, 1);
        compare(&tb, o, &bt, "sum", "fp32", "warning", NULL);
        make_batch(&bt, &tb, 5, 0, 1, 0);
        compare(&tb, o, &bt, "mean", "fp16", "warning", NULL);
        make_batch(&bt, &tb, 6, 0, 0, 0);
        compare(&tb, o, &bt, "mean", "bf16", "warning", NULL);
        make_batch(&bt, &tb, 4, 0, 1, 1);
        compare(&tb, o, &bt, "sum", "bf16", "warning", NULL);
        loom_object_free(o);
        free_tables(&tb);
    }
}

static void test_every_type_none(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    for (size_t i = 0; i < sizeof all_types / sizeof all_types[0]; i++) {
        tables tb;
        make_tables(&tb, all_types[i], 40, 40);
        loom_object *o = make_object(&tb);
        batch bt;
        make_batch(&bt, &tb, 5, 0, 1, 1);
        compare(&tb, o, &bt, "none", "fp32", "warning", NULL);
        make_batch(&bt, &tb, 5, 0, 0, 0);
        compare(&tb, o, &bt, "none", "fp16", "warning", NULL);
        loom_object_free(o);
        free_tables(&tb);
    }
}

static void test_vbe(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    const int types[] = { FP32, INT4 };
    for (int i = 0; i < 2; i++) {
        tables tb;
        make_tables(&tb, types[i], 24, 16);
        loom_object *o = make_object(&tb);
        batch bt;
        make_batch(&bt, &tb, 0, 3, 0, 1);
        compare(&tb, o, &bt, "sum", "fp32", "warning", NULL);
        make_batch(&bt, &tb, 0, 2, 1, 0);
        compare(&tb, o, &bt, "mean", "fp32", "warning", NULL);
        loom_object_free(o);
        free_tables(&tb);
    }
}

/* Bad offsets and indices: the ignore-mode repair equals the cpu's; fatal
** raises the flags. */
static void test_bounds(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    tables tb;
    make_tables(&tb, INT8, 16, 16);
    loom_object *o = make_object(&tb);
    batch bt;
    make_batch(&bt, &tb, 6, 0, 0, 1);
    bt.idx[1] = tb.rows[0] + 5;             /* index past its table */
    bt.idx[bt.n - 1] = -7;                  /* negative, not -1 */
    bt.offs[3] = bt.offs[2] + 100;          /* an end past N ... */
    bt.offs[4] = 1;                         /* ... and a decreasing pair */
    bt.offs[bt.n_bags] = bt.n + 3;          /* wrong last offset */
    fbg_cuda_flags fl;
    compare(&tb, o, &bt, "sum", "fp32", "ignore", &fl);
    assert_int_equal(fl.bits, FBG_CUDA_BAD_LAST_OFFSET | FBG_CUDA_BAD_BAG | FBG_CUDA_BAD_INDEX);
    assert_int_equal(fl.first_bag, 2);
    make_batch(&bt, &tb, 6, 0, 0, 0);
    bt.offs[0] = -4;                        /* a negative first offset */
    compare(&tb, o, &bt, "mean", "fp32", "ignore", &fl);
    assert_int_equal(fl.bits, FBG_CUDA_BAD_BAG);
    assert_int_equal(fl.first_bag, 0);
    make_batch(&bt, &tb, 6, 0, 0, 0);
    compare(&tb, o, &bt, "sum", "fp32", "fatal", &fl);
    assert_int_equal(fl.bits, 0);
    loom_object_free(o);
    free_tables(&tb);
}

/* The public API on its own: the default policy picks the cuda kernel of
** fbgemm-cuda.so for an object made by fbgemm.so when the inputs are on the
** device; a cached object (managed tables) matches the cpu too; a fatal
** bounds error comes back as a status with fbgemm's message. */
static void test_api_on_cuda(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
#ifdef TBE_TEST_EMULATED
    print_message("emulated CUDA runtime: loom_run on a cuda device is checked by the real build only\n");
    skip();
#else
    loom_dl_device dev;
    if (!loom_cuda_device(&dev))
        fail_msg("the CUDA runtime sees a device but loom lists none (is the core built with CUDA?)");
    tables tb;
    make_tables(&tb, INT4, 64, 32);
    loom_object *o = make_object(&tb);
    batch bt;
    make_batch(&bt, &tb, 6, 0, 1, 1);
    loom_tensor *want = cpu_forward(o, &bt, "sum", "fp32", "warning"), *got = NULL;
    assert_int_equal(api_run(o, &bt, "sum", "fp32", "warning", NULL, &dev, &got), LOOM_OK);
    loom_dispatch_info di = LOOM_DISPATCH_INFO_INIT;
    assert_int_equal(loom_last_dispatch(&di), LOOM_OK);
    assert_string_equal(di.backend, "cuda");
    assert_string_equal(di.impl, "cuda:warp-per-bag");
    tu_assert_identical(got, want, "fbgemm.tbe on cuda, default policy");
    loom_tensor_free(got);
    loom_tensor_free(want);

    /* Fatal bounds check through the op: a status and the message. */
    bt.idx[0] = 1000;                       /* past every table */
    got = NULL;
    assert_int_equal(api_run(o, &bt, "sum", "fp32", "fatal", "cuda", &dev, &got), LOOM_EINVAL);
    assert_null(got);
    assert_non_null(strstr(loom_last_error(), "bounds check (fatal)"));
    loom_object_free(o);

    /* A cached object: tables in managed memory on the cuda side. */
    loom_object *cached = make_object_cached(&tb, 0.5);
    make_batch(&bt, &tb, 5, 0, 0, 0);
    compare(&tb, cached, &bt, "mean", "fp16", "warning", NULL);
    make_batch(&bt, &tb, 0, 2, 1, 1);
    compare(&tb, cached, &bt, "sum", "fp32", "warning", NULL);
    loom_object_free(cached);
    free_tables(&tb);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type_pooled),
        cmocka_unit_test(test_every_type_none),
        cmocka_unit_test(test_vbe),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_api_on_cuda),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
