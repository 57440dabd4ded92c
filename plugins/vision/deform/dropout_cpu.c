/*
** dropout_cpu.c - vision.drop_block2d, vision.drop_block3d and
** vision.stochastic_depth on the CPU, with torchvision's arithmetic step by
** step in the tensor's dtype (f16 computes each step in float and rounds,
** as torch's CPU kernels do), so that with a given Bernoulli draw (`noise`)
** the output matches torchvision bit for bit:
**
** drop_block: noise [N, C, S-bs+1 ...] is zero-padded by bs/2 to S, max-pooled
**   with a bs window (stride 1, clipped at the borders), mask = 1 - pooled,
**   s = sum(mask), scale = (1 / (eps + s)) * numel (torch's int / tensor is
**   reciprocal then multiply), out = (input * mask) * scale.
** stochastic_depth: f = noise / (1 - p) (noise itself when p = 1) per row
**   or for the batch, out = input * f.
** Without `noise` the draw comes from rng.h: draw i is element i of
** the noise tensor in row-major order, so the cuda kernels draw the same.
** Planes are processed in parallel; the mask sum is taken per plane and
** added in plane order (deterministic for any thread count).
*/
#include <math.h>
#include <string.h>

#include "deform.h"
#include "rng.h"

static float ld_f16(const void *p, int64_t i) { return pk_f16_to_f32(((const uint16_t *)p)[i]); }
static void st_f16(void *p, int64_t i, float v) { ((uint16_t *)p)[i] = pk_f32_to_f16(v); }
static float rd_f16(float v) { return pk_f16_to_f32(pk_f32_to_f16(v)); }
static float ld_f32(const void *p, int64_t i) { return ((const float *)p)[i]; }
static void st_f32(void *p, int64_t i, float v) { ((float *)p)[i] = v; }
static float rd_f32(float v) { return v; }
static double ld_f64(const void *p, int64_t i) { return ((const double *)p)[i]; }
static void st_f64(void *p, int64_t i, double v) { ((double *)p)[i] = v; }
static double rd_f64(double v) { return v; }

typedef struct sd_job {
    const stochastic_depth_plan *pl;
    void *out;
} sd_job;

typedef struct db_job {
    const drop_block_plan *pl;
    int64_t plane, noise_plane;     /* elements per (n, c) plane of input / noise */
    void *mask;                     /* opmath [numel] */
    double *plane_sums;
    char *bufs;                     /* per thread: opmath [plane] */
    size_t buf_bytes;
    void *out;
    double scale;                   /* opmath value of the scale */
} db_job;

