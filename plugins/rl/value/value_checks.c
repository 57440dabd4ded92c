/* SPDX-License-Identifier: BSD-3-Clause */
/*
** value_checks.c - the argument checks the rl value estimators share. The
** core has checked the dtypes (floats f32/f64 of input 0's dtype, flags
** bool); left are the shapes (torchrl raises "All input tensors ... must
** share a unique shape"), the layout and the time dimension.
*/
#include "describe.h"
#include "value.h"

loom_status rl_value_check(loom_call *call, int n_values, int n_flags, int has_time, int64_t time_dim, int n_out,
                           rl_time_layout *lay, loom_tensor **out)
{
    const loom_arg_def *args = call->schema->inputs;
    const loom_tensor *ref = call->inputs[0];
    char b[160], c[160];
    for (int k = 0; k < n_values + n_flags; k++) {
        const loom_tensor *t = call->inputs[k];
        if (t == NULL)      /* an absent optional flag (terminated): done stands in */
            continue;
        if (loom_numel(t) > 0 && !loom_is_contiguous(t))
            return pk_host->fail(LOOM_EINVAL, "'%s' %s must be contiguous (compact row-major)", args[k].name,
                                 pk_describe(pk_host, t, b, sizeof b));
        int same = t->ndim == ref->ndim;
        for (int32_t d = 0; same && d < ref->ndim; d++)
            same = t->shape[d] == ref->shape[d];
        if (!same)
            return pk_host->fail(LOOM_EINVAL, "'%s' %s must have the shape of '%s' %s (all values and flags share "
                                 "one shape)", args[k].name, pk_describe(pk_host, t, b, sizeof b), args[0].name,
                                 pk_describe(pk_host, ref, c, sizeof c));
    }
    lay->outer = 1;
    lay->T = loom_numel(ref);
    lay->inner = 1;
    if (has_time) {
        const int64_t td = time_dim < 0 ? time_dim + ref->ndim : time_dim;
        if (td < 0 || td >= ref->ndim)
            return pk_host->fail(LOOM_EINVAL, "time_dim %lld is not a dimension of '%s' %s (torchrl's layout is "
                                 "[*B, T, *F], time_dim -2)", (long long)time_dim, args[0].name,
                                 pk_describe(pk_host, ref, b, sizeof b));
        lay->T = ref->shape[td];
        for (int64_t d = 0; d < td; d++)
            lay->outer *= ref->shape[d];
        for (int64_t d = td + 1; d < ref->ndim; d++)
            lay->inner *= ref->shape[d];
    }
    for (int k = 0; k < n_out; k++) {
        loom_status st = pk_host->alloc_output(call, k, loom_tensor_dtype_of(ref), ref->ndim, ref->shape, &out[k]);
        if (st != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}
