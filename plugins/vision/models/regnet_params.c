/* SPDX-License-Identifier: BSD-3-Clause */
/*
** regnet_params.c - the RegNet architectures (torchvision's regnet_* model
** builders) and their stage tables, computed as torchvision's
** BlockParams.from_init_params does it, in the same f32 arithmetic (its
** torch tensors are float32): widths_cont = arange(depth) * w_a + w_0;
** capacity = round(log(widths_cont / w_0) / log(w_m)); block width =
** round(w_0 * w_m^capacity / 8) * 8 (round: half to even, as torch.round);
** a stage is a run of equal widths; then _adjust_widths_groups_compatibilty:
** bottleneck width int(width * bottleneck_multiplier), group width
** min(group_width, that), the bottleneck width made divisible by it
** (_make_divisible: int(w + g / 2) // g * g, at least g, plus g when that
** lost more than 10%) and the width int(that / bottleneck_multiplier); a
** block's bottleneck is int(round(width * bottleneck_multiplier)) with
** bottleneck // group width groups (BottleneckTransform).
** tests/vision/models checks every table against torchvision's
** (tests/data/vision/models/regnet_configs.json).
*/
#include <math.h>
#include <string.h>

#include "regnet.h"

static const regnet_arch archs[] = {
    { "vision.regnet_y_400mf", 16, 48, 27.89, 2.09, 8, 0.25, 32, 1.0 },
    { "vision.regnet_y_800mf", 14, 56, 38.84, 2.4, 16, 0.25, 32, 1.0 },
    { "vision.regnet_y_1_6gf", 27, 48, 20.71, 2.65, 24, 0.25, 32, 1.0 },
    { "vision.regnet_y_3_2gf", 21, 80, 42.63, 2.66, 24, 0.25, 32, 1.0 },
    { "vision.regnet_y_8gf", 17, 192, 76.82, 2.19, 56, 0.25, 32, 1.0 },
    { "vision.regnet_y_16gf", 18, 200, 106.23, 2.48, 112, 0.25, 32, 1.0 },
    { "vision.regnet_y_32gf", 20, 232, 115.89, 2.53, 232, 0.25, 32, 1.0 },
    { "vision.regnet_y_128gf", 27, 456, 160.83, 2.52, 264, 0.25, 32, 1.0 },
    { "vision.regnet_x_400mf", 22, 24, 24.48, 2.54, 16, 0, 32, 1.0 },
    { "vision.regnet_x_800mf", 16, 56, 35.73, 2.28, 16, 0, 32, 1.0 },
    { "vision.regnet_x_1_6gf", 18, 80, 34.01, 2.25, 24, 0, 32, 1.0 },
    { "vision.regnet_x_3_2gf", 25, 88, 26.31, 2.25, 48, 0, 32, 1.0 },
    { "vision.regnet_x_8gf", 23, 80, 49.56, 2.88, 120, 0, 32, 1.0 },
    { "vision.regnet_x_16gf", 22, 216, 55.59, 2.1, 128, 0, 32, 1.0 },
    { "vision.regnet_x_32gf", 23, 320, 69.86, 2.0, 168, 0, 32, 1.0 },
};

const regnet_arch *regnet_arch_of(const char *class_name)
{
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (strcmp(archs[i].name, class_name) == 0)
            return &archs[i];
    return NULL;
}

/* torchvision.models._utils._make_divisible(v, divisor) with min_value = divisor */
static int64_t make_divisible(int64_t v, int64_t divisor)
{
    int64_t nv = (int64_t)((double)v + (double)divisor / 2.0) / divisor * divisor;
    if (nv < divisor)
        nv = divisor;
    if ((double)nv < 0.9 * (double)v)
        nv += divisor;
    return nv;
}

/* An attribute of vision.regnet out of its range: the message names it. */
static loom_status bad_attr(const char *cls, const char *attr, const char *range)
{
    return pk_host->fail(LOOM_EINVAL, "%s: attribute '%s' must be %s", cls, attr, range);
}

