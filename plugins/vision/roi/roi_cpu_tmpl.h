/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roi_cpu_tmpl.h - the cpu kernels of the RoI ops for one dtype. Included
** by roi_cpu_kernels.c once per dtype with PK_SFX (dtype_traits.h) and
** these macros defined (it undefines them at its end, ready for the next
** dtype):
**   SAMPLE     roi_sample_f32 or roi_sample_f64 (weights of the compute type)
**   WITH_POOL  1: also roi_pool / ps_roi_pool (torchvision: f32, f64 only)
**   WITH_AVX2  1: the NHWC loops may use those of roi_avx2.c (f32)
** Inside, S and C are the storage and compute types of PK_SFX, LD(p) reads
** *p as C, ST(v) rounds v to S (to nearest even) and R(v) rounds v to S's
** precision and back (identity unless S is narrower than C).
** The including file provides roi_cpu.h, <float.h>, <math.h>, <stdint.h>
** and <string.h>.
**
** Every expression follows torchvision's CPU kernels operation by
** operation (see roi_cpu.h); the comments name the torchvision variable.
**
** Forward roi_align / ps_roi_align: threads take rois. Per roi, the sample
** coordinates are separable: a y table (PH x grid_h entries) and an x
** table (PW x grid_w) hold the clamped low/high indices and the weights
** along each axis; the samples of one bin are their product (torchvision's
** pre_calc). Each bin is then swept over the channels, either directly on
** the NCHW input or, for roi_align when the rois read the rows they touch
** densely enough to pay for it, on a per-thread row cache: NHWC copies (in
** blocks of 32 channels) of just the rows the rois' samples touch, each
** made once while the rois that need it run, the rois visited in bands of
** rows so that the cache stays small and warm. There the channel loop is
** contiguous (vectorised) and a roi costs what it samples, not what the map
** holds. Per channel the arithmetic and its order are those of torchvision.
**
** Forward roi_pool / ps_roi_pool: threads take rois; bins are computed with
** torchvision's rounding and clipping. roi_pool reads every pixel of a bin
** once per channel, so when the rois cover the used maps a few times over
** it runs on the NHWC copy too, with a running maximum per channel lane.
**
** Backward ops: threads take disjoint ranges of input channels and replay
** torchvision's loop order inside each range, so every gradient element
** receives its contributions in torchvision's order: deterministic, no
** atomics, bit-identical.
*/

#define S PK_S(PK_SFX)
#define C PK_C(PK_SFX)
#define LD(p) PK_LD(PK_SFX)(p)
/* f32 and f64 keep the plain expressions: with the identity calls gcc
** swaps operands of some additions, which changes which NaN payload an
** addition of two NaNs keeps */
#if PK_NARROW(PK_SFX)
#define ST(v) PK_TO(PK_SFX)(v)
#define R(v) PK_RND(PK_SFX)(v)
#else
#define ST(v) (v)
#define R(v) (v)
#endif
#define FN(name) PK_FN(name)

typedef struct FN(axis) {
    int32_t lo, hi;             /* y_low, y_high (or x_) */
    C l, h;                     /* ly, hy */
    int32_t valid;              /* -1 <= y <= size */
} FN(axis);

typedef struct FN(box) {
    int64_t b;                  /* roi_batch_ind */
    C sh, sw, bh, bw;           /* roi_start_h/w, bin_size_h/w (align) or bin sizes (pool) */
    C count;                    /* align: samples per bin as torchvision's T count */
    int64_t gh, gw;             /* roi_bin_grid_h/w */
    int64_t rsh, rsw;           /* pool: rounded roi_start_h/w */
} FN(box);

/* ------------------------------------------------------------- roi_align */

/* Per roi: start, bin size, grid and count (roi_align / ps_roi_align). */
static loom_status FN(align_boxes)(roi_job *j)
{
    const roi_geom *g = &j->g;
    const S *r = j->rois;
    FN(box) *bx = j->boxes;
    const int ps = g->kind == PS_ROI_ALIGN;
    const C off = (ps || g->aligned) ? (C)0.5 : (C)0;
    const C ss = R((C)g->spatial_scale), fph = R((C)g->ph), fpw = R((C)g->pw);
    j->max_gh = j->max_gw = 0;
    for (int64_t k = 0; k < g->k; k++) {
        const S *q = r + k * 5;
        FN(box) *b = &bx[k];
        b->b = (int64_t)LD(q);
        b->sw = R(R(LD(q + 1) * ss) - off);
        b->sh = R(R(LD(q + 2) * ss) - off);
        C ew = R(R(LD(q + 3) * ss) - off), eh = R(R(LD(q + 4) * ss) - off);
        C rw = R(ew - b->sw), rh = R(eh - b->sh);
        if (!ps && !g->aligned) {       /* std::max(roi_width, 1): NaN stays */
            rw = rw < (C)1 ? (C)1 : rw;
            rh = rh < (C)1 ? (C)1 : rh;
        }
        b->bh = R(rh / fph);
        b->bw = R(rw / fpw);
        /* ceil(roi_height / pooled_height): the same quotient as bin_size_h */
        loom_status st = roi_grid((double)b->bh, g->sampling_ratio, k, &b->gh);
        if (st == LOOM_OK)
            st = roi_grid((double)b->bw, g->sampling_ratio, k, &b->gw);
        if (st != LOOM_OK)
            return st;
        int64_t cnt = b->gh * b->gw;
        if (!ps && cnt < 1)
            cnt = 1;                    /* roi_align: std::max(grid_h * grid_w, 1) */
        b->count = R((C)cnt);
        if (b->gh > j->max_gh)
            j->max_gh = b->gh;
        if (b->gw > j->max_gw)
            j->max_gw = b->gw;
    }
    return LOOM_OK;
}

