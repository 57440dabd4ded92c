/* SPDX-License-Identifier: BSD-3-Clause */
/*
** augment.h - what the augmentation files of the transforms module share
** (torchvision.transforms.v2's AutoAugment, RandAugment,
** TrivialAugmentWide, AugMix):
**
**   augment_draws.c    the random draws: torchvision's own, recorded, or a
**                      seeded stream of plugins/common/rng.h
**   augment_ops.c      one named augmentation ("ShearX", "Equalize", ...)
**                      on an image or a batch, through the module's own ops
**                      (vision.affine, vision.equalize, ...) by op_call
**   augment_policy_cpu.c   the four policy ops
**   augment_mix_cpu.c  vision.random_erasing, vision.mixup, vision.cutmix
**   augment_schemas.c  their schemas
** (vision.adjust_sharpness, which Sharpness needs, is with the colour ops.)
*/
#ifndef LOOM_VISION_AUGMENT_H
#define LOOM_VISION_AUGMENT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "transforms.h"

/* ------------------------------------------------------- attributes */

#define AUG_SEED_ATTR(A, op)                                                                       \
    A(op, seed, INT, LOOM_DEFAULT_INT(0), 0,                                                       \
      "seed of the draws when no 'draws' input is given (the same result on every backend)", )
#define AUG_POLICY_TAIL_ATTRS(A, op, interp)                                                       \
    A(op, interpolation, STRING, LOOM_DEFAULT_STRING(interp), 0, "nearest or bilinear (the geometric ops)", ) \
    A(op, fill, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE,                                       \
      "pixels from outside the geometric ops: one, or one per channel (absent: 0)", )              \
    AUG_SEED_ATTR(A, op)
#define AUGMIX_ATTRS(A, op)                                                                        \
    A(op, severity, INT, LOOM_DEFAULT_INT(3), 0, "1..10: the magnitude bins drawn from", )         \
    A(op, mixture_width, INT, LOOM_DEFAULT_INT(3), LOOM_ATTR_POSITIVE, "chains mixed (at most 64)", ) \
    A(op, chain_depth, INT, LOOM_DEFAULT_INT(-1), 0, "ops per chain; <= 0: drawn from 1..3 per chain", ) \
    A(op, alpha, FLOAT, LOOM_DEFAULT_FLOAT(1.0), LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE,            \
      "Dirichlet / Beta parameter of the weights", )                                              \
    A(op, all_ops, BOOL, LOOM_DEFAULT_BOOL(1), 0, "with brightness, contrast, color and sharpness", ) \
    AUG_POLICY_TAIL_ATTRS(A, op, "bilinear")
#define RAND_AUGMENT_ATTRS(A, op)                                                                  \
    A(op, num_ops, INT, LOOM_DEFAULT_INT(2), LOOM_ATTR_NONNEG, "ops applied in turn", )           \
    A(op, magnitude, INT, LOOM_DEFAULT_INT(9), LOOM_ATTR_NONNEG, "the bin of every op (< num_magnitude_bins)", ) \
    A(op, num_magnitude_bins, INT, LOOM_DEFAULT_INT(31), 0, "2..1024", )                           \
    AUG_POLICY_TAIL_ATTRS(A, op, "nearest")
#define TRIVIAL_AUGMENT_ATTRS(A, op)                                                               \
    A(op, num_magnitude_bins, INT, LOOM_DEFAULT_INT(31), 0, "2..1024", )                           \
    AUG_POLICY_TAIL_ATTRS(A, op, "nearest")
#define AUTO_AUGMENT_ATTRS(A, op)                                                                  \
    A(op, policy, STRING, LOOM_DEFAULT_STRING("imagenet"), 0, "imagenet (AutoAugmentPolicy.IMAGENET)", ) \
    AUG_POLICY_TAIL_ATTRS(A, op, "nearest")
#define RANDOM_ERASING_ATTRS(A, op)                                                                \
    A(op, p, FLOAT, LOOM_DEFAULT_FLOAT(0.5), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "probability of erasing", ) \
    A(op, scale, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,                   \
      "(min, max) fraction of the area erased; default 0.02, 0.33", )                              \
    A(op, ratio, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE,                 \
      "(min, max) aspect ratio of the region; default 0.3, 3.3", )                                 \
    A(op, value, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE, "one, or one per channel (default 0)", ) \
    A(op, random, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                                   \
      "torchvision's value='random': the region takes N(0, 1) noise, one draw a pixel and channel "  \
      "(float32; uint8 truncated and wrapped as torch's cast); not with 'value'", )                \
    AUG_SEED_ATTR(A, op)
#define MIX_ATTRS(A, op)                                                                           \
    A(op, alpha, FLOAT, LOOM_DEFAULT_FLOAT(1.0), LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE, "the Beta(alpha, alpha) of lam", ) \
    A(op, num_classes, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE,                                 \
      "classes of index labels [N] (needed for them; with [N, K] labels: K or absent)", )          \
    AUG_SEED_ATTR(A, op)
