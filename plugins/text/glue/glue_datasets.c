/* SPDX-License-Identifier: BSD-3-Clause */
/*
** glue_datasets.c - the nine GLUE datasets as torchtext 0.18 reads them:
** file per split, header line skipped or not, quoting, and the map from a
** csv row to torchtext's tuple (its _modify_res and _filter_res). Where
** torchtext would raise (IndexError on a short row, ValueError from int()
** or float(), KeyError on an unknown label) the row is malformed; where it
** filters (CoLA rows of != 4 columns, MNLI rows whose gold_label is not a
** class, such as "-"), the row is dropped and counted.
**
** int() and float() are Python's: surrounding whitespace allowed, int with
** an optional sign and '_' between digits, float also inf / infinity / nan
** in any case; nothing else (no hex, no trailing text).
*/
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "glue.h"

typedef enum { K_COLA, K_SST2, K_MRPC, K_QQP, K_STSB, K_MNLI, K_QNLI, K_RTE, K_WNLI } glue_kind;

struct glue_dataset {
    const char *name, *alias;
    glue_kind kind;
    int skip_header, quote_none;
    const char *splits[4], *files[4];
    const char *columns, *test_columns;
    const char *archive;           /* torchtext's archive (_PATH): a zip or a .tar.gz; NULL: plain files */
};

static const glue_dataset datasets[] = {
    { "CoLA", "COLA", K_COLA, 1, 1, { "train", "dev", "test" },
      { "cola_public/raw/in_domain_train.tsv", "cola_public/raw/in_domain_dev.tsv",
        "cola_public/raw/out_of_domain_dev.tsv" },
      "(source=text2, label, sentence=text1)", NULL, "cola_public_1.1.zip" },
    { "SST2", "SST-2", K_SST2, 1, 0, { "train", "dev", "test" },
      { "SST-2/train.tsv", "SST-2/dev.tsv", "SST-2/test.tsv" }, "(sentence=text1, label)", "(sentence=text1,)",
      "SST-2.zip" },
    { "MRPC", NULL, K_MRPC, 1, 1, { "train", "test" }, { "msr_paraphrase_train.txt", "msr_paraphrase_test.txt" },
      "(label, sentence1=text1, sentence2=text2)", NULL, NULL },
    { "QQP", NULL, K_QQP, 1, 0, { "train" }, { "quora_duplicate_questions.tsv" },
      "(label, question1=text1, question2=text2)", NULL, NULL },
    { "STSB", "STS-B", K_STSB, 0, 1, { "train", "dev", "test" },
      { "stsbenchmark/sts-train.csv", "stsbenchmark/sts-dev.csv", "stsbenchmark/sts-test.csv" },
      "(idx, score, sentence1=text1, sentence2=text2)", NULL, "Stsbenchmark.tar.gz" },
    { "MNLI", NULL, K_MNLI, 1, 1, { "train", "dev_matched", "dev_mismatched" },
      { "multinli_1.0_train.txt", "multinli_1.0_dev_matched.txt", "multinli_1.0_dev_mismatched.txt" },
      "(label, sentence1=text1, sentence2=text2)", NULL, "multinli_1.0.zip" },
    { "QNLI", NULL, K_QNLI, 1, 1, { "train", "dev", "test" }, { "QNLI/train.tsv", "QNLI/dev.tsv", "QNLI/test.tsv" },
      "(label, question=text1, sentence=text2)", "(question=text1, sentence=text2)", "QNLIv2.zip" },
    { "RTE", NULL, K_RTE, 1, 1, { "train", "dev", "test" }, { "RTE/train.tsv", "RTE/dev.tsv", "RTE/test.tsv" },
      "(label, sentence1=text1, sentence2=text2)", "(sentence1=text1, sentence2=text2)", "RTE.zip" },
    { "WNLI", NULL, K_WNLI, 1, 0, { "train", "dev", "test" }, { "WNLI/train.tsv", "WNLI/dev.tsv", "WNLI/test.tsv" },
      "(label, sentence1=text1, sentence2=text2)", "(sentence1=text1, sentence2=text2)", "WNLI.zip" },
};

const glue_dataset *glue_find_dataset(const char *name)
{
    for (size_t i = 0; i < sizeof datasets / sizeof datasets[0]; i++)
        if (strcasecmp(name, datasets[i].name) == 0
            || (datasets[i].alias != NULL && strcasecmp(name, datasets[i].alias) == 0))
            return &datasets[i];
    return NULL;
}

const char *glue_dataset_name(const glue_dataset *d) { return d->name; }
int glue_skips_header(const glue_dataset *d) { return d->skip_header; }
int glue_quote_none(const glue_dataset *d) { return d->quote_none; }
const char *glue_archive(const glue_dataset *d) { return d->archive; }

int glue_archive_is_tar(const glue_dataset *d)
{
    const size_t n = d->archive != NULL ? strlen(d->archive) : 0;
    return n > 7 && strcmp(d->archive + n - 7, ".tar.gz") == 0;
}