/* Max over the window [i - r, i + r] clipped to [0, len) along one axis of
** a (outer, len, inner) block, from src to dst. */
#define DEFINE_DROPOUT(SUF, OT)                                                                        \
    static void max_axis_##SUF(const OT *src, OT *dst, int64_t outer, int64_t len, int64_t inner,        \
                               int64_t r)                                                              \
    {                                                                                                  \
        for (int64_t o = 0; o < outer; o++)                                                            \
            for (int64_t i = 0; i < len; i++) {                                                        \
                int64_t a = i - r < 0 ? 0 : i - r, b = i + r >= len ? len - 1 : i + r;                 \
                for (int64_t k = 0; k < inner; k++) {                                                  \
                    OT m = src[(o * len + a) * inner + k];                                             \
                    for (int64_t t = a + 1; t <= b; t++) {                                             \
                        OT v = src[(o * len + t) * inner + k];                                         \
                        if (v > m || isnan(v))                                                         \
                            m = v;                                                                     \
                    }                                                                                  \
                    dst[(o * len + i) * inner + k] = m;                                                \
                }                                                                                      \
            }                                                                                          \
    }                                                                                                  \
                                                                                                       \
    static void db_planes_##SUF(void *user, int64_t begin, int64_t end, int32_t thread_index)          \
    {                                                                                                  \
        const db_job *j = user;                                                                        \
        const drop_block_plan *pl = j->pl;                                                             \
        OT *a = (OT *)(j->bufs + (size_t)thread_index * j->buf_bytes), *mask = j->mask;                 \
        int64_t r = pl->bs / 2, sp0 = pl->sp[0], sp1 = pl->sp[1], sp2 = pl->dims == 3 ? pl->sp[2] : 1;  \
        int64_t n0 = pl->nsp[0], n1 = pl->nsp[1], n2 = pl->dims == 3 ? pl->nsp[2] : 1;                 \
        int64_t r2 = pl->dims == 3 ? r : 0;                                                            \
        for (int64_t pidx = begin; pidx < end; pidx++) {                                               \
            OT *b = mask + pidx * j->plane;                                                            \
            /* zero-padded noise into b */                                                             \
            for (int64_t z = 0; z < sp0; z++)                                                          \
                for (int64_t y = 0; y < sp1; y++)                                                      \
                    for (int64_t x = 0; x < sp2; x++) {                                                \
                        int64_t nz = z - r, ny = y - r, nx = x - r2;                                   \
                        OT v = 0;                                                                      \
                        if (nz >= 0 && nz < n0 && ny >= 0 && ny < n1 && nx >= 0 && nx < n2) {           \
                            int64_t i = pidx * j->noise_plane + (nz * n1 + ny) * n2 + nx;              \
                            v = pl->noise != NULL ? ld_##SUF(pl->noise, i)                             \
                                                  : (OT)pk_rng_bernoulli(pl->seed, (uint64_t)i,    \
                                                                             pl->gamma);               \
                        }                                                                              \
                        b[(z * sp1 + y) * sp2 + x] = v;                                                \
                    }                                                                                  \
            /* separable max pool, then mask = 1 - pooled */                                           \
            if (pl->dims == 3) {                                                                       \
                max_axis_##SUF(b, a, sp0 * sp1, sp2, 1, r);                                            \
                max_axis_##SUF(a, b, sp0, sp1, sp2, r);                                                \
                max_axis_##SUF(b, a, 1, sp0, sp1 * sp2, r);                                            \
            } else {                                                                                   \
                max_axis_##SUF(b, a, sp0, sp1, 1, r);                                                  \
                max_axis_##SUF(a, b, 1, sp0, sp1, r);                                                  \
                memcpy(a, b, (size_t)j->plane * sizeof(OT));                                           \
            }                                                                                          \
            double s = 0;                                                                              \
            for (int64_t i = 0; i < j->plane; i++) {                                                   \
                b[i] = rd_##SUF((OT)1 - a[i]);                                                         \
                s += (double)b[i];                                                                     \
            }                                                                                          \
            j->plane_sums[pidx] = s;                                                                   \
        }                                                                                              \
    }                                                                                                  \
                                                                                                       \
    static void db_apply_##SUF(void *user, int64_t begin, int64_t end, int32_t thread_index)           \
    {                                                                                                  \
        const db_job *j = user;                                                                        \
        const OT *mask = j->mask, scale = (OT)j->scale;                                                \
        (void)thread_index;                                                                            \
        for (int64_t i = begin; i < end; i++)                                                          \
            st_##SUF(j->out, i, rd_##SUF(rd_##SUF(ld_##SUF(j->pl->input, i) * mask[i]) * scale));      \
    }                                                                                                  \
                                                                                                       \
    /* scale = round(round(1 / round(eps + round(sum))) * numel) */                                    \
    static double db_scale_##SUF(double sum, double eps, int64_t numel)                                \
    {                                                                                                  \
        OT s = rd_##SUF((OT)sum);                                                                      \
        OT d = rd_##SUF((OT)eps + s);                                                                  \
        OT r = rd_##SUF((OT)1 / d);                                                                    \
        return (double)rd_##SUF(r * (OT)numel);                                                        \
    }                                                                                                  \
                                                                                                       \
    static void sd_rows_##SUF(void *user, int64_t begin, int64_t end, int32_t thread_index)            \
    {                                                                                                  \
        const sd_job *j = user;                                                                          \
        const stochastic_depth_plan *pl = j->pl;                                                       \
        double survival = 1.0 - pl->p;                                                                 \
        (void)thread_index;                                                                            \
        for (int64_t row = begin; row < end; row++) {                                                  \
            OT f = pl->noise != NULL ? ld_##SUF(pl->noise, row)                                        \
                                     : (OT)pk_rng_bernoulli(pl->seed, (uint64_t)row, survival);    \
            if (survival > 0.0)                                                                        \
                f = rd_##SUF(f / (OT)survival);                                                        \
            for (int64_t i = row * pl->row_len; i < (row + 1) * pl->row_len; i++)                      \
                st_##SUF(j->out, i, rd_##SUF(ld_##SUF(pl->input, i) * f));                             \
        }                                                                                              \
    }

DEFINE_DROPOUT(f16, float)
DEFINE_DROPOUT(f32, float)
DEFINE_DROPOUT(f64, double)

