/* SPDX-License-Identifier: BSD-3-Clause */
/*
** augment_mix_cpu.c - vision.random_erasing, vision.mixup and vision.cutmix
** as torchvision.transforms.v2 (_augment.py) draws and applies them:
**   - RandomErasing: rand(1) >= p keeps the image; else up to 10 tries of
**     area * U(scale), exp(U(log ratio)) (float32), h = round(sqrt(a * r)),
**     w = round(sqrt(a / r)) (halves to even), accepted when h < H and
**     w < W, then the corner i = randint(0, H - h + 1), j = randint(0, W -
**     w + 1); the region takes value (converted as torch's copy_: uint8
**     truncates); no accepted try keeps the image. One region for every
**     image of a batch, as torchvision. With 'random' (value='random') the
**     region takes C x h x w normal float32 draws, drawn between the
**     accepted try and i, j as torchvision does, the same for every image
**     of a batch (torch broadcasts v), uint8 as torch's cast: int(v) & 255.
**   - MixUp: lam = Beta(alpha, alpha) (recorded: its float32 value);
**     out = rolled * float(1 - lam) + x * float(lam) in float32, the
**     labels (one-hot of [N] indices, or [N, K]) likewise.
**   - CutMix: lam, then r_x = randint(W), r_y = randint(H); the box of half
**     sides int(0.5 * sqrt(1 - lam) * W / H) around them, clamped; inside
**     it each image takes the one before it; the labels mix with
**     1 - box area / (W * H).
** The images are processed over the core's pool.
*/
#include <math.h>
#include <string.h>

#include "augment.h"

/* ---------------------------------------------------- random_erasing */

