/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_glue.c - text.glue against the rows torchtext 0.18 yields from
** small files in each GLUE dataset's format (tools/gen_text_glue_samples.py:
** tests/data/text/glue/root, the expected columns in .../expect), every
** dataset and split, read in chunks of 2 rows so that streaming across calls
** is exercised; then malformed rows (file and line in the error, or counted
** under on_error=skip), missing splits and files, invalid UTF-8 and the
** parser's edge cases: quotes, CR/CRLF/no final line end, empty lines.
** The same splits from torchtext's zips (tests/data/text/glue/zips), and
** the zip's errors: a missing member, a truncated archive, a bad CRC.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include <cmocka.h>

#include "tu_ops.h"

enum { O_LABEL, O_SCORE, O_IDX, O_T1, O_T1_OFF, O_T2, O_T2_OFF, O_STATS, O_N };

static loom_status make(loom_object **obj, const char *dataset, const char *split, const char *root,
                        const char *file, int skip)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "dataset", dataset), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "split", split), LOOM_OK);
    if (root != NULL)
        assert_int_equal(loom_attrs_set_string(a, "root", root), LOOM_OK);
    if (file != NULL)
        assert_int_equal(loom_attrs_set_string(a, "file", file), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "on_error", skip ? "skip" : "raise"), LOOM_OK);
    *obj = NULL;
    loom_status s = loom_object_create(obj, "text.glue", a, NULL);
    loom_attrs_free(a);
    return s;
}

/* Growing columns gathered over calls. */
typedef struct cols {
    char *bytes[O_N];
    size_t len[O_N];
    int64_t stats[4];
} cols;

static void append(cols *c, int k, const void *p, size_t n)
{
    c->bytes[k] = realloc(c->bytes[k], c->len[k] + n + 1);
    assert_non_null(c->bytes[k]);
    if (n > 0)
        memcpy(c->bytes[k] + c->len[k], p, n);
    c->len[k] += n;
}

/* Every row of the object, max_rows at a time; LOOM_OK or the failing status. */
static loom_status read_all(loom_object *obj, int64_t max_rows, cols *c)
{
    memset(c, 0, sizeof *c);
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "max_rows", max_rows), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    int64_t base1 = 0, base2 = 0;
    const int64_t zero = 0;
    append(c, O_T1_OFF, &zero, 8);
    append(c, O_T2_OFF, &zero, 8);
    loom_status s;
    for (int calls = 0;; calls++) {
        loom_tensor *t[O_N] = { 0 };
        s = loom_run("text.glue", NULL, 0, a, t, O_N, &opt);
        if (s != LOOM_OK)
            break;
        const int64_t n = t[O_T1_OFF]->shape[0] - 1;
        assert_true(n <= max_rows);
        for (int k = 0; k < O_N; k++) {
            const size_t nb = loom_tensor_nbytes(t[k]);
            if (k == O_T1_OFF || k == O_T2_OFF) {
                const int64_t *o = loom_data(t[k]);
                int64_t *base = k == O_T1_OFF ? &base1 : &base2;
                for (int64_t i = 1; i < t[k]->shape[0]; i++) {
                    int64_t v = o[i] + *base;
                    append(c, k, &v, 8);
                }
                if (t[k]->shape[0] > 1)
                    *base += o[t[k]->shape[0] - 1];
            } else if (k == O_STATS) {
                memcpy(c->stats, loom_data(t[k]), sizeof c->stats);
            } else if (nb > 0) {
                append(c, k, loom_data(t[k]), nb);
            }
        }
        for (int k = 0; k < O_N; k++)
            loom_tensor_free(t[k]);
        if (n == 0)
            break;
    }
    loom_attrs_free(a);
    return s;
}

static void free_cols(cols *c)
{
    for (int k = 0; k < O_N; k++)
        free(c->bytes[k]);
}

