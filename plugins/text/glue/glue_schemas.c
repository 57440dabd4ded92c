/* SPDX-License-Identifier: BSD-3-Clause */
/*
** glue_schemas.c - the definition of text.glue, the method of the
** text.glue object class: the next rows of the split, as columns (glue.h).
*/
#include "glue.h"

#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)
#define U8 LOOM_DTYPE_BIT(LOOM_DTYPE_U8)

static const loom_arg_def glue_outputs[] = {
    [GLUE_OUT_LABEL] = { .name = "label", .dtypes = I64, .ndim = 1,
                         .doc = "i64 [n] labels; [0] where the dataset or split has none (test splits, STS-B)" },
    [GLUE_OUT_SCORE] = { .name = "score", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F64), .ndim = 1,
                         .doc = "f64 [n] STS-B similarity scores (Python float); [0] for the others" },
    [GLUE_OUT_IDX] = { .name = "idx", .dtypes = I64, .ndim = 1, .doc = "i64 [n] STS-B pair ids; [0] for the others" },
    [GLUE_OUT_TEXT1] = { .name = "text1", .dtypes = U8, .flags = LOOM_ARG_JAGGED, .ndim = 1,
                         .doc = "u8 UTF-8 bytes of the first string of each row" },
    [GLUE_OUT_TEXT1_OFF] = { .name = "text1_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1,
                             .doc = "i64 [n+1]" },
    [GLUE_OUT_TEXT2] = { .name = "text2", .dtypes = U8, .flags = LOOM_ARG_JAGGED, .ndim = 1,
                         .doc = "u8 second strings (CoLA: the source); empty with [1] offsets for SST-2" },
    [GLUE_OUT_TEXT2_OFF] = { .name = "text2_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1,
                             .doc = "i64 [n+1], or [1] when the dataset has one string" },
    [GLUE_OUT_STATS] = { .name = "stats", .dtypes = I64, .ndim = 1,
                         .doc = "i64 [4]: rows yielded so far, rows filtered as torchtext does, malformed rows "
                                "skipped, lines read" },
};
PK_ATTR_TABLE(text_glue, TEXT_GLUE_ATTRS);

PK_SCHEMA(text_glue_schema, TEXT_GLUE_CLASS, 1,
          "the next rows (at most max_rows; 0 at the end) of a GLUE split as torchtext yields them, as columns",
          PK_OUTPUTS(glue_outputs), PK_ATTRS(text_glue_attrs), .object_class = TEXT_GLUE_CLASS);

PK_OPS_DEFINE(text_glue_ops, TEXT_GLUE_OPS);