/* Sample coordinates along one axis: bins x grid entries. */
static void FN(axis_table)(C start, C bin, int64_t bins, int64_t grid, int64_t size, FN(axis) *t)
{
    const C fg = R((C)grid);
    for (int64_t p = 0; p < bins; p++) {
        const C base = R(start + R(R((C)p) * bin));
        for (int64_t i = 0; i < grid; i++) {
            C v = R(base + R(R(R((C)((float)i + 0.5f)) * bin) / fg));
            FN(axis) *a = &t[p * grid + i];
            /* !(in range) so that NaN is out of range */
            a->valid = size > 0 && (double)v >= -1.0 && (double)v <= (double)size;
            if (!a->valid) {
                a->lo = a->hi = 0;
                a->l = a->h = 0;
                continue;
            }
            if (v <= 0)
                v = 0;
            int32_t lo = (int32_t)v, hi;
            if (lo >= size - 1) {
                hi = lo = (int32_t)(size - 1);
                v = R((C)lo);
            } else {
                hi = lo + 1;
            }
            a->lo = lo;
            a->hi = hi;
            a->l = R(v - R((C)lo));
            a->h = R((C)1 - a->l);
        }
    }
}

/* The samples of one bin; offsets are pixel indices times pstride, the
** pixel of (y, x) being y * w + x, or yi[y] * w + x when yi is given (the
** row cache: yi[y] places row y there). An out-of-range sample of
** roi_align reads pixel (0, 0) with weight 0, as torchvision's pre_calc (so
** a NaN there propagates): offset zero_off; drop_invalid leaves it out
** (ps_roi_align returns 0 for it, backward skips it). */
static int64_t FN(bin_samples)(const FN(axis) *ya, const FN(axis) *xa, int64_t gh, int64_t gw, int64_t w,
                               int64_t pstride, int drop_invalid, const int64_t *yi, int64_t zero_off, SAMPLE *s)
{
    int64_t n = 0;
    for (int64_t iy = 0; iy < gh; iy++)
        for (int64_t ix = 0; ix < gw; ix++) {
            const FN(axis) *y = &ya[iy], *x = &xa[ix];
            if (!(y->valid && x->valid)) {
                if (!drop_invalid)
                    s[n++] = (SAMPLE){ { zero_off, zero_off, zero_off, zero_off }, { 0, 0, 0, 0 } };
                continue;
            }
            const int64_t ylo = yi ? yi[y->lo] : y->lo, yhi = yi ? yi[y->hi] : y->hi;
            s[n].off[0] = (ylo * w + x->lo) * pstride;
            s[n].off[1] = (ylo * w + x->hi) * pstride;
            s[n].off[2] = (yhi * w + x->lo) * pstride;
            s[n].off[3] = (yhi * w + x->hi) * pstride;
            s[n].w[0] = R(y->h * x->h);
            s[n].w[1] = R(y->h * x->l);
            s[n].w[2] = R(y->l * x->h);
            s[n].w[3] = R(y->l * x->l);
            n++;
        }
    return n;
}

/* One bin over nc channels of the NCHW input: channel i at x + i * cstride. */
static void FN(sweep_direct)(const S *x, int64_t cstride, int64_t nc, const SAMPLE *s, int64_t ns, C count,
                             S *out, int64_t ostride)
{
    for (int64_t c = 0; c < nc; c++) {
        const S *p = x + c * cstride;
        C acc = 0;
        for (int64_t i = 0; i < ns; i++) {
            C t = R(R(s[i].w[0] * LD(p + s[i].off[0])) + R(s[i].w[1] * LD(p + s[i].off[1])));
            t = R(t + R(s[i].w[2] * LD(p + s[i].off[2])));
            t = R(t + R(s[i].w[3] * LD(p + s[i].off[3])));
            acc = R(acc + t);
        }
        out[c * ostride] = ST(R(acc / count));
    }
}

/* One bin over nc contiguous channels of the row cache (compute type);
** acc holds nc partial sums. */
static void FN(sweep_nhwc)(const C *x, int64_t nc, const SAMPLE *s, int64_t ns, C count, S *out,
                           int64_t ostride, C *acc)
{
#if WITH_AVX2
    if (roi_have_avx2()) {
        roi_sweep_nhwc_avx2(x, nc, s, ns, count, out, ostride);
        return;
    }
#endif
    for (int64_t c = 0; c < nc; c++)
        acc[c] = 0;
    for (int64_t i = 0; i < ns; i++) {
        const C *p0 = x + s[i].off[0], *p1 = x + s[i].off[1], *p2 = x + s[i].off[2], *p3 = x + s[i].off[3];
        const C w0 = s[i].w[0], w1 = s[i].w[1], w2 = s[i].w[2], w3 = s[i].w[3];
        for (int64_t c = 0; c < nc; c++) {
            C t = R(R(w0 * p0[c]) + R(w1 * p1[c]));
            t = R(t + R(w2 * p2[c]));
            t = R(t + R(w3 * p3[c]));
            acc[c] = R(acc[c] + t);
        }
    }
    for (int64_t c = 0; c < nc; c++)
        out[c * ostride] = ST(R(acc[c] / count));
}

/* ------------------------------------------ forward roi_align on row caches */

