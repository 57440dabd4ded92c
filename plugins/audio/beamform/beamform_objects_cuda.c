/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_objects_cuda.c - the methods of audio.PSD, audio.SoudenMVDR and
** audio.RTFMVDR on cuda (audio-cuda.so), composed of the functions' cuda
** kernels through host->op_call, as torchaudio's modules compose
** torchaudio.functional:
**   audio.PSD         psd(specgram, mask, the object's normalize and eps);
**   audio.SoudenMVDR  apply_beamforming(mvdr_weights_souden(psd_s, psd_n, ...), specgram);
**   audio.RTFMVDR     apply_beamforming(mvdr_weights_rtf(rtf, psd_n, ...), specgram).
** The nested calls run on the call's device and stream, so each step's
** checks (Hermitian PSDs on a host copy, shapes, the reference channel)
** and errors are the functions' own, named in the chain. The weights live
** in a device tensor the nested call allocates and this call frees; the
** enhanced output is written in place by apply_beamforming.
**
** audio.PSD with multi_mask (the channel mean of a (..., C, F, T) mask) and
** audio.MVDR (complex128 arithmetic with a host-side recursive state) have
** no cuda kernel: supports() declines the first, naming why, and the core
** names the missing kernel for the second.
*/
#include <stdio.h>
#include <string.h>

#include "beamform.h"

/* The functions, found on first use (they are this pack's own ops, which
** op_find sees once the pack's registration has been committed). */
enum { OP_PSD, OP_SOUDEN, OP_RTF, OP_APPLY, N_OPS };
static const char *const op_names[N_OPS] = { "audio.psd", "audio.mvdr_weights_souden", "audio.mvdr_weights_rtf",
                                             "audio.apply_beamforming" };
static const loom_op *ops[N_OPS];

static const loom_op *op_of(int which)
{
    const loom_op *op = __atomic_load_n(&ops[which], __ATOMIC_ACQUIRE);
    if (op == NULL && (op = pk_host->op_find(op_names[which])) != NULL)
        __atomic_store_n(&ops[which], op, __ATOMIC_RELEASE);
    return op;   /* NULL: op_find's error is set */
}

/* The set attributes of call as named attributes (the method's attributes
** are the function's, by name). */
static int32_t named_attrs(const loom_call *call, loom_named_attr *out, int32_t cap)
{
    int32_t n = 0;
    for (uint32_t i = 0; i < call->schema->n_attrs && n < cap; i++)
        if (call->attrs[i].is_set)
            out[n++] = (loom_named_attr){ call->schema->attrs[i].name, call->attrs[i] };
    return n;
}

/* The output (..., F, T) of specgram (..., C, F, T), allocated on its device. */
static loom_status alloc_enhanced(loom_call *call, const loom_tensor *x, loom_tensor **out)
{
    bf_geom g;
    int64_t shape[LOOM_MAX_NDIM];
    loom_status st = bf_check_specgram(x, "specgram", &g);
    if (st != LOOM_OK)
        return st;
    memcpy(shape, g.lead, sizeof(int64_t) * (size_t)g.lead_ndim);
    shape[g.lead_ndim] = g.F, shape[g.lead_ndim + 1] = g.T;
    return pk_host->alloc_output(call, 0, g.dtype, g.lead_ndim + 2, shape, out);
}

static loom_status weights_then_apply(loom_call *call, int which)
{
    const loom_tensor *x = call->inputs[0];
    loom_tensor *out, *w = NULL;
    const loom_op *weights_op = op_of(which), *apply_op = op_of(OP_APPLY);
    if (weights_op == NULL || apply_op == NULL)
        return LOOM_ENOENT;
    loom_status st = alloc_enhanced(call, x, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    loom_named_attr attrs[8];
    const int32_t n_attrs = named_attrs(call, attrs, 8);
    const loom_tensor *win[3] = { call->inputs[1], call->inputs[2], call->inputs[3] };
    loom_op_call wc = { .struct_size = sizeof wc, .op = weights_op, .n_inputs = 3, .inputs = win, .n_outputs = 1,
                        .outputs = &w, .n_attrs = n_attrs, .attrs = attrs };
    if ((st = pk_host->op_call(call->ctx, &wc)) != LOOM_OK)
        return st;
    const loom_tensor *ain[2] = { w, x };
    loom_op_call ac = { .struct_size = sizeof ac, .op = apply_op, .n_inputs = 2, .inputs = ain, .n_outputs = 1,
                        .outputs = &out };
    st = pk_host->op_call(call->ctx, &ac);
    pk_host->tensor_free(w);
    return st;
}

static loom_status souden_method_cuda(loom_call *call) { return weights_then_apply(call, OP_SOUDEN); }
static loom_status rtf_method_cuda(loom_call *call) { return weights_then_apply(call, OP_RTF); }

static loom_status psd_method_supports(const loom_call *call, char *why, size_t why_size)
{
    const bf_psd_state *s = call->object;
    if (s != NULL && s->multi_mask && call->inputs[1] != NULL) {
        snprintf(why, why_size, "multi_mask (the channel mean of the mask) runs on the cpu only");
        return LOOM_ENOTSUP;
    }
    return LOOM_OK;
}

static loom_status psd_method_cuda(loom_call *call)
{
    const bf_psd_state *s = call->object;
    const loom_tensor *x = call->inputs[0];
    bf_geom g;
    int64_t shape[LOOM_MAX_NDIM];
    loom_tensor *out;
    const loom_op *psd_op = op_of(OP_PSD);
    if (psd_op == NULL)
        return LOOM_ENOENT;
    loom_status st = bf_check_specgram(x, "specgram", &g);
    if (st != LOOM_OK)
        return st;
    memcpy(shape, g.lead, sizeof(int64_t) * (size_t)g.lead_ndim);
    shape[g.lead_ndim] = g.F, shape[g.lead_ndim + 1] = g.C, shape[g.lead_ndim + 2] = g.C;
    if ((st = pk_host->alloc_output(call, 0, g.dtype, g.lead_ndim + 3, shape, &out)) != LOOM_OK
        || loom_numel(out) == 0)
        return st;
    const loom_named_attr attrs[2] = {
        { "normalize", { .type = LOOM_ATTR_BOOL, .is_set = 1, .count = 1, .u = { .b = s->normalize } } },
        { "eps", { .type = LOOM_ATTR_FLOAT, .is_set = 1, .count = 1, .u = { .f = s->eps } } },
    };
    const loom_tensor *in[2] = { x, call->inputs[1] };
    loom_op_call pc = { .struct_size = sizeof pc, .op = psd_op, .n_inputs = 2, .inputs = in, .n_outputs = 1,
                        .outputs = &out, .n_attrs = 2, .attrs = attrs };
    return pk_host->op_call(call->ctx, &pc);
}

static const loom_kernel_desc method_kernels[] = {
    PK_KERNEL_CUDA(bf_psd_method_schema, "cuda:psd-op", BF_COMPLEX | BF_REAL, psd_method_cuda,
                   .supports = psd_method_supports),
    PK_KERNEL_CUDA(bf_souden_method_schema, "cuda:souden-then-apply", BF_COMPLEX | BF_REAL, souden_method_cuda),
    PK_KERNEL_CUDA(bf_rtf_method_schema, "cuda:rtf-weights-then-apply", BF_COMPLEX | BF_REAL, rtf_method_cuda),
};

loom_status bf_objects_cuda_register(const loom_host_api *host, loom_registrar *reg)
{
    if (!LOOM_HAS_MEMBER(host, loom_host_api, op_call))
        return LOOM_OK;   /* a 1.0 core: the methods stay cpu-only */
    for (size_t i = 0; i < sizeof method_kernels / sizeof method_kernels[0]; i++) {
        loom_status st = host->register_kernel(reg, &method_kernels[i]);
        if (st != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}
