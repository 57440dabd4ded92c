/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cast.c - core.cast on the CPU: torch's Tensor.to(dtype) for every pair of
** loom dtypes, through the dtype table (dtypes.c holds the rounding rules).
** The input may be strided; the output has the input's shape.
*/
#include <string.h>
#include <strings.h>

#include "kernels.h"

/* The core reads the name as it reads dtype names everywhere (ABI 1.6:
** loom's, NumPy's and torch's spellings); a core before 1.6 has no
** dtype_from_name, and there only loom's own names are known. */
static loom_dtype parse_dtype(const char *name)
{
    if (LOOM_HAS_MEMBER(pk_host, loom_host_api, dtype_from_name))
        return pk_host->dtype_from_name(name);
    for (int d = LOOM_DTYPE_INVALID + 1; d < LOOM_DTYPE_COUNT; d++)
        if (strcasecmp(name, core_dtype((loom_dtype)d)->name) == 0)
            return (loom_dtype)d;
    return LOOM_DTYPE_INVALID;
}

typedef struct cast_job {
    core_nd_iter it;
    const char *src;
    char *dst;
    const core_dtype_row *from, *to;
    int32_t src_dtype;
} cast_job;

static void cast_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const cast_job *j = user;
    const int64_t len = core_nd_row_len(&j->it);
    const int64_t ss = j->it.strides[0][j->it.ndim - 1], sd = j->it.strides[1][j->it.ndim - 1];
    const int64_t es = (int64_t)j->from->size, ed = (int64_t)j->to->size;
    (void)thread_index;
    for (int64_t r = begin; r < end; r++) {
        int64_t off[2];
        core_nd_row_offsets(&j->it, r, off);
        for (int64_t x = 0; x < len; x++) {
            const char *src = j->src + (off[0] + x * ss) * es;
            char *dst = j->dst + (off[1] + x * sd) * ed;
            if (j->from == j->to) {
                memcpy(dst, src, (size_t)es);     /* same dtype: a copy keeps every bit (NaN payloads) */
                continue;
            }
            core_value v = j->from->load(src);
            v.from = j->src_dtype;
            j->to->store(dst, v);
        }
    }
}

loom_status core_cast_cpu(loom_call *call)
{
    const loom_tensor *in = call->inputs[0];
    const loom_attr_value *dtype = &call->attrs[PK_ATTR(core_cast, dtype)];
    const char *name = dtype->is_set ? dtype->u.s : NULL;
    loom_dtype to = name != NULL ? parse_dtype(name) : LOOM_DTYPE_INVALID;
    cast_job j = { .from = core_dtype(loom_tensor_dtype_of(in)), .src_dtype = loom_tensor_dtype_of(in) };
    loom_tensor *out;

    if (to == LOOM_DTYPE_INVALID)
        return pk_host->fail(LOOM_EINVAL,
                               "attribute 'dtype' is '%s', expected one of f32 f64 f16 bf16 f8e4m3 "
                               "i8 u8 i16 i32 i64 bool c64 c128 u16 u32 (or a torch or NumPy name of one)", name != NULL ? name : "(unset)");
    if (j.from == NULL)
        return pk_host->fail(LOOM_EINVAL, "'input' has an unknown dtype");
    j.to = core_dtype(to);
    loom_status st = pk_host->alloc_output(call, 0, to, in->ndim, in->shape, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    st = core_iter_setup(&j.it, in->ndim, in->shape, (const loom_tensor *[]){ in, out },
                         (const char *[]){ "input", "output" }, 2);
    if (st != LOOM_OK)
        return st;
    j.src = loom_data(in);
    j.dst = loom_data(out);
    int64_t len = core_nd_row_len(&j.it);
    return pk_host->parallel_for(call->ctx, core_nd_rows(&j.it), len >= 16384 ? 1 : 16384 / len,
                                   cast_rows, &j);
}
