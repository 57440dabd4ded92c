/* SPDX-License-Identifier: BSD-3-Clause */
/*
** criteo_object.c - the rec.criteo_reader object (criteo.h): create opens
** the file (and with shift_min reads it once for the least integer
** feature, so a bad line is refused at create); each method call parses
** the next batch_size lines. A bad line fails the call with
** "<file>:<line>: <field>: <why>"; the rows of the batch read before it
** are kept and lead the next call's batch, which goes on after the bad
** line (nothing read is lost). Rows stream: memory holds one batch.
*/
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "criteo.h"
#include "../kjt/kjt.h"

#define W REC_CRITEO_CLASS
#define A_(name) args->attrs[PK_ATTR(rec_criteo_class, name)]

enum { DENSE_LOG1P, DENSE_SHIFT_MIN, DENSE_NONE };

typedef struct criteo_reader {
    pthread_mutex_t lock;
    char *path;
    FILE *f;
    int64_t line;             /* lines consumed so far */
    int64_t batch_size;
    int drop_last, dense_mode, missing_zero;
    int64_t hashes[REC_CRITEO_N_SPARSE];   /* 0: raw ids */
    int64_t dense_min;        /* shift_min's m */
    char *buf;                /* getline's */
    size_t cap;
    rec_criteo_row *rows;     /* [batch_size] */
    int64_t pending;          /* rows[0..pending) read before a bad line, not yet returned */
} criteo_reader;

static void criteo_destroy(void *state)
{
    criteo_reader *r = state;
    if (!r)
        return;
    if (r->f)
        fclose(r->f);
    pthread_mutex_destroy(&r->lock);
    free(r->path);
    free(r->buf);
    free(r->rows);
    free(r);
}

/* The next line into *row: 1 read, 0 end of file, -1 error (set). A blank
** line at the very end (a final newline) is the end, as csv.reader's. */
static int next_row(criteo_reader *r, rec_criteo_row *row)
{
    ssize_t n = getline(&r->buf, &r->cap, r->f);
    if (n < 0) {
        if (ferror(r->f)) {
            pk_host->fail(LOOM_EIO, "%s: %s:%lld: read error", W, r->path, (long long)r->line + 1);
            return -1;
        }
        return 0;
    }
    r->line++;
    if (n > 0 && r->buf[n - 1] == '\n')
        n--;
    if (memchr(r->buf, '\0', (size_t)n) != NULL) {
        pk_host->fail(LOOM_EFORMAT, "%s: %s:%lld: a NUL byte in the line (not a Criteo TSV?)", W, r->path,
                      (long long)r->line);
        return -1;
    }
    char why[160];
    if (rec_criteo_parse_line(r->buf, (size_t)n, row, why, sizeof why) != 0) {
        pk_host->fail(LOOM_EFORMAT, "%s: %s:%lld: %s", W, r->path, (long long)r->line, why);
        return -1;
    }
    return 1;
}

static loom_status scan_min(criteo_reader *r)
{
    rec_criteo_row row;
    int got;
    r->dense_min = INT64_MAX;
    while ((got = next_row(r, &row)) == 1)
        for (int j = 0; j < REC_CRITEO_N_DENSE; j++)
            r->dense_min = row.dense[j] < r->dense_min ? row.dense[j] : r->dense_min;
    if (got < 0)
        return LOOM_EFORMAT;
    if (r->dense_min == INT64_MAX)
        r->dense_min = 0;
    rewind(r->f);
    r->line = 0;
    return LOOM_OK;
}

