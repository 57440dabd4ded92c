/* SPDX-License-Identifier: BSD-3-Clause */
/*
** criteo.h - rec.criteo_reader: the Criteo Kaggle / Terabyte click logs
** (TSV: label, 13 integer features int_0..int_12, 26 categorical features
** cat_0..cat_25 as hex; any field may be empty) read in batches, as
** torchrec.datasets.criteo (torchrec 1.9) parses a line in
** BinaryCriteoUtils.tsv_to_npys: an empty field is 0, integers in base 10,
** categories in base 16.
**
** Each call of the method returns the next batch: dense [B,13] f32 (the
** transform below), labels [B] f32 and the categories as a KJT with
** torchrec's keys cat_0..cat_25 (values i64: the id mod hashes[k] when
** hashes are given, as InMemoryBinaryCriteoIterDataPipe; lengths i32, 1
** per sample, or 0 for an empty field with missing=empty). B < batch_size
** only for the last batch (none with drop_last); B = 0 once the file is
** read. A bad line fails the call; the next call goes on after it, its
** batch led by the rows read before it. Calls on one object are
** serialised: the object is a cursor.
**
** dense_transform:
**   log1p      log(max(x, 0) + 1), the DLRM reference's transform
**   shift_min  log(x - m + 2), m the least integer feature of the whole
**              file (missing ones count as 0): torchrec 1.9's
**              tsv_to_npys (`dense_np -= dense_np.min() - 2`); create reads
**              the file once for m
**   none       x as f32
*/
#ifndef LOOM_REC_CRITEO_H
#define LOOM_REC_CRITEO_H

#include <stddef.h>
#include <stdint.h>

#include "rec_pack.h"

#define REC_CRITEO_CLASS "rec.criteo_reader"
#define REC_CRITEO_N_DENSE 13
#define REC_CRITEO_N_SPARSE 26
#define REC_CRITEO_N_FIELDS (1 + REC_CRITEO_N_DENSE + REC_CRITEO_N_SPARSE)

/* One parsed line. present[k] = 0 for an empty categorical field. */
typedef struct rec_criteo_row {
    int64_t label;
    int64_t dense[REC_CRITEO_N_DENSE];
    int64_t sparse[REC_CRITEO_N_SPARSE];
    uint8_t present[REC_CRITEO_N_SPARSE];
} rec_criteo_row;

/* Parses line[0..n) (no newline; a trailing '\r' is dropped). Returns NULL,
** or a static message naming the field ("int_3: '12x' is not a base-10
** integer") into why[0..why_size). Integers are an optional sign and
** digits within int64 (torchrec's int() accepts more: spaces and '_'; the
** real files have none); categories 1..16 hex digits below 2^63. */
int rec_criteo_parse_line(const char *line, size_t n, rec_criteo_row *row, char *why, size_t why_size);

extern const loom_object_class rec_criteo_class;

#define REC_CRITEO_OPS(X) X(rec_criteo_reader_schema)
PK_OPS_DECLARE(rec_criteo_ops, REC_CRITEO_OPS);

/* Outputs of the method: dense, labels, then the KJT block of kjt.h */
enum { REC_CRITEO_OUT_DENSE, REC_CRITEO_OUT_LABELS, REC_CRITEO_OUT_KJT };

#define REC_CRITEO_CLASS_ATTRS(A, op)                                                             \
    A(op, path, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "the TSV file", )                 \
    A(op, batch_size, INT, LOOM_DEFAULT_INT(8192), LOOM_ATTR_POSITIVE, "rows per batch", )       \
    A(op, hashes, INTS, LOOM_DEFAULT_NONE, 0,                                                    \
      "num_embeddings of each of the 26 features: ids are taken mod it; unset: raw ids", )       \
    A(op, drop_last, BOOL, LOOM_DEFAULT_BOOL(0), 0, "drop a last batch smaller than batch_size", ) \
    A(op, dense_transform, STRING, LOOM_DEFAULT_STRING("log1p"), 0,                              \
      "log1p: log(max(x,0)+1); shift_min: log(x - min + 2) over the file (torchrec's "           \
      "tsv_to_npys); none", )                                                                     \
    A(op, missing, STRING, LOOM_DEFAULT_STRING("empty"), 0,                                      \
      "an empty categorical field: empty (length 0) or zero (id 0, length 1, as tsv_to_npys)", )
PK_ATTR_ENUM(rec_criteo_class, REC_CRITEO_CLASS_ATTRS);

#endif /* LOOM_REC_CRITEO_H */