PK_ATTR_ENUM(augmix, AUGMIX_ATTRS);
PK_ATTR_ENUM(rand_augment, RAND_AUGMENT_ATTRS);
PK_ATTR_ENUM(trivial_augment, TRIVIAL_AUGMENT_ATTRS);
PK_ATTR_ENUM(auto_augment, AUTO_AUGMENT_ATTRS);
PK_ATTR_ENUM(random_erasing, RANDOM_ERASING_ATTRS);
PK_ATTR_ENUM(mix, MIX_ATTRS);

loom_status vision_augmix_cpu(loom_call *call);
loom_status vision_rand_augment_cpu(loom_call *call);
loom_status vision_trivial_augment_wide_cpu(loom_call *call);
loom_status vision_auto_augment_cpu(loom_call *call);
loom_status vision_random_erasing_cpu(loom_call *call);
loom_status vision_mixup_cpu(loom_call *call);
loom_status vision_cutmix_cpu(loom_call *call);

/* ------------------------------------------------------------ draws */

/* Where the random numbers of one call come from. With `recorded` (a
** float64 or float32 1-D tensor of torchvision's draws in the order it makes
** them: each torch.randint as its integer, each torch.rand as its float32
** value, each Dirichlet sample as its float32 components) they are read
** in turn; without, draw i of the call is pk_rng_uniform(seed, i). */
typedef struct aug_draws {
    const loom_tensor *recorded;
    int64_t n_recorded, next;
    uint64_t seed, counter;
} aug_draws;

void aug_draws_init(aug_draws *d, const loom_tensor *recorded, int64_t seed);

/* torch.randint(low, high, ()): an integer in [low, high). A recorded value
** outside the range fails, naming 'draws' and the position. */
loom_status aug_randint(aug_draws *d, int64_t low, int64_t high, int64_t *out);

/* torch.rand(()): a float32 in [0, 1). */
loom_status aug_rand(aug_draws *d, float *out);

/* torch.empty(1).uniform_(lo, hi): a float32 in [lo, hi) (recorded: the
** value torch returned). */
loom_status aug_uniform(aug_draws *d, double lo, double hi, float *out);

/* torch.randperm(n) (recorded: n integers, a permutation; seeded:
** Fisher-Yates on randint draws). n <= 64. */
loom_status aug_randperm(aug_draws *d, int64_t n, int64_t *out);

/* torch._sample_dirichlet of k parameters alpha: k float32 weights that sum
** to 1 (recorded: read as they are; seeded: normalised Gamma(alpha) draws). */
loom_status aug_dirichlet(aug_draws *d, double alpha, int64_t k, float *out);

/* Tensor.normal_() on n float32 values (RandomErasing's value='random'),
** reserved as one block of the stream so that value k can then be read in
** any order and from any thread with aug_normal_at: recorded, the n values
** torch drew (finite, |v| < 2^31, or the call fails naming 'draws' and the
** position); seeded, Box-Muller on uniforms 2k and 2k + 1 of the block. */
loom_status aug_normal_block(aug_draws *d, int64_t n, int64_t *base);
float aug_normal_at(const aug_draws *d, int64_t base, int64_t k);

/* ------------------------------------------------------- the operations */

typedef enum aug_op {
    AUG_IDENTITY,
    AUG_SHEAR_X,
    AUG_SHEAR_Y,
    AUG_TRANSLATE_X,
    AUG_TRANSLATE_Y,
    AUG_ROTATE,
    AUG_BRIGHTNESS,
    AUG_COLOR,
    AUG_CONTRAST,
    AUG_SHARPNESS,
    AUG_POSTERIZE,
    AUG_SOLARIZE,
    AUG_AUTOCONTRAST,
    AUG_EQUALIZE,
    AUG_INVERT,
} aug_op;

/* One augmentation space of torchvision (its _AUGMENTATION_SPACE): the ops
** in dict order and how the magnitude of bin b of n comes out of each. */
typedef enum aug_space_kind {
    AUG_SPACE_AUTO,         /* AutoAugment (ImageNet policy) and RandAugment */
    AUG_SPACE_WIDE,         /* TrivialAugmentWide */
    AUG_SPACE_AUGMIX,       /* AugMix, all_ops */
    AUG_SPACE_AUGMIX_PARTIAL,
} aug_space_kind;

typedef struct aug_space {
    const aug_op *ops;
    int n_ops;
    aug_space_kind kind;
} aug_space;

extern const aug_space aug_space_rand, aug_space_wide, aug_space_augmix, aug_space_augmix_partial;

/* 1 when the op has magnitudes (its lambda does not return None). */
int aug_has_magnitude(aug_op op);
/* 1 when a magnitude gets a random sign. */
int aug_signed(const aug_space *space, aug_op op);
/* float(magnitudes_fn(n_bins, h, w)[bin]), in torchvision's float32. */
double aug_magnitude(const aug_space *space, aug_op op, int64_t n_bins, int64_t bin, int64_t h, int64_t w);