static loom_status criteo_create(const loom_object_args *args, void **state_out)
{
    *state_out = NULL;
    const char *path = A_(path).u.s;
    const char *dt = A_(dense_transform).u.s, *missing = A_(missing).u.s;
    int mode = !strcmp(dt, "log1p") ? DENSE_LOG1P : !strcmp(dt, "shift_min") ? DENSE_SHIFT_MIN
             : !strcmp(dt, "none") ? DENSE_NONE : -1;
    if (mode < 0)
        return pk_host->fail(LOOM_EINVAL, "%s: 'dense_transform' is \"%s\": it must be log1p, shift_min or none", W,
                             dt);
    if (strcmp(missing, "empty") != 0 && strcmp(missing, "zero") != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: 'missing' is \"%s\": it must be empty or zero", W, missing);
    const loom_attr_value *h = &A_(hashes);
    if (h->is_set && h->count != REC_CRITEO_N_SPARSE)
        return pk_host->fail(LOOM_EINVAL, "%s: 'hashes' has %lld entries: it needs one per categorical feature (%d)",
                             W, (long long)h->count, REC_CRITEO_N_SPARSE);
    for (int64_t k = 0; h->is_set && k < h->count; k++)
        if (h->u.ints[k] <= 0)
            return pk_host->fail(LOOM_EINVAL, "%s: 'hashes'[%lld] (cat_%lld) is %lld: it must be positive", W,
                                 (long long)k, (long long)k, (long long)h->u.ints[k]);
    const int64_t B = A_(batch_size).u.i;
    if (B > (INT64_C(1) << 20))
        return pk_host->fail(LOOM_EINVAL, "%s: 'batch_size' %lld is above 2^20 rows", W, (long long)B);
    criteo_reader *r = calloc(1, sizeof *r);
    if (!r)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    pthread_mutex_init(&r->lock, NULL);
    r->batch_size = B;
    r->drop_last = A_(drop_last).u.b != 0;
    r->dense_mode = mode;
    r->missing_zero = !strcmp(missing, "zero");
    for (int k = 0; k < REC_CRITEO_N_SPARSE; k++)
        r->hashes[k] = h->is_set ? h->u.ints[k] : 0;
    loom_status st = LOOM_OK;
    r->path = strdup(path);
    r->rows = malloc((size_t)B * sizeof *r->rows);
    if (!r->path || !r->rows)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    else if ((r->f = fopen(path, "rb")) == NULL)
        st = pk_host->fail(LOOM_ENOENT, "%s: cannot open '%s' ('path')", W, path);
    else if (mode == DENSE_SHIFT_MIN)
        st = scan_min(r);
    if (st != LOOM_OK) {
        criteo_destroy(r);
        return st;
    }
    *state_out = r;
    return LOOM_OK;
}

static const char *const cat_keys[REC_CRITEO_N_SPARSE] = {
    "cat_0",  "cat_1",  "cat_2",  "cat_3",  "cat_4",  "cat_5",  "cat_6",  "cat_7",  "cat_8",
    "cat_9",  "cat_10", "cat_11", "cat_12", "cat_13", "cat_14", "cat_15", "cat_16", "cat_17",
    "cat_18", "cat_19", "cat_20", "cat_21", "cat_22", "cat_23", "cat_24", "cat_25",
};

static float dense_value(const criteo_reader *r, int64_t x)
{
    switch (r->dense_mode) {
    case DENSE_LOG1P:
        /* in double, then rounded once: log1p of an int is not exact in f32 */
        return (float)log((double)(x < 0 ? 0 : x) + 1.0);
    case DENSE_SHIFT_MIN: {
        /* numpy: the shift in int, then np.log(..., dtype=float32) of it as f32; x - m + 2 >= 2. Past
        ** int64 (only far outside torchrec's int32 arrays) the shift is taken in double. */
        int64_t s;
        if (!__builtin_sub_overflow(x, r->dense_min, &s) && s <= INT64_MAX - 2)
            return logf((float)(s + 2));
        return logf((float)((double)x - (double)r->dense_min + 2.0));
    }
    default:
        return (float)x;
    }
}