/* Channels per block of a cached row: the AVX2 sweep's 32-channel step. A
** block of a whole row is contiguous, so one block of a roi's pixels reads
** a few runs of consecutive cache lines. */
#define RC_CB 32
/* Map rows per band of the visiting order (roi_order.c), and the slack of
** the row cache over the tallest roi: the rois of one band, visited along
** it, start up to a band apart. */
#define RC_BAND 16
/* The samples of all bins of a roi are computed once when there are at
** most this many (a 7 x 7 output at sampling_ratio 2 has 196); then the
** blocks of channels are the outer loop, so that one block of the roi's
** pixels stays in L1/L2 over all bins. Else each bin's samples are
** computed once and swept over every block. */
#define RC_SAMPLES 1024
/* Bytes of row cache a thread may take beyond its share of an NHWC copy of
** the input. */
#define RC_SLOT_MAX (64.0 * 1024 * 1024)

/* Rows that the valid entries of one y table touch, ascending, into list;
** at[v] is set for every map row v between the first and the last of them
** (-1: untouched); *invalid is set when some entry is out of range.
** Returns their number. */
static int64_t FN(touched)(const FN(axis) *a, int64_t n, int32_t *list, int64_t *at, int *invalid)
{
    int32_t lo = INT32_MAX, hi = -1;
    for (int64_t i = 0; i < n; i++) {
        if (!a[i].valid) {
            *invalid = 1;
            continue;
        }
        lo = a[i].lo < lo ? a[i].lo : lo;
        hi = a[i].hi > hi ? a[i].hi : hi;
    }
    if (hi < 0)
        return 0;
    for (int32_t v = lo; v <= hi; v++)
        at[v] = -1;
    for (int64_t i = 0; i < n; i++)
        if (a[i].valid)
            at[a[i].lo] = at[a[i].hi] = 0;
    int64_t m = 0;
    for (int32_t v = lo; v <= hi; v++)
        if (at[v] == 0)
            list[m++] = v;
    return m;
}

/* Per-thread scratch of the align kernels, each part on a 64-byte
** boundary: y and x tables, the samples of one bin, the partial sums of a
** channel block, and for the forward on the row cache the touched rows,
** the place of each map row in the cache, the cache and its tags. */
typedef struct FN(align_slot_t) {
    FN(axis) *ya, *xa;
    SAMPLE *s;                  /* one bin's samples, or on the row cache up to RC_SAMPLES */
    C *acc;
    int32_t *ys;                /* touched rows */
    int64_t *yi;                /* per map row: its cache slot times the blocks per row */
    C *rows;                    /* cache_rows rows of nb blocks of w x RC_CB, then pixel (0, 0) */
    int64_t *tags;              /* per slot: image * h + row held, -1 none; [cache_rows]: image of pixel (0, 0) */
} FN(align_slot_t);

static size_t FN(align_slot_parts)(const roi_job *j, char *base, FN(align_slot_t) *sl)
{
    const roi_geom *g = &j->g;
    const int64_t cap = j->cache_rows, nb = (g->c + RC_CB - 1) / RC_CB, bin_s = j->max_gh * j->max_gw;
    const int64_t all_s = g->ph * g->pw * bin_s < RC_SAMPLES ? g->ph * g->pw * bin_s : RC_SAMPLES;
    const size_t sizes[] = {
        (size_t)(g->ph * j->max_gh + g->pw * j->max_gw) * sizeof(FN(axis)),
        (size_t)(cap > 0 && all_s > bin_s ? all_s : bin_s) * sizeof(SAMPLE),
        cap > 0 ? RC_CB * sizeof(C) : 0,
        cap > 0 ? (size_t)g->h * (sizeof(int32_t) + sizeof(int64_t)) : 0,
        cap > 0 ? (size_t)(cap + 1) * (size_t)(nb * g->w * RC_CB) * sizeof(C) : 0,
        cap > 0 ? (size_t)(cap + 1) * sizeof(int64_t) : 0,
    };
    size_t at[6], n = 0;
    for (int i = 0; i < 6; i++) {
        at[i] = n;
        n += (sizes[i] + 63) & ~(size_t)63;
    }
    if (base != NULL) {
        sl->ya = (FN(axis) *)(void *)(base + at[0]);
        sl->xa = sl->ya + g->ph * j->max_gh;
        sl->s = (SAMPLE *)(void *)(base + at[1]);
        sl->acc = (C *)(void *)(base + at[2]);
        sl->yi = (int64_t *)(void *)(base + at[3]);
        sl->ys = (int32_t *)(void *)(sl->yi + g->h);
        sl->rows = (C *)(void *)(base + at[4]);
        sl->tags = (int64_t *)(void *)(base + at[5]);
    }
    return n;
}

static FN(align_slot_t) FN(align_slot)(const roi_job *j, int32_t t)
{
    FN(align_slot_t) sl;
    FN(align_slot_parts)(j, j->thread_scratch + (size_t)t * j->slot_bytes, &sl);
    return sl;
}

/* Row y of image `in` (at its first channel) into cache slot d. */
static void FN(cache_row)(const S *in, int64_t c, int64_t hw, int64_t w, int64_t y, C *d)
{
#if WITH_AVX2
    if (roi_have_avx2()) {
        roi_nhwc_row_avx2(in + y * w, d, c, hw, w, RC_CB);
        return;
    }
#endif
    for (int64_t ch = 0; ch < c; ch++)
        for (int64_t x = 0; x < w; x++)
            d[(ch / RC_CB) * w * RC_CB + x * RC_CB + ch % RC_CB] = LD(in + ch * hw + y * w + x);
}

