/* SPDX-License-Identifier: BSD-3-Clause */
/*
** glue.h - the text.glue object: the nine GLUE datasets read from their
** distribution files (extracted), row by row, as torchtext 0.18 parses
** them (torchtext/datasets/{cola,sst2,mrpc,qqp,stsb,mnli,qnli,rte,wnli}.py).
**
** Every dataset yields at most two strings, one integer label, and for
** STS-B a float score and the pair id; the method returns them as columns:
**   label   i64 [n]   the class (absent: 0 rows)
**   score   f64 [n]   STS-B's similarity, Python's float() of the column
**   idx     i64 [n]   STS-B's int(col 3), the only index torchtext yields
**   text1 (+ text1_offsets), text2 (+ text2_offsets)   jagged UTF-8 strings
**   stats   i64 [4]   rows yielded so far, rows torchtext filters out
**                     (CoLA rows of != 4 columns, MNLI gold label "-"),
**                     malformed rows skipped (on_error skip), lines read
** glue_dataset_columns names, per dataset and split, torchtext's tuple in
** its order and where each member is.
*/
#ifndef LOOM_TEXT_GLUE_H
#define LOOM_TEXT_GLUE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "text_pack.h"

#define TEXT_GLUE_CLASS "text.glue"

#define TEXT_GLUE_CLASS_ATTRS(A, op)                                                             \
    A(op, dataset, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                \
      "CoLA, SST2, MRPC, QQP, STSB, MNLI, QNLI, RTE or WNLI", )                                  \
    A(op, split, STRING, LOOM_DEFAULT_STRING("train"), 0,                                        \
      "train, dev or test (MRPC: train, test; QQP: train; MNLI: train, dev_matched, "            \
      "dev_mismatched)", )                                                                       \
    A(op, root, STRING, LOOM_DEFAULT_STRING("."), 0,                                             \
      "folder of the extracted files: torchtext's paths under it (cola_public/raw/..., SST-2/..., " \
      "stsbenchmark/...) or the bare file names; else torchtext's zip in it (SST-2.zip, ...), "  \
      "read without extracting; or that zip itself", )                                           \
    A(op, file, STRING, LOOM_DEFAULT_NONE, 0,                                                   \
      "read this file as the split's file instead of looking under root (the dataset's zip: "    \
      "its split's member)", )                                                                   \
    A(op, on_error, STRING, LOOM_DEFAULT_STRING("raise"), 0,                                     \
      "raise: a malformed row fails with its file and line; skip: it is counted and skipped", )
PK_ATTR_ENUM(text_glue_class, TEXT_GLUE_CLASS_ATTRS);

#define TEXT_GLUE_ATTRS(A, op)                                                                   \
    A(op, max_rows, INT, LOOM_DEFAULT_INT(1024), LOOM_ATTR_POSITIVE, "rows per call at most", )
PK_ATTR_ENUM(text_glue, TEXT_GLUE_ATTRS);

enum { GLUE_OUT_LABEL, GLUE_OUT_SCORE, GLUE_OUT_IDX, GLUE_OUT_TEXT1, GLUE_OUT_TEXT1_OFF, GLUE_OUT_TEXT2,
       GLUE_OUT_TEXT2_OFF, GLUE_OUT_STATS, GLUE_N_OUT };

#define TEXT_GLUE_OPS(X) X(text_glue_schema)
PK_OPS_DECLARE(text_glue_ops, TEXT_GLUE_OPS);
extern const loom_object_class text_glue_class;

/* ------------------------------------------------------------ rows (glue_csv.c) */

/* Python's csv.reader with delimiter '\t' over one file or buffer: quote_none
** is csv.QUOTE_NONE (a '"' is a character), else QUOTE_MINIMAL with
** doublequote (a field opened by '"' runs to its closing quote across tabs
** and lines; '""' inside is one '"'). Lines end at \n, \r\n or \r (text
** mode's universal newlines; a quoted line end is kept as \n). A UTF-8 BOM
** at the start is dropped. An empty line is a row of no fields, as in csv. */
/* A byte source other than a FILE or memory (a zip member): fills buf with
** up to n bytes, returns how many, 0 at the end, -1 on an error. */
typedef long (*glue_read_fn)(void *ctx, uint8_t *buf, size_t n);

typedef struct glue_csv {
    FILE *f;                       /* NULL: read from rd, else from mem */
    glue_read_fn rd;
    void *rd_ctx;
    uint8_t *rbuf;                 /* rd's bytes: rbuf[rpos..rlen) unread */
    size_t rlen, rpos;
    int rerr;                      /* rd failed */
    const uint8_t *mem;
    size_t mem_len, mem_pos;
    int quote_none;
    int peeked;                    /* a character read ahead, or -2 */
    char *buf;                     /* the row's fields, each NUL-terminated */
    size_t len, cap;
    size_t *fields;                /* start of each field in buf */
    int32_t n_fields, fields_cap;
    int64_t line;                  /* physical lines consumed so far */
    int64_t row_line;              /* line where the current row starts (1-based) */
} glue_csv;

void glue_csv_open(glue_csv *r, FILE *f, const uint8_t *mem, size_t mem_len, int quote_none);
/* Read from rd instead; -1 out of memory. */
int glue_csv_open_reader(glue_csv *r, glue_read_fn rd, void *ctx, int quote_none);
void glue_csv_close(glue_csv *r);
/* Skip one physical line (torchtext's skip_lines). */
void glue_csv_skip_line(glue_csv *r);
/* The next row: 1, 0 at the end, -1 out of memory or a row over the limit
** (message in err). */
int glue_csv_next(glue_csv *r, char *err, size_t err_size);
static inline const char *glue_csv_field(const glue_csv *r, int32_t i) { return r->buf + r->fields[i]; }

/* --------------------------------------------------------- datasets (glue_datasets.c) */

typedef struct glue_row {
    int has_label, has_score, has_idx;
    int64_t label, idx;
    double score;
    const char *text1, *text2;     /* NULL: no such column */
    size_t text1_len, text2_len;
} glue_row;

typedef struct glue_dataset glue_dataset;

/* The dataset named `name` (case-insensitive, "SST-2" and "STS-B" too), or NULL. */
const glue_dataset *glue_find_dataset(const char *name);
const char *glue_dataset_name(const glue_dataset *d);
/* The file of `split` relative to root (torchtext's extracted path), or
** NULL when the dataset has no such split; *splits lists those it has. */
const char *glue_split_file(const glue_dataset *d, const char *split, const char **splits);
int glue_skips_header(const glue_dataset *d);
/* torchtext's archive of the dataset (its _PATH: "SST-2.zip", "QNLIv2.zip",
** "cola_public_1.1.zip", "multinli_1.0.zip", "Stsbenchmark.tar.gz", ...),
** whose split member is the first whose name contains glue_split_file's
** path; NULL where torchtext reads plain files (MRPC, QQP). */
const char *glue_archive(const glue_dataset *d);
/* 1 when that archive is a gzip'd tar (STS-B's), 0 for a zip. */
int glue_archive_is_tar(const glue_dataset *d);
int glue_quote_none(const glue_dataset *d);
/* torchtext's tuple of this dataset and split, e.g. "(label, text1=sentence1,
** text2=sentence2)". */
const char *glue_dataset_columns(const glue_dataset *d, const char *split);
/* Map one csv row: 1 yielded (row filled), 0 filtered as torchtext filters,
** -1 malformed (why in err: the reference raises on it). */
int glue_map_row(const glue_dataset *d, const char *split, const glue_csv *r, glue_row *row, char *err,
                 size_t err_size);

#endif /* LOOM_TEXT_GLUE_H */
