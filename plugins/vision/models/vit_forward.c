/* SPDX-License-Identifier: BSD-3-Clause */
/*
** vit_forward.c - the method ops of the ViT classes (input [N, 3, S, S]
** f32 -> logits [N, classes]) and the vit module. VisionTransformer's
** forward as dispatched ops (LOOM_VERBOSE=2 names each one's backend):
**   conv_proj       vision.conv2d, kernel and stride patch_size -> [N, D, g, g]
**   tokens          [class_token; patches^T] + pos_embedding -> [N, g^2 + 1, D]
**                   (the one add torch makes after its cat)
**   encoder.layers  vision.vit_encoder_block each, updating the tokens in place
**   encoder.ln      vision.layer_norm of the class rows only (it is row-wise:
**                   the rows torch normalises and then drops change nothing)
**   heads           [vision.linear pre_logits, tanh,] vision.linear head
** Inputs: square images whose side is a multiple of patch_size, as
** torchvision's ViT asserts (h == w == image_size, image_size %
** patch_size == 0). A grid other than the file's interpolates the pos
** embedding (vit_posembed.c) once per input size.
**
** The buffers are planned once per input shape (vit.h: vit_plan); one
** forward runs at a time per model (its lock).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_call.h"
#include "vit.h"
#include "layers/attention.h"

static loom_status plan_for(void *model, const loom_tensor *x)
{
    vit_model *m = model;
    const int64_t n = x->shape[0], size = x->shape[2];
    vit_plan *p = &m->plan;
    if (p->n == n && p->size == size)
        return LOOM_OK;
    const int64_t g = size / m->patch, seq = g * g + 1, d = m->hidden;
    free(p->patches);
    free(p->tokens);
    free(p->pos);
    free(p->head_in);
    free(p->head_mid);
    memset(p, 0, sizeof *p);
    p->patches = model_alloc_floats(n * d * g * g);
    p->tokens = model_alloc_floats(n * seq * d);
    p->pos = model_alloc_floats(seq * d);
    p->head_in = model_alloc_floats(2 * n * d);
    p->head_mid = model_alloc_floats(n * (m->rep > 0 ? m->rep : 1));
    if (p->patches == NULL || p->tokens == NULL || p->pos == NULL || p->head_in == NULL || p->head_mid == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for the activations of input [%lld, 3, %lld, %lld]",
                             m->base.cls, (long long)n, (long long)size, (long long)size);
    if (g == m->grid0)
        memcpy(p->pos, loom_data(m->pos_embedding), (size_t)(seq * d) * sizeof(float));
    else
        vit_interpolate_pos(loom_data(m->pos_embedding), m->grid0, g, d, p->pos);
    p->n = n;
    p->size = size;
    p->grid = g;
    p->seq = seq;
    return LOOM_OK;
}

/* ---------------------------------------------------- packed weights */

static void pack_blocks(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    vit_model *m = user;
    for (int64_t i = begin; i < end; i++) {
        const loom_tensor *const *b = m->blocks[i];
        const loom_tensor *w[4] = { b[VIT_IN_W - 1], b[VIT_OUT_W - 1], b[VIT_FC1_W - 1], b[VIT_FC2_W - 1] };
        transformer_pack_block(m->packed + (size_t)i * m->packed_bytes, w, m->hidden, m->mlp);
    }
}

/* The blocks' weights packed for the kernel in use (once per model, again
** only if the kernel changed): every later call skips repacking them. */
static loom_status ensure_packed(loom_call *call, vit_model *m)
{
    if (m->packed != NULL && m->packed_isa == (int)pk_gemm_current_isa())
        return LOOM_OK;
    free(m->packed);
    m->packed = NULL;
    m->packed_bytes = vit_block_packed_bytes(m->hidden, m->mlp);
    m->packed = aligned_alloc(64, m->packed_bytes * (size_t)m->layers);
    if (m->packed == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for the %zu bytes of packed block weights",
                             m->base.cls, m->packed_bytes * (size_t)m->layers);
    m->packed_isa = (int)pk_gemm_current_isa();
    m->packed_shape[0] = (int64_t)m->packed_bytes;
    return pk_host->parallel_for(call->ctx, m->layers, 1, pack_blocks, m);
}

typedef struct tokens_job {
    const vit_model *m;
    const vit_plan *p;
} tokens_job;

/* Rows [begin, end) of the n * seq token rows. */
static void tokens_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const tokens_job *j = user;
    const int64_t d = j->m->hidden, seq = j->p->seq, gg = seq - 1;
    const float *cls = loom_data(j->m->class_token);
    for (int64_t r = begin; r < end; r++) {
        int64_t img = r / seq, t = r % seq;
        float *x = j->p->tokens + r * d;
        const float *pos = j->p->pos + t * d;
        if (t == 0) {
            for (int64_t c = 0; c < d; c++)
                x[c] = cls[c] + pos[c];
        } else {
            const float *src = j->p->patches + img * d * gg + (t - 1);
            for (int64_t c = 0; c < d; c++)
                x[c] = src[c * gg] + pos[c];
        }
    }
}

