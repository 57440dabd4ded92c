/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_tbe_tables.c - feeds: the fbgemm pack's tables file. The first 8
** bytes of an input choose the fbgemm.tbe attributes (weights_tys from
** fp32/fp16/bf16/fp8/int8/int4/int2, pooling_mode, output_dtype,
** bounds_check_mode, row_alignment, embedding_dims, num_embeddings,
** feature_table_map, the row cache) and the shape of one batch; the rest is
** the safetensors file of tables (table.0, table.1, ...) that
** loom_object_create(&obj, "fbgemm.tbe", attrs, path) reads. When the object
** is created, one forward call (fbgemm.tbe) runs on valid indices and
** offsets (in-range rows, or -1 for a pruned row), then fbgemm.tbe_cache_stats.
** Asserts: no sanitizer report (the tables are read from fuzz_util's
** exact-size copy of the file, so a row read past a table's end in the file
** is a heap overflow); a failed create leaves no object and sets a message;
** the forward on valid input succeeds with the documented output shape
** ([B, total_D] pooled, [N, D] for pooling none), whose every byte is read.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

#define PARAM_BYTES 8
#define MAX_TABLES 64
#define MAX_FEATURES 8

static const char *const wtypes[] = { "fp32", "fp16", "bf16", "fp8", "int8", "int4", "int2" };
static const char *const poolings[] = { "sum", "mean", "none" };
static const char *const outputs[] = { "fp32", "fp16", "bf16" };
static const char *const bounds[] = { "fatal", "warning", "ignore", "none" };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("core,fbgemm");
    FZ_CHECK(loom_op_find("fbgemm.tbe") != NULL, "the fbgemm pack did not load");
    return 0;
}

/* The row count and row bytes of table.<t>, from the file as loom reads it. */
typedef struct table_info {
    int64_t rows, row_bytes, dim_guess;
    int native;                 /* index in wtypes[] the dtype tells (f32/f16/bf16), else 0 */
} table_info;

/* D from the row bytes of an unpadded row of type w (0 if none). */
static int64_t guess_dim(int w, int64_t row_bytes)
{
    switch (w) {
    case 0: return row_bytes / 4;
    case 1: case 2: return row_bytes / 2;
    case 3: return row_bytes;
    case 4: return row_bytes - 4;
    case 5: return (row_bytes - 4) * 2;
    case 6: return (row_bytes - 4) * 4;
    default: return 0;
    }
}

static int count_tables(const loom_safetensors *st, table_info *info)
{
    int n = 0;
    for (; n < MAX_TABLES; n++) {
        char name[32];
        const loom_tensor *t;
        snprintf(name, sizeof name, "table.%d", n);
        if (loom_safetensors_get(st, name, &t) != LOOM_OK)
            break;
        info[n].rows = t->ndim >= 1 ? t->shape[0] : 0;
        const loom_dtype dt = loom_tensor_dtype_of(t);
        info[n].row_bytes = t->ndim == 2 ? t->shape[1] * (int64_t)loom_dtype_size(dt) : 0;
        info[n].native = dt == LOOM_DTYPE_F16 ? 1 : dt == LOOM_DTYPE_BF16 ? 2 : 0;
    }
    return n;
}

static void set_str(loom_attrs *a, const char *name, const char *v)
{
    FZ_CHECK(loom_attrs_set_string(a, name, v) == LOOM_OK, "set %s", name);
}

static void set_ints(loom_attrs *a, const char *name, const int64_t *v, int64_t n)
{
    FZ_CHECK(loom_attrs_set_ints(a, name, v, n) == LOOM_OK, "set %s", name);
}

