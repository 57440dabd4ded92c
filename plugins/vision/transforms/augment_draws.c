/* SPDX-License-Identifier: BSD-3-Clause */
/*
** augment_draws.c - the random draws of the augmentation ops: torchvision's
** own (recorded by tools/gen_vision_transforms_goldens.py around torch's
** RNG calls, read back in order) or a seeded counter-based stream
** (plugins/common/rng.h: draw i is a pure function of the seed and i, so a
** seed gives the same result on every backend and thread count).
**
** Seeded: randint(low, high) = low + floor(u * (high - low)); rand = u
** rounded to float32 (kept below 1); Dirichlet(alpha) = Gamma(alpha) draws
** normalised, Gamma by Marsaglia and Tsang's method (alpha < 1 boosted by
** u^(1/alpha)) over Box-Muller normals; normal noise = Box-Muller on two
** uniforms a value, rounded to float32.
*/
#include <math.h>

#include "augment.h"
#include "rng.h"

void aug_draws_init(aug_draws *d, const loom_tensor *recorded, int64_t seed)
{
    d->recorded = recorded;
    d->n_recorded = recorded ? loom_numel(recorded) : 0;
    d->next = 0;
    d->seed = (uint64_t)seed;
    d->counter = 0;
}

static double recorded_at(const aug_draws *d, int64_t i)
{
    return loom_tensor_dtype_of(d->recorded) == LOOM_DTYPE_F64 ? ((const double *)loom_data(d->recorded))[i]
                                                               : (double)((const float *)loom_data(d->recorded))[i];
}

static loom_status next_recorded(aug_draws *d, const char *what, double *out)
{
    if (d->next >= d->n_recorded)
        return pk_host->fail(LOOM_EINVAL, "'draws' has %lld values, but draw %lld (%s) is needed",
                             (long long)d->n_recorded, (long long)d->next + 1, what);
    *out = recorded_at(d, d->next++);
    return LOOM_OK;
}

static double uniform(aug_draws *d)
{
    return pk_rng_uniform(d->seed, d->counter++);
}

loom_status aug_randint(aug_draws *d, int64_t low, int64_t high, int64_t *out)
{
    if (d->recorded) {
        double v = 0.0;
        loom_status st = next_recorded(d, "an integer", &v);
        if (st != LOOM_OK)
            return st;
        if (!(v >= (double)low && v < (double)high) || v != floor(v))
            return pk_host->fail(LOOM_EINVAL, "'draws'[%lld] = %g: an integer in [%lld, %lld) is expected",
                                 (long long)d->next - 1, v, (long long)low, (long long)high);
        *out = (int64_t)v;
        return LOOM_OK;
    }
    int64_t v = low + (int64_t)(uniform(d) * (double)(high - low));
    *out = v >= high ? high - 1 : v;
    return LOOM_OK;
}

loom_status aug_rand(aug_draws *d, float *out)
{
    if (d->recorded) {
        double v = 0.0;
        loom_status st = next_recorded(d, "a uniform", &v);
        if (st != LOOM_OK)
            return st;
        if (!(v >= 0.0 && v < 1.0))
            return pk_host->fail(LOOM_EINVAL, "'draws'[%lld] = %g: a uniform in [0, 1) is expected",
                                 (long long)d->next - 1, v);
        *out = (float)v;
        return LOOM_OK;
    }
    const float u = (float)uniform(d);
    *out = u < 1.0f ? u : nextafterf(1.0f, 0.0f);
    return LOOM_OK;
}

loom_status aug_uniform(aug_draws *d, double lo, double hi, float *out)
{
    if (d->recorded) {
        double v = 0.0;
        loom_status st = next_recorded(d, "a uniform", &v);
        if (st != LOOM_OK)
            return st;
        if (!(v >= (double)(float)lo && v <= (double)(float)hi))
            return pk_host->fail(LOOM_EINVAL, "'draws'[%lld] = %g: a uniform in [%g, %g) is expected",
                                 (long long)d->next - 1, v, lo, hi);
        *out = (float)v;
        return LOOM_OK;
    }
    *out = (float)(lo + (hi - lo) * uniform(d));
    return LOOM_OK;
}

