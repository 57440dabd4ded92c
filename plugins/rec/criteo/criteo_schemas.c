/* SPDX-License-Identifier: BSD-3-Clause */
/*
** criteo_schemas.c - the method of rec.criteo_reader (criteo.h): the next
** batch of the file as torchrec's Batch (dense_features, sparse_features,
** labels).
*/
#include "criteo.h"
#include "../kjt/kjt.h"

static const loom_arg_def criteo_outputs[] = {
    { .name = "dense", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2,
      .doc = "[B, 13] the integer features through dense_transform" },
    { .name = "labels", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 1, .doc = "[B] the click labels" },
    REC_KJT_OUTPUT_DEFS,
};

PK_SCHEMA(rec_criteo_reader_schema, REC_CRITEO_CLASS, 1,
          "the next batch of a Criteo TSV: dense [B,13], labels [B] and the categorical features as a KJT "
          "(keys cat_0..cat_25, values i64, lengths i32); B = 0 at the end of the file",
          .n_inputs = 0, PK_OUTPUTS(criteo_outputs), .object_class = REC_CRITEO_CLASS);

PK_OPS_DEFINE(rec_criteo_ops, REC_CRITEO_OPS);
