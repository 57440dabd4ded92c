/* SPDX-License-Identifier: BSD-3-Clause */
/*
** attention_cpu.c - vision.vit_encoder_block on the cpu backend, and the
** attention module of vision.so. The block is torchvision's EncoderBlock
** in eval mode (dropouts are identities):
**   h   = ln_1(x)                          vision.layer_norm (dispatched)
**   qkv = h in_proj_weight^T + in_proj_bias   one GEMM, q, k, v packed
**   a   = attention(q, k, v) per head       attention_fused.c
**   x1  = a out_proj.weight^T + out_proj.bias + x   residual in the epilogue
**   h   = ln_2(x1)
**   m   = gelu(h mlp.0.weight^T + mlp.0.bias)       GELU (erf) in the epilogue
**   out = m mlp.3.weight^T + mlp.3.bias + x1        residual in the epilogue
** The intermediates live in the call's scratch: h (reused for a), x1 and
** one buffer for qkv then m. x is read last by the out_proj epilogue, so
** the output may be the input tensor itself.
*/
#include <math.h>
#include <string.h>

#include "attention.h"
#include "gemm/gemm.h"

#define DESC(t, buf) vision_describe((t), (buf), sizeof(buf))
#define DIM_LIMIT (INT64_C(1) << 31)

loom_status attention_check_inputs(const loom_call *call, uint32_t i64_mask)
{
    char b1[160];
    for (int32_t i = 0; i < call->n_inputs; i++) {
        const loom_tensor *t = call->inputs[i];
        const char *name = call->schema->inputs[i].name;
        loom_dtype want = (i64_mask >> i) & 1u ? LOOM_DTYPE_I64 : LOOM_DTYPE_F32;
        if (t == NULL)
            continue;
        if (loom_tensor_dtype_of(t) != want)
            return pk_host->fail(LOOM_EINVAL, "'%s' is %s: %s takes %s", name, DESC(t, b1), call->schema->name,
                                 pk_host->dtype_name(want));
        if (!loom_is_contiguous(t))
            return pk_host->fail(LOOM_EINVAL, "'%s' %s is not contiguous: pass a compact row-major tensor", name,
                                 DESC(t, b1));
        for (int32_t k = 0; k < t->ndim; k++)
            if (t->shape[k] >= DIM_LIMIT)
                return pk_host->fail(LOOM_EINVAL, "'%s' %s: dim %d is 2^31 or more", name, DESC(t, b1), (int)k);
    }
    return LOOM_OK;
}

/* Each weight with the shape the block's sizes give it. */
static loom_status vit_block_check(const loom_call *call, int64_t d, int64_t mlp)
{
    static const int32_t ndims[VIT_N_INPUTS] = { 3, 1, 1, 2, 1, 2, 1, 1, 1, 2, 1, 2, 1 };
    const int64_t want[VIT_N_INPUTS][2] = {
        { 0, 0 }, { d, 0 }, { d, 0 }, { 3 * d, d }, { 3 * d, 0 }, { d, d }, { d, 0 },
        { d, 0 }, { d, 0 }, { mlp, d }, { mlp, 0 }, { d, mlp }, { d, 0 },
    };
    const loom_tensor *x = call->inputs[VIT_X];
    char b1[160], b2[160];
    loom_status st = attention_check_inputs(call, 0);
    if (st != LOOM_OK)
        return st;
    for (int32_t i = 1; i < VIT_N_INPUTS; i++) {
        const loom_tensor *t = call->inputs[i];
        const char *name = call->schema->inputs[i].name;
        int ok = t->ndim == ndims[i];
        for (int32_t k = 0; ok && k < ndims[i]; k++)
            ok = t->shape[k] == want[i][k];
        if (!ok) {
            if (ndims[i] == 1)
                return pk_host->fail(LOOM_EINVAL, "'%s' %s must be [%lld] for 'input' %s", name, DESC(t, b1),
                                     (long long)want[i][0], DESC(x, b2));
            return pk_host->fail(LOOM_EINVAL, "'%s' %s must be [%lld, %lld] for 'input' %s (mlp_dim %lld from "
                                 "'mlp_0_weight')", name, DESC(t, b1), (long long)want[i][0],
                                 (long long)want[i][1], DESC(x, b2), (long long)mlp);
        }
    }
    return LOOM_OK;
}

loom_status attention_layer_norm(loom_exec_ctx *ctx, const float *x, const float *w, const float *b, float *y,
                                 int64_t rows, int64_t d, double eps)
{
    const loom_op *ln = pk_host->op_find("vision.layer_norm");
    if (ln == NULL)
        return pk_host->fail(LOOM_ENOENT, "the transformer blocks need op vision.layer_norm");
    int64_t xs[2] = { rows, d }, ws[1] = { d }, bs[1] = { d }, ys[2] = { rows, d };
    loom_tensor tx = { .data = (void *)x, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 2,
                       .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = xs };
    loom_tensor tw = tx, tb = tx, ty = tx;
    tw.data = (void *)w;
    tw.ndim = 1;
    tw.shape = ws;
    tb.data = (void *)b;
    tb.ndim = 1;
    tb.shape = bs;
    ty.data = y;
    ty.shape = ys;
    const loom_tensor *ins[3] = { &tx, &tw, b != NULL ? &tb : NULL };
    loom_tensor *outs[1] = { &ty };
    loom_named_attr attrs[1] = { { "eps", { .type = LOOM_ATTR_FLOAT, .is_set = 1, .u = { .f = eps } } } };
    loom_op_call oc = { .struct_size = sizeof oc, .op = ln, .n_inputs = 3, .inputs = ins, .n_outputs = 1,
                        .outputs = outs, .n_attrs = 1, .attrs = attrs };
    return pk_host->op_call(ctx, &oc);
}

