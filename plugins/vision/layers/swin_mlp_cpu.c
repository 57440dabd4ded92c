/* SPDX-License-Identifier: BSD-3-Clause */
/*
** swin_mlp_cpu.c - vision.swin_mlp on the cpu backend: the second half of
** torchvision's SwinTransformerBlock (eval: dropout and stochastic depth
** are identities), for x [..., C]:
**   h   = norm2(x)                            vision.layer_norm (dispatched)
**   m   = gelu(h mlp.0.weight^T + mlp.0.bias)  GELU (erf) in the GEMM's epilogue
**   out = m mlp.3.weight^T + mlp.3.bias + x   the residual in the epilogue
** With 'packed_weights' (transformer_packed_get: the block's
** vit_block_pack) the two GEMMs read mlp.0 and mlp.3 from it instead of
** packing them per call. The result goes to scratch and is then copied, so
** the output may be the input tensor itself.
*/
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "gemm/gemm.h"

#define DESC(t, buf) vision_describe((t), (buf), sizeof(buf))

static loom_status check(const loom_call *call, int64_t *rows, int64_t *c, int64_t *hid)
{
    const loom_tensor *x = call->inputs[SMLP_X], *fc1 = call->inputs[SMLP_FC1_W];
    char b1[160], b2[160];
    loom_status st = attention_check_inputs(call, 0);
    if (st != LOOM_OK)
        return st;
    if (x->ndim < 1)
        return pk_host->fail(LOOM_EINVAL, "'input' %s must be [..., C]", DESC(x, b1));
    *c = x->shape[x->ndim - 1];
    *rows = *c > 0 ? loom_numel(x) / *c : 0;
    *hid = fc1->ndim == 2 ? fc1->shape[0] : 0;
    if (*c == 0 || *hid == 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s and 'mlp_0_weight' %s: C and the hidden size must be "
                             "positive", DESC(x, b1), DESC(fc1, b2));
    const attention_shape want[] = {
        { SMLP_NORM_W, 1, *c, 0 }, { SMLP_NORM_B, 1, *c, 0 }, { SMLP_FC1_W, 2, *hid, *c },
        { SMLP_FC1_B, 1, *hid, 0 }, { SMLP_FC2_W, 2, *c, *hid }, { SMLP_FC2_B, 1, *c, 0 },
    };
    char context[200];
    snprintf(context, sizeof context, "'input' %s", DESC(x, b1));
    return attention_check_shapes(call, want, sizeof want / sizeof want[0], context);
}

#define IN(i) (call->inputs[i] != NULL ? (const float *)loom_data(call->inputs[i]) : NULL)

loom_status swin_mlp_run_cpu(loom_call *call)
{
    int64_t rows = 0, c = 0, hid = 0;
    loom_status st = check(call, &rows, &c, &hid);
    if (st != LOOM_OK)
        return st;
    const loom_tensor *x = call->inputs[SMLP_X];
    pk_gemm_packed pw[4];
    const loom_tensor *packed = call->n_inputs > SMLP_PACKED ? call->inputs[SMLP_PACKED] : NULL;
    if (packed != NULL && (st = transformer_packed_get(packed, "packed_weights", c, hid, pw)) != LOOM_OK)
        return st;
    loom_tensor *out;
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, &out)) != LOOM_OK
        || loom_numel(out) == 0)
        return st;
    loom_exec_ctx *ctx = call->ctx;
    float *h = pk_host->scratch(ctx, (size_t)(rows * c) * sizeof(float));
    float *m = pk_host->scratch(ctx, (size_t)(rows * hid) * sizeof(float));
    if (h == NULL || m == NULL)
        return LOOM_ENOMEM;
    const float *xd = loom_data(x);
    double eps = call->attrs[PK_ATTR(swin_mlp, eps)].u.f;
    if ((st = attention_layer_norm(ctx, xd, IN(SMLP_NORM_W), IN(SMLP_NORM_B), h, rows, c, eps)) != LOOM_OK
        || (st = attention_linear_packed(ctx, h, rows, c, IN(SMLP_FC1_W), packed ? &pw[2] : NULL, hid,
                                         IN(SMLP_FC1_B), PK_GEMM_ACT_GELU_ERF, NULL, m)) != LOOM_OK
        || (st = attention_linear_packed(ctx, m, rows, hid, IN(SMLP_FC2_W), packed ? &pw[3] : NULL, c,
                                         IN(SMLP_FC2_B), PK_GEMM_ACT_NONE, xd, h)) != LOOM_OK)
        return st;
    memcpy(loom_data(out), h, (size_t)(rows * c) * sizeof(float));
    return LOOM_OK;
}