static void expect_column(const cols *c, int k, const char *dataset, const char *split, const char *what)
{
    char name[128];
    snprintf(name, sizeof name, "text/glue/expect/%s_%s_%s", dataset, split, what);
    loom_tensor *want = tu_npy(name);
    const size_t nb = loom_tensor_nbytes(want);
    if (k == O_T1_OFF || k == O_T2_OFF) {
        /* an absent text column is [1] offsets here, [1] = {0} in the file too */
        if (nb != c->len[k] || (nb > 0 && memcmp(loom_data(want), c->bytes[k], nb) != 0))
            fail_msg("%s %s: %s differs (%zu vs %zu bytes)", dataset, split, what, c->len[k], nb);
    } else if (nb != c->len[k] || (nb > 0 && memcmp(loom_data(want), c->bytes[k], nb) != 0)) {
        fail_msg("%s %s: %s differs (%zu bytes, torchtext %zu)", dataset, split, what, c->len[k], nb);
    }
    loom_tensor_free(want);
}

static const char *const all_splits[][4] = {
    { "CoLA", "train", "dev", "test" }, { "SST2", "train", "dev", "test" }, { "MRPC", "train", "test", NULL },
    { "QQP", "train", NULL, NULL }, { "STSB", "train", "dev", "test" },
    { "MNLI", "train", "dev_matched", "dev_mismatched" }, { "QNLI", "train", "dev", "test" },
    { "RTE", "train", "dev", "test" }, { "WNLI", "train", "dev", "test" },
};
/* torchtext's archive of each dataset (NULL: plain files) */
static const char *const zips[] = { "cola_public_1.1.zip", "SST-2.zip", NULL, NULL, "Stsbenchmark.tar.gz",
                                    "multinli_1.0.zip", "QNLIv2.zip", "RTE.zip", "WNLI.zip" };

/* Every split of dataset d read from root (or, root_is_zip, from the zip
** under the zips folder as root) against torchtext's columns. */
static void split_matches(size_t d, int s, const char *root, const char *file)
{
    loom_object *obj;
    if (make(&obj, all_splits[d][0], all_splits[d][s], root, file, 0) != LOOM_OK)
        fail_msg("%s %s: %s", all_splits[d][0], all_splits[d][s], loom_last_error());
    cols c;
    if (read_all(obj, 2, &c) != LOOM_OK)
        fail_msg("%s %s: %s", all_splits[d][0], all_splits[d][s], loom_last_error());
    expect_column(&c, O_LABEL, all_splits[d][0], all_splits[d][s], "label");
    expect_column(&c, O_SCORE, all_splits[d][0], all_splits[d][s], "score");
    expect_column(&c, O_IDX, all_splits[d][0], all_splits[d][s], "idx");
    expect_column(&c, O_T1, all_splits[d][0], all_splits[d][s], "text1");
    expect_column(&c, O_T1_OFF, all_splits[d][0], all_splits[d][s], "text1_offsets");
    expect_column(&c, O_T2, all_splits[d][0], all_splits[d][s], "text2");
    expect_column(&c, O_T2_OFF, all_splits[d][0], all_splits[d][s], "text2_offsets");
    assert_int_equal(c.stats[0], (int64_t)(c.len[O_T1_OFF] / 8 - 1));
    free_cols(&c);
    loom_object_free(obj);
}

static void every_split_matches_torchtext(void **state)
{
    (void)state;
    char root[512];
    snprintf(root, sizeof root, "%s", tu_data_path("text/glue/root"));
    int n = 0;
    for (size_t d = 0; d < sizeof all_splits / sizeof all_splits[0]; d++)
        for (int s = 1; s < 4 && all_splits[d][s] != NULL; s++) {
            split_matches(d, s, root, NULL);
            n++;
        }
    assert_int_equal(n, 24);
}

/* The same rows from torchtext's zips and STS-B's .tar.gz: the folder that
** holds them as root, the archive itself as root, and the archive as `file`. */
static void every_split_from_the_zips(void **state)
{
    (void)state;
    char dir[512], zip[640];
    snprintf(dir, sizeof dir, "%s", tu_data_path("text/glue/zips"));
    int n = 0;
    for (size_t d = 0; d < sizeof all_splits / sizeof all_splits[0]; d++) {
        if (zips[d] == NULL)
            continue;
        snprintf(zip, sizeof zip, "%s/%s", dir, zips[d]);
        for (int s = 1; s < 4 && all_splits[d][s] != NULL; s++) {
            split_matches(d, s, dir, NULL);
            split_matches(d, s, zip, NULL);
            split_matches(d, s, NULL, zip);
            n++;
        }
    }
    assert_int_equal(n, 21);
}

