/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dtype.c - the dtype table: one row per loom_dtype, shared by every file
** that converts, sizes, names or serialises tensors.
*/
#include <string.h>

#include "dtype_names.h"
#include "internal.h"

static const loom__dtype_info table[LOOM_DTYPE_COUNT] = {
    [LOOM_DTYPE_F32]    = { "f32",    4,  { LOOM_DL_FLOAT, 32, 1 },  "f4",  "F32" },
    [LOOM_DTYPE_F64]    = { "f64",    8,  { LOOM_DL_FLOAT, 64, 1 },  "f8",  "F64" },
    [LOOM_DTYPE_F16]    = { "f16",    2,  { LOOM_DL_FLOAT, 16, 1 },  "f2",  "F16" },
    [LOOM_DTYPE_BF16]   = { "bf16",   2,  { LOOM_DL_BFLOAT, 16, 1 }, "V2",  "BF16" },
    [LOOM_DTYPE_F8E4M3] = { "f8e4m3", 1,  { LOOM_DL_FLOAT8_E4M3FN, 8, 1 }, "V1", "F8_E4M3" },
    [LOOM_DTYPE_I8]     = { "i8",     1,  { LOOM_DL_INT, 8, 1 },     "i1",  "I8" },
    [LOOM_DTYPE_U8]     = { "u8",     1,  { LOOM_DL_UINT, 8, 1 },    "u1",  "U8" },
    [LOOM_DTYPE_I16]    = { "i16",    2,  { LOOM_DL_INT, 16, 1 },    "i2",  "I16" },
    [LOOM_DTYPE_I32]    = { "i32",    4,  { LOOM_DL_INT, 32, 1 },    "i4",  "I32" },
    [LOOM_DTYPE_I64]    = { "i64",    8,  { LOOM_DL_INT, 64, 1 },    "i8",  "I64" },
    [LOOM_DTYPE_BOOL]   = { "bool",   1,  { LOOM_DL_BOOL, 8, 1 },    "b1",  "BOOL" },
    [LOOM_DTYPE_C64]    = { "c64",    8,  { LOOM_DL_COMPLEX, 64, 1 }, "c8", NULL },
    [LOOM_DTYPE_C128]   = { "c128",   16, { LOOM_DL_COMPLEX, 128, 1 }, "c16", NULL },
    [LOOM_DTYPE_U16]    = { "u16",    2,  { LOOM_DL_UINT, 16, 1 },   "u2",  "U16" },
    [LOOM_DTYPE_U32]    = { "u32",    4,  { LOOM_DL_UINT, 32, 1 },   "u4",  "U32" },
};

const loom__dtype_info *loom__dtype(loom_dtype dtype)
{
    if ((int)dtype <= LOOM_DTYPE_INVALID || dtype >= LOOM_DTYPE_COUNT)
        return NULL;
    return &table[dtype];
}

LOOM_API size_t loom_dtype_size(loom_dtype dtype)
{
    const loom__dtype_info *d = loom__dtype(dtype);
    return d != NULL ? d->size : 0;
}

LOOM_API const char *loom_dtype_name(loom_dtype dtype)
{
    const loom__dtype_info *d = loom__dtype(dtype);
    return d != NULL ? d->name : "invalid";
}

LOOM_API loom_dl_dtype loom_dtype_to_dl(loom_dtype dtype)
{
    const loom__dtype_info *d = loom__dtype(dtype);
    return d != NULL ? d->dl : (loom_dl_dtype){ 0, 0, 0 };
}

LOOM_API loom_dtype loom_dtype_from_name(const char *name)
{
    return loom__dtype_parse(name, loom_dtype_name);
}