static loom_status emit(loom_call *call, criteo_reader *r, int64_t n)
{
    const int K = REC_CRITEO_N_SPARSE;
    loom_tensor *dense, *labels;
    int64_t shape[2] = { n, REC_CRITEO_N_DENSE };
    loom_status st = pk_host->alloc_output(call, REC_CRITEO_OUT_DENSE, LOOM_DTYPE_F32, 2, shape, &dense);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, REC_CRITEO_OUT_LABELS, LOOM_DTYPE_F32, 1, shape, &labels);
    if (st != LOOM_OK)
        return st;
    float *d = loom_data(dense), *lab = loom_data(labels);
    for (int64_t b = 0; b < n; b++) {
        lab[b] = (float)r->rows[b].label;
        for (int j = 0; j < REC_CRITEO_N_DENSE; j++)
            d[b * REC_CRITEO_N_DENSE + j] = dense_value(r, r->rows[b].dense[j]);
    }
    rec_scratch_begin();
    int64_t *values = rec_scratch(call, (size_t)(n * K + 1) * sizeof(int64_t));
    int64_t *lengths = rec_scratch(call, (size_t)(n * K + 1) * sizeof(int64_t));
    int64_t *stride_per_key = rec_scratch(call, (size_t)K * sizeof(int64_t));
    if (!values || !lengths || !stride_per_key)
        return LOOM_ENOMEM;
    int64_t nv = 0;
    for (int k = 0; k < K; k++) {
        stride_per_key[k] = n;
        for (int64_t b = 0; b < n; b++) {
            const rec_criteo_row *row = &r->rows[b];
            const int has = row->present[k] || r->missing_zero;
            lengths[k * n + b] = has;
            if (has)
                values[nv++] = r->hashes[k] ? row->sparse[k] % r->hashes[k] : row->sparse[k];
        }
    }
    const rec_kjt_result res = {
        .n_keys = K, .keys = cat_keys, .values_dtype = LOOM_DTYPE_I64, .n_values = nv, .values = values,
        .lengths_dtype = LOOM_DTYPE_I32, .n_lengths = n * K, .lengths = lengths, .stride = n,
        .stride_per_key = stride_per_key,
    };
    return rec_kjt_write(call, REC_CRITEO_OUT_KJT, &res);
}

static loom_status criteo_run(loom_call *call)
{
    criteo_reader *r = call->object;
    if (r == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s is a method: it needs a %s object", W, W);
    pthread_mutex_lock(&r->lock);
    loom_status st = LOOM_OK;
    int64_t n = r->pending;
    int got = 1;
    while (n < r->batch_size && (got = next_row(r, &r->rows[n])) == 1)
        n++;
    r->pending = got < 0 ? n : 0;
    if (got < 0)
        st = LOOM_EFORMAT;
    else {
        if (n < r->batch_size && r->drop_last)
            n = 0;
        st = emit(call, r, n);
    }
    pthread_mutex_unlock(&r->lock);
    return st;
}

PK_ATTR_TABLE(rec_criteo_class, REC_CRITEO_CLASS_ATTRS);

const loom_object_class rec_criteo_class = {
    .struct_size = sizeof(loom_object_class),
    .name = REC_CRITEO_CLASS,
    .doc = "the Criteo Kaggle/Terabyte TSV read in batches as torchrec.datasets.criteo parses it: dense [B,13], "
           "labels [B] and the 26 categories as a KJT (cat_0..cat_25); method rec.criteo_reader",
    PK_ATTRS(rec_criteo_class_attrs),
    .create = criteo_create,
    .destroy = criteo_destroy,
};

static const loom_object_class *const criteo_classes[] = { &rec_criteo_class };

static const loom_kernel_desc criteo_kernels[] = {
    PK_KERNEL_CPU(rec_criteo_reader_schema, "cpu:stream", 0, criteo_run),
};

const pk_module rec_criteo_cpu = {
    .name = "criteo", .ops = rec_criteo_ops, .n_ops = PK_COUNT(rec_criteo_ops),
    .classes = criteo_classes, .n_classes = PK_COUNT(criteo_classes),
    .kernels = criteo_kernels, .n_kernels = PK_COUNT(criteo_kernels),
};