static char tmpdir[256];

static const char *write_file(const char *name, const void *data, size_t n)
{
    static char path[320];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
    return path;
}

#define WRITE(name, lit) write_file(name, lit, sizeof(lit) - 1)

static void expect_read_error(const char *dataset, const char *split, const char *path, const char *needle)
{
    loom_object *obj;
    if (make(&obj, dataset, split, NULL, path, 0) != LOOM_OK)
        fail_msg("create: %s", loom_last_error());
    cols c;
    loom_status s = read_all(obj, 1000, &c);
    if (s == LOOM_OK)
        fail_msg("%s: expected an error naming '%s'", dataset, needle);
    assert_int_equal(s, LOOM_EFORMAT);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("error '%s' does not name '%s'", loom_last_error(), needle);
    free_cols(&c);
    loom_object_free(obj);
}

static void malformed_rows_name_file_and_line(void **state)
{
    (void)state;
    const char *p = WRITE("mrpc.txt", "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\ta\tb\nx\t1\t2\ta\tb\n");
    expect_read_error("MRPC", "train", p, "mrpc.txt:3: malformed row: column 0 'x' is not an integer label");
    p = WRITE("short.txt", "h\n1\t1\t2\ta\n");
    expect_read_error("MRPC", "train", p, "short.txt:2: malformed row: 4 columns where at least 5 are needed");
    p = WRITE("rte.tsv", "index\ts1\ts2\tlabel\n0\ta\tb\tentailment\n1\ta\tb\tneutral\n");
    expect_read_error("RTE", "train", p, "rte.tsv:3: malformed row: column 3 'neutral' is not a label");
    p = WRITE("sts.csv", "g\tf\ty\t1\tfive\ta\tb\n");
    expect_read_error("STSB", "train", p, "sts.csv:1: malformed row: column 4 'five' is not a number");
    p = WRITE("utf8.tsv", "index\ts1\ts2\tlabel\n0\ta\xff\tb\t1\n");
    expect_read_error("WNLI", "train", p, "utf8.tsv:2: malformed row: invalid UTF-8");
    /* an empty line is csv's [] row: torchtext raises IndexError on it (MNLI too: x[0]) */
    p = WRITE("mnli.txt", "head\n\nneutral\t\t\t\t\ta\tb\n");
    expect_read_error("MNLI", "train", p, "mnli.txt:2: malformed row: 0 columns");
    /* a quoted QQP question spans lines: the error names the line the row starts on */
    p = WRITE("qqp.tsv", "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n0\t1\t2\t\"two\nlines\"\tq\t1\n"
                         "1\t3\t4\tq\tq\tyes\n");
    expect_read_error("QQP", "train", p, "qqp.tsv:4: malformed row: column 5 'yes' is not an integer label");
}

/* Python's csv.field_size_limit (131072 characters) holds for torchtext */
static void long_fields_hit_csv_limit(void **state)
{
    (void)state;
    const size_t n = 131072;
    char *buf = malloc(2 * n + 64);
    assert_non_null(buf);
    size_t at = (size_t)sprintf(buf, "h\n0\t");
    memset(buf + at, 'a', n);                       /* exactly the limit: accepted */
    at += n;
    at += (size_t)sprintf(buf + at, "\tb\t1\n1\t");
    memset(buf + at, 'a', n + 1);                   /* one more: refused */
    at += n + 1;
    at += (size_t)sprintf(buf + at, "\tb\t1\n");
    const char *p = write_file("long.tsv", buf, at);
    free(buf);
    expect_read_error("WNLI", "train", p, "long.tsv:3: malformed row: field larger than field limit (131072)");
}

static void skip_mode_counts_malformed_rows(void **state)
{
    (void)state;
    const char *p = WRITE("mix.tsv", "index\ts1\ts2\tlabel\n0\ta\tb\t1\n1\ta\tb\tx\n\n2\tc\td\t0\n3\te\n");
    loom_object *obj;
    assert_int_equal(make(&obj, "WNLI", "train", NULL, p, 1), LOOM_OK);
    cols c;
    assert_int_equal(read_all(obj, 1, &c), LOOM_OK);
    assert_int_equal(c.stats[0], 2);    /* rows yielded */
    assert_int_equal(c.stats[1], 0);    /* filtered */
    assert_int_equal(c.stats[2], 3);    /* malformed, skipped */
    assert_int_equal(c.stats[3], 6);    /* lines */
    assert_int_equal(c.len[O_LABEL], 16);
    assert_memory_equal(c.bytes[O_T1], "ac", 2);
    free_cols(&c);
    loom_object_free(obj);
}

