/* SPDX-License-Identifier: BSD-3-Clause */
/*
** linear.c - the core.linear object class and its method op core.linear
** (torch.nn.functional.linear): output = input @ weight^T + bias.
**
** Create reads `weight` [out, in] f32 and the optional `bias` [out] f32 from
** the weights file (safetensors, upstream key names). The mapping may be
** unaligned and is only borrowed, so create keeps its own copy: weight^T
** packed once for the common GEMM's micro-kernel (gemm.h, pk_gemm_pack), so
** a call packs only its input (and M < MR, a GEMV, packs nothing); the bias
** is added in the GEMM's epilogue. The state is immutable after create:
** calls may run concurrently.
*/
#include <string.h>

#include "kernels.h"
#include "gemm.h"

typedef struct linear_state {
    int64_t in, out;
    float *wpack;                   /* weight^T [in, out] packed (pk_gemm_pack) */
    pk_gemm_packed packed;
    float *bias;                    /* [out] or NULL */
} linear_state;

static const loom_dl_device cpu = { LOOM_DEVICE_CPU, 0 };

static int has_tensor(const loom_safetensors *st, const char *name)
{
    for (int64_t i = 0; i < pk_host->safetensors_count(st); i++)
        if (strcmp(pk_host->safetensors_name(st, i), name) == 0)
            return 1;
    return 0;
}

static loom_status get_f32(const loom_safetensors *st, const char *name, int32_t ndim,
                         const char *expect, const loom_tensor **out)
{
    char buf[160];
    loom_status s = pk_host->safetensors_get(st, name, out);
    if (s != LOOM_OK)
        return s;
    if (loom_tensor_dtype_of(*out) != LOOM_DTYPE_F32 || (*out)->ndim != ndim)
        return pk_host->fail(LOOM_EINVAL, "weights tensor '%s' is %s, expected f32 %s",
                               name, core_describe(*out, buf, sizeof buf), expect);
    return LOOM_OK;
}

void core_linear_destroy(void *state)
{
    linear_state *s = state;
    if (s == NULL)
        return;
    pk_host->free(cpu, s->wpack);
    pk_host->free(cpu, s->bias);
    pk_host->free(cpu, s);
}

loom_status core_linear_create(const loom_object_args *args, void **state_out)
{
    const loom_tensor *w, *b = NULL;
    char buf[160];
    *state_out = NULL;
    if (args->weights == NULL)
        return pk_host->fail(LOOM_EINVAL, "core.linear needs a weights file holding 'weight' "
                                            "[out_features, in_features] f32 and optionally 'bias' [out_features]");
    if (!has_tensor(args->weights, "weight"))
        return pk_host->fail(LOOM_EINVAL, "the weights file has no tensor 'weight' "
                                            "(expected f32 [out_features, in_features])");
    loom_status st = get_f32(args->weights, "weight", 2, "[out_features, in_features]", &w);
    if (st == LOOM_OK && has_tensor(args->weights, "bias"))
        st = get_f32(args->weights, "bias", 1, "[out_features]", &b);
    if (st != LOOM_OK)
        return st;
    if (b != NULL && b->shape[0] != w->shape[0])
        return pk_host->fail(LOOM_EINVAL, "weights tensor 'bias' is %s, expected f32[%lld] to match 'weight'",
                               core_describe(b, buf, sizeof buf), (long long)w->shape[0]);

    linear_state *s = pk_host->alloc(cpu, sizeof *s, 64);
    if (s == NULL)
        return pk_host->fail(LOOM_ENOMEM, "no memory for a core.linear object");
    *s = (linear_state){ .out = w->shape[0], .in = w->shape[1] };
    /* A weight of 0 columns holds no data whatever its row count: nothing is
    ** copied or packed for it (the output is the bias, or zeros), so a file
    ** of 100 bytes cannot make create work per row of a huge out_features
    ** (found by fuzzing). */
    const int empty = s->in == 0;
    float *wt = empty ? NULL : pk_host->alloc(cpu, (size_t)(s->in * s->out) * sizeof(float) + 64, 64);
    s->wpack = empty ? NULL : pk_host->alloc(cpu, pk_gemm_pack_bytes(1, LOOM_DTYPE_F32, s->out, s->in), 64);
    s->bias = b != NULL ? pk_host->alloc(cpu, (size_t)s->out * sizeof(float) + 64, 64) : NULL;
    if ((!empty && (wt == NULL || s->wpack == NULL)) || (b != NULL && s->bias == NULL)) {
        pk_host->free(cpu, wt);
        pk_host->free(cpu, s->wpack);
        s->wpack = NULL;
        core_linear_destroy(s);
        return pk_host->fail(LOOM_ENOMEM, "no memory for the %lldx%lld weights of a core.linear object",
                               (long long)w->shape[0], (long long)w->shape[1]);
    }
    /* the mapping may be unaligned: read element by element through memcpy
    ** into weight [out, in], then pack B = weight^T (strides 1, in) */
    if (!empty) {
        const char *wsrc = loom_data(w);
        int64_t wr = core_stride(w, 0), wc = core_stride(w, 1);
        for (int64_t o = 0; o < s->out; o++)
            for (int64_t i = 0; i < s->in; i++)
                memcpy(&wt[o * s->in + i], wsrc + (o * wr + i * wc) * 4, 4);
        pk_gemm_operand wop = pk_gemm_matrix(wt, LOOM_DTYPE_F32, s->in, 1);
        pk_gemm_pack(&s->packed, s->wpack, 1, &wop, s->out, s->in);
        pk_host->free(cpu, wt);
    }
    if (b != NULL)
        for (int64_t o = 0; o < s->out; o++)
            memcpy(&s->bias[o], (const char *)loom_data(b) + o * core_stride(b, 0) * 4, 4);
    *state_out = s;
    return LOOM_OK;
}