/* Forward roi_align / ps_roi_align of roi k straight on the NCHW input. */
static void FN(align_direct_roi)(const roi_job *j, int64_t k, const FN(align_slot_t) *sl)
{
    const roi_geom *g = &j->g;
    const FN(box) *b = &((const FN(box) *)j->boxes)[k];
    const int ps = g->kind == PS_ROI_ALIGN;
    const int64_t hw = g->h * g->w, nbins = g->ph * g->pw;
    const int64_t gh = b->gh > 0 ? b->gh : 0, gw = b->gw > 0 ? b->gw : 0;
    const S *x = (const S *)j->input + b->b * g->c * hw;
    FN(axis_table)(b->sh, b->bh, g->ph, gh, g->h, sl->ya);
    FN(axis_table)(b->sw, b->bw, g->pw, gw, g->w, sl->xa);
    for (int64_t bi = 0; bi < g->ph; bi++)
        for (int64_t bj = 0; bj < g->pw; bj++) {
            const int64_t bin = bi * g->pw + bj;
            S *o = (S *)j->output + k * g->c_out * nbins + bin;
            int64_t ns = FN(bin_samples)(sl->ya + bi * gh, sl->xa + bj * gw, gh, gw, g->w, 1, ps || hw == 0, NULL,
                                         0, sl->s);
            FN(sweep_direct)(ps ? x + bin * hw : x, ps ? nbins * hw : hw, g->c_out, sl->s, ns, b->count, o, nbins);
            if (j->map_out != NULL)
                for (int64_t c = 0; c < g->c_out; c++)
                    j->map_out[(k * g->c_out + c) * nbins + bin] = (int32_t)(c * nbins + bin);
        }
}

/* Forward roi_align of roi k on the thread's row cache: the rows its
** samples touch are transposed into the cache unless it holds them from an
** earlier roi, then every bin sweeps the blocks of channels. A roi whose
** rows span more than the cache runs on NCHW. */
static void FN(align_cached_roi)(const roi_job *j, int64_t k, const FN(align_slot_t) *sl)
{
    const roi_geom *g = &j->g;
    const FN(box) *b = &((const FN(box) *)j->boxes)[k];
    const int64_t hw = g->h * g->w, nbins = g->ph * g->pw, cap = j->cache_rows;
    const int64_t nb = (g->c + RC_CB - 1) / RC_CB, blk = g->w * RC_CB, row = nb * blk;
    const int64_t gh = b->gh > 0 ? b->gh : 0, gw = b->gw > 0 ? b->gw : 0;
    S *out = (S *)j->output + k * g->c * nbins;
    const S *in = (const S *)j->input + b->b * g->c * hw;
    FN(axis_table)(b->sh, b->bh, g->ph, gh, g->h, sl->ya);
    FN(axis_table)(b->sw, b->bw, g->pw, gw, g->w, sl->xa);
    if (gh > 0 && gw > 0) {
        int invalid = 0;
        const int64_t ny = FN(touched)(sl->ya, g->ph * gh, sl->ys, sl->yi, &invalid);
        if (ny > 0 && sl->ys[ny - 1] - sl->ys[0] >= cap) {
            FN(align_direct_roi)(j, k, sl);
            return;
        }
        for (int64_t i = 0; i < g->pw * gw; i++)
            invalid |= !sl->xa[i].valid;
        for (int64_t r = 0; r < ny; r++) {
            const int64_t y = sl->ys[r], slot = y % cap;
            sl->yi[y] = slot * nb;
            if (sl->tags[slot] != b->b * g->h + y) {
                sl->tags[slot] = b->b * g->h + y;
                FN(cache_row)(in, g->c, hw, g->w, y, sl->rows + slot * row);
            }
        }
        /* out-of-range samples read pixel (0, 0) with weight 0 */
        if (invalid && sl->tags[cap] != b->b) {
            sl->tags[cap] = b->b;
            for (int64_t c = 0; c < g->c; c++)
                sl->rows[cap * row + (c / RC_CB) * blk + c % RC_CB] = LD(in + c * hw);
        }
    }
    const int64_t ns = gh * gw, zero = cap * row;
    if (nbins * ns <= RC_SAMPLES) {
        for (int64_t bin = 0; bin < nbins; bin++)
            FN(bin_samples)(sl->ya + bin / g->pw * gh, sl->xa + bin % g->pw * gw, gh, gw, g->w, RC_CB, 0, sl->yi,
                            zero, sl->s + bin * ns);
        for (int64_t kb = 0; kb < nb; kb++) {
            const int64_t c0 = kb * RC_CB, nc = g->c - c0 < RC_CB ? g->c - c0 : RC_CB;
#if WITH_AVX2
            if (nc == RC_CB && roi_have_avx2()) {
                roi_sweep_bins_avx2(sl->rows + kb * blk, sl->s, nbins, ns, b->count, out + c0 * nbins, nbins);
                continue;
            }
#endif
            for (int64_t bin = 0; bin < nbins; bin++)
                FN(sweep_nhwc)(sl->rows + kb * blk, nc, sl->s + bin * ns, ns, b->count, out + c0 * nbins + bin,
                               nbins, sl->acc);
        }
        return;
    }
    for (int64_t bin = 0; bin < nbins; bin++) {
        FN(bin_samples)(sl->ya + bin / g->pw * gh, sl->xa + bin % g->pw * gw, gh, gw, g->w, RC_CB, 0, sl->yi,
                        zero, sl->s);
        for (int64_t kb = 0; kb < nb; kb++) {
            const int64_t c0 = kb * RC_CB, nc = g->c - c0 < RC_CB ? g->c - c0 : RC_CB;
            FN(sweep_nhwc)(sl->rows + kb * blk, nc, sl->s, ns, b->count, out + c0 * nbins + bin, nbins, sl->acc);
        }
    }
}

static void FN(align_fwd_rois)(void *user, int64_t begin, int64_t end, int32_t t)
{
    const roi_job *j = user;
    const FN(align_slot_t) sl = FN(align_slot)(j, t);
    for (int64_t i = begin; i < end; i++) {
        if (j->order != NULL)
            FN(align_cached_roi)(j, j->order[i].idx, &sl);
        else
            FN(align_direct_roi)(j, i, &sl);
    }
}

