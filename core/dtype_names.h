/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dtype_names.h - the one reading of a dtype name: loom's own names
** ("f32"), NumPy's and torch's spellings ("float32", "half", "long"),
** optionally after "torch.", ASCII case ignored. Shared by libloom
** (loom_dtype_from_name, host->dtype_from_name) and loom-probe, which does
** not link libloom, so that both accept exactly the same names.
*/
#ifndef LOOM_CORE_DTYPE_NAMES_H
#define LOOM_CORE_DTYPE_NAMES_H

#include <string.h>
#include <strings.h>

#include "loom/plugin.h"

/* Spellings besides loom's own names. */
static const struct { const char *alias; loom_dtype dtype; } loom__dtype_aliases[] = {
    { "float32", LOOM_DTYPE_F32 },  { "float", LOOM_DTYPE_F32 },
    { "float64", LOOM_DTYPE_F64 },  { "double", LOOM_DTYPE_F64 },
    { "float16", LOOM_DTYPE_F16 },  { "half", LOOM_DTYPE_F16 },
    { "bfloat16", LOOM_DTYPE_BF16 }, { "float8_e4m3fn", LOOM_DTYPE_F8E4M3 },
    { "fp8", LOOM_DTYPE_F8E4M3 },   { "int8", LOOM_DTYPE_I8 },
    { "uint8", LOOM_DTYPE_U8 },     { "int16", LOOM_DTYPE_I16 },
    { "short", LOOM_DTYPE_I16 },    { "int32", LOOM_DTYPE_I32 },
    { "int", LOOM_DTYPE_I32 },      { "int64", LOOM_DTYPE_I64 },
    { "long", LOOM_DTYPE_I64 },     { "complex64", LOOM_DTYPE_C64 },
    { "cfloat", LOOM_DTYPE_C64 },   { "complex128", LOOM_DTYPE_C128 },
    { "cdouble", LOOM_DTYPE_C128 }, { "uint16", LOOM_DTYPE_U16 },
    { "uint32", LOOM_DTYPE_U32 },
};

/* name_of(d): loom's own name of dtype d. */
static inline loom_dtype loom__dtype_parse(const char *name, const char *(*name_of)(loom_dtype))
{
    if (name == NULL)
        return LOOM_DTYPE_INVALID;
    if (strncasecmp(name, "torch.", 6) == 0)
        name += 6;
    for (int d = LOOM_DTYPE_INVALID + 1; d < LOOM_DTYPE_COUNT; d++)
        if (strcasecmp(name_of((loom_dtype)d), name) == 0)
            return (loom_dtype)d;
    for (size_t i = 0; i < sizeof loom__dtype_aliases / sizeof loom__dtype_aliases[0]; i++)
        if (strcasecmp(loom__dtype_aliases[i].alias, name) == 0)
            return loom__dtype_aliases[i].dtype;
    return LOOM_DTYPE_INVALID;
}

#endif /* LOOM_CORE_DTYPE_NAMES_H */