static double normal(aug_draws *d)
{
    const double u1 = 1.0 - uniform(d), u2 = uniform(d);   /* u1 in (0, 1] */
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

loom_status aug_normal_block(aug_draws *d, int64_t n, int64_t *base)
{
    if (!d->recorded) {
        *base = (int64_t)d->counter;
        d->counter += 2 * (uint64_t)n;
        return LOOM_OK;
    }
    if (n > d->n_recorded - d->next)
        return pk_host->fail(LOOM_EINVAL, "'draws' has %lld values, but draws %lld..%lld (normal noise) are needed",
                             (long long)d->n_recorded, (long long)d->next + 1, (long long)(d->next + n));
    for (int64_t k = 0; k < n; k++) {
        const double v = recorded_at(d, d->next + k);
        if (!(fabs(v) < 2147483648.0))
            return pk_host->fail(LOOM_EINVAL, "'draws'[%lld] = %g: a normal draw (finite, below 2^31) is expected",
                                 (long long)(d->next + k), v);
    }
    *base = d->next;
    d->next += n;
    return LOOM_OK;
}

float aug_normal_at(const aug_draws *d, int64_t base, int64_t k)
{
    if (d->recorded)
        return (float)recorded_at(d, base + k);
    const uint64_t c = (uint64_t)base + 2 * (uint64_t)k;
    const double u1 = 1.0 - pk_rng_uniform(d->seed, c), u2 = pk_rng_uniform(d->seed, c + 1);   /* u1 in (0, 1] */
    return (float)(sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
}

static double gamma_draw(aug_draws *d, double alpha)
{
    const double boost = alpha < 1.0 ? pow(1.0 - uniform(d), 1.0 / alpha) : 1.0;
    const double a = alpha < 1.0 ? alpha + 1.0 : alpha;
    const double dd = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * dd);
    for (;;) {
        double x, v;
        do {
            x = normal(d);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        const double u = 1.0 - uniform(d);
        if (log(u) < 0.5 * x * x + dd - dd * v + dd * log(v))
            return dd * v * boost;
    }
}

loom_status aug_dirichlet(aug_draws *d, double alpha, int64_t k, float *out)
{
    if (d->recorded) {
        for (int64_t i = 0; i < k; i++) {
            double v = 0.0;
            loom_status st = next_recorded(d, "a Dirichlet weight", &v);
            if (st != LOOM_OK)
                return st;
            if (!(v >= 0.0 && v <= 1.0))
                return pk_host->fail(LOOM_EINVAL, "'draws'[%lld] = %g: a Dirichlet weight in [0, 1) is expected",
                                     (long long)d->next - 1, v);
            out[i] = (float)v;
        }
        return LOOM_OK;
    }
    double g[64], sum = 0.0;
    for (int64_t i = 0; i < k; i++) {
        g[i] = gamma_draw(d, alpha);
        sum += g[i];
    }
    for (int64_t i = 0; i < k; i++)
        out[i] = sum > 0.0 ? (float)(g[i] / sum) : (float)(1.0 / (double)k);
    return LOOM_OK;
}

loom_status aug_randperm(aug_draws *d, int64_t n, int64_t *out)
{
    if (d->recorded) {
        uint64_t seen = 0;
        for (int64_t i = 0; i < n; i++) {
            loom_status st = aug_randint(d, 0, n, &out[i]);
            if (st != LOOM_OK)
                return st;
            if (seen & (UINT64_C(1) << out[i]))
                return pk_host->fail(LOOM_EINVAL, "'draws'[%lld] = %lld: a permutation of 0..%lld is expected",
                                     (long long)d->next - 1, (long long)out[i], (long long)n - 1);
            seen |= UINT64_C(1) << out[i];
        }
        return LOOM_OK;
    }
    for (int64_t i = 0; i < n; i++)
        out[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j;
        loom_status st = aug_randint(d, 0, i + 1, &j);
        if (st != LOOM_OK)
            return st;
        const int64_t t = out[i];
        out[i] = out[j];
        out[j] = t;
    }
    return LOOM_OK;
}
