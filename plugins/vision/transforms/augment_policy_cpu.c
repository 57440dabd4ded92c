/* SPDX-License-Identifier: BSD-3-Clause */
/*
** augment_policy_cpu.c - vision.auto_augment, vision.rand_augment,
** vision.trivial_augment_wide and vision.augmix, as the forward() methods
** of torchvision.transforms.v2 (_auto_augment.py) make their draws and
** apply their ops:
**   - one draw per decision, in torchvision's order (so its recorded draws
**     reproduce its result exactly), the same ops for every image of a
**     batch (torchvision transforms a batch tensor as one image);
**   - each op is the module's own kernel (augment_ops.c), chained through
**     two scratch images;
**   - AugMix: m = Dirichlet([alpha, alpha]) and w = Dirichlet(alpha x
**     width) per image, weights w * m[1] in float32; the mix is
**     m[0] * image + sum of weight * chain, summed in float32 in chain
**     order, and truncated to uint8 (torchvision's `.to(uint8)`), threaded
**     over the images and rows.
*/
#include <math.h>
#include <string.h>

#include "augment.h"

typedef struct policy_run {
    loom_exec_ctx *ctx;
    const aug_policy *p;
    aug_kernels k;
    aug_apply_args args;
    aug_draws *d;
    const loom_tensor *x;
    loom_tensor *out;
    int64_t h, w;
    loom_tensor buf[2];   /* the chain's scratch images */
    int cur;              /* -1: the chain is at the input; else buf[cur] */
} policy_run;

static loom_status policy_setup(loom_exec_ctx *ctx, policy_run *r, const aug_policy *p, aug_draws *d,
                                const loom_tensor *x, loom_tensor *out)
{
    char b[160];
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    r->p = p;
    r->d = d;
    r->x = x;
    r->out = out;
    if (x->ndim < 3)
        return pk_host->fail(LOOM_EINVAL, "'image' %s must be [..., C, H, W] (rank >= 3)",
                             vision_describe(x, b, sizeof b));
    const int64_t c = x->shape[x->ndim - 3];
    if (c != 1 && c != 3)
        return pk_host->fail(LOOM_EINVAL, "'image' %s: 1 or 3 channels, not %lld", vision_describe(x, b, sizeof b),
                             (long long)c);
    r->h = x->shape[x->ndim - 2];
    r->w = x->shape[x->ndim - 1];
    if (p->n_fill != 0 && p->n_fill != 1 && p->n_fill != c)
        return pk_host->fail(LOOM_EINVAL, "'fill' has %lld values: one, or one per channel (%lld)",
                             (long long)p->n_fill, (long long)c);
    r->args.interpolation = p->interpolation;
    r->args.fill = p->fill;
    r->args.n_fill = p->n_fill;
    loom_status st = aug_kernels_find(&r->k);
    if (st != LOOM_OK)
        return pk_host->fail(st, "the augmentations need the transforms module's colour and geometry ops");
    r->cur = -1;
    const size_t nbytes = aug_nbytes(x);
    for (int i = 0; i < 2; i++) {
        void *q = pk_host->scratch(ctx, nbytes ? nbytes : 1);
        if (!q)
            return LOOM_ENOMEM;
        r->buf[i] = aug_view(q, loom_tensor_dtype_of(x), x->ndim, (int64_t *)x->shape);
    }
    return LOOM_OK;
}

static const loom_tensor *chain_head(const policy_run *r)
{
    return r->cur < 0 ? r->x : &r->buf[r->cur];
}

/* the next op of the chain: from the current image into the other buffer */
static loom_status chain_apply(policy_run *r, aug_op op, double magnitude)
{
    const int next = r->cur == 0 ? 1 : 0;
    loom_status st = aug_apply(r->ctx, &r->k, op, magnitude, &r->args, chain_head(r), &r->buf[next]);
    if (st == LOOM_OK)
        r->cur = next;
    return st;
}

static loom_status chain_finish(policy_run *r)
{
    if (loom_numel(r->x) > 0)
        memcpy(loom_data(r->out), loom_data(chain_head(r)), aug_nbytes(r->x));
    return LOOM_OK;
}