static loom_status pair_attr(const loom_attr_value *v, const char *name, double d0, double d1, double out[2])
{
    out[0] = d0;
    out[1] = d1;
    if (!v->is_set)
        return LOOM_OK;
    if (v->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'%s' must be (min, max), not %lld values", name, (long long)v->count);
    out[0] = v->u.floats[0];
    out[1] = v->u.floats[1];
    if (out[0] > out[1])
        return pk_host->fail(LOOM_EINVAL, "'%s' (%g, %g) must be (min, max)", name, out[0], out[1]);
    return LOOM_OK;
}

typedef struct erase_job {
    uint8_t *dst;
    size_t es;
    int u8;
    int64_t c, h, w, i, j, eh, ew;
    const double *value;
    int64_t n_value;
    const aug_draws *noise;   /* value='random': normal k of the block at noise_base */
    int64_t noise_base;
} erase_job;

static void erase_planes(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const erase_job *e = user;
    for (int64_t p = begin; p < end; p++) {
        const double v = e->value ? e->value[e->n_value == 1 ? 0 : p % e->c] : 0.0;
        const float f = (float)v;   /* torch.tensor(value): float32 */
        const uint8_t b = (uint8_t)(int64_t)f;   /* copy_ to uint8: truncation, wrapping as torch's cast */
        for (int64_t y = e->i; y < e->i + e->eh; y++) {
            uint8_t *row = e->dst + (size_t)((p * e->h + y) * e->w + e->j) * e->es;
            if (e->noise) {
                /* |noise| < 2^31 (aug_normal_block): the int64 conversion is defined */
                const int64_t k0 = ((p % e->c) * e->eh + (y - e->i)) * e->ew;
                for (int64_t x = 0; x < e->ew; x++) {
                    const float n = aug_normal_at(e->noise, e->noise_base, k0 + x);
                    if (e->u8)
                        row[x] = (uint8_t)(int64_t)n;
                    else
                        memcpy(row + (size_t)x * 4, &n, 4);
                }
                continue;
            }
            for (int64_t x = 0; x < e->ew; x++) {
                if (e->u8)
                    row[x] = b;
                else
                    memcpy(row + (size_t)x * 4, &f, 4);
            }
        }
    }
}

loom_status aug_random_erasing(loom_exec_ctx *ctx, const aug_erasing *a, aug_draws *d, const loom_tensor *x,
                               loom_tensor *out)
{
    const int64_t c = x->shape[x->ndim - 3], h = x->shape[x->ndim - 2], w = x->shape[x->ndim - 1];
    if (a->n_value != 0 && a->n_value != 1 && a->n_value != c)
        return pk_host->fail(LOOM_EINVAL, "%s'value' has %lld values: one, or one per channel (%lld)", a->where,
                             (long long)a->n_value, (long long)c);
    if (loom_numel(x) > 0)
        memcpy(loom_data(out), loom_data(x), aug_nbytes(x));
    float u;
    loom_status st = aug_rand(d, &u);
    if (st != LOOM_OK || u >= (float)a->p)
        return st;
    /* torch.log(torch.tensor(ratio)): float32 */
    const float log_lo = logf((float)a->ratio[0]), log_hi = logf((float)a->ratio[1]);
    const double area = (double)(h * w);
    for (int attempt = 0; attempt < 10; attempt++) {
        float fa, fr;
        if ((st = aug_uniform(d, a->scale[0], a->scale[1], &fa)) != LOOM_OK ||
            (st = aug_uniform(d, log_lo, log_hi, &fr)) != LOOM_OK)
            return st;
        const double erase_area = area * (double)fa, aspect = (double)expf(fr);
        const int64_t eh = (int64_t)nearbyint(sqrt(erase_area * aspect));
        const int64_t ew = (int64_t)nearbyint(sqrt(erase_area / aspect));
        if (!(eh < h && ew < w))
            continue;
        int64_t i, j, noise_base = 0;
        if (a->random && (st = aug_normal_block(d, c * eh * ew, &noise_base)) != LOOM_OK)
            return st;
        if ((st = aug_randint(d, 0, h - eh + 1, &i)) != LOOM_OK || (st = aug_randint(d, 0, w - ew + 1, &j)) != LOOM_OK)
            return st;
        if (loom_numel(x) == 0)
            return LOOM_OK;
        erase_job e = { loom_data(out), pk_host->dtype_size(loom_tensor_dtype_of(x)), loom_tensor_dtype_of(x) == LOOM_DTYPE_U8,
                        c, h, w, i, j, eh, ew, a->n_value ? a->value : NULL, a->n_value ? a->n_value : 1,
                        a->random ? d : NULL, noise_base };
        return pk_host->parallel_for(ctx, loom_numel(x) / (h * w), 1, erase_planes, &e);
    }
    return LOOM_OK;
}

loom_status vision_random_erasing_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    char b[160];
    if (x->ndim < 3)
        return pk_host->fail(LOOM_EINVAL, "'image' %s must be [..., C, H, W] (rank >= 3)",
                             vision_describe(x, b, sizeof b));
    const loom_attr_value *value = &call->attrs[PK_ATTR(random_erasing, value)];
    aug_erasing a = { .p = call->attrs[PK_ATTR(random_erasing, p)].u.f,
                      .value = value->is_set ? value->u.floats : NULL,
                      .n_value = value->is_set ? value->count : 0,
                      .random = call->attrs[PK_ATTR(random_erasing, random)].u.b,
                      .where = "" };
    loom_status st;
    if ((st = pair_attr(&call->attrs[PK_ATTR(random_erasing, scale)], "scale", 0.02, 0.33, a.scale)) != LOOM_OK ||
        (st = pair_attr(&call->attrs[PK_ATTR(random_erasing, ratio)], "ratio", 0.3, 3.3, a.ratio)) != LOOM_OK)
        return st;
    if (a.scale[1] > 1.0)
        return pk_host->fail(LOOM_EINVAL, "'scale' (%g, %g) should be between 0 and 1", a.scale[0], a.scale[1]);
    if (a.random && value->is_set)
        return pk_host->fail(LOOM_EINVAL, "'value' and 'random' exclude each other (the region takes a value, or noise)");
    loom_tensor *out;
    if ((st = pk_host->alloc_output(call, 0, loom_tensor_dtype_of(x), x->ndim, x->shape, &out)) != LOOM_OK)
        return st;
    aug_draws d;
    aug_draws_init(&d, call->n_inputs > 1 ? call->inputs[1] : NULL, call->attrs[PK_ATTR(random_erasing, seed)].u.i);
    return aug_random_erasing(call->ctx, &a, &d, x, out);
}

/* --------------------------------------------------------- mixup, cutmix */

