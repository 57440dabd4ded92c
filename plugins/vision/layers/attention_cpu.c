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
        loom_dtype want = (i64_mask >> i) & 1u ? LOOM_DTYPE_I64
                        : call->schema->inputs[i].dtypes == LOOM_DTYPE_BIT(LOOM_DTYPE_U8) ? LOOM_DTYPE_U8
                                                                                          : LOOM_DTYPE_F32;
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

loom_status attention_check_shapes(const loom_call *call, const attention_shape *want, size_t n, const char *context)
{
    char b1[160];
    for (size_t k = 0; k < n; k++) {
        const loom_tensor *t = call->inputs[want[k].input];
        if (t == NULL)
            continue;
        if (t->ndim == want[k].ndim && t->shape[0] == want[k].s0 && (want[k].ndim == 1 || t->shape[1] == want[k].s1))
            continue;
        const char *name = call->schema->inputs[want[k].input].name;
        if (want[k].ndim == 1)
            return pk_host->fail(LOOM_EINVAL, "'%s' %s must be [%lld] for %s", name, DESC(t, b1), (long long)want[k].s0,
                                 context);
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be [%lld, %lld] for %s", name, DESC(t, b1),
                             (long long)want[k].s0, (long long)want[k].s1, context);
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

/* ------------------------------------------------- the packed weights */

/* A header, then the four packed B panels (in_proj, out_proj, mlp.0,
** mlp.3), each at a 64-byte offset. */
#define VIT_PACKED_MAGIC UINT64_C(0x3150424b50544956)   /* "VITPKBP1" */
#define VIT_PACKED_HEADER 64

typedef struct vit_packed_header {
    uint64_t magic;
    int32_t isa, nr;                /* pk_gemm_current_isa(), pk_gemm_nr(F32) when made */
    int64_t d, mlp;
} vit_packed_header;

static size_t round64(size_t x) { return (x + 63) & ~(size_t)63; }

/* The four weights' sizes (B is k x n: n output features, k inputs) and offsets. */
static size_t vit_packed_layout(int64_t d, int64_t mlp, int64_t n[4], int64_t k[4], size_t off[4])
{
    const int64_t nn[4] = { 3 * d, d, mlp, d }, kk[4] = { d, d, d, mlp };
    size_t o = VIT_PACKED_HEADER;
    for (int i = 0; i < 4; i++) {
        n[i] = nn[i];
        k[i] = kk[i];
        off[i] = o;
        o += round64(pk_gemm_pack_bytes(1, LOOM_DTYPE_F32, nn[i], kk[i]));
    }
    return o;
}

size_t vit_block_packed_bytes(int64_t d, int64_t mlp)
{
    int64_t n[4], k[4];
    size_t off[4];
    return vit_packed_layout(d, mlp, n, k, off);
}

void vit_block_pack(void *dst, const float *in_w, const float *out_w, const float *fc1_w, const float *fc2_w,
                    int64_t d, int64_t mlp)
{
    const float *w[4] = { in_w, out_w, fc1_w, fc2_w };
    int64_t n[4], k[4];
    size_t off[4];
    vit_packed_layout(d, mlp, n, k, off);
    vit_packed_header h = { .magic = VIT_PACKED_MAGIC, .isa = (int32_t)pk_gemm_current_isa(),
                            .nr = pk_gemm_nr(LOOM_DTYPE_F32), .d = d, .mlp = mlp };
    memset(dst, 0, VIT_PACKED_HEADER);
    memcpy(dst, &h, sizeof h);
    for (int i = 0; i < 4; i++) {
        pk_gemm_operand x = pk_gemm_matrix(w[i], LOOM_DTYPE_F32, k[i], 1);   /* nn.Linear's [n, k], transposed */
        pk_gemm_packed unused;
        pk_gemm_pack(&unused, (char *)dst + off[i], 1, &x, n[i], k[i]);
    }
}

loom_status transformer_packed_get(const loom_tensor *t, const char *name, int64_t d, int64_t mlp,
                                   pk_gemm_packed out[4])
{
    char b1[160];
    const char *base = loom_data(t);
    vit_packed_header h = { 0 };
    int have_header = t->ndim == 1 && (size_t)t->shape[0] >= VIT_PACKED_HEADER && ((uintptr_t)base & 63) == 0;
    if (have_header)
        memcpy(&h, base, sizeof h);
    if (mlp < 0)
        mlp = have_header && h.magic == VIT_PACKED_MAGIC && h.mlp > 0 && h.mlp < DIM_LIMIT ? h.mlp : 4 * d;
    int64_t n[4], k[4];
    size_t off[4], bytes = vit_packed_layout(d, mlp, n, k, off);
    if (!have_header || (size_t)t->shape[0] != bytes)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be [%zu] u8, 64-byte aligned, for D %lld and mlp_dim %lld "
                             "(vit_block_pack)", name, DESC(t, b1), bytes, (long long)d, (long long)mlp);
    if (h.magic != VIT_PACKED_MAGIC || h.d != d || h.mlp != mlp)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s is not a vit_block_pack of D %lld, mlp_dim %lld", name,
                             DESC(t, b1), (long long)d, (long long)mlp);
    if (h.isa != (int32_t)pk_gemm_current_isa() || h.nr != pk_gemm_nr(LOOM_DTYPE_F32))
        return pk_host->fail(LOOM_EINVAL, "'%s' was packed for another GEMM micro-kernel (NR %d) than the one in "
                             "use (%s, NR %d): pack it again", name, (int)h.nr, pk_gemm_isa_name(),
                             pk_gemm_nr(LOOM_DTYPE_F32));
    for (int i = 0; i < 4; i++)
        out[i] = (pk_gemm_packed){ .which = 1, .width = h.nr, .mn = n[i], .k = k[i], .compute = LOOM_DTYPE_F32,
                                   .data = base + off[i] };
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