/* The magnitude of op at bin, with torchvision's random sign. */
static loom_status signed_magnitude(policy_run *r, const aug_space *space, aug_op op, int64_t n_bins, int64_t bin,
                                    double *out)
{
    *out = 0.0;
    if (!aug_has_magnitude(op))
        return LOOM_OK;
    *out = aug_magnitude(space, op, n_bins, bin, r->h, r->w);
    if (aug_signed(space, op)) {
        float u;
        loom_status st = aug_rand(r->d, &u);
        if (st != LOOM_OK)
            return st;
        if (u <= 0.5f)
            *out = -*out;
    }
    return LOOM_OK;
}

static loom_status check_bins(int64_t n_bins)
{
    if (n_bins < 2 || n_bins > 1024)
        return pk_host->fail(LOOM_EINVAL, "'num_magnitude_bins' = %lld: 2..1024", (long long)n_bins);
    return LOOM_OK;
}

/* ------------------------------------------------------- rand_augment */

static loom_status rand_augment_run(policy_run *r)
{
    const aug_policy *p = r->p;
    loom_status st = check_bins(p->num_magnitude_bins);
    if (st != LOOM_OK)
        return st;
    if (p->num_ops < 0 || p->num_ops > 1000)
        return pk_host->fail(LOOM_EINVAL, "'num_ops' = %lld: 0..1000", (long long)p->num_ops);
    if (p->magnitude < 0 || p->magnitude >= p->num_magnitude_bins)
        return pk_host->fail(LOOM_EINVAL, "'magnitude' = %lld: a bin below 'num_magnitude_bins' (%lld)",
                             (long long)p->magnitude, (long long)p->num_magnitude_bins);
    const aug_space *space = &aug_space_rand;
    for (int64_t i = 0; i < p->num_ops; i++) {
        int64_t pick;
        double m;
        if ((st = aug_randint(r->d, 0, space->n_ops, &pick)) != LOOM_OK ||
            (st = signed_magnitude(r, space, space->ops[pick], p->num_magnitude_bins, p->magnitude, &m)) != LOOM_OK ||
            (st = chain_apply(r, space->ops[pick], m)) != LOOM_OK)
            return st;
    }
    return chain_finish(r);
}

/* ------------------------------------------------ trivial_augment_wide */

static loom_status trivial_augment_run(policy_run *r)
{
    const int64_t bins = r->p->num_magnitude_bins;
    loom_status st = check_bins(bins);
    if (st != LOOM_OK)
        return st;
    const aug_space *space = &aug_space_wide;
    int64_t pick, bin = 0;
    double m;
    if ((st = aug_randint(r->d, 0, space->n_ops, &pick)) != LOOM_OK)
        return st;
    if (aug_has_magnitude(space->ops[pick]) && (st = aug_randint(r->d, 0, bins, &bin)) != LOOM_OK)
        return st;
    if ((st = signed_magnitude(r, space, space->ops[pick], bins, bin, &m)) != LOOM_OK ||
        (st = chain_apply(r, space->ops[pick], m)) != LOOM_OK)
        return st;
    return chain_finish(r);
}

/* -------------------------------------------------------- auto_augment */

typedef struct sub_policy {
    aug_op op;
    float p;
    int8_t bin;   /* -1: no magnitude */
} sub_policy;