static void csv_edge_cases(void **state)
{
    (void)state;
    loom_object *obj;
    cols c;
    /* default quoting (WNLI): "" inside quotes, text after a closing quote, CR
    ** and CRLF line ends, no line end at the end of the file */
    const char *p = WRITE("wnli.tsv", "index\ts1\ts2\tlabel\r0\t\"say \"\"hi\"\"\"\tb\t1\r\n1\t\"ab\"cd\te\"f\t0");
    assert_int_equal(make(&obj, "WNLI", "train", NULL, p, 0), LOOM_OK);
    assert_int_equal(read_all(obj, 10, &c), LOOM_OK);
    assert_int_equal(c.stats[0], 2);
    const char want1[] = "say \"hi\"abcd";
    assert_int_equal(c.len[O_T1], sizeof want1 - 1);
    assert_memory_equal(c.bytes[O_T1], want1, sizeof want1 - 1);
    const char want2[] = "be\"f";
    assert_memory_equal(c.bytes[O_T2], want2, sizeof want2 - 1);
    free_cols(&c);
    loom_object_free(obj);
    /* QUOTE_NONE (RTE): a quote is a character, the tab inside splits */
    p = WRITE("rte.tsv", "h\n0\t\"a\tb\"\tentailment\n");
    assert_int_equal(make(&obj, "RTE", "train", NULL, p, 0), LOOM_OK);
    assert_int_equal(read_all(obj, 10, &c), LOOM_OK);
    assert_int_equal(c.len[O_T1], 2);
    assert_memory_equal(c.bytes[O_T1], "\"a", 2);
    assert_memory_equal(c.bytes[O_T2], "b\"", 2);
    free_cols(&c);
    loom_object_free(obj);
    /* an unterminated quote runs to the end of the data (csv, not strict) */
    p = WRITE("sst.tsv", "sentence\tlabel\n\"open\t1\nstill open\n");
    expect_read_error("SST2", "test", p, "sst.tsv:2: malformed row: 1 column where at least 2 are needed");
    /* an empty file, a header only */
    p = WRITE("empty.tsv", "");
    assert_int_equal(make(&obj, "QNLI", "test", NULL, p, 0), LOOM_OK);
    assert_int_equal(read_all(obj, 10, &c), LOOM_OK);
    assert_int_equal(c.stats[0], 0);
    free_cols(&c);
    loom_object_free(obj);
    /* Python's int(): whitespace, sign and '_' between digits */
    p = WRITE("cola.tsv", "x\t 1 \t\ta\nx\t-0_1\t\tb\nx\t+7\t\tc\n");
    assert_int_equal(make(&obj, "CoLA", "dev", NULL, p, 0), LOOM_OK);
    assert_int_equal(read_all(obj, 10, &c), LOOM_OK);
    assert_int_equal(c.stats[0], 2);    /* the first line is CoLA's skipped line */
    assert_int_equal(((int64_t *)c.bytes[O_LABEL])[0], -1);
    assert_int_equal(((int64_t *)c.bytes[O_LABEL])[1], 7);
    free_cols(&c);
    loom_object_free(obj);
}

static void expect_create_error(const char *dataset, const char *split, const char *root, const char *needle)
{
    loom_object *obj;
    if (make(&obj, dataset, split, root, NULL, 0) == LOOM_OK)
        fail_msg("expected create to fail naming '%s'", needle);
    assert_null(obj);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("error '%s' does not name '%s'", loom_last_error(), needle);
}