/* The per-roi boxes of the align kernels, in scratch. */
static loom_status FN(align_scratch_boxes)(roi_job *j)
{
    j->boxes = pk_host->scratch(j->ctx, (size_t)j->g.k * sizeof(FN(box)));
    return j->boxes == NULL ? LOOM_ENOMEM : FN(align_boxes)(j);
}

/* One scratch slot of slot_bytes per thread of the pool. */
static loom_status FN(scratch_slots)(roi_job *j, size_t slot_bytes)
{
    j->n_slots = j->ctx->n_threads > 0 ? j->ctx->n_threads : 1;
    j->slot_bytes = slot_bytes;
    j->thread_scratch = pk_host->scratch(j->ctx, j->slot_bytes * (size_t)j->n_slots);
    return j->thread_scratch == NULL ? LOOM_ENOMEM : LOOM_OK;
}

/* Whether forward roi_align runs on row caches, and then their size
** (j->cache_rows) and the visiting order (j->order). A row cache pays when
** the samples read the rows they touch densely enough to amortise their
** transposition (each touched row of each image costs its w pixels of
** channels, a sample four pixels of channels read one by one on NCHW).
** The cache holds the tallest roi's span of rows plus a band, within the
** memory of an NHWC copy of the input over all threads. */
static loom_status FN(align_plan)(roi_job *j)
{
    const roi_geom *g = &j->g;
    const FN(box) *bx = j->boxes;
    roi_key *keys = pk_host->scratch(j->ctx, (size_t)g->k * sizeof(roi_key));
    unsigned char *used = pk_host->scratch(j->ctx, (size_t)(g->n * g->h));
    FN(axis) *ya = pk_host->scratch(j->ctx, (size_t)(g->ph * j->max_gh + 1) * sizeof(FN(axis)));
    if (keys == NULL || used == NULL || ya == NULL)
        return LOOM_ENOMEM;
    memset(used, 0, (size_t)(g->n * g->h));
    double samples = 0;
    int64_t span = 0;
    for (int64_t k = 0; k < g->k; k++) {
        const FN(box) *b = &bx[k];
        const int64_t gh = b->gh > 0 ? b->gh : 0, gw = b->gw > 0 ? b->gw : 0;
        int64_t lo = 0;
        if (gh > 0 && gw > 0) {
            FN(axis_table)(b->sh, b->bh, g->ph, gh, g->h, ya);
            int64_t hi = -1;
            lo = g->h;
            for (int64_t i = 0; i < g->ph * gh; i++)
                if (ya[i].valid) {
                    lo = ya[i].lo < lo ? ya[i].lo : lo;
                    hi = ya[i].hi > hi ? ya[i].hi : hi;
                    used[b->b * g->h + ya[i].lo] = used[b->b * g->h + ya[i].hi] = 1;
                }
            span = hi - lo + 1 > span ? hi - lo + 1 : span;
            lo = hi < 0 ? 0 : lo;
            samples += (double)(gh * gw) * (double)(g->ph * g->pw);
        }
        double cx = (double)b->sw + 0.5 * (double)b->bw * (double)g->pw;
        cx = cx > 0 ? (cx < (double)g->w ? cx : (double)g->w) : 0;      /* clamped to the map, NaN to 0 */
        keys[k] = (roi_key){ b->b, lo / RC_BAND, (int64_t)cx, k };
    }
    double rows = 0;
    for (int64_t i = 0; i < g->n * g->h; i++)
        rows += used[i];
    if (samples * 16.0 < rows * (double)g->w)
        return LOOM_OK;
    /* the caches of all threads together take at most an NHWC copy of the
    ** input (what a transposition of the whole map takes) or RC_SLOT_MAX
    ** bytes per thread; a roi taller than the cache then runs on NCHW */
    const double slots = j->ctx->n_threads > 0 ? (double)j->ctx->n_threads : 1.0;
    const double row = (double)((g->c + RC_CB - 1) / RC_CB * RC_CB) * (double)g->w * (double)sizeof(C);
    const double copy = (double)(g->n * g->h) * (double)g->w * (double)g->c * (double)sizeof(C);
    const double fit = floor((copy > slots * RC_SLOT_MAX ? copy : slots * RC_SLOT_MAX) / (slots * row)) - 1;
    int64_t cap = span + RC_BAND < g->h ? span + RC_BAND : g->h;
    cap = (double)cap <= fit ? cap : (int64_t)fit;
    if (cap < 1)
        return LOOM_OK;
    j->cache_rows = cap;
    roi_visit_order(keys, g->k);
    j->order = keys;
    return LOOM_OK;
}

/* Forward roi_align runs on per-thread row caches (NHWC copies of the rows
** that the rois touch, so the channel loop is contiguous and each row is
** transposed about once, in the rois' visiting order), unless the rois
** read too little of their rows; ps_roi_align, whose bins each read other
** channels, and maps with one channel or no pixel run straight on NCHW. */
static loom_status FN(align_forward)(roi_job *j)
{
    const roi_geom *g = &j->g;
    loom_status st = FN(align_scratch_boxes)(j);
    if (st != LOOM_OK)
        return st;
    if (g->kind == ROI_ALIGN && g->h * g->w > 0 && g->c > 1 && (st = FN(align_plan)(j)) != LOOM_OK)
        return st;
    if ((st = FN(scratch_slots)(j, FN(align_slot_parts)(j, NULL, NULL))) != LOOM_OK)
        return st;
    for (int32_t t = 0; t < j->n_slots && j->cache_rows > 0; t++) {
        const FN(align_slot_t) sl = FN(align_slot)(j, t);
        for (int64_t i = 0; i <= j->cache_rows; i++)
            sl.tags[i] = -1;
    }
    return pk_host->parallel_for(j->ctx, g->k, 1, FN(align_fwd_rois), j);
}