/* AutoAugmentPolicy.IMAGENET, in torchvision's order */
static const sub_policy imagenet[25][2] = {
    { { AUG_POSTERIZE, 0.4f, 8 }, { AUG_ROTATE, 0.6f, 9 } },
    { { AUG_SOLARIZE, 0.6f, 5 }, { AUG_AUTOCONTRAST, 0.6f, -1 } },
    { { AUG_EQUALIZE, 0.8f, -1 }, { AUG_EQUALIZE, 0.6f, -1 } },
    { { AUG_POSTERIZE, 0.6f, 7 }, { AUG_POSTERIZE, 0.6f, 6 } },
    { { AUG_EQUALIZE, 0.4f, -1 }, { AUG_SOLARIZE, 0.2f, 4 } },
    { { AUG_EQUALIZE, 0.4f, -1 }, { AUG_ROTATE, 0.8f, 8 } },
    { { AUG_SOLARIZE, 0.6f, 3 }, { AUG_EQUALIZE, 0.6f, -1 } },
    { { AUG_POSTERIZE, 0.8f, 5 }, { AUG_EQUALIZE, 1.0f, -1 } },
    { { AUG_ROTATE, 0.2f, 3 }, { AUG_SOLARIZE, 0.6f, 8 } },
    { { AUG_EQUALIZE, 0.6f, -1 }, { AUG_POSTERIZE, 0.4f, 6 } },
    { { AUG_ROTATE, 0.8f, 8 }, { AUG_COLOR, 0.4f, 0 } },
    { { AUG_ROTATE, 0.4f, 9 }, { AUG_EQUALIZE, 0.6f, -1 } },
    { { AUG_EQUALIZE, 0.0f, -1 }, { AUG_EQUALIZE, 0.8f, -1 } },
    { { AUG_INVERT, 0.6f, -1 }, { AUG_EQUALIZE, 1.0f, -1 } },
    { { AUG_COLOR, 0.6f, 4 }, { AUG_CONTRAST, 1.0f, 8 } },
    { { AUG_ROTATE, 0.8f, 8 }, { AUG_COLOR, 1.0f, 2 } },
    { { AUG_COLOR, 0.8f, 8 }, { AUG_SOLARIZE, 0.8f, 7 } },
    { { AUG_SHARPNESS, 0.4f, 7 }, { AUG_INVERT, 0.6f, -1 } },
    { { AUG_SHEAR_X, 0.6f, 5 }, { AUG_EQUALIZE, 1.0f, -1 } },
    { { AUG_COLOR, 0.4f, 0 }, { AUG_EQUALIZE, 0.6f, -1 } },
    { { AUG_EQUALIZE, 0.4f, -1 }, { AUG_SOLARIZE, 0.2f, 4 } },
    { { AUG_SOLARIZE, 0.6f, 5 }, { AUG_AUTOCONTRAST, 0.6f, -1 } },
    { { AUG_INVERT, 0.6f, -1 }, { AUG_EQUALIZE, 1.0f, -1 } },
    { { AUG_COLOR, 0.6f, 4 }, { AUG_CONTRAST, 1.0f, 8 } },
    { { AUG_EQUALIZE, 0.8f, -1 }, { AUG_EQUALIZE, 0.6f, -1 } },
};

static loom_status auto_augment_run(policy_run *r)
{
    int64_t pick;
    loom_status st = aug_randint(r->d, 0, 25, &pick);
    if (st != LOOM_OK)
        return st;
    for (int k = 0; k < 2; k++) {
        const sub_policy *s = &imagenet[pick][k];
        float u;
        if ((st = aug_rand(r->d, &u)) != LOOM_OK)
            return st;
        if (!(u <= s->p))
            continue;
        double m = 0.0;
        if (s->bin >= 0 && (st = signed_magnitude(r, &aug_space_rand, s->op, 10, s->bin, &m)) != LOOM_OK)
            return st;
        if ((st = chain_apply(r, s->op, m)) != LOOM_OK)
            return st;
    }
    return chain_finish(r);
}

/* -------------------------------------------------------------- augmix */

typedef struct mix_job {
    int u8;
    int64_t plane;          /* C * H * W of one image */
    const void *src;        /* an image or a chain's result */
    float *acc;             /* the float32 mix */
    const float *weight;    /* per image */
    int first;              /* acc = weight * src; else acc += weight * src */
    void *dst;              /* the last step: the converted output (NULL before) */
} mix_job;

/* One step of the mix over elements [begin, end), image by image so the
** inner loops are plain (and vectorised) float32 multiply-adds. */
static void mix_span(const mix_job *j, int64_t begin, int64_t end, float wt)
{
    float *acc = j->acc;
    const uint8_t *s8 = j->src;
    const float *sf = j->src;
    if (j->first) {
        if (j->u8)
            for (int64_t i = begin; i < end; i++)
                acc[i] = wt * (float)s8[i];
        else
            for (int64_t i = begin; i < end; i++)
                acc[i] = wt * sf[i];
    } else if (j->u8) {
        for (int64_t i = begin; i < end; i++)
            acc[i] = acc[i] + wt * (float)s8[i];
    } else {
        for (int64_t i = begin; i < end; i++)
            acc[i] = acc[i] + wt * sf[i];
    }
    if (!j->dst)
        return;
    if (j->u8) {   /* .to(uint8): truncation (the mix lies in [0, 255]; saturated all the same) */
        uint8_t *d = j->dst;
        for (int64_t i = begin; i < end; i++) {
            const float a = acc[i];
            d[i] = (uint8_t)(!(a > 0.0f) ? 0 : a >= 255.0f ? 255 : (int)a);
        }
    } else {
        memcpy((float *)j->dst + begin, acc + begin, (size_t)(end - begin) * sizeof(float));
    }
}

