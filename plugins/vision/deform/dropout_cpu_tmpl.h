/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dropout_cpu_tmpl.h - the cpu steps of drop_block2d/3d and
** stochastic_depth for one dtype (dropout_cpu.c has the contract).
** Included by dropout_cpu.c once per dtype with PK_SFX (dtype_traits.h)
** defined; it undefines PK_SFX and its own macros at its end. Inside, C is
** the compute type (torch's opmath: float for f16), LD(p, i) element i of
** p as C, ST(p, i, v) stores v rounded to the dtype, RND(v) rounds v to
** the dtype's precision and back, as every c10::Half operation does.
*/

#define C PK_C(PK_SFX)
#define LD(p, i) PK_LD(PK_SFX)((const PK_S(PK_SFX) *)(p) + (i))
#define ST(p, i, v) PK_ST(PK_SFX)((PK_S(PK_SFX) *)(p) + (i), (v))
#define RND(v) PK_RND(PK_SFX)(v)

/* Max over the window [i - r, i + r] clipped to [0, len) along one axis of
** a (outer, len, inner) block, from src to dst. */
static void PK_FN(max_axis)(const C *src, C *dst, int64_t outer, int64_t len, int64_t inner, int64_t r)
{
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < len; i++) {
            int64_t a = i - r < 0 ? 0 : i - r, b = i + r >= len ? len - 1 : i + r;
            for (int64_t k = 0; k < inner; k++) {
                C m = src[(o * len + a) * inner + k];
                for (int64_t t = a + 1; t <= b; t++) {
                    C v = src[(o * len + t) * inner + k];
                    if (v > m || isnan(v))
                        m = v;
                }
                dst[(o * len + i) * inner + k] = m;
            }
        }
}

static void PK_FN(db_planes)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const db_job *j = user;
    const drop_block_plan *pl = j->pl;
    C *a = (C *)(j->bufs + (size_t)thread_index * j->buf_bytes), *mask = j->mask;
    int64_t r = pl->bs / 2, sp0 = pl->sp[0], sp1 = pl->sp[1], sp2 = pl->dims == 3 ? pl->sp[2] : 1;
    int64_t n0 = pl->nsp[0], n1 = pl->nsp[1], n2 = pl->dims == 3 ? pl->nsp[2] : 1;
    int64_t r2 = pl->dims == 3 ? r : 0;
    for (int64_t pidx = begin; pidx < end; pidx++) {
        C *b = mask + pidx * j->plane;
        /* zero-padded noise into b */
        for (int64_t z = 0; z < sp0; z++)
            for (int64_t y = 0; y < sp1; y++)
                for (int64_t x = 0; x < sp2; x++) {
                    int64_t nz = z - r, ny = y - r, nx = x - r2;
                    C v = 0;
                    if (nz >= 0 && nz < n0 && ny >= 0 && ny < n1 && nx >= 0 && nx < n2) {
                        int64_t i = pidx * j->noise_plane + (nz * n1 + ny) * n2 + nx;
                        v = pl->noise != NULL ? LD(pl->noise, i)
                                              : (C)pk_rng_bernoulli(pl->seed, (uint64_t)i, pl->gamma);
                    }
                    b[(z * sp1 + y) * sp2 + x] = v;
                }
        /* separable max pool, then mask = 1 - pooled */
        if (pl->dims == 3) {
            PK_FN(max_axis)(b, a, sp0 * sp1, sp2, 1, r);
            PK_FN(max_axis)(a, b, sp0, sp1, sp2, r);
            PK_FN(max_axis)(b, a, 1, sp0, sp1 * sp2, r);
        } else {
            PK_FN(max_axis)(b, a, sp0, sp1, 1, r);
            PK_FN(max_axis)(a, b, 1, sp0, sp1, r);
            memcpy(a, b, (size_t)j->plane * sizeof(C));
        }
        double s = 0;
        for (int64_t i = 0; i < j->plane; i++) {
            b[i] = RND((C)1 - a[i]);
            s += (double)b[i];
        }
        j->plane_sums[pidx] = s;
    }
}

static void PK_FN(db_apply)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const db_job *j = user;
    const C *mask = j->mask, scale = (C)j->scale;
    (void)thread_index;
    for (int64_t i = begin; i < end; i++)
        ST(j->out, i, RND(RND(LD(j->pl->input, i) * mask[i]) * scale));
}

/* scale = round(round(1 / round(eps + round(sum))) * numel) */
static double PK_FN(db_scale)(double sum, double eps, int64_t numel)
{
    C s = RND((C)sum);
    C d = RND((C)eps + s);
    C r = RND((C)1 / d);
    return (double)RND(r * (C)numel);
}

static void PK_FN(sd_rows)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const sd_job *j = user;
    const stochastic_depth_plan *pl = j->pl;
    double survival = 1.0 - pl->p;
    (void)thread_index;
    for (int64_t row = begin; row < end; row++) {
        C f = pl->noise != NULL ? LD(pl->noise, row)
                                : (C)pk_rng_bernoulli(pl->seed, (uint64_t)row, survival);
        if (survival > 0.0)
            f = RND(f / (C)survival);
        for (int64_t i = row * pl->row_len; i < (row + 1) * pl->row_len; i++)
            ST(j->out, i, RND(LD(pl->input, i) * f));
    }
}

/* this dtype's steps, for dropout_cpu.c's table */
static const dropout_fns PK_FN(dropout_fns) = {
    .opmath_size = sizeof(C),
    .db_planes = PK_FN(db_planes),
    .db_apply = PK_FN(db_apply),
    .db_scale = PK_FN(db_scale),
    .sd_rows = PK_FN(sd_rows),
};

#undef C
#undef LD
#undef ST
#undef RND
#undef PK_SFX
