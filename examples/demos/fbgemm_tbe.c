/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fbgemm_tbe.c - `loom demo tbe`: the same embedding tables served by
** fbgemm.tbe in every weight type fbgemm stores (fp32 down to int2), with
** the error each costs against fp32; then the row cache in front of the
** tables, with its statistics.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo.h"

DEMO_DEFINE("tbe", 70, "fbgemm.tbe,fbgemm.quantize_rows,fbgemm.tbe_cache_stats",
            "embedding tables in every fbgemm weight type, and a row cache");

#define T 3          /* tables, one feature each */
#define ROWS 2000
#define DIM 64
#define B 8          /* bags per feature */
#define L 12         /* indices per bag */

/* Rows of weight_type from f32 rows (fp32 is the table itself). */
static loom_tensor *quantize(const loom_tensor *table, const char *type)
{
    loom_tensor *out = NULL;
    loom_attrs *a = NULL;
    if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_set_string(a, "weight_type", type) != LOOM_OK
        || loom_run("fbgemm.quantize_rows", &table, 1, a, &out, 1, NULL) != LOOM_OK) {
        demo_fail();
        out = NULL;
    }
    loom_attrs_free(a);
    return out;
}

/* Write the T tables in `type` to path; *row_bytes (when not NULL) is the
** size of one stored row. */
static int write_tables(const char *path, loom_tensor *const *f32, const char *type, int64_t *row_bytes)
{
    loom_tensor *q[T] = { NULL };
    const char *names[T] = { "table.0", "table.1", "table.2" };
    int rc = DEMO_OK;
    for (int t = 0; t < T && rc == DEMO_OK; t++) {
        q[t] = quantize(f32[t], type);
        rc = q[t] != NULL ? DEMO_OK : DEMO_FAIL;
    }
    if (rc == DEMO_OK && loom_safetensors_write(path, names, (const loom_tensor *const *)q, T) != LOOM_OK)
        rc = demo_fail();
    if (rc == DEMO_OK && row_bytes != NULL)
        *row_bytes = q[0]->shape[1] * (int64_t)loom_dtype_size(loom_tensor_dtype_of(q[0]));
    for (int t = 0; t < T; t++)
        loom_tensor_free(q[t]);
    return rc;
}

static int lookup(const char *path, const char *type, double cache_load_factor, const loom_tensor *const in[2],
                  loom_tensor **out, loom_object **keep)
{
    char tys[64];
    const int64_t dims[T] = { DIM, DIM, DIM };
    loom_attrs *a = NULL;
    loom_object *obj = NULL;
    loom_call_options opts = LOOM_CALL_OPTIONS_INIT;
    snprintf(tys, sizeof tys, "%s,%s,%s", type, type, type);
    int rc = loom_attrs_new(&a) == LOOM_OK && loom_attrs_set_string(a, "weights_tys", tys) == LOOM_OK
                     && loom_attrs_set_ints(a, "embedding_dims", dims, T) == LOOM_OK
                     && loom_attrs_set_float(a, "cache_load_factor", cache_load_factor) == LOOM_OK
                     && loom_object_create(&obj, "fbgemm.tbe", a, path) == LOOM_OK
                 ? DEMO_OK
                 : demo_fail();
    loom_attrs_free(a);
    if (rc == DEMO_OK) {
        opts.object = obj;
        if (loom_run("fbgemm.tbe", in, 2, NULL, out, 1, &opts) != LOOM_OK)
            rc = demo_fail();
        else
            demo_record(type);
    }
    if (keep != NULL && rc == DEMO_OK)
        *keep = obj;
    else
        loom_object_free(obj);
    return rc;
}