/* The ops the augmentations call, found once. */
typedef struct aug_kernels {
    const loom_op *affine, *rotate, *brightness, *saturation, *contrast, *sharpness, *posterize, *solarize,
        *autocontrast, *equalize, *invert;
} aug_kernels;

loom_status aug_kernels_find(aug_kernels *k);

/* torchvision's _apply_image_or_video_transform: op with magnitude on src
** (an image [..., C, H, W]) into dst of the same shape and dtype
** (preallocated, not src). interpolation "nearest" or "bilinear"; fill
** absent (count 0) or one value or one per channel. */
typedef struct aug_apply_args {
    const char *interpolation;
    const double *fill;
    int64_t n_fill;
} aug_apply_args;

loom_status aug_apply(loom_exec_ctx *ctx, const aug_kernels *k, aug_op op, double magnitude, const aug_apply_args *a,
                      const loom_tensor *src, loom_tensor *dst);

/* Bytes of a compact tensor. */
static inline size_t aug_nbytes(const loom_tensor *t)
{
    return (size_t)loom_numel(t) * pk_host->dtype_size(loom_tensor_dtype_of(t));
}

/* Named attributes of an op_call (lists and strings borrowed). */
static inline loom_named_attr aug_attr_float(const char *name, double v)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_FLOAT, .is_set = 1, .count = 1, .u = { .f = v } } };
    return a;
}

static inline loom_named_attr aug_attr_floats(const char *name, const double *v, int64_t n)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_FLOATS, .is_set = 1, .count = n, .u = { .floats = v } } };
    return a;
}

static inline loom_named_attr aug_attr_ints(const char *name, const int64_t *v, int64_t n)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_INTS, .is_set = 1, .count = n, .u = { .ints = v } } };
    return a;
}

static inline loom_named_attr aug_attr_string(const char *name, const char *s)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(s), .u = { .s = s } } };
    return a;
}

static inline loom_named_attr aug_attr_int(const char *name, int64_t v)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_INT, .is_set = 1, .count = 1, .u = { .i = v } } };
    return a;
}

static inline loom_named_attr aug_attr_bool(const char *name, int v)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_BOOL, .is_set = 1, .count = 1, .u = { .b = v } } };
    return a;
}

/* One of the four policies with its arguments (those of the ops'
** attributes), for vision.transform_sample as for the ops. */
typedef enum aug_policy_kind { AUG_POLICY_RAND, AUG_POLICY_TRIVIAL_WIDE, AUG_POLICY_AUTO, AUG_POLICY_AUGMIX } aug_policy_kind;

typedef struct aug_policy {
    aug_policy_kind kind;
    const char *interpolation;
    const double *fill;
    int64_t n_fill;
    int64_t num_ops, magnitude, num_magnitude_bins;                  /* rand, trivial */
    int64_t severity, mixture_width, chain_depth;                    /* augmix */
    double alpha;
    int all_ops;
} aug_policy;

/* The policy on image x into out (compact, same shape and dtype), drawing
** from d; argument errors name the argument. */
loom_status aug_policy_apply(loom_exec_ctx *ctx, const aug_policy *p, aug_draws *d, const loom_tensor *x,
                             loom_tensor *out);

/* RandomErasing's arguments (those of vision.random_erasing, checked by the
** caller but for the count of 'value', which needs the image). */
typedef struct aug_erasing {
    double p, scale[2], ratio[2];
    const double *value;          /* n_value 0: the default 0 */
    int64_t n_value;
    int random;                   /* value='random' */
    const char *where;            /* prefix of the error messages ("" for the op) */
} aug_erasing;

/* RandomErasing on x ([..., C, H, W]) into out (compact, same shape and
** dtype, not x), drawing from d. */
loom_status aug_random_erasing(loom_exec_ctx *ctx, const aug_erasing *a, aug_draws *d, const loom_tensor *x,
                               loom_tensor *out);

/* MixUp / CutMix: labels ([N] int64 indices with num_classes, or [N, K]
** float32) checked against the batch x [N, C, H, W] as torchvision's
** _BaseMixUpCutMix.forward checks them (messages prefixed by where);
** *k: the classes K of the mixed labels. */
loom_status aug_mix_check(const char *where, const loom_tensor *x, const loom_tensor *labels, int has_num_classes,
                          int64_t num_classes, int64_t *k);
/* The mix (cutmix 0: MixUp, 1: CutMix) of the checked x and labels into out
** (same shape and dtype; MixUp float32 only) and labels_out ([N, k]). */
loom_status aug_mix(loom_exec_ctx *ctx, const char *where, int cutmix, double alpha, aug_draws *d,
                    const loom_tensor *x, const loom_tensor *labels, int64_t k, loom_tensor *out, float *labels_out);

/* A compact cpu tensor over data (no ownership), for op_call. */
loom_tensor aug_view(void *data, loom_dtype dtype, int32_t ndim, int64_t *shape);

#endif /* LOOM_VISION_AUGMENT_H */