static loom_status linear_run(loom_exec_ctx *ctx, const float *a, int64_t m, int64_t k, const float *w,
                              const pk_gemm_packed *wp, int64_t n, const float *bias, int act,
                              const float *residual, float *c)
{
    pk_gemm_args g = PK_GEMM_ARGS_INIT;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = pk_gemm_matrix(a, LOOM_DTYPE_F32, k, 0);
    if (wp != NULL)
        g.b.packed = wp;
    else
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

loom_status attention_linear(loom_exec_ctx *ctx, const float *a, int64_t m, int64_t k, const float *w, int64_t n,
                             const float *bias, int act, const float *residual, float *c)
{
    return linear_run(ctx, a, m, k, w, NULL, n, bias, act, residual, c);
}

loom_status attention_linear_packed(loom_exec_ctx *ctx, const float *a, int64_t m, int64_t k, const float *w,
                                    const pk_gemm_packed *wp, int64_t n, const float *bias, int act,
                                    const float *residual, float *c)
{
    return linear_run(ctx, a, m, k, w, wp, n, bias, act, residual, c);
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
    /* the weights packed once by the caller, or NULL: packed here per GEMM */
    pk_gemm_packed pw[4];
    const loom_tensor *packed = call->n_inputs > VIT_PACKED ? call->inputs[VIT_PACKED] : NULL;
    if (packed != NULL && (st = transformer_packed_get(packed, "packed_weights", d, mlp, pw)) != LOOM_OK)
        return st;
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
        || (st = linear_run(ctx, h, rows, d, IN(VIT_IN_W), packed ? &pw[0] : NULL, 3 * d, IN(VIT_IN_B),
                            PK_GEMM_ACT_NONE, NULL, qkv)) != LOOM_OK)
        return st;
    const int64_t hd = d / heads;
    attention_problem ap = { .units = n, .heads = heads, .len = s, .head_dim = hd, .q = qkv, .k = qkv + d,
                             .v = qkv + 2 * d, .ld = 3 * d, .unit_stride = s * 3 * d, .out = h, .ld_out = d,
                             .out_unit_stride = s * d, .scale = (float)(1.0 / sqrt((double)hd)) };
    if ((st = attention_run(ctx, &ap)) != LOOM_OK
        || (st = linear_run(ctx, h, rows, d, IN(VIT_OUT_W), packed ? &pw[1] : NULL, d, IN(VIT_OUT_B),
                            PK_GEMM_ACT_NONE, xd, x1)) != LOOM_OK
        || (st = attention_layer_norm(ctx, x1, IN(VIT_LN2_W), IN(VIT_LN2_B), h, rows, d, eps)) != LOOM_OK
        || (st = linear_run(ctx, h, rows, d, IN(VIT_FC1_W), packed ? &pw[2] : NULL, mlp, IN(VIT_FC1_B),
                            PK_GEMM_ACT_GELU_ERF, NULL, qkv)) != LOOM_OK)
        return st;
    return linear_run(ctx, qkv, rows, mlp, IN(VIT_FC2_W), packed ? &pw[3] : NULL, d, IN(VIT_FC2_B),
                      PK_GEMM_ACT_NONE, x1, loom_data(out));
}

static const loom_kernel_desc attention_cpu_kernels[] = {
    PK_KERNEL_CPU(vision_vit_encoder_block_schema, "cpu:gemm-fused-attention",
                  LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_U8),
                  vit_block_run_cpu),
    PK_KERNEL_CPU(vision_swin_window_attention_schema, "cpu:gemm-fused-attention",
                  LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_I64) | LOOM_DTYPE_BIT(LOOM_DTYPE_U8),
                  swin_window_attention_run_cpu),
    PK_KERNEL_CPU(vision_swin_patch_merging_schema, "cpu:gemm", LOOM_DTYPE_BIT(LOOM_DTYPE_F32),
                  swin_patch_merging_run_cpu),
    PK_KERNEL_CPU(vision_swin_mlp_schema, "cpu:gemm", LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_U8),
                  swin_mlp_run_cpu),
};

const pk_module vision_attention_cpu = PK_MODULE("attention", vision_attention_ops, attention_cpu_kernels, NULL);