int demo_run(void)
{
    static const char *const types[] = { "fp32", "fp16", "bf16", "fp8", "int8", "int4", "int2" };
    const int64_t tshape[2] = { ROWS, DIM }, ishape[1] = { T * B * L }, oshape[1] = { T * B + 1 };
    loom_tensor *tables[T] = { NULL }, *ref = NULL, *out = NULL;
    loom_tensor *idx = demo_tensor(LOOM_DTYPE_I64, 1, ishape), *off = demo_tensor(LOOM_DTYPE_I64, 1, oshape);
    char dir[] = "/tmp/loom-demo-XXXXXX", path[64];
    int rc = idx && off && mkdtemp(dir) != NULL ? DEMO_OK : DEMO_FAIL;

    snprintf(path, sizeof path, "%s/tables.safetensors", dir);
    for (int t = 0; t < T && rc == DEMO_OK; t++) {
        tables[t] = demo_f32(2, tshape, NULL);
        if (tables[t] == NULL) {
            rc = DEMO_FAIL;
            break;
        }
        float *w = loom_data(tables[t]);
        for (int64_t i = 0; i < ROWS * DIM; i++)
            w[i] = 0.1f * demo_random();
    }
    if (rc == DEMO_OK) {
        int64_t *ix = loom_data(idx), *of = loom_data(off);
        for (int64_t i = 0; i < T * B * L; i++) {       /* hot rows: a squared uniform */
            double u = 0.5 * (demo_random() + 1.0);
            ix[i] = (int64_t)(u * u * (ROWS - 1));
        }
        for (int64_t i = 0; i <= T * B; i++)
            of[i] = i * L;
        printf("  %d tables of f32[%d, %d]; %d bags of %d rows per table, pooling sum\n", T, ROWS, DIM, B, L);
        printf("  %-6s %10s %16s\n", "type", "bytes/row", "max |err| vs fp32");
    }
    const loom_tensor *in[2] = { idx, off };
    for (size_t k = 0; rc == DEMO_OK && k < sizeof types / sizeof types[0]; k++) {
        int64_t row_bytes = 0;
        rc = write_tables(path, tables, types[k], &row_bytes);
        if (rc == DEMO_OK)
            rc = lookup(path, types[k], 1.0, in, &out, NULL);
        if (rc != DEMO_OK)
            break;
        if (ref == NULL) {
            ref = out;
            out = NULL;
            printf("  %-6s %10lld %16s\n", types[k], (long long)row_bytes, "(reference)");
            continue;
        }
        const float *r = loom_data(ref), *o = loom_data(out);
        double err = 0;
        for (int64_t i = 0; i < loom_numel(ref); i++)
            err = fmax(err, fabs((double)r[i] - (double)o[i]));
        printf("  %-6s %10lld %16.2e\n", types[k], (long long)row_bytes, err);
        loom_tensor_free(out);
        out = NULL;
    }
    if (rc == DEMO_OK) {
        /* the int8 tables again, behind a cache of 20% of the rows */
        loom_object *obj = NULL;
        loom_tensor *stats = NULL;
        rc = write_tables(path, tables, "int8", NULL);
        if (rc == DEMO_OK)
            rc = lookup(path, "int8", 0.2, in, &out, &obj);
        loom_call_options opts = LOOM_CALL_OPTIONS_INIT;
        opts.object = obj;
        if (rc == DEMO_OK && loom_run("fbgemm.tbe_cache_stats", NULL, 0, NULL, &stats, 1, &opts) != LOOM_OK)
            rc = demo_fail();
        if (rc == DEMO_OK) {
            const int64_t *s = loom_data(stats);
            printf("  int8 behind an LRU cache of 20%% of the rows: %lld indices, %lld unique, %lld unique misses, "
                   "lookup hits %lld of %lld\n", (long long)s[1], (long long)s[2], (long long)s[3],
                   (long long)s[7], (long long)s[6]);
        }
        loom_tensor_free(stats);
        loom_object_free(obj);
    }
    unlink(path);
    rmdir(dir);
    for (int t = 0; t < T; t++)
        loom_tensor_free(tables[t]);
    loom_tensor_free(idx);
    loom_tensor_free(off);
    loom_tensor_free(ref);
    loom_tensor_free(out);
    return rc;
}