/* The drop_block steps of one dtype. */
typedef struct db_fns {
    loom_range_fn planes, apply;
    double (*scale)(double sum, double eps, int64_t numel);
} db_fns;

static const db_fns db_fns_f16 = { db_planes_f16, db_apply_f16, db_scale_f16 };
static const db_fns db_fns_f32 = { db_planes_f32, db_apply_f32, db_scale_f32 };
static const db_fns db_fns_f64 = { db_planes_f64, db_apply_f64, db_scale_f64 };

static loom_status copy_input(loom_call *call, const loom_tensor *in, loom_tensor **out)
{
    loom_status st = pk_host->alloc_output(call, 0, loom_tensor_dtype_of(in), in->ndim, in->shape, out);
    if (st == LOOM_OK && loom_numel(in) > 0)
        memcpy(loom_data(*out), loom_data(in),
               (size_t)loom_numel(in) * pk_host->dtype_size(loom_tensor_dtype_of(in)));
    return st;
}

static loom_status drop_block_cpu(loom_call *call, int dims)
{
    const loom_tensor *in = call->inputs[DROP_INPUT];
    drop_block_plan pl;
    loom_tensor *out;
    loom_status st = drop_block_check(call, dims, &pl);
    if (st != LOOM_OK)
        return st;
    if (pl.identity || pl.numel == 0)
        return copy_input(call, in, &out);
    if ((st = pk_host->alloc_output(call, 0, pl.dtype, in->ndim, in->shape, &out)) != LOOM_OK)
        return st;
    int f64 = pl.dtype == LOOM_DTYPE_F64;
    size_t os = f64 ? sizeof(double) : sizeof(float);
    int64_t planes = pl.n * pl.c, threads = call->ctx->n_threads > 0 ? call->ctx->n_threads : 1;
    db_job j = { .pl = &pl, .plane = pl.numel / planes, .noise_plane = pl.noise_numel / planes,
                 .out = loom_data(out) };
    j.buf_bytes = ((size_t)j.plane * os + 63) / 64 * 64;
    j.mask = pk_host->scratch(call->ctx, (size_t)pl.numel * os);
    j.plane_sums = pk_host->scratch(call->ctx, (size_t)planes * sizeof(double));
    j.bufs = pk_host->scratch(call->ctx, j.buf_bytes * (size_t)threads);
    if (j.mask == NULL || j.plane_sums == NULL || j.bufs == NULL)
        return pk_host->fail(LOOM_ENOMEM, "no memory for the block mask of %lld elements", (long long)pl.numel);
    const db_fns *fns = f64 ? &db_fns_f64 : pl.dtype == LOOM_DTYPE_F16 ? &db_fns_f16 : &db_fns_f32;
    if ((st = pk_host->parallel_for(call->ctx, planes, 1, fns->planes, &j)) != LOOM_OK)
        return st;
    double sum = 0;
    for (int64_t i = 0; i < planes; i++)
        sum += j.plane_sums[i];
    j.scale = fns->scale(sum, pl.eps, pl.numel);
    return pk_host->parallel_for(call->ctx, pl.numel, 4096, fns->apply, &j);
}

loom_status drop_block2d_cpu(loom_call *call) { return drop_block_cpu(call, 2); }
loom_status drop_block3d_cpu(loom_call *call) { return drop_block_cpu(call, 3); }

loom_status stochastic_depth_cpu(loom_call *call)
{
    const loom_tensor *in = call->inputs[DROP_INPUT];
    stochastic_depth_plan pl;
    loom_tensor *out;
    loom_status st = stochastic_depth_check(call, &pl);
    if (st != LOOM_OK)
        return st;
    if (pl.identity || loom_numel(in) == 0)
        return copy_input(call, in, &out);
    if ((st = pk_host->alloc_output(call, 0, pl.dtype, in->ndim, in->shape, &out)) != LOOM_OK)
        return st;
    sd_job j = { .pl = &pl, .out = loom_data(out) };
    loom_range_fn fn = pl.dtype == LOOM_DTYPE_F64 ? sd_rows_f64 : pl.dtype == LOOM_DTYPE_F16 ? sd_rows_f16 : sd_rows_f32;
    int64_t grain = pl.row_len >= 4096 ? 1 : 4096 / (pl.row_len > 0 ? pl.row_len : 1);
    return pk_host->parallel_for(call->ctx, pl.rows, grain, fn, &j);
}