/* Backward of roi_align / ps_roi_align over input channels [begin, end). */
static void FN(align_bwd_channels)(void *user, int64_t begin, int64_t end, int32_t t)
{
    roi_job *j = user;
    const roi_geom *g = &j->g;
    const FN(box) *bx = j->boxes;
    const int ps = g->kind == PS_ROI_ALIGN;
    const int64_t hw = g->h * g->w, nbins = g->ph * g->pw;
    const S *grad = j->input;
    S *gi = j->output;
    const FN(align_slot_t) sl = FN(align_slot)(j, t);
    FN(axis) *ya = sl.ya, *xa = sl.xa;
    SAMPLE *s = sl.s;
    for (int64_t k = 0; k < g->k; k++) {
        const FN(box) *b = &bx[k];
        const int64_t gh = b->gh > 0 ? b->gh : 0, gw = b->gw > 0 ? b->gw : 0;
        if (gh == 0 || gw == 0)
            continue;
        FN(axis_table)(b->sh, b->bh, g->ph, gh, g->h, ya);
        FN(axis_table)(b->sw, b->bw, g->pw, gw, g->w, xa);
        /* torchvision's count here is grid_h * grid_w, not max'ed with 1:
        ** the same as the forward's once the grid is not empty */
        const C count = b->count;
        for (int64_t co = 0; co < (ps ? g->c_out : 1); co++)
            for (int64_t bi = 0; bi < g->ph; bi++)
                for (int64_t bj = 0; bj < g->pw; bj++) {
                    const int64_t bin = bi * g->pw + bj;
                    int64_t c_lo = begin, c_hi = end;
                    if (ps) {
                        int64_t ci = j->map_in[(k * g->c_out + co) * nbins + bin];
                        if (ci < begin || ci >= end)
                            continue;
                        c_lo = ci;
                        c_hi = ci + 1;
                    }
                    int64_t ns = FN(bin_samples)(ya + bi * gh, xa + bj * gw, gh, gw, g->w, 1, 1, NULL, 0, s);
                    for (int64_t c = c_lo; c < c_hi; c++) {
                        const int64_t oc = ps ? co : c;
                        const C gv = LD(grad + (k * g->c_out + oc) * nbins + bin);
                        S *plane = gi + (b->b * g->c + c) * hw;
                        for (int64_t i = 0; i < ns; i++)
                            for (int q = 0; q < 4; q++) {
                                S *d = plane + s[i].off[q];
                                *d = ST(LD(d) + R(R(gv * s[i].w[q]) / count));
                            }
                    }
                }
    }
}

static loom_status FN(align_backward)(roi_job *j)
{
    loom_status st = FN(align_scratch_boxes)(j);
    if (st == LOOM_OK)
        st = FN(scratch_slots)(j, FN(align_slot_parts)(j, NULL, NULL));
    return st != LOOM_OK ? st : pk_host->parallel_for(j->ctx, j->g.c, 1, FN(align_bwd_channels), j);
}

#if WITH_POOL
/* -------------------------------------------------------------- roi_pool */

/* NHWC copy of the images that rois use: parallel over (image, row). */
static void FN(to_nhwc_rows)(void *user, int64_t begin, int64_t end, int32_t t)
{
    const roi_job *j = user;
    const roi_geom *g = &j->g;
    const S *in = j->input;
    C *out = j->nhwc;
    const unsigned char *used = j->used;
    (void)t;
    for (int64_t row = begin; row < end; row++) {
        const int64_t n = row / g->h, y = row % g->h;
        if (!used[n])
            continue;
#if WITH_AVX2
        if (roi_have_avx2()) {
            roi_nhwc_row_avx2(in + (n * g->c * g->h + y) * g->w, out + (n * g->h + y) * g->w * g->c, g->c,
                              g->h * g->w, g->w, g->c);
            continue;
        }
#endif
        for (int64_t c0 = 0; c0 < g->c; c0 += 16)
            for (int64_t x0 = 0; x0 < g->w; x0 += 16) {
                const int64_t c1 = c0 + 16 < g->c ? c0 + 16 : g->c, x1 = x0 + 16 < g->w ? x0 + 16 : g->w;
                for (int64_t x = x0; x < x1; x++) {
                    C *d = out + ((n * g->h + y) * g->w + x) * g->c;
                    for (int64_t c = c0; c < c1; c++)
                        d[c] = LD(in + ((n * g->c + c) * g->h + y) * g->w + x);
                }
            }
    }
}

/* Transpose the images flagged in used[N] into a new NHWC scratch copy. */
static loom_status FN(make_nhwc)(roi_job *j, const unsigned char *used)
{
    const roi_geom *g = &j->g;
    j->nhwc = pk_host->scratch(j->ctx, (size_t)(g->n * g->h * g->w * g->c) * sizeof(C));
    if (j->nhwc == NULL)
        return LOOM_ENOMEM;
    j->used = used;
    return pk_host->parallel_for(j->ctx, g->n * g->h, 1, FN(to_nhwc_rows), j);
}

/* used[N] flags of the images some roi reads, and how many there are. */
static unsigned char *FN(used_images)(roi_job *j, int64_t *n_used)
{
    const roi_geom *g = &j->g;
    const FN(box) *bx = j->boxes;
    unsigned char *used = pk_host->scratch(j->ctx, (size_t)g->n + 1);
    if (used == NULL)
        return NULL;
    memset(used, 0, (size_t)g->n + 1);
    *n_used = 0;
    for (int64_t k = 0; k < g->k; k++) {
        *n_used += !used[bx[k].b];
        used[bx[k].b] = 1;
    }
    return used;
}

