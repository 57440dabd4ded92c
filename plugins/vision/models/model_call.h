/* SPDX-License-Identifier: BSD-3-Clause */
/*
** model_call.h - what the transformer classes' forwards share: a tensor
** view over a model's own buffer, one dispatched op call with one output
** (host->op_call, so LOOM_VERBOSE=2 names its backend), and the aligned
** activation buffers of a plan.
*/
#ifndef LOOM_VISION_MODELS_MODEL_CALL_H
#define LOOM_VISION_MODELS_MODEL_CALL_H

#include <stdlib.h>

#include "vision_pack.h"

/* A compact f32 CPU tensor over data (kept by the caller) with this shape. */
static inline loom_tensor model_view(const void *data, int32_t ndim, int64_t *shape)
{
    loom_tensor t = { .data = (void *)data, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = ndim,
                      .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = shape };
    return t;
}

/* op(ins) into out (written in place after its checks). */
static inline loom_status model_call_op(loom_call *call, const loom_op *op, const loom_tensor *const *ins,
                                        int32_t n_ins, loom_tensor *out, const loom_named_attr *attrs,
                                        int32_t n_attrs)
{
    loom_tensor *outs[1] = { out };
    loom_op_call oc = { .struct_size = sizeof oc, .op = op, .n_inputs = n_ins, .inputs = ins, .n_outputs = 1,
                        .outputs = outs, .n_attrs = n_attrs, .attrs = attrs };
    return pk_host->op_call(call->ctx, &oc);
}

/* n floats, 64-byte aligned, with a spare cache line; NULL when out of memory. */
static inline float *model_alloc_floats(int64_t n)
{
    return aligned_alloc(64, ((size_t)n * sizeof(float) + 63) / 64 * 64 + 64);
}

#endif