static void mix_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const mix_job *j = user;
    while (begin < end) {
        const int64_t img = j->plane > 0 ? begin / j->plane : 0;
        const int64_t stop = j->plane > 0 && (img + 1) * j->plane < end ? (img + 1) * j->plane : end;
        mix_span(j, begin, stop, j->weight[img]);
        begin = stop;
    }
}

static loom_status augmix_run(policy_run *r_)
{
    policy_run r = *r_;
    loom_exec_ctx *ctx = r.ctx;
    loom_status st;
    const int64_t severity = r.p->severity, width = r.p->mixture_width, depth_attr = r.p->chain_depth;
    const double alpha = r.p->alpha;
    if (width < 1)
        return pk_host->fail(LOOM_EINVAL, "'mixture_width' = %lld: at least 1", (long long)width);
    if (severity < 1 || severity > 10)
        return pk_host->fail(LOOM_EINVAL, "'severity' = %lld: between 1 and 10", (long long)severity);
    if (depth_attr > 1000)
        return pk_host->fail(LOOM_EINVAL, "'chain_depth' = %lld: at most 1000", (long long)depth_attr);
    if (width > 64)
        return pk_host->fail(LOOM_EINVAL, "'mixture_width' = %lld: at most 64", (long long)width);
    const loom_tensor *x = r.x;
    /* torchvision's batch: dim 0 of a [N, ...] tensor of rank >= 4 (a
    ** single image is a batch of one); the weights are per element of it */
    const int64_t n = x->ndim >= 4 ? x->shape[0] : 1;
    const int64_t plane = n > 0 ? loom_numel(x) / n : 0;
    float *m = pk_host->scratch(ctx, (size_t)(n * (3 + width) + 1) * sizeof(float));
    float *acc = pk_host->scratch(ctx, (size_t)(loom_numel(x) + 1) * sizeof(float));
    if (!m || !acc)
        return LOOM_ENOMEM;
    float *beta = m, *cw = m + 2 * n, *col = cw + n * width;   /* col: one chain's weight per image */
    /* torch._sample_dirichlet over [n, 2], then over [n, width], row by row */
    for (int64_t i = 0; i < n; i++)
        if ((st = aug_dirichlet(r.d, alpha, 2, beta + 2 * i)) != LOOM_OK)
            return st;
    for (int64_t i = 0; i < n; i++) {
        if ((st = aug_dirichlet(r.d, alpha, width, cw + width * i)) != LOOM_OK)
            return st;
        for (int64_t k = 0; k < width; k++)
            cw[width * i + k] *= beta[2 * i + 1];
    }
    const aug_space *space = r.p->all_ops ? &aug_space_augmix : &aug_space_augmix_partial;
    const int64_t numel = loom_numel(x);
    mix_job mj = { .u8 = loom_tensor_dtype_of(x) == LOOM_DTYPE_U8, .plane = plane, .acc = acc, .weight = col };
    for (int64_t i = 0; i < n; i++)
        col[i] = beta[2 * i];
    mj.src = loom_data(x);
    mj.first = 1;
    mj.dst = NULL;
    if (numel > 0 && (st = pk_host->parallel_for(ctx, numel, 16384, mix_rows, &mj)) != LOOM_OK)
        return st;
    for (int64_t c = 0; c < width; c++) {
        r.cur = -1;
        int64_t depth = depth_attr;
        if (depth <= 0 && (st = aug_randint(r.d, 1, 4, &depth)) != LOOM_OK)
            return st;
        for (int64_t k = 0; k < depth; k++) {
            int64_t pick, bin = 0;
            double mag = 0.0;
            if ((st = aug_randint(r.d, 0, space->n_ops, &pick)) != LOOM_OK)
                return st;
            const aug_op op = space->ops[pick];
            if (aug_has_magnitude(op) && (st = aug_randint(r.d, 0, severity, &bin)) != LOOM_OK)
                return st;
            if ((st = signed_magnitude(&r, space, op, 10, bin, &mag)) != LOOM_OK || (st = chain_apply(&r, op, mag)) != LOOM_OK)
                return st;
        }
        for (int64_t i = 0; i < n; i++)
            col[i] = cw[width * i + c];
        mj.src = loom_data(chain_head(&r));
        mj.first = 0;
        mj.dst = c == width - 1 ? loom_data(r.out) : NULL;
        if (numel > 0 && (st = pk_host->parallel_for(ctx, numel, 16384, mix_rows, &mj)) != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}

loom_status aug_policy_apply(loom_exec_ctx *ctx, const aug_policy *p, aug_draws *d, const loom_tensor *x,
                             loom_tensor *out)
{
    policy_run r;
    loom_status st = policy_setup(ctx, &r, p, d, x, out);
    if (st != LOOM_OK)
        return st;
    switch (p->kind) {
    case AUG_POLICY_RAND:
        return rand_augment_run(&r);
    case AUG_POLICY_TRIVIAL_WIDE:
        return trivial_augment_run(&r);
    case AUG_POLICY_AUTO:
        return auto_augment_run(&r);
    case AUG_POLICY_AUGMIX:
        return augmix_run(&r);
    }
    return LOOM_EINVAL;
}

/* ------------------------------------------------------------ the ops */

static loom_status policy_op(loom_call *call, aug_policy *p, int fill_attr, int seed_attr)
{
    const loom_tensor *x = call->inputs[0];
    const loom_attr_value *fill = &call->attrs[fill_attr];
    p->fill = fill->is_set ? fill->u.floats : NULL;
    p->n_fill = fill->is_set ? fill->count : 0;
    aug_draws d;
    aug_draws_init(&d, call->n_inputs > 1 ? call->inputs[1] : NULL, call->attrs[seed_attr].u.i);
    loom_tensor *out;
    char b[160];
    if (x->ndim < 3)
        return pk_host->fail(LOOM_EINVAL, "'image' %s must be [..., C, H, W] (rank >= 3)",
                             vision_describe(x, b, sizeof b));
    loom_status st = pk_host->alloc_output(call, 0, loom_tensor_dtype_of(x), x->ndim, x->shape, &out);
    if (st != LOOM_OK)
        return st;
    return aug_policy_apply(call->ctx, p, &d, x, out);
}

loom_status vision_rand_augment_cpu(loom_call *call)
{
#define A(n) call->attrs[PK_ATTR(rand_augment, n)]
    aug_policy p = { .kind = AUG_POLICY_RAND, .interpolation = A(interpolation).u.s, .num_ops = A(num_ops).u.i,
                     .magnitude = A(magnitude).u.i, .num_magnitude_bins = A(num_magnitude_bins).u.i };
#undef A
    return policy_op(call, &p, PK_ATTR(rand_augment, fill), PK_ATTR(rand_augment, seed));
}

loom_status vision_trivial_augment_wide_cpu(loom_call *call)
{
#define A(n) call->attrs[PK_ATTR(trivial_augment, n)]
    aug_policy p = { .kind = AUG_POLICY_TRIVIAL_WIDE, .interpolation = A(interpolation).u.s,
                     .num_magnitude_bins = A(num_magnitude_bins).u.i };
#undef A
    return policy_op(call, &p, PK_ATTR(trivial_augment, fill), PK_ATTR(trivial_augment, seed));
}

loom_status vision_auto_augment_cpu(loom_call *call)
{
    aug_policy p = { .kind = AUG_POLICY_AUTO, .interpolation = call->attrs[PK_ATTR(auto_augment, interpolation)].u.s };
    return policy_op(call, &p, PK_ATTR(auto_augment, fill), PK_ATTR(auto_augment, seed));
}

loom_status vision_augmix_cpu(loom_call *call)
{
#define A(n) call->attrs[PK_ATTR(augmix, n)]
    aug_policy p = { .kind = AUG_POLICY_AUGMIX, .interpolation = A(interpolation).u.s, .severity = A(severity).u.i,
                     .mixture_width = A(mixture_width).u.i, .chain_depth = A(chain_depth).u.i, .alpha = A(alpha).u.f,
                     .all_ops = A(all_ops).u.b };
#undef A
    return policy_op(call, &p, PK_ATTR(augmix, fill), PK_ATTR(augmix, seed));
}