static void bad_arguments_are_refused(void **state)
{
    (void)state;
    char root[512];
    snprintf(root, sizeof root, "%s", tu_data_path("text/glue/root"));
    expect_create_error("MRPC", "dev", root, "MRPC has no split 'dev' (its splits: train, test)");
    expect_create_error("QQP", "test", root, "its splits: train");
    expect_create_error("GLUE", "train", root, "dataset 'GLUE' is not one of");
    expect_create_error("RTE", "train", tmpdir, "RTE/train.tsv");
    /* aliases and case */
    loom_object *obj;
    assert_int_equal(make(&obj, "sts-b", "dev", root, NULL, 0), LOOM_OK);
    loom_object_free(obj);
    assert_int_equal(make(&obj, "SST-2", "dev", root, NULL, 0), LOOM_OK);
    loom_object_free(obj);
}

/* tmpdir/<name>: a zip of one member (deflated, or stored when `store`). */
static const char *write_zip(const char *name, const char *member, const char *text, int store)
{
    static char path[320];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    unlink(path);
    int err = 0;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
    assert_non_null(z);
    zip_source_t *src = zip_source_buffer(z, text, strlen(text), 0);
    assert_non_null(src);
    zip_int64_t i = zip_file_add(z, member, src, ZIP_FL_ENC_UTF_8);
    assert_true(i >= 0);
    if (store)
        assert_int_equal(zip_set_file_compression(z, (zip_uint64_t)i, ZIP_CM_STORE, 0), 0);
    assert_int_equal(zip_close(z), 0);
    return path;
}