static loom_status forward(loom_call *call, void *model, const loom_tensor *x, loom_tensor *logits)
{
    vit_model *m = model;
    vit_plan *p = &m->plan;
    const int64_t n = p->n, d = m->hidden, g = p->grid;
    loom_status st;
    {
        int64_t xs[4] = { x->shape[0], 3, x->shape[2], x->shape[3] }, ys[4] = { n, d, g, g };
        loom_tensor tx = model_view(loom_data(x), 4, xs), ty = model_view(p->patches, 4, ys);
        const loom_tensor *ins[3] = { &tx, m->conv_w, m->conv_b };
        const int64_t stride = m->patch;
        loom_named_attr a[1] = { { "stride", { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 1,
                                               .u = { .ints = &stride } } } };
        if ((st = model_call_op(call, m->conv2d, ins, 3, &ty, a, 1)) != LOOM_OK)
            return st;
    }
    tokens_job tj = { m, p };
    if ((st = pk_host->parallel_for(call->ctx, n * p->seq, 64, tokens_rows, &tj)) != LOOM_OK)
        return st;
    int64_t ts[3] = { n, p->seq, d };
    loom_tensor tt = model_view(p->tokens, 3, ts), tout = model_view(p->tokens, 3, ts);
    loom_named_attr ba[1] = { { "num_heads", { .type = LOOM_ATTR_INT, .is_set = 1, .u = { .i = m->heads } } } };
    if ((st = ensure_packed(call, m)) != LOOM_OK)
        return st;
    for (int64_t i = 0; i < m->layers; i++) {
        const loom_tensor *ins[2 + VIT_BLOCK_TENSORS];
        ins[0] = &tt;
        for (int k = 0; k < VIT_BLOCK_TENSORS; k++)
            ins[1 + k] = m->blocks[i][k];
        loom_tensor tp = { .data = m->packed + (size_t)i * m->packed_bytes, .device = { LOOM_DEVICE_CPU, 0 },
                           .ndim = 1, .dtype = { LOOM_DL_UINT, 8, 1 }, .shape = m->packed_shape };
        ins[1 + VIT_BLOCK_TENSORS] = &tp;
        if ((st = model_call_op(call, m->block, ins, 2 + VIT_BLOCK_TENSORS, &tout, ba, 1)) != LOOM_OK)
            return st;
    }
    /* encoder.ln of the class rows */
    float *cls_rows = p->head_in, *normed = p->head_in + n * d;
    for (int64_t i = 0; i < n; i++)
        memcpy(cls_rows + i * d, p->tokens + i * p->seq * d, (size_t)d * sizeof(float));
    int64_t cs[2] = { n, d }, ns[2] = { n, d };
    loom_tensor tc = model_view(cls_rows, 2, cs), tn = model_view(normed, 2, ns);
    {
        const loom_tensor *ins[3] = { &tc, m->ln_w, m->ln_b };
        loom_named_attr a[1] = { { "eps", { .type = LOOM_ATTR_FLOAT, .is_set = 1, .u = { .f = 1e-6 } } } };
        if ((st = model_call_op(call, m->layer_norm, ins, 3, &tn, a, 1)) != LOOM_OK)
            return st;
    }
    loom_tensor *head_in = &tn;
    int64_t rs[2] = { n, m->rep };
    loom_tensor tr = model_view(p->head_mid, 2, rs);
    if (m->rep > 0) {
        const loom_tensor *ins[3] = { &tn, m->pre_w, m->pre_b };
        if ((st = model_call_op(call, m->linear, ins, 3, &tr, NULL, 0)) != LOOM_OK)
            return st;
        for (int64_t i = 0; i < n * m->rep; i++)
            p->head_mid[i] = tanhf(p->head_mid[i]);
        head_in = &tr;
    }
    const loom_tensor *ins[3] = { head_in, m->head_w, m->head_b };
    return model_call_op(call, m->linear, ins, 3, logits, NULL, 0);
}

/* the sizes a ViT takes: square, a multiple of patch_size, at most 8192 */
static loom_status check_sizes(const void *model, const loom_tensor *x)
{
    const vit_model *m = model;
    char b1[160];
    if (x->shape[0] > 65536 || x->shape[2] != x->shape[3] || x->shape[2] < m->patch || x->shape[2] > 8192
        || x->shape[2] % m->patch != 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s: %s takes square images whose side is a multiple of "
                             "patch_size %lld, at most 8192 (torchvision's ViT: h == w == image_size, "
                             "image_size %% patch_size == 0), N at most 65536", vision_describe(x, b1, sizeof b1),
                             m->base.cls, (long long)m->patch);
    return LOOM_OK;
}

static loom_status vit_run(loom_call *call)
{
    return transformer_run(call, check_sizes, plan_for, forward);
}

/* ---------------------------------------------------------------- schemas */

static const loom_arg_def vit_inputs[] = {
    { .name = "input", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 4,
      .doc = "[N, 3, S, S] f32, S a multiple of patch_size (pos embedding interpolated when S is not the file's "
             "image size), normalised as the weights' preset says" },
};
static const loom_arg_def vit_outputs[] = {
    { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2,
      .doc = "[N, classes] logits (classes: heads.head.weight's rows)" },
};

#define VIT_SCHEMA(id, what) TRANSFORMER_SCHEMA(id, what, vit_inputs, vit_outputs)
VIT_SCHEMA(vit_b_16, "torchvision.models.vit_b_16")
VIT_SCHEMA(vit_b_32, "torchvision.models.vit_b_32")
VIT_SCHEMA(vit_l_16, "torchvision.models.vit_l_16")
VIT_SCHEMA(vit_h_14, "torchvision.models.vit_h_14")
VIT_SCHEMA(vision_transformer, "torchvision.models.VisionTransformer")

#define VIT_KERNEL(s) PK_KERNEL_CPU(s, "cpu:ops", LOOM_DTYPE_BIT(LOOM_DTYPE_F32), vit_run),
TRANSFORMER_MODULE(vision_vit_cpu, "vit", VISION_VIT_OPS, vision_vit_ops, vision_vit_classes, VIT_KERNEL)