/* One forward call with B bags per feature of up to L indices each. */
static void forward(loom_object *obj, const uint8_t *p, const table_info *info, const int64_t *ftm, int nf,
                    const char *pooling, int64_t total_D, int64_t max_D)
{
    const int B = 1 + (p[7] & 3), L = (p[7] >> 2) & 7, i32 = (p[7] >> 5) & 1, psw = (p[7] >> 6) & 1;
    const int pruned = p[7] >> 7;
    const int64_t n_off = (int64_t)nf * B + 1;
    int64_t idx[MAX_FEATURES * 4 * 7], off[MAX_FEATURES * 4 + 1];
    uint32_t rng = 0x9e3779b9u ^ ((uint32_t)p[5] << 8 | p[6]);
    int64_t n = 0;
    off[0] = 0;
    for (int f = 0; f < nf; f++)
        for (int b = 0; b < B; b++) {
            rng = rng * 1664525u + 1013904223u;
            const int64_t rows = info[ftm[f]].rows;
            const int len = rows > 0 && L > 0 ? (int)(rng >> 24) % (L + 1) : 0;
            for (int k = 0; k < len; k++) {
                rng = rng * 1664525u + 1013904223u;
                idx[n++] = pruned && k == 0 ? -1 : (int64_t)((rng >> 8) % (uint64_t)rows);
            }
            off[f * B + b + 1] = n;
        }

    const loom_dtype dt = i32 ? LOOM_DTYPE_I32 : LOOM_DTYPE_I64;
    const int64_t ishape[1] = { n }, oshape[1] = { n_off };
    loom_tensor *ind = NULL, *offs = NULL, *w = NULL, *out = NULL;
    FZ_CHECK(loom_tensor_new(&ind, dt, 1, ishape, NULL) == LOOM_OK, "indices");
    FZ_CHECK(loom_tensor_new(&offs, dt, 1, oshape, NULL) == LOOM_OK, "offsets");
    for (int64_t i = 0; i < n; i++) {
        if (i32)
            ((int32_t *)loom_data(ind))[i] = (int32_t)idx[i];
        else
            ((int64_t *)loom_data(ind))[i] = idx[i];
    }
    for (int64_t i = 0; i < n_off; i++) {
        if (i32)
            ((int32_t *)loom_data(offs))[i] = (int32_t)off[i];
        else
            ((int64_t *)loom_data(offs))[i] = off[i];
    }
    if (psw) {
        FZ_CHECK(loom_tensor_new(&w, LOOM_DTYPE_F32, 1, ishape, NULL) == LOOM_OK, "weights");
        for (int64_t i = 0; i < n; i++)
            ((float *)loom_data(w))[i] = 0.5f + (float)(i % 3);
    }

    const loom_tensor *in[3] = { ind, offs, w };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    loom_status st = loom_run("fbgemm.tbe", in, 3, NULL, &out, 1, &opt);
    fz_debug("forward: %lld indices, %d features x %d bags, %s: %s", (long long)n, nf, B, loom_status_name(st),
             st == LOOM_OK ? "" : loom_last_error());
    int same_D = 1;
    for (int f = 1; f < nf; f++)
        same_D &= info[ftm[f]].dim_guess == info[ftm[0]].dim_guess;
    if (strcmp(pooling, "none") == 0 && !same_D) {
        /* NONE needs one D for every feature: a refusal is the right answer */
        FZ_CHECK(st == LOOM_OK || st == LOOM_EINVAL, "forward: %s", loom_status_name(st));
    } else {
        FZ_CHECK(st == LOOM_OK, "forward on valid indices: %s", loom_status_name(st));
    }
    if (st == LOOM_OK) {
        fz_touch_tensor(out);
        if (strcmp(pooling, "none") == 0)
            FZ_CHECK(out->ndim == 2 && out->shape[0] == n && out->shape[1] == max_D, "pooling none: shape");
        else
            FZ_CHECK(out->ndim == 2 && out->shape[0] == B && out->shape[1] == total_D, "pooled: shape");
    }
    loom_tensor_free(out);
    out = NULL;
    st = loom_run("fbgemm.tbe_cache_stats", NULL, 0, NULL, &out, 1, &opt);
    FZ_CHECK(st == LOOM_OK, "cache stats: %s", loom_status_name(st));
    fz_touch_tensor(out);
    loom_tensor_free(out);
    loom_tensor_free(ind);
    loom_tensor_free(offs);
    loom_tensor_free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < PARAM_BYTES)
        return 0;
    const uint8_t *p = data;
    const char *path = fz_file(data + PARAM_BYTES, size - PARAM_BYTES);

    /* what the file holds, as loom's reader sees it (fuzz_safetensors
    ** fuzzes that reader; here it only tells the harness the table shapes) */
    table_info info[MAX_TABLES] = { { 0, 0, 0, 0 } };
    int n = 0;
    loom_safetensors *st = NULL;
    if (loom_safetensors_open(&st, path) == LOOM_OK) {
        n = count_tables(st, info);
        loom_safetensors_close(st);
    }

    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    const int pool = p[0] & 3, outd = (p[0] >> 2) & 3, bmode = (p[0] >> 4) & 3, tys = p[0] >> 6;
    const char *pooling = pool < 3 ? poolings[pool] : "sum";
    if (pool < 3)
        set_str(a, "pooling_mode", pooling);
    if (outd < 3)
        set_str(a, "output_dtype", outputs[outd]);
    set_str(a, "bounds_check_mode", bounds[bmode]);

    /* weights_tys: none (each table's dtype tells), n types, or a wrong count */
    const uint32_t wbits = (uint32_t)p[1] | (uint32_t)p[2] << 8 | (uint32_t)p[3] << 16;
    int wt[MAX_TABLES + 1];
    for (int t = 0; t <= MAX_TABLES; t++)
        wt[t] = (int)((wbits >> (3 * (t % 8))) & 7) % 7;
    if (tys != 0) {
        char list[8 * (MAX_TABLES + 1)] = "";
        const int count = tys == 3 ? (n > 0 && (p[1] & 1) ? n - 1 : n + 1) : n;
        for (int t = 0; t < count; t++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", t ? "," : "", wtypes[wt[t]]);
        set_str(a, "weights_tys", list);
    }
    for (int t = 0; t < n; t++)
        info[t].dim_guess = guess_dim(tys ? wt[t] : info[t].native, info[t].row_bytes);

    static const int64_t aligns[] = { 0, 1, 2, 4, 8, 16, 32, 64 };
    const int64_t align = aligns[p[4] & 7];
    if (align > 0)
        FZ_CHECK(loom_attrs_set_int(a, "row_alignment", align) == LOOM_OK, "row_alignment");
    const int dims_mode = (p[4] >> 3) & 3;
    if (dims_mode != 0 && n > 0) {
        /* 1: D of an unpadded row; 2: a smaller D, which padding may explain */
        int64_t dims[MAX_TABLES];
        for (int t = 0; t < n; t++) {
            const int64_t step = tys && wt[t] == 5 ? 2 : tys && wt[t] == 6 ? 4 : 1;
            dims[t] = info[t].dim_guess - (dims_mode == 2 ? step * ((p[5] >> (t % 4)) & 7) : 0);
            if (dims_mode == 3)
                dims[t] = (int64_t)p[5] * (t + 1);
            if (dims[t] > 0)
                info[t].dim_guess = dims[t];
        }
        set_ints(a, "embedding_dims", dims, n);
    }
    if ((p[4] >> 5) & 1 && n > 0) {
        int64_t rows[MAX_TABLES];
        for (int t = 0; t < n; t++)
            rows[t] = info[t].rows + (p[6] & 0x80 && t == 0 ? 1 : 0);
        set_ints(a, "num_embeddings", rows, n);
    }
    int64_t ftm[MAX_FEATURES];
    int nf = n < MAX_FEATURES ? n : MAX_FEATURES;
    for (int f = 0; f < nf; f++)
        ftm[f] = f;
    if ((p[4] >> 6) & 1 && n > 0) {
        /* a map of 1..8 features; now and then an index out of range */
        nf = 1 + (p[6] & 7);
        for (int f = 0; f < nf; f++)
            ftm[f] = (int64_t)((f * (1 + (p[6] >> 3 & 7)) + (p[5] & 3)) % (n + (p[6] >> 6 & 1)));
        set_ints(a, "feature_table_map", ftm, nf);
    } else if (n > MAX_FEATURES) {
        nf = 0;                     /* more features than the batch builder handles: create only */
    }
    if (p[4] >> 7) {
        FZ_CHECK(loom_attrs_set_float(a, "cache_load_factor", (p[5] & 1) ? 0.5 : 0.2) == LOOM_OK, "lf");
        set_str(a, "cache_algorithm", (p[5] & 2) ? "lfu" : "lru");
        FZ_CHECK(loom_attrs_set_int(a, "cache_assoc", 1 + (p[6] & 31)) == LOOM_OK, "assoc");
    }
    if ((p[5] & 0xC0) == 0xC0) {
        FZ_CHECK(loom_attrs_set_int(a, "fp8_exponent_bits", 1 + (p[6] % 6)) == LOOM_OK, "fp8 bits");
        FZ_CHECK(loom_attrs_set_int(a, "fp8_exponent_bias", 1 + (p[6] % 40)) == LOOM_OK, "fp8 bias");
    }

    loom_object *obj = (loom_object *)1;
    loom_status s = loom_object_create(&obj, "fbgemm.tbe", a, path);
    loom_attrs_free(a);
    fz_debug("%d tables; create: %s %s", n, loom_status_name(s), s == LOOM_OK ? "" : loom_last_error());
    if (s != LOOM_OK) {
        FZ_CHECK(obj == NULL, "failed create left an object");
        FZ_CHECK(loom_last_error()[0] != '\0', "failure %s without a message", loom_status_name(s));
        return 0;
    }
    FZ_CHECK(n > 0, "an object over a file whose tables the reader did not list");
    if (nf > 0) {
        int64_t total_D = 0, max_D = 0;
        for (int f = 0; f < nf; f++) {
            total_D += info[ftm[f]].dim_guess;
            if (info[ftm[f]].dim_guess > max_D)
                max_D = info[ftm[f]].dim_guess;
        }
        forward(obj, p, info, ftm, nf, pooling, total_D, max_D);
    }
    loom_object_free(obj);
    return 0;
}