/* C round() of a product, as an integer; saturated far beyond any map so
** that NaN and huge boxes cannot overflow (they pool nothing). */
static int64_t FN(round_i)(double v)
{
    v = round(v);
    if (!(v > -1e15))
        return -(int64_t)1e15;
    return v > 1e15 ? (int64_t)1e15 : (int64_t)v;
}

static int64_t FN(floor_i)(double v, int up)
{
    v = up ? ceil(v) : floor(v);
    if (!(v > -1e15))
        return -(int64_t)1e15;
    return v > 1e15 ? (int64_t)1e15 : (int64_t)v;
}

static void FN(pool_boxes)(roi_job *j)
{
    const roi_geom *g = &j->g;
    const S *r = j->rois;
    FN(box) *bx = j->boxes;
    const C ss = (C)g->spatial_scale;
    /* ps_roi_pool's backward rounds with roundf(), through float */
    const int via_float = g->kind == PS_ROI_POOL && g->backward;
    const int64_t plus = g->kind == ROI_POOL ? 1 : 0;    /* roi_pool's sizes are inclusive */
    for (int64_t k = 0; k < g->k; k++) {
        const S *q = r + k * 5;
        FN(box) *b = &bx[k];
        C v[4];
        for (int i = 0; i < 4; i++) {
            v[i] = LD(q + 1 + i) * ss;
            if (via_float)
                v[i] = (C)(float)v[i];
        }
        b->b = (int64_t)LD(q);
        b->rsw = FN(round_i)((double)v[0]);
        b->rsh = FN(round_i)((double)v[1]);
        int64_t rw = FN(round_i)((double)v[2]) - b->rsw + plus, rh = FN(round_i)((double)v[3]) - b->rsh + plus;
        rw = rw > 1 ? rw : 1;
        rh = rh > 1 ? rh : 1;
        b->bh = (C)rh / (C)g->ph;
        b->bw = (C)rw / (C)g->pw;
    }
}

/* Bin [start, end) along one axis, clipped to [0, lim]. */
static void FN(pool_range)(int64_t p, C bin, int64_t roi_start, int64_t lim, int64_t *s, int64_t *e)
{
    int64_t a = FN(floor_i)((double)((C)p * bin), 0) + roi_start;
    int64_t z = FN(floor_i)((double)((C)(p + 1) * bin), 1) + roi_start;
    a = a > 0 ? a : 0;                  /* std::min(std::max(v, 0), lim) */
    z = z > 0 ? z : 0;
    *s = a < lim ? a : lim;
    *e = z < lim ? z : lim;
}

/* One roi_pool bin over the nc channels of the NHWC copy; m and mi hold
** nc running maxima and their pixel indices. */
static void FN(maxpool_nhwc)(const C *x, int64_t nc, int64_t w, int64_t hs, int64_t he, int64_t ws, int64_t we,
                             S *out, int32_t *am, int64_t ostride, C *m, int32_t *mi)
{
#if WITH_AVX2
    if (roi_have_avx2()) {
        roi_maxpool_nhwc_avx2(x, nc, w, hs, he, ws, we, out, am, ostride);
        return;
    }
#endif
    const int empty = he <= hs || we <= ws;
    for (int64_t c = 0; c < nc; c++) {
        m[c] = empty ? (C)0 : (C)-FLT_MAX;
        mi[c] = -1;
    }
    for (int64_t y = hs; y < he; y++)
        for (int64_t px = ws; px < we; px++) {
            const C *row = x + (y * w + px) * nc;
            const int32_t pi = (int32_t)(y * w + px);
            for (int64_t c = 0; c < nc; c++)
                if (row[c] > m[c]) {
                    m[c] = row[c];
                    mi[c] = pi;
                }
        }
    for (int64_t c = 0; c < nc; c++) {
        out[c * ostride] = m[c];
        am[c * ostride] = mi[c];
    }
}

static void FN(pool_fwd_rois)(void *user, int64_t begin, int64_t end, int32_t t)
{
    roi_job *j = user;
    const roi_geom *g = &j->g;
    const FN(box) *bx = j->boxes;
    const int ps = g->kind == PS_ROI_POOL;
    const int64_t hw = g->h * g->w, nbins = g->ph * g->pw;
    /* ps_roi_pool's forward clips to [0, H - 1] (its backward to [0, H]) */
    const int64_t hl = ps ? g->h - 1 : g->h, wl = ps ? g->w - 1 : g->w;
    const S *in = j->input;
    S *out = j->output;
    C *run_max = (C *)(void *)(j->thread_scratch + (size_t)t * j->slot_bytes);
    int32_t *run_arg = (int32_t *)(void *)(run_max + g->c);
    for (int64_t k = begin; k < end; k++) {
        const FN(box) *b = &bx[k];
        for (int64_t bi = 0; bi < g->ph; bi++)
            for (int64_t bj = 0; bj < g->pw; bj++) {
                const int64_t bin = bi * g->pw + bj;
                int64_t hs, he, ws, we;
                FN(pool_range)(bi, b->bh, b->rsh, hl, &hs, &he);
                FN(pool_range)(bj, b->bw, b->rsw, wl, &ws, &we);
                const int empty = he <= hs || we <= ws;
                if (j->nhwc != NULL) {
                    const int64_t o = k * g->c * nbins + bin;
                    FN(maxpool_nhwc)((const C *)j->nhwc + b->b * hw * g->c, g->c, g->w, hs, he, ws, we, out + o,
                                     j->map_out + o, nbins, run_max, run_arg);
                    continue;
                }
                for (int64_t c = 0; c < g->c_out; c++) {
                    const int64_t idx = (k * g->c_out + c) * nbins + bin;
                    const int64_t ci = ps ? c * nbins + bin : c;
                    const S *p = in + (b->b * g->c + ci) * hw;
                    if (ps) {
                        C sum = 0;
                        for (int64_t y = hs; y < he; y++)
                            for (int64_t x = ws; x < we; x++)
                                sum += p[y * g->w + x];
                        out[idx] = empty ? (C)0 : sum / (C)((he - hs) * (we - ws));
                        j->map_out[idx] = (int32_t)ci;
                    } else {
                        C m = empty ? (C)0 : (C)-FLT_MAX;
                        int32_t mi = -1;
                        for (int64_t y = hs; y < he; y++)
                            for (int64_t x = ws; x < we; x++)
                                if (p[y * g->w + x] > m) {
                                    m = p[y * g->w + x];
                                    mi = (int32_t)(y * g->w + x);
                                }
                        out[idx] = m;
                        j->map_out[idx] = mi;
                    }
                }
            }
    }
}