const char *glue_split_file(const glue_dataset *d, const char *split, const char **splits)
{
    static char lists[sizeof datasets / sizeof datasets[0]][64];
    const size_t di = (size_t)(d - datasets);
    if (lists[di][0] == '\0') {
        /* built once per dataset; every writer writes the same bytes */
        char buf[64] = "";
        for (int i = 0; i < 4 && d->splits[i] != NULL; i++)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? ", " : "", d->splits[i]);
        memcpy(lists[di], buf, sizeof buf);
    }
    if (splits != NULL)
        *splits = lists[di];
    for (int i = 0; i < 4 && d->splits[i] != NULL; i++)
        if (strcmp(split, d->splits[i]) == 0)
            return d->files[i];
    return NULL;
}

static int is_test(const char *split) { return strcmp(split, "test") == 0; }

const char *glue_dataset_columns(const glue_dataset *d, const char *split)
{
    return is_test(split) && d->test_columns != NULL ? d->test_columns : d->columns;
}

/* Python's str.isspace() for the code point at s (its UTF-8 length in *n), or 0. */
static int space_at(const unsigned char *s, size_t avail, size_t *n)
{
    *n = 1;
    if (avail >= 1 && ((s[0] >= 0x09 && s[0] <= 0x0D) || (s[0] >= 0x1C && s[0] <= 0x20)))
        return 1;
    if (avail >= 2 && s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0)) {
        *n = 2;
        return 1;
    }
    if (avail >= 3) {
        unsigned cp = ((unsigned)(s[0] & 0x0F) << 12) | ((unsigned)(s[1] & 0x3F) << 6) | (unsigned)(s[2] & 0x3F);
        if ((s[0] & 0xF0) == 0xE0 && (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028
                                      || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000)) {
            *n = 3;
            return 1;
        }
    }
    return 0;
}

/* The field without leading and trailing Unicode whitespace (str.strip()). */
static const char *py_strip(const char *s, size_t *len)
{
    const unsigned char *p = (const unsigned char *)s, *e = p + strlen(s);
    size_t n;
    while (p < e && space_at(p, (size_t)(e - p), &n))
        p += n;
    while (e > p) {
        /* the last code point starts at the last byte that is not a continuation byte */
        const unsigned char *q = e - 1;
        while (q > p && (*q & 0xC0) == 0x80)
            q--;
        if (!space_at(q, (size_t)(e - q), &n) || q + n != e)
            break;
        e = q;
    }
    *len = (size_t)(e - p);
    return (const char *)p;
}

/* Python's int(s): 1 with *v set, 0 when s is not an integer literal or
** does not fit an i64. */
static int py_int(const char *s, int64_t *v)
{
    size_t len;
    const char *p = py_strip(s, &len), *e = p + len;
    int neg = 0;
    if (p < e && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    if (p == e || !isdigit((unsigned char)*p))
        return 0;
    uint64_t acc = 0;
    for (; p < e; p++) {
        if (*p == '_' && p + 1 < e && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[-1]))
            continue;
        if (!isdigit((unsigned char)*p))
            return 0;
        if (acc > (UINT64_MAX - 9) / 10)
            return 0;
        acc = acc * 10 + (uint64_t)(*p - '0');
    }
    if (acc > (uint64_t)INT64_MAX + (uint64_t)neg)
        return 0;
    *v = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return 1;
}

/* Python's float(s) for decimal literals, inf, infinity and nan. */
static int py_float(const char *s, double *v)
{
    size_t len;
    const char *p = py_strip(s, &len), *e = p + len;
    char buf[128];
    if (len == 0 || len >= sizeof buf)
        return 0;
    const char *q = p;
    if (*q == '+' || *q == '-')
        q++;
    size_t rest = (size_t)(e - q);
    if ((rest == 3 && strncasecmp(q, "inf", 3) == 0) || (rest == 8 && strncasecmp(q, "infinity", 8) == 0)) {
        *v = *p == '-' ? -INFINITY : INFINITY;
        return 1;
    }
    if (rest == 3 && strncasecmp(q, "nan", 3) == 0) {
        *v = NAN;
        return 1;
    }
    /* digits [. digits] [e [sign] digits], at least one digit before the exponent */
    int digits = 0;
    while (q < e && isdigit((unsigned char)*q))
        q++, digits++;
    if (q < e && *q == '.')
        for (q++; q < e && isdigit((unsigned char)*q); q++)
            digits++;
    if (digits == 0)
        return 0;
    if (q < e && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < e && (*q == '+' || *q == '-'))
            q++;
        if (q == e || !isdigit((unsigned char)*q))
            return 0;
        while (q < e && isdigit((unsigned char)*q))
            q++;
    }
    if (q != e)
        return 0;
    memcpy(buf, p, len);
    buf[len] = '\0';
    errno = 0;
    *v = strtod(buf, NULL);       /* overflow gives inf, as Python's float() does */
    return 1;
}