loom_status core_linear_cpu(loom_call *call)
{
    const linear_state *s = call->object;
    const loom_tensor *x = call->inputs[0];
    char buf[160];
    loom_tensor *out;
    int64_t shape[LOOM_MAX_NDIM];

    if (s == NULL)
        return pk_host->fail(LOOM_EINVAL, "core.linear must be called with a core.linear object");
    if (loom_tensor_dtype_of(x) != LOOM_DTYPE_F32 || x->ndim < 1 || x->shape[x->ndim - 1] != s->in)
        return pk_host->fail(LOOM_EINVAL, "'input' is %s, expected f32[.., %lld] (in_features of the object)",
                               core_describe(x, buf, sizeof buf), (long long)s->in);
    if (!loom_is_contiguous(x))
        return pk_host->fail(LOOM_EINVAL, "'input' %s must be contiguous for core.linear",
                               core_describe(x, buf, sizeof buf));
    for (int32_t d = 0; d < x->ndim; d++)
        shape[d] = x->shape[d];
    shape[x->ndim - 1] = s->out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, shape, &out);
    if (st != LOOM_OK)
        return st;
    if (!loom_is_contiguous(out))
        return pk_host->fail(LOOM_EINVAL, "'output' must be contiguous for core.linear");
    int64_t rows = s->in > 0 ? loom_numel(x) / s->in : loom_numel(out) / (s->out > 0 ? s->out : 1);
    if (s->in == 0) {
        /* an empty sum: every row is the bias (torch), or zeros */
        float *y = loom_data(out);
        for (int64_t r = 0; r < rows; r++)
            for (int64_t o = 0; o < s->out; o++)
                y[r * s->out + o] = s->bias != NULL ? s->bias[o] : 0.0f;
        return LOOM_OK;
    }
    pk_gemm_args g = PK_GEMM_ARGS_INIT;
    g.m = rows;
    g.n = s->out;
    g.k = s->in;
    g.a = pk_gemm_matrix(loom_data(x), LOOM_DTYPE_F32, s->in, 0);
    g.b.packed = &s->packed;
    g.c = loom_data(out);
    g.ldc = s->out;
    if (s->bias != NULL) {
        g.bias_kind = PK_GEMM_BIAS_COL;
        g.bias = s->bias;
    }
    return pk_gemm(call->ctx, &g);
}