loom_status regnet_arch_from_attrs(const loom_object_args *args, regnet_arch *out)
{
    const char *cls = args->class_name;
    if (args->n_attrs < 9)
        return pk_host->fail(LOOM_EINVAL, "%s is not a RegNet class", cls);
    const loom_attr_value *v = args->attrs;
    for (int i = 1; i < 9; i++)
        if (!v[i].is_set)
            return pk_host->fail(LOOM_EINVAL, "%s: an architecture attribute is not set", cls);
    memset(out, 0, sizeof *out);
    out->name = cls;
    if (v[1].u.i < 1 || v[1].u.i > 256)
        return bad_attr(cls, "depth", "in [1, 256]");
    out->depth = (int)v[1].u.i;
    if (v[2].u.i < 8 || v[2].u.i > 65536 || v[2].u.i % 8 != 0)
        return bad_attr(cls, "w_0", "a multiple of 8 in [8, 65536]");
    out->w_0 = (int)v[2].u.i;
    if (!(v[3].u.f >= 0 && v[3].u.f <= 65536))
        return bad_attr(cls, "w_a", "in [0, 65536]");
    out->w_a = v[3].u.f;
    if (!(v[4].u.f > 1 && v[4].u.f <= 64))
        return bad_attr(cls, "w_m", "in (1, 64]");
    out->w_m = v[4].u.f;
    if (v[5].u.i < 1 || v[5].u.i > 65536)
        return bad_attr(cls, "group_width", "in [1, 65536]");
    out->group_width = (int)v[5].u.i;
    if (!(v[6].u.f > 0 && v[6].u.f <= 64))
        return bad_attr(cls, "bottleneck_multiplier", "in (0, 64]");
    out->bottleneck_multiplier = v[6].u.f;
    if (!(v[7].u.f >= 0 && v[7].u.f <= 1))
        return bad_attr(cls, "se_ratio", "in [0, 1] (0: no squeeze-excitation)");
    out->se_ratio = v[7].u.f;
    if (v[8].u.i < 1 || v[8].u.i > 65536)
        return bad_attr(cls, "stem_width", "in [1, 65536]");
    out->stem_width = (int)v[8].u.i;
    return LOOM_OK;
}

loom_status regnet_stages_of(const regnet_arch *a, regnet_stages *out)
{
    memset(out, 0, sizeof *out);
    if (a->w_a < 0 || a->w_0 <= 0 || a->w_m <= 1 || a->w_0 % 8 != 0 || a->depth < 1 || a->depth > 256
        || a->group_width < 1 || !(a->bottleneck_multiplier > 0))
        return pk_host->fail(LOOM_EINVAL, "%s: invalid RegNet settings", a->name);
    /* each line one f32 tensor op of torchvision's, rounded as torch rounds it */
    const float w_a = (float)a->w_a, w_0 = (float)a->w_0, w_m = (float)a->w_m, log_w_m = (float)log(a->w_m);
    int64_t prev = 0;
    for (int i = 0; i < a->depth; i++) {
        volatile float cont = (float)i * w_a;
        cont = cont + w_0;
        volatile float ratio = cont / w_0;
        volatile float lg = logf(ratio);
        float capacity = nearbyintf(lg / log_w_m);
        volatile float p = powf(w_m, capacity);
        volatile float scaled = w_0 * p;
        int64_t width = (int64_t)(nearbyintf(scaled / 8.0f) * 8.0f);
        if (width != prev) {
            if (out->n == REGNET_MAX_STAGES)
                return pk_host->fail(LOOM_EINVAL, "%s: more than %d stages", a->name, REGNET_MAX_STAGES);
            out->width[out->n++] = width;
            prev = width;
        }
        out->depth[out->n - 1]++;
    }
    const double bm = a->bottleneck_multiplier;
    for (int s = 0; s < out->n; s++) {
        int64_t bot = (int64_t)((double)out->width[s] * bm);
        if (bot < 1)
            return pk_host->fail(LOOM_EINVAL, "%s: stage %d's bottleneck width int(%lld * bottleneck_multiplier %g) "
                                 "is 0", a->name, s + 1, (long long)out->width[s], bm);
        int64_t g = a->group_width < bot ? a->group_width : bot;
        out->group_width[s] = g;
        out->width[s] = (int64_t)((double)make_divisible(bot, g) / bm);
        out->bottleneck[s] = (int64_t)nearbyint((double)out->width[s] * bm);
        /* BottleneckTransform's groups: bottleneck // group width, which must divide it */
        int64_t groups = out->bottleneck[s] / g;
        if (groups < 1 || out->bottleneck[s] % groups != 0)
            return pk_host->fail(LOOM_EINVAL, "%s: stage %d's bottleneck width %lld is not divisible by its "
                                 "%lld groups (group_width %lld)", a->name, s + 1, (long long)out->bottleneck[s],
                                 (long long)groups, (long long)g);
    }
    return LOOM_OK;
}