static int need(const glue_csv *r, int32_t n, char *err, size_t err_size)
{
    if (r->n_fields >= n)
        return 1;
    snprintf(err, err_size, "%d column%s where at least %d are needed", (int)r->n_fields, r->n_fields == 1 ? "" : "s",
             (int)n);
    return 0;
}

static void text(glue_row *row, int which, const char *s)
{
    if (which == 1) {
        row->text1 = s;
        row->text1_len = strlen(s);
    } else {
        row->text2 = s;
        row->text2_len = strlen(s);
    }
}

static int label_int(const glue_csv *r, int32_t col, glue_row *row, char *err, size_t err_size)
{
    if (!py_int(glue_csv_field(r, col), &row->label)) {
        snprintf(err, err_size, "column %d '%.40s' is not an integer label", (int)col, glue_csv_field(r, col));
        return 0;
    }
    row->has_label = 1;
    return 1;
}

static int label_map(const glue_csv *r, int32_t col, const char *const *names, glue_row *row, char *err,
                     size_t err_size)
{
    const char *s = glue_csv_field(r, col);
    for (int i = 0; names[i] != NULL; i++)
        if (strcmp(s, names[i]) == 0) {
            row->label = i;
            row->has_label = 1;
            return 1;
        }
    snprintf(err, err_size, "column %d '%.40s' is not a label (%s%s%s)", (int)col, s, names[0],
             names[1] ? ", " : "", names[1] ? names[1] : "");
    return 0;
}

static const char *const entail2[] = { "entailment", "not_entailment", NULL };
static const char *const mnli3[] = { "entailment", "neutral", "contradiction", NULL };

int glue_map_row(const glue_dataset *d, const char *split, const glue_csv *r, glue_row *row, char *err,
                 size_t err_size)
{
    memset(row, 0, sizeof *row);
    const int test = is_test(split);
    switch (d->kind) {
    case K_COLA:
        if (r->n_fields != 4)
            return 0;                       /* torchtext's _filter_res */
        if (!label_int(r, 1, row, err, err_size))
            return -1;
        text(row, 1, glue_csv_field(r, 3));
        text(row, 2, glue_csv_field(r, 0));
        return 1;
    case K_SST2: {
        if (!need(r, 2, err, err_size))
            return -1;
        if (!test && !label_int(r, 1, row, err, err_size))
            return -1;
        row->text1 = py_strip(glue_csv_field(r, test ? 1 : 0), &row->text1_len);
        return 1;
    }
    case K_MRPC:
        if (!need(r, 5, err, err_size) || !label_int(r, 0, row, err, err_size))
            return -1;
        text(row, 1, glue_csv_field(r, 3));
        text(row, 2, glue_csv_field(r, 4));
        return 1;
    case K_QQP:
        /* the label is the LAST column (x[-1]), the questions columns 3 and 4 */
        if (!need(r, 5, err, err_size) || !label_int(r, r->n_fields - 1, row, err, err_size))
            return -1;
        text(row, 1, glue_csv_field(r, 3));
        text(row, 2, glue_csv_field(r, 4));
        return 1;
    case K_STSB:
        if (!need(r, 7, err, err_size))
            return -1;
        if (!py_int(glue_csv_field(r, 3), &row->idx)) {
            snprintf(err, err_size, "column 3 '%.40s' is not an integer", glue_csv_field(r, 3));
            return -1;
        }
        if (!py_float(glue_csv_field(r, 4), &row->score)) {
            snprintf(err, err_size, "column 4 '%.40s' is not a number", glue_csv_field(r, 4));
            return -1;
        }
        row->has_idx = row->has_score = 1;
        text(row, 1, glue_csv_field(r, 5));
        text(row, 2, glue_csv_field(r, 6));
        return 1;
    case K_MNLI: {
        if (!need(r, 1, err, err_size))
            return -1;
        int known = 0;
        for (int i = 0; mnli3[i] != NULL; i++)
            known |= strcmp(glue_csv_field(r, 0), mnli3[i]) == 0;
        if (!known)
            return 0;                       /* gold_label "-": filtered */
        if (!need(r, 7, err, err_size) || !label_map(r, 0, mnli3, row, err, err_size))
            return -1;
        text(row, 1, glue_csv_field(r, 5));
        text(row, 2, glue_csv_field(r, 6));
        return 1;
    }
    case K_QNLI:
    case K_RTE:
    case K_WNLI:
        if (!need(r, test ? 3 : 4, err, err_size))
            return -1;
        if (!test && (d->kind == K_WNLI ? !label_int(r, 3, row, err, err_size)
                                        : !label_map(r, 3, entail2, row, err, err_size)))
            return -1;
        text(row, 1, glue_csv_field(r, 1));
        text(row, 2, glue_csv_field(r, 2));
        return 1;
    }
    snprintf(err, err_size, "unknown dataset");
    return -1;
}