/* The labels checked against the images as torchvision's
** _BaseMixUpCutMix.forward does; *k_out: the classes of the [N, K] result. */
loom_status aug_mix_check(const char *where, const loom_tensor *x, const loom_tensor *lab, int has_num_classes,
                          int64_t num_classes, int64_t *k_out)
{
    char b1[160], b2[160];
    if (lab->ndim != 1 && lab->ndim != 2)
        return pk_host->fail(LOOM_EINVAL, "%s'labels' %s should be index based with shape (batch_size,) or probability "
                                          "based with shape (batch_size, num_classes)",
                             where, vision_describe(lab, b1, sizeof b1));
    if ((lab->ndim == 1) != (loom_tensor_dtype_of(lab) == LOOM_DTYPE_I64))
        return pk_host->fail(LOOM_EINVAL, "%s'labels' %s: [N] indices are int64, [N, K] probabilities float32", where,
                             vision_describe(lab, b1, sizeof b1));
    if (lab->ndim == 2 && has_num_classes && lab->shape[1] != num_classes)
        return pk_host->fail(LOOM_EINVAL, "%s'labels' %s: the last dimension must match 'num_classes' (%lld)", where,
                             vision_describe(lab, b1, sizeof b1), (long long)num_classes);
    if (lab->ndim == 1 && !has_num_classes)
        return pk_host->fail(LOOM_EINVAL, "%s'num_classes' must be given with index labels [N]", where);
    if (x->ndim != 4)
        return pk_host->fail(LOOM_EINVAL, "%s'image' %s: a batch [N, C, H, W] is expected", where,
                             vision_describe(x, b1, sizeof b1));
    if (x->shape[0] != lab->shape[0])
        return pk_host->fail(LOOM_EINVAL, "%sthe batch size of 'images' %s does not match that of 'labels' %s", where,
                             vision_describe(x, b1, sizeof b1), vision_describe(lab, b2, sizeof b2));
    const int64_t n = lab->shape[0], k = lab->ndim == 2 ? lab->shape[1] : num_classes;
    if (lab->ndim == 1)
        for (int64_t i = 0; i < n; i++) {
            const int64_t v = ((const int64_t *)loom_data(lab))[i];
            if (v < 0 || v >= k)
                return pk_host->fail(LOOM_EINVAL, "%s'labels'[%lld] = %lld: a class in [0, num_classes = %lld)", where,
                                     (long long)i, (long long)v, (long long)k);
        }
    *k_out = k;
    return LOOM_OK;
}

/* _mixup_label: label.roll(1, 0) * float(1 - lam) + label * float(lam) */
static void mix_labels(const loom_tensor *lab, int64_t k, double lam, float *dst)
{
    const int64_t n = lab->shape[0];
    const float a = (float)(1.0 - lam), bl = (float)lam;
    for (int64_t i = 0; i < n; i++) {
        const int64_t prev = (i + n - 1) % n;
        for (int64_t c = 0; c < k; c++) {
            float cur, before;
            if (lab->ndim == 1) {
                cur = ((const int64_t *)loom_data(lab))[i] == c ? 1.0f : 0.0f;
                before = ((const int64_t *)loom_data(lab))[prev] == c ? 1.0f : 0.0f;
            } else {
                cur = ((const float *)loom_data(lab))[i * k + c];
                before = ((const float *)loom_data(lab))[prev * k + c];
            }
            dst[i * k + c] = before * a + cur * bl;
        }
    }
}

typedef struct mixup_job {
    const float *src;
    float *dst;
    int64_t n, plane;
    float a, b;
} mixup_job;

static void mixup_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const mixup_job *j = user;
    for (int64_t i = begin; i < end; i++) {
        const int64_t img = i / j->plane, prev = (img + j->n - 1) % j->n;
        j->dst[i] = j->src[prev * j->plane + i % j->plane] * j->a + j->src[i] * j->b;
    }
}

typedef struct cutmix_job {
    const uint8_t *src;
    uint8_t *dst;
    size_t es;
    int64_t n, c, h, w, x1, y1, x2, y2;
} cutmix_job;

