/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_glue.c - feeds: the text pack's GLUE reader. The first byte of an
** input chooses the dataset (bits 0-3, modulo 9: CoLA SST2 MRPC QQP STSB
** MNLI QNLI RTE WNLI), whether the split is the test split (bit 4; MNLI:
** dev_matched, QQP keeps train), on_error skip (bit 5) and the rows per
** call (bits 6-7: 1, 2, 7, 1024); the rest is the split's file, read by
** text.glue with attribute file=<the input>. A file that starts as a zip
** does ("PK\3\4" or "PK\5\6") is, for the datasets torchtext reads from
** a zip (all but MRPC, QQP, STS-B), that dataset's zip: the split's member
** is found and streamed through libzip, so the archive code is fuzzed too.
** Asserts: no sanitizer report; a failed call fails with LOOM_EFORMAT and a
** message naming a line (or, from a zip, a member that failed to read);
** creating from a zip fails only with LOOM_EFORMAT or LOOM_ENOENT (not a
** zip, no such member); every call returns at most max_rows rows, offsets
** that start at 0, never decrease and end at the text's size, label / score
** / idx columns of 0 or n rows, and stats that only grow; skip mode never
** fails on a row (a zip member that fails to read still fails).
*/
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

static const char *const datasets[9] = { "CoLA", "SST2", "MRPC", "QQP", "STSB", "MNLI", "QNLI", "RTE", "WNLI" };
static const int has_zip[9] = { 1, 1, 0, 0, 0, 1, 1, 1, 1 };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("core,text");
    FZ_CHECK(loom_op_find("text.glue") != NULL, "the text pack did not load");
    return 0;
}

static void check_offsets(const loom_tensor *v, const loom_tensor *o, int64_t n)
{
    FZ_CHECK(o->ndim == 1 && (o->shape[0] == n + 1 || o->shape[0] == 1), "offsets [%lld] for %lld rows",
             (long long)o->shape[0], (long long)n);
    const int64_t *p = loom_data(o);
    FZ_CHECK(p[0] == 0, "offsets start at %lld", (long long)p[0]);
    for (int64_t i = 1; i < o->shape[0]; i++)
        FZ_CHECK(p[i] >= p[i - 1], "offsets decrease at %lld", (long long)i);
    FZ_CHECK(p[o->shape[0] - 1] == v->shape[0], "offsets end at %lld, text has %lld bytes",
             (long long)p[o->shape[0] - 1], (long long)v->shape[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const int d = (data[0] & 15) % 9, test = (data[0] >> 4) & 1, skip = (data[0] >> 5) & 1;
    static const int64_t rows[4] = { 1, 2, 7, 1024 };
    const int64_t max_rows = rows[data[0] >> 6];
    const char *split = !test || d == 3 ? "train" : d == 5 ? "dev_matched" : "test";
    const char *path = fz_file(data + 1, size - 1);
    const int zip = has_zip[d] && size >= 5 && data[1] == 'P' && data[2] == 'K'
                    && ((data[3] == 3 && data[4] == 4) || (data[3] == 5 && data[4] == 6));

    loom_attrs *ca = NULL, *ma = NULL;
    FZ_CHECK(loom_attrs_new(&ca) == LOOM_OK && loom_attrs_new(&ma) == LOOM_OK, "attrs");
    loom_attrs_set_string(ca, "dataset", datasets[d]);
    loom_attrs_set_string(ca, "split", split);
    loom_attrs_set_string(ca, "file", path);
    loom_attrs_set_string(ca, "on_error", skip ? "skip" : "raise");
    loom_attrs_set_int(ma, "max_rows", max_rows);
    loom_object *obj = NULL;
    loom_status s = loom_object_create(&obj, "text.glue", ca, NULL);
    if (s != LOOM_OK && zip) {
        FZ_CHECK(s == LOOM_EFORMAT || s == LOOM_ENOENT, "create from a zip: %s: %s", loom_status_name(s),
                 loom_last_error());
        FZ_CHECK(strstr(loom_last_error(), "not a readable zip") != NULL || strstr(loom_last_error(), "no member")
                 != NULL || strstr(loom_last_error(), "cannot read member") != NULL, "message: %s",
                 loom_last_error());
        loom_attrs_free(ca);
        loom_attrs_free(ma);
        return 0;
    }
    FZ_CHECK(s == LOOM_OK, "create %s %s: %s", datasets[d], split, loom_last_error());
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    int64_t last[4] = { 0 };
    for (int calls = 0; calls < 100000; calls++) {
        loom_tensor *t[8] = { 0 };
        s = loom_run("text.glue", NULL, 0, ma, t, 8, &opt);
        if (s != LOOM_OK) {
            FZ_CHECK(!skip || (zip && strstr(loom_last_error(), "reading the member failed") != NULL),
                     "skip mode failed: %s", loom_last_error());
            FZ_CHECK(s == LOOM_EFORMAT, "%s: %s", loom_status_name(s), loom_last_error());
            FZ_CHECK(strstr(loom_last_error(), "malformed row") != NULL
                     || (zip && strstr(loom_last_error(), "reading the member failed") != NULL), "message: %s",
                     loom_last_error());
            break;
        }
        const int64_t n = t[4]->shape[0] - 1;
        FZ_CHECK(n >= 0 && n <= max_rows, "%lld rows for max_rows %lld", (long long)n, (long long)max_rows);
        for (int k = 0; k < 3; k++)
            FZ_CHECK(t[k]->shape[0] == 0 || t[k]->shape[0] == n, "column %d has %lld rows of %lld", k,
                     (long long)t[k]->shape[0], (long long)n);
        check_offsets(t[3], t[4], n);
        check_offsets(t[5], t[6], n);
        const int64_t *st = loom_data(t[7]);
        for (int k = 0; k < 4; k++)
            FZ_CHECK(st[k] >= last[k], "stats[%d] went down", k);
        FZ_CHECK(st[0] == last[0] + n, "stats[0] %lld after %lld + %lld rows", (long long)st[0], (long long)last[0],
                 (long long)n);
        memcpy(last, st, sizeof last);
        for (int k = 0; k < 8; k++) {
            fz_touch_tensor(t[k]);
            loom_tensor_free(t[k]);
        }
        if (n == 0)
            break;
    }
    loom_object_free(obj);
    loom_attrs_free(ca);
    loom_attrs_free(ma);
    return 0;
}