/* Backward of roi_pool / ps_roi_pool over input channels [begin, end). */
static void FN(pool_bwd_channels)(void *user, int64_t begin, int64_t end, int32_t t)
{
    roi_job *j = user;
    const roi_geom *g = &j->g;
    const FN(box) *bx = j->boxes;
    const int64_t hw = g->h * g->w, nbins = g->ph * g->pw;
    const S *grad = j->input;
    S *gi = j->output;
    (void)t;
    for (int64_t k = 0; k < g->k; k++) {
        const FN(box) *b = &bx[k];
        if (g->kind == ROI_POOL) {
            for (int64_t c = begin; c < end; c++) {
                S *plane = gi + (b->b * g->c + c) * hw;
                for (int64_t bin = 0; bin < nbins; bin++) {
                    const int64_t idx = (k * g->c + c) * nbins + bin;
                    if (j->map_in[idx] != -1)
                        plane[j->map_in[idx]] += grad[idx];
                }
            }
            continue;
        }
        for (int64_t bi = 0; bi < g->ph; bi++)
            for (int64_t bj = 0; bj < g->pw; bj++) {
                const int64_t bin = bi * g->pw + bj;
                int64_t hs, he, ws, we;
                FN(pool_range)(bi, b->bh, b->rsh, g->h, &hs, &he);
                FN(pool_range)(bj, b->bw, b->rsw, g->w, &ws, &we);
                const int empty = he <= hs || we <= ws;
                for (int64_t co = 0; co < g->c_out; co++) {
                    const int64_t idx = (k * g->c_out + co) * nbins + bin;
                    const int64_t ci = j->map_in[idx];
                    if (ci < begin || ci >= end)
                        continue;
                    S *plane = gi + (b->b * g->c + ci) * hw;
                    const C d = empty ? (C)0 : grad[idx] / (C)((he - hs) * (we - ws));
                    for (int64_t y = hs; y < he; y++)
                        for (int64_t x = ws; x < we; x++)
                            plane[y * g->w + x] += d;
                }
            }
    }
}

static loom_status FN(pool)(roi_job *j)
{
    const roi_geom *g = &j->g;
    j->boxes = pk_host->scratch(j->ctx, (size_t)g->k * sizeof(FN(box)));
    if (j->boxes == NULL)
        return LOOM_ENOMEM;
    FN(pool_boxes)(j);
    if (g->backward)
        return pk_host->parallel_for(j->ctx, g->c, 1, FN(pool_bwd_channels), j);
    /* roi_pool reads every pixel of its rois once per channel: an NHWC
    ** copy pays when the rois cover the used maps a few times over, and
    ** turns the channel loop into contiguous vector maxima */
    const int64_t hw = g->h * g->w;
    loom_status st;
    if (g->kind == ROI_POOL && hw > 0 && g->c > 1) {
        const FN(box) *bx = j->boxes;
        double area = 0;
        int64_t n_used;
        unsigned char *used = FN(used_images)(j, &n_used);
        if (used == NULL)
            return LOOM_ENOMEM;
        for (int64_t k = 0; k < g->k; k++) {
            double rh = (double)bx[k].bh * (double)g->ph, rw = (double)bx[k].bw * (double)g->pw;
            area += (rh < (double)g->h ? rh : (double)g->h) * (rw < (double)g->w ? rw : (double)g->w);
        }
        if (area >= 2.0 * (double)n_used * (double)hw && (st = FN(make_nhwc)(j, used)) != LOOM_OK)
            return st;
    }
    if ((st = FN(scratch_slots)(j, ((size_t)g->c * (sizeof(C) + sizeof(int32_t)) + 63) & ~(size_t)63)) != LOOM_OK)
        return st;
    return pk_host->parallel_for(j->ctx, g->k, 1, FN(pool_fwd_rois), j);
}
#endif /* WITH_POOL */

loom_status FN(roi_cpu)(roi_job *j)
{
    const roi_geom *g = &j->g;
    if (g->kind == ROI_ALIGN || g->kind == PS_ROI_ALIGN)
        return g->backward ? FN(align_backward)(j) : FN(align_forward)(j);
#if WITH_POOL
    return FN(pool)(j);
#else
    return pk_host->fail(LOOM_EINTERNAL, "no %s kernel for this dtype", g->kind == ROI_POOL ? "roi_pool"
                                                                                                : "ps_roi_pool");
#endif
}

#undef FN
#undef PK_SFX
#undef S
#undef C
#undef LD
#undef ST
#undef R
#undef SAMPLE
#undef WITH_POOL
#undef WITH_AVX2
#undef RC_CB
#undef RC_BAND
#undef RC_SAMPLES
#undef RC_SLOT_MAX
