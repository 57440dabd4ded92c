/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_rec_criteo.c - feeds: the rec pack's Criteo TSV reader. The first
** byte of an input chooses dense_transform (bits 0-1: log1p, shift_min,
** none, log1p), missing=zero (bit 2), drop_last (bit 3), hashes (bit 4:
** 1..26, else raw ids) and the batch size (bits 5-7: 1, 2, 3, 5, 8, 16,
** 64, 1024); the rest is the TSV, read by rec.criteo_reader with path=<the
** input> until a batch of 0 rows or an error.
** Asserts: no sanitizer report; create fails only with shift_min (its scan
** of the file) and only with LOOM_EFORMAT and a message naming
** "<file>:<line>:"; a call fails the same way; every batch has B <= batch_size
** rows (B = batch_size or 0 with drop_last), dense [B,13] finite, labels
** [B], 26 keys, lengths [26B] of 0 or 1 (always 1 with missing=zero) that
** sum to the values, offsets from 0 to that sum, ids in [0, hash) or >= 0.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

#define CLS "rec.criteo_reader"
enum { OUT_DENSE, OUT_LABELS, OUT_KEYS, OUT_KEYS_OFF, OUT_VALUES, OUT_LENGTHS, OUT_OFFSETS, N_OUT = 14 };

static int64_t hashes[26];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("core,rec");
    FZ_CHECK(loom_op_find(CLS) != NULL, "the rec pack did not load");
    for (int k = 0; k < 26; k++)
        hashes[k] = k + 1;
    return 0;
}

static void check_failure(loom_status s, const char *path)
{
    char where[300];
    snprintf(where, sizeof where, "%s:", path);
    FZ_CHECK(s == LOOM_EFORMAT, "%s: %s", loom_status_name(s), loom_last_error());
    FZ_CHECK(strstr(loom_last_error(), where) != NULL, "message names no line: %s", loom_last_error());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const char *const transforms[4] = { "log1p", "shift_min", "none", "log1p" };
    static const int64_t batches[8] = { 1, 2, 3, 5, 8, 16, 64, 1024 };
    const char *transform = transforms[data[0] & 3];
    const int zero = (data[0] >> 2) & 1, drop_last = (data[0] >> 3) & 1, hashed = (data[0] >> 4) & 1;
    const int64_t batch = batches[data[0] >> 5];
    const char *path = fz_file(data + 1, size - 1);

    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    loom_attrs_set_string(a, "path", path);
    loom_attrs_set_string(a, "dense_transform", transform);
    loom_attrs_set_string(a, "missing", zero ? "zero" : "empty");
    loom_attrs_set_bool(a, "drop_last", drop_last);
    loom_attrs_set_int(a, "batch_size", batch);
    if (hashed)
        loom_attrs_set_ints(a, "hashes", hashes, 26);
    loom_object *obj = NULL;
    loom_status s = loom_object_create(&obj, CLS, a, NULL);
    loom_attrs_free(a);
    if (s != LOOM_OK) {
        FZ_CHECK(!strcmp(transform, "shift_min"), "create failed without a scan: %s", loom_last_error());
        check_failure(s, path);
        return 0;
    }
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    for (int calls = 0; calls < 100000; calls++) {
        loom_tensor *t[N_OUT] = { 0 };
        s = loom_run(CLS, NULL, 0, NULL, t, N_OUT, &opt);
        if (s != LOOM_OK) {
            check_failure(s, path);
            break;
        }
        const int64_t B = t[OUT_DENSE]->shape[0];
        FZ_CHECK(B <= batch && (!drop_last || B == batch || B == 0), "%lld rows for batch_size %lld",
                 (long long)B, (long long)batch);
        FZ_CHECK(t[OUT_DENSE]->ndim == 2 && t[OUT_DENSE]->shape[1] == 13 && t[OUT_LABELS]->shape[0] == B,
                 "dense / labels shapes");
        const float *d = loom_data(t[OUT_DENSE]);
        for (int64_t i = 0; i < B * 13; i++)
            FZ_CHECK(isfinite(d[i]), "dense[%lld] = %g", (long long)i, d[i]);
        FZ_CHECK(t[OUT_KEYS_OFF]->shape[0] == 27 && t[OUT_LENGTHS]->shape[0] == 26 * B &&
                 t[OUT_OFFSETS]->shape[0] == 26 * B + 1, "KJT shapes");
        const int32_t *len = loom_data(t[OUT_LENGTHS]), *off = loom_data(t[OUT_OFFSETS]);
        const int64_t *val = loom_data(t[OUT_VALUES]);
        int64_t n = 0;
        FZ_CHECK(off[0] == 0, "offsets start at %d", off[0]);
        for (int64_t i = 0; i < 26 * B; i++) {
            FZ_CHECK(len[i] == 1 || (len[i] == 0 && !zero), "length %d", len[i]);
            for (int32_t j = 0; j < len[i]; j++, n++)
                FZ_CHECK(val[n] >= 0 && (!hashed || val[n] < hashes[i / B]), "id %lld of key %lld",
                         (long long)val[n], (long long)(i / B));
            FZ_CHECK(off[i + 1] == n, "offsets[%lld] = %d, lengths sum to %lld", (long long)i + 1, off[i + 1],
                     (long long)n);
        }
        FZ_CHECK(t[OUT_VALUES]->shape[0] == n, "%lld values, lengths sum to %lld", (long long)t[OUT_VALUES]->shape[0],
                 (long long)n);
        for (int k = 0; k < N_OUT; k++) {
            fz_touch_tensor(t[k]);
            loom_tensor_free(t[k]);
        }
        if (B == 0)
            break;
    }
    loom_object_free(obj);
    return 0;
}