static void cutmix_planes(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const cutmix_job *j = user;
    for (int64_t p = begin; p < end; p++) {
        const int64_t img = p / j->c, ch = p % j->c, prev = (img + j->n - 1) % j->n;
        const size_t plane = (size_t)(j->h * j->w) * j->es;
        uint8_t *d = j->dst + (size_t)p * plane;
        memcpy(d, j->src + (size_t)p * plane, plane);
        const uint8_t *s = j->src + (size_t)(prev * j->c + ch) * plane;
        for (int64_t y = j->y1; y < j->y2; y++)
            memcpy(d + (size_t)(y * j->w + j->x1) * j->es, s + (size_t)(y * j->w + j->x1) * j->es,
                   (size_t)(j->x2 - j->x1) * j->es);
    }
}

loom_status aug_mix(loom_exec_ctx *ctx, const char *where, int cutmix, double alpha, aug_draws *d,
                    const loom_tensor *x, const loom_tensor *labels, int64_t k, loom_tensor *out, float *labels_out)
{
    float wts[2];
    loom_status st = aug_dirichlet(d, alpha, d->recorded ? 1 : 2, wts);
    if (st != LOOM_OK)
        return st;
    const double lam = (double)wts[0];
    const int64_t n = x->shape[0], numel = loom_numel(x);
    if (!cutmix) {
        mix_labels(labels, k, lam, labels_out);
        if (numel == 0)
            return LOOM_OK;
        mixup_job j = { loom_data(x), loom_data(out), n, numel / n, (float)(1.0 - lam), (float)lam };
        return pk_host->parallel_for(ctx, numel, 16384, mixup_rows, &j);
    }
    const int64_t h = x->shape[2], w = x->shape[3];
    if (h == 0 || w == 0)
        return pk_host->fail(LOOM_EINVAL, "%s'images' has no pixels (H = %lld, W = %lld)", where, (long long)h,
                             (long long)w);
    int64_t rx, ry;
    if ((st = aug_randint(d, 0, w, &rx)) != LOOM_OK || (st = aug_randint(d, 0, h, &ry)) != LOOM_OK)
        return st;
    const double r = 0.5 * sqrt(1.0 - lam);
    const int64_t rw = (int64_t)(r * (double)w), rh = (int64_t)(r * (double)h);
    const int64_t x1 = rx - rw > 0 ? rx - rw : 0, y1 = ry - rh > 0 ? ry - rh : 0;
    const int64_t x2 = rx + rw < w ? rx + rw : w, y2 = ry + rh < h ? ry + rh : h;
    const double lam_adjusted = 1.0 - (double)((x2 - x1) * (y2 - y1)) / (double)(w * h);
    mix_labels(labels, k, lam_adjusted, labels_out);
    if (numel == 0)
        return LOOM_OK;
    cutmix_job j = { loom_data(x), loom_data(out), pk_host->dtype_size(loom_tensor_dtype_of(x)), n, x->shape[1], h, w,
                     x1, y1, x2, y2 };
    return pk_host->parallel_for(ctx, n * x->shape[1], 1, cutmix_planes, &j);
}

static loom_status mix_op(loom_call *call, int cutmix)
{
    const loom_tensor *x = call->inputs[0], *lab = call->inputs[1];
    const loom_attr_value *nc = &call->attrs[PK_ATTR(mix, num_classes)];
    int64_t k;
    loom_tensor *out, *labels;
    loom_status st = aug_mix_check("", x, lab, nc->is_set, nc->is_set ? nc->u.i : 0, &k);
    if (st != LOOM_OK ||
        (st = pk_host->alloc_output(call, 1, LOOM_DTYPE_F32, 2, (const int64_t[]){ lab->shape[0], k }, &labels)) != LOOM_OK ||
        (st = pk_host->alloc_output(call, 0, loom_tensor_dtype_of(x), 4, x->shape, &out)) != LOOM_OK)
        return st;
    aug_draws d;
    aug_draws_init(&d, call->n_inputs > 2 ? call->inputs[2] : NULL, call->attrs[PK_ATTR(mix, seed)].u.i);
    return aug_mix(call->ctx, "", cutmix, call->attrs[PK_ATTR(mix, alpha)].u.f, &d, x, lab, k, out, loom_data(labels));
}

loom_status vision_mixup_cpu(loom_call *call)
{
    return mix_op(call, 0);
}

loom_status vision_cutmix_cpu(loom_call *call)
{
    return mix_op(call, 1);
}