static size_t slurp(const char *path, char **out)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    *out = malloc((size_t)n + 1);
    assert_non_null(*out);
    assert_int_equal(fread(*out, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return (size_t)n;
}

static void zip_errors_name_the_archive(void **state)
{
    (void)state;
    char dir[512], zip[640];
    snprintf(dir, sizeof dir, "%s", tu_data_path("text/glue/zips"));
    /* a zip without the split's member */
    snprintf(zip, sizeof zip, "%s/SST-2.zip", dir);
    expect_create_error("RTE", "train", zip, "SST-2.zip: no member RTE/train.tsv");
    const char *p = write_zip("WNLI.zip", "WNLI/dev.tsv", "h\n0\ta\tb\t1\n", 0);
    expect_create_error("WNLI", "train", p, "WNLI.zip: no member WNLI/train.tsv");
    /* truncated: the end of the central directory cut off, or half of it */
    snprintf(zip, sizeof zip, "%s/RTE.zip", dir);
    char *bytes;
    size_t n = slurp(zip, &bytes);
    p = write_file("RTE.zip", bytes, n - 10);
    expect_create_error("RTE", "train", p, "RTE.zip: not a readable zip (corrupt or truncated?)");
    p = write_file("RTE.zip", bytes, n / 2);
    expect_create_error("RTE", "dev", p, "RTE.zip: not a readable zip");
    free(bytes);
    /* invalid UTF-8 in a member: the row's line, named in the archive */
    p = write_zip("WNLI.zip", "WNLI/train.tsv", "h\n0\ta\tb\t1\n1\ta\t\xff\t0\n", 0);
    expect_read_error("WNLI", "train", p, "WNLI.zip/WNLI/train.tsv:3: malformed row: invalid UTF-8");
    /* a member whose bytes do not match its CRC */
    p = write_zip("RTE.zip", "RTE/train.tsv", "h\n0\tthe first\tsentence\tentailment\n", 1);
    n = slurp(p, &bytes);
    char *hit = memmem(bytes, n, "the first", 9);
    assert_non_null(hit);
    hit[4] = 'F';
    p = write_file("RTE.zip", bytes, n);
    free(bytes);
    loom_object *obj;
    if (make(&obj, "RTE", "train", p, NULL, 0) != LOOM_OK)
        fail_msg("create: %s", loom_last_error());
    cols c;
    assert_int_equal(read_all(obj, 1000, &c), LOOM_EFORMAT);
    if (strstr(loom_last_error(), "RTE.zip/RTE/train.tsv: reading the member failed") == NULL)
        fail_msg("error '%s'", loom_last_error());
    free_cols(&c);
    loom_object_free(obj);
    unlink(p);
    char w[320];
    snprintf(w, sizeof w, "%s/WNLI.zip", tmpdir);
    unlink(w);
}

/* STS-B's .tar.gz: a file that is no gzip'd tar, and one cut short, name
** the archive (a cut stream may open and fail while the rows are read). */
static void tar_errors_name_the_archive(void **state)
{
    (void)state;
    char dir[512], path[640];
    snprintf(dir, sizeof dir, "%s", tu_data_path("text/glue/zips"));
    snprintf(path, sizeof path, "%s/SST-2.zip", dir);
    expect_create_error("STSB", "train", path, "SST-2.zip: not a readable .tar.gz (corrupt or truncated?)");
    snprintf(path, sizeof path, "%s/Stsbenchmark.tar.gz", dir);
    char *bytes;
    const size_t n = slurp(path, &bytes);
    for (size_t cut = 8; cut < n; cut += n / 7) {
        const char *p = write_file("Stsbenchmark.tar.gz", bytes, cut);
        loom_object *obj;
        if (make(&obj, "STSB", "test", p, NULL, 0) != LOOM_OK) {
            if (strstr(loom_last_error(), "Stsbenchmark.tar.gz") == NULL)
                fail_msg("cut at %zu: create error '%s' does not name the archive", cut, loom_last_error());
            continue;
        }
        cols c;
        loom_status st = read_all(obj, 1000, &c);
        if (st != LOOM_OK && strstr(loom_last_error(), "Stsbenchmark.tar.gz/stsbenchmark/sts-test.csv") == NULL)
            fail_msg("cut at %zu: read error '%s' does not name the member", cut, loom_last_error());
        free_cols(&c);
        loom_object_free(obj);
        unlink(p);
    }
    free(bytes);
}

/* Both the extracted file and the zip under root: the extracted file is read. */
static void extracted_files_come_first(void **state)
{
    (void)state;
    char sub[320], path[400], zip[640];
    snprintf(sub, sizeof sub, "%s/both", tmpdir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(path, sizeof path, "%s/RTE", sub);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/RTE/train.tsv", sub);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("h\n0\textracted\tfile\tentailment\n", f);
    fclose(f);
    snprintf(zip, sizeof zip, "%s/RTE.zip", tu_data_path("text/glue/zips"));
    char *bytes;
    size_t n = slurp(zip, &bytes);
    char zpath[400];
    snprintf(zpath, sizeof zpath, "%s/RTE.zip", sub);
    f = fopen(zpath, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
    free(bytes);
    loom_object *obj;
    assert_int_equal(make(&obj, "RTE", "train", sub, NULL, 0), LOOM_OK);
    cols c;
    assert_int_equal(read_all(obj, 10, &c), LOOM_OK);
    assert_int_equal(c.stats[0], 1);
    assert_int_equal(c.len[O_T1], 9);
    assert_memory_equal(c.bytes[O_T1], "extracted", 9);
    free_cols(&c);
    loom_object_free(obj);
    /* the dev split is not extracted: it comes from the zip */
    assert_int_equal(make(&obj, "RTE", "dev", sub, NULL, 0), LOOM_OK);
    assert_int_equal(read_all(obj, 10, &c), LOOM_OK);
    assert_true(c.stats[0] > 0);
    free_cols(&c);
    loom_object_free(obj);
    unlink(path);
    unlink(zpath);
    snprintf(path, sizeof path, "%s/RTE", sub);
    rmdir(path);
    rmdir(sub);
}

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/loom-text-glue-XXXXXX");
    if (mkdtemp(tmpdir) == NULL)
        return -1;
    return tu_setup(state);
}

static int teardown(void **state)
{
    static const char *const names[] = { "mrpc.txt", "short.txt", "rte.tsv", "sts.csv", "utf8.tsv", "mnli.txt",
                                         "qqp.tsv", "long.tsv", "mix.tsv", "wnli.tsv", "sst.tsv", "empty.tsv", "cola.tsv",
                                         "RTE.zip", "WNLI.zip" };
    char path[320];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
        unlink(path);
    }
    rmdir(tmpdir);
    return tu_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_split_matches_torchtext),
        cmocka_unit_test(every_split_from_the_zips),
        cmocka_unit_test(zip_errors_name_the_archive),
        cmocka_unit_test(tar_errors_name_the_archive),
        cmocka_unit_test(extracted_files_come_first),
        cmocka_unit_test(malformed_rows_name_file_and_line),
        cmocka_unit_test(long_fields_hit_csv_limit),
        cmocka_unit_test(skip_mode_counts_malformed_rows),
        cmocka_unit_test(csv_edge_cases),
        cmocka_unit_test(bad_arguments_are_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
