/* SPDX-License-Identifier: BSD-3-Clause */
/*
** resize_size.c - the output size of a resize, as torchvision computes it
** (transforms/functional.py::_compute_resized_output_size with v2's
** allow_size_none), and the interpolation names.
*/
#include <string.h>

#include "transforms.h"

/* Largest output side: the axis tables index with int32. */
#define RESIZE_MAX_SIDE (INT64_C(1) << 30)

resize_mode resize_mode_of(const char *name)
{
    if (strcmp(name, "nearest") == 0)
        return RESIZE_NEAREST;
    if (strcmp(name, "nearest-exact") == 0)
        return RESIZE_NEAREST_EXACT;
    if (strcmp(name, "bicubic") == 0)
        return RESIZE_BICUBIC;
    return RESIZE_BILINEAR;
}

loom_status resize_output_size(const loom_call *call, int size_attr, int max_size_attr, int64_t h, int64_t w,
                               int64_t *out_h, int64_t *out_w)
{
    return resize_output_size_of(&call->attrs[size_attr], max_size_attr < 0 ? NULL : &call->attrs[max_size_attr],
                                 h, w, out_h, out_w);
}

loom_status resize_output_size_of(const loom_attr_value *size, const loom_attr_value *max_size, int64_t h,
                                  int64_t w, int64_t *out_h, int64_t *out_w)
{
    static const loom_attr_value none = LOOM_DEFAULT_NONE;
    if (!max_size)
        max_size = &none;
    const int64_t shorter = w <= h ? w : h, longer = w <= h ? h : w;
    int64_t new_short, new_long;
    if (!size->is_set) {
        if (!max_size->is_set)
            return pk_host->fail(LOOM_EINVAL, "'size' is required unless 'max_size' is given");
        if (longer == 0)
            return pk_host->fail(LOOM_EINVAL, "'size' absent: the image has no long edge (%lld x %lld)",
                                 (long long)h, (long long)w);
        new_long = max_size->u.i;
        new_short = (int64_t)((double)max_size->u.i * (double)shorter / (double)longer);
    } else if (size->count == 1) {
        const int64_t s = size->u.ints[0];
        if (shorter == 0)
            return pk_host->fail(LOOM_EINVAL, "'size' [%lld]: the image has a zero edge (%lld x %lld)", (long long)s,
                                 (long long)h, (long long)w);
        new_short = s;
        new_long = (int64_t)((double)s * (double)longer / (double)shorter);   /* Python int(): truncation */
        if (max_size->is_set) {
            if (max_size->u.i <= s)
                return pk_host->fail(LOOM_EINVAL,
                                     "'max_size' = %lld must be strictly greater than the requested size for the "
                                     "smaller edge 'size' = %lld",
                                     (long long)max_size->u.i, (long long)s);
            if (new_long > max_size->u.i) {
                new_short = (int64_t)((double)max_size->u.i * (double)new_short / (double)new_long);
                new_long = max_size->u.i;
            }
        }
    } else if (size->count == 2) {
        if (max_size->is_set)
            return pk_host->fail(LOOM_EINVAL, "'max_size' should only be passed if 'size' is absent or has one "
                                              "value (the smaller edge), not [h, w]");
        *out_h = size->u.ints[0];
        *out_w = size->u.ints[1];
        goto check;
    } else {
        return pk_host->fail(LOOM_EINVAL, "'size' must have 1 or 2 values, not %lld", (long long)size->count);
    }
    *out_w = w <= h ? new_short : new_long;
    *out_h = w <= h ? new_long : new_short;
check:
    if (*out_h <= 0 || *out_w <= 0 || *out_h > RESIZE_MAX_SIDE || *out_w > RESIZE_MAX_SIDE)
        return pk_host->fail(LOOM_EINVAL, "'size': the output would be %lld x %lld (each side in [1, 2^30])",
                             (long long)*out_h, (long long)*out_w);
    return LOOM_OK;
}