loom_status attention_linear(loom_exec_ctx *ctx, const float *a, int64_t m, int64_t k, const float *w, int64_t n,
                             const float *bias, int act, const float *residual, float *c)
{
    pk_gemm_args g = PK_GEMM_ARGS_INIT;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = pk_gemm_matrix(a, LOOM_DTYPE_F32, k, 0);
    g.b = pk_gemm_matrix(w, LOOM_DTYPE_F32, k, 1);
    g.c = c;
    g.ldc = n;
    if (bias != NULL) {
        g.bias_kind = PK_GEMM_BIAS_COL;
        g.bias = bias;
    }
    g.act = (pk_gemm_act)act;
    if (residual != NULL) {
        g.residual = residual;
        g.ldr = n;
    }
    return pk_gemm(ctx, &g);
}

#define IN(i) ((const float *)loom_data(call->inputs[i]))

static loom_status vit_block_run_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[VIT_X];
    char b1[160];
    int64_t heads = call->attrs[PK_ATTR(vit_block, num_heads)].u.i;
    double eps = call->attrs[PK_ATTR(vit_block, eps)].u.f;
    const loom_tensor *fc1 = call->inputs[VIT_FC1_W];
    if (x->ndim != 3)
        return pk_host->fail(LOOM_EINVAL, "'input' %s must be [N, S, D]", DESC(x, b1));
    const int64_t n = x->shape[0], s = x->shape[1], d = x->shape[2];
    const int64_t mlp = fc1->ndim == 2 ? fc1->shape[0] : 0;
    loom_status st = vit_block_check(call, d, mlp);
    if (st != LOOM_OK)
        return st;
    if (d == 0 || d % heads != 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s: hidden_dim %lld must be a positive multiple of attribute "
                             "'num_heads' = %lld", DESC(x, b1), (long long)d, (long long)heads);
    if (mlp == 0)
        return pk_host->fail(LOOM_EINVAL, "'mlp_0_weight': mlp_dim must be positive");
    loom_tensor *out;
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 3, x->shape, &out)) != LOOM_OK || loom_numel(out) == 0)
        return st;
    const int64_t rows = n * s, wide = 3 * d > mlp ? 3 * d : mlp;
    float *h = pk_host->scratch(call->ctx, (size_t)(rows * d) * sizeof(float));
    float *x1 = pk_host->scratch(call->ctx, (size_t)(rows * d) * sizeof(float));
    float *qkv = pk_host->scratch(call->ctx, (size_t)(rows * wide) * sizeof(float));
    if (h == NULL || x1 == NULL || qkv == NULL)
        return LOOM_ENOMEM;
    loom_exec_ctx *ctx = call->ctx;
    const float *xd = IN(VIT_X);
    if ((st = attention_layer_norm(ctx, xd, IN(VIT_LN1_W), IN(VIT_LN1_B), h, rows, d, eps)) != LOOM_OK
        || (st = attention_linear(ctx, h, rows, d, IN(VIT_IN_W), 3 * d, IN(VIT_IN_B), PK_GEMM_ACT_NONE, NULL,
                                  qkv)) != LOOM_OK)
        return st;
    const int64_t hd = d / heads;
    attention_problem ap = { .units = n, .heads = heads, .len = s, .head_dim = hd, .q = qkv, .k = qkv + d,
                             .v = qkv + 2 * d, .ld = 3 * d, .unit_stride = s * 3 * d, .out = h, .ld_out = d,
                             .out_unit_stride = s * d, .scale = (float)(1.0 / sqrt((double)hd)) };
    if ((st = attention_run(ctx, &ap)) != LOOM_OK
        || (st = attention_linear(ctx, h, rows, d, IN(VIT_OUT_W), d, IN(VIT_OUT_B), PK_GEMM_ACT_NONE, xd, x1))
               != LOOM_OK
        || (st = attention_layer_norm(ctx, x1, IN(VIT_LN2_W), IN(VIT_LN2_B), h, rows, d, eps)) != LOOM_OK
        || (st = attention_linear(ctx, h, rows, d, IN(VIT_FC1_W), mlp, IN(VIT_FC1_B), PK_GEMM_ACT_GELU_ERF, NULL,
                                  qkv)) != LOOM_OK)
        return st;
    return attention_linear(ctx, qkv, rows, mlp, IN(VIT_FC2_W), d, IN(VIT_FC2_B), PK_GEMM_ACT_NONE, x1,
                            loom_data(out));
}

static const loom_kernel_desc attention_cpu_kernels[] = {
    PK_KERNEL_CPU(vision_vit_encoder_block_schema, "cpu:gemm-fused-attention", LOOM_DTYPE_BIT(LOOM_DTYPE_F32),
                  vit_block_run_cpu),
    PK_KERNEL_CPU(vision_swin_window_attention_schema, "cpu:gemm-fused-attention",
                  LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_I64), swin_window_attention_run_cpu),
    PK_KERNEL_CPU(vision_swin_patch_merging_schema, "cpu:gemm", LOOM_DTYPE_BIT(LOOM_DTYPE_F32),
                  swin_patch_merging_run_cpu),
};

const pk_module vision_attention_cpu = PK_MODULE("attention", vision_attention_ops, attention_cpu_kernels, NULL);
