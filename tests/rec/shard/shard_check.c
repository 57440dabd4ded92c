/* SPDX-License-Identifier: BSD-3-Clause */
/*
** shard_check.c - one rank of the sharded collection's checks, run under
** mpirun by mpi_run.sh (tests/rec/shard/meson.build):
**
**   shard_check --case tw|rw|cw|twrw|dp|mixed|planned [--data random|dyadic]
**               [--optimizer sgd|rowwise_adagrad] [--weighted] [--steps N]
**               [--exact all|non-rw] [--fault plan|die|stall] [--vbe] [--device cuda]
**               [--kernels fused|mixed]
**   shard_check --case refusals
**
** Every rank builds the same tables (from a seeded generator, in memory),
** the same plan for the case (planned: the one rec.plan, the planner,
** makes for them) and the same global batches of W * B samples;
** it creates rec.sharded_embedding_bag_collection over the plan and, as
** the reference, rec.fused_embedding_bag_collection (unsharded, the same
** tables and optimizer) that sees the whole global batch. Each step, the
** sharded forward of this rank's B samples must equal the reference's rows
** of them, then both take a backward step on the same gradient.
**
** Exactness: the first forward is compared bit for bit (--exact all), or
** bit for bit except the row-wise tables (--exact non-rw): a row-wise bag
** is summed as partial sums per shard, then across shards (torchrec's
** reduce-scatter), another order of the same float additions. On dyadic
** data (weights k/64, per-sample weights k/8, so every partial sum is
** exact in f32) every sharding type is bit-exact; on random data the
** row-wise tables are within 1e-6. After training steps the tolerance is
** |got - want| <= 1e-6 (+ 1e-6 relative): fbgemm's backward sums a row's
** gradients in another order when its bags come from a shard's batch.
**
** --vbe: every rank's KJT is VBE (stride_per_key_per_rank [F, 1] i32,
** 1..B bags of every feature but f0, inverse_indices [F, B]) and the
** reference is the unsharded collection on the global VBE KJT
** (stride_per_key_per_rank [F, W], inverse_indices [F, W * B]): the same
** exactness as above (a bag's pooled row is one sum either way, expanded
** after pooling here, before it in the unsharded collection); the training
** steps stay within 1e-6 (a bag's gradient is the sum of its samples' before
** fbgemm's backward adds it to the rows, another order of the same sums).
**
** --device cuda: each forward runs again with the KJT on this rank's GPU
** (rec-mpi-cuda.so: NCCL collectives, fbgemm.tbe's cuda kernel) and must
** equal the cpu kernel's output (bit for bit but for row-wise columns:
** within 1e-6, NCCL's reduce-scatter order); no training steps. Every rank
** prints "skipped" (mpi_run.sh: exit 77) when the machine has fewer GPUs
** than ranks.
**
** --kernels mixed: the odd sharded tables are fused_uvm_caching (load
** factor 0.5), the others fused, so a rank may hold shards of both kernels
** and look them up on two local TBEs (one per kernel, shard_groups.c); the
** checks are the same (the cache changes no bit).
**
** The rank and the world size come from OpenMPI's environment
** (OMPI_COMM_WORLD_RANK, _SIZE): the program itself does not call MPI, the
** pack initialises it. Faults: --fault plan gives the last rank a plan
** with table t0 on another rank (setup must refuse it on every rank, naming
** the mismatch: the program then exits 0 on each); --fault die makes the
** last rank exit (status 3, without MPI_Finalize) before the forward of
** step 1, and --fault stall makes it sleep there instead (alive, taking
** no part): the others must fail, not hang (mpi_run.sh checks the time);
** with stall, by their bounded wait (timeout_s 5). --case refusals: bad
** plans, optimizer and weights at create, bad inputs at a call, each
** refused on every rank at once, the collection usable afterwards.
*/
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loom/loom.h"
#include "tu_env.h"
#include "shard_test.h"

#define SHARDED "rec.sharded_embedding_bag_collection"
#define FUSED "rec.fused_embedding_bag_collection"
#define T 4
#define B 6              /* samples per rank */

static const int64_t E[T] = { 37, 50, 24, 41 };
static const int64_t DIM[T] = { 8, 12, 16, 4 };
static const char *const NAMES[T] = { "t0", "t1", "t2", "t3" };
static const char *const FEATURES = "f0|f1,f2,f3,f4";
static const int FEATURE_TABLE[] = { 0, 0, 1, 2, 3 };
#define F 5

/* ------------------------------------------------------------- the plan */

/* --case planned: the plan rec.plan (the planner) makes for these tables on
** this world (a cpu topology, B samples per rank), the same on every rank. */
static void planned_plan(void)
{
    char cfg[2048];
    snprintf(cfg, sizeof cfg,
             "{\"batch_size\":%d,\"topology\":{\"world_size\":%d,\"local_world_size\":%d,"
             "\"compute_device\":\"cpu\",\"ddr_cap\":1073741824},\"tables\":["
             "{\"name\":\"t0\",\"num_embeddings\":37,\"embedding_dim\":8,\"feature_names\":[\"f0\",\"f1\"],"
             "\"pooling_factor\":2.0},"
             "{\"name\":\"t1\",\"num_embeddings\":50,\"embedding_dim\":12,\"feature_names\":[\"f2\"],"
             "\"pooling_factor\":2.0,\"sharding_types\":[\"row_wise\"]},"
             "{\"name\":\"t2\",\"num_embeddings\":24,\"embedding_dim\":16,\"feature_names\":[\"f3\"],"
             "\"pooling_factor\":2.0},"
             "{\"name\":\"t3\",\"num_embeddings\":41,\"embedding_dim\":4,\"feature_names\":[\"f4\"],"
             "\"pooling_factor\":2.0,\"sharding_types\":[\"data_parallel\"]}]}",
             B * world, world, world);
    int64_t shape[1] = { (int64_t)strlen(cfg) };
    loom_tensor *tc = NULL, *out[1] = { NULL };
    if (loom_tensor_wrap(&tc, cfg, LOOM_DTYPE_U8, 1, shape, NULL, NULL) != LOOM_OK)
        die_loom("loom_tensor_wrap");
    const loom_tensor *in[1] = { tc };
    if (loom_run("rec.plan", in, 1, NULL, out, 1, NULL) != LOOM_OK)
        die_loom("rec.plan");
    const int64_t n = out[0]->shape[0];
    CHECK(n > 0 && (size_t)n < sizeof plan_text, "rec.plan returned %lld bytes", (long long)n);
    memcpy(plan_text, out[0]->data, (size_t)n);
    plan_text[n] = '\0';
    loom_tensor_free(out[0]);
    loom_tensor_free(tc);
}

/* type of table t in the case */
static int mixed_kernels;   /* --kernels mixed */

static const char *table_type(const char *c, int t)
{
    if (strcmp(c, "mixed") == 0) {
        static const char *const m[T] = { "table_wise", "row_wise", "column_wise", "data_parallel" };
        return world >= 4 && t == 1 ? "table_row_wise" : m[t];
    }
    if (strcmp(c, "tw") == 0) return "table_wise";
    if (strcmp(c, "rw") == 0) return "row_wise";
    if (strcmp(c, "cw") == 0) return "column_wise";
    if (strcmp(c, "twrw") == 0) return "table_row_wise";
    if (strcmp(c, "dp") == 0) return "data_parallel";
    if (strcmp(c, "planned") == 0) {
        /* the plan's choice for table t */
        char key[32];
        snprintf(key, sizeof key, "\"name\":\"%s\"", NAMES[t]);
        const char *at = strstr(plan_text, key), *ty = at ? strstr(at, "\"sharding_type\":\"") : NULL;
        CHECK(ty != NULL, "no sharding_type of %s in the plan", NAMES[t]);
        static const char *const types[] = { "table_row_wise", "table_wise", "row_wise", "column_wise",
                                             "data_parallel" };
        for (int i = 0; i < 5; i++)
            if (strncmp(ty + 17, types[i], strlen(types[i])) == 0 && ty[17 + strlen(types[i])] == '"')
                return types[i];
        CHECK(0, "the plan's sharding_type of %s is unknown", NAMES[t]);
    }
    fprintf(stderr, "unknown case %s\n", c);
    exit(2);
}

static void shard(int first, int64_t rank_of, int64_t r0, int64_t c0, int64_t rows, int64_t cols)
{
    put("%s{\"rank\":%lld,\"offsets\":[%lld,%lld],\"sizes\":[%lld,%lld]}", first ? "" : ",", (long long)rank_of,
        (long long)r0, (long long)c0, (long long)rows, (long long)cols);
}

/* Row shards as torchrec cuts them: ceil(E / n) rows each, the last ones smaller (or empty). */
static void row_shards(int t, const int *ranks, int n)
{
    const int64_t block = (E[t] + n - 1) / n;
    put("\"ranks\":[");
    for (int i = 0; i < n; i++)
        put("%s%d", i ? "," : "", ranks[i]);
    put("],\"shards\":[");
    for (int i = 0; i < n; i++) {
        int64_t r0 = block * i < E[t] ? block * i : E[t];
        int64_t r1 = block * (i + 1) < E[t] ? block * (i + 1) : E[t];
        shard(i == 0, ranks[i], r0, 0, r1 - r0, DIM[t]);
    }
    put("]");
}

static void build_plan(const char *c, int lie)
{
    plan_text[0] = '\0';
    put("{\"format\":\"loom.rec.plan/1\",\"world_size\":%d,\"tables\":[", world);
    for (int t = 0; t < T; t++) {
        const char *ty = table_type(c, t);
        /* --kernels mixed: the odd sharded tables cached, so ranks hold shards of both kernels */
        const int cached = mixed_kernels && t % 2 == 1 && strcmp(ty, "data_parallel") != 0;
        put("%s{\"name\":\"%s\",\"num_embeddings\":%lld,\"embedding_dim\":%lld,\"sharding_type\":\"%s\","
            "\"compute_kernel\":\"%s\",", t ? "," : "", NAMES[t], (long long)E[t], (long long)DIM[t], ty,
            strcmp(ty, "data_parallel") == 0 ? "dense" : cached ? "fused_uvm_caching" : "fused");
        if (cached)
            put("\"cache_load_factor\":0.5,");
        int ranks[16];
        if (strcmp(ty, "table_wise") == 0) {
            int r = (t + (lie && t == 0)) % world;
            put("\"ranks\":[%d],\"shards\":[", r);
            shard(1, r, 0, 0, E[t], DIM[t]);
            put("]");
        } else if (strcmp(ty, "row_wise") == 0) {
            for (int i = 0; i < world; i++)
                ranks[i] = i;
            row_shards(t, ranks, world);
        } else if (strcmp(ty, "table_row_wise") == 0) {
            /* hosts of two ranks: the table on host t % (world / 2) */
            const int hosts = world / 2 > 0 ? world / 2 : 1, h = t % hosts;
            const int n = world >= 2 ? 2 : 1;
            for (int i = 0; i < n; i++)
                ranks[i] = h * n + i;
            row_shards(t, ranks, n);
        } else if (strcmp(ty, "column_wise") == 0) {
            const int64_t w = 4, n = DIM[t] / w;
            put("\"ranks\":[");
            for (int64_t i = 0; i < n; i++)
                put("%s%lld", i ? "," : "", (long long)((t + i) % world));
            put("],\"shards\":[");
            for (int64_t i = 0; i < n; i++)
                shard(i == 0, (t + i) % world, 0, i * w, E[t], w);
            put("]");
        } else {
            put("\"ranks\":[");
            for (int i = 0; i < world; i++)
                put("%s%d", i ? "," : "", i);
            put("],\"shards\":[]");
        }
        put("}");
    }
    put("]}");
}

/* ------------------------------------------------------- data and batches */

static int dyadic;

static float value(void) { return dyadic ? (float)((int)(next_u32() % 129) - 64) / 64.0f : uniform(); }

/* The global batch of every rank's samples. With --vbe each rank q has
** S[q][f] bags of feature f (its deduplicated samples, 1..B; feature 0
** keeps all B) and inverse [q][f][b] from its B samples to them: the
** global KJT (the reference's) has stride_per_key_per_rank [F, W] = S and
** inverse_indices [F, W * B] pointing into key f's lengths. Without VBE,
** S = B and there are no inverse indices. Lengths are key-major, then
** rank, then bag. */
typedef struct batch {
    int64_t S[F][16];    /* [f][q] */
    int64_t *inverse;    /* [W][F][B] local, or NULL */
    int64_t *lengths;    /* [L], L = sum S */
    int64_t *values;     /* global, feature-major */
    float *weights;
    int64_t n, L;
    int64_t *start;      /* [L + 1] */
    int64_t lopk[F + 1]; /* key f's lengths from lopk[f] */
} batch;

static int vbe;

/* the first global bag of feature f of rank q */
static int64_t bag0(const batch *b, int f, int q)
{
    int64_t at = b->lopk[f];
    for (int r = 0; r < q; r++)
        at += b->S[f][r];
    return at;
}

static void make_batch(batch *b, int step)
{
    rng_state = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(step + 1) * 7919;
    b->inverse = NULL;
    b->L = 0;
    for (int f = 0; f < F; f++) {
        b->lopk[f] = b->L;
        for (int q = 0; q < world; q++) {
            b->S[f][q] = vbe && f > 0 ? 1 + next_u32() % B : B;
            b->L += b->S[f][q];
        }
    }
    b->lopk[F] = b->L;
    if (vbe) {
        b->inverse = malloc(sizeof(int64_t) * world * F * B);
        for (int q = 0; q < world; q++)
            for (int f = 0; f < F; f++)
                for (int s = 0; s < B; s++)      /* every bag used, then repeats */
                    b->inverse[(q * F + f) * B + s] = s < b->S[f][q] ? s : next_u32() % b->S[f][q];
    }
    b->lengths = malloc(sizeof(int64_t) * b->L);
    b->start = malloc(sizeof(int64_t) * (b->L + 1));
    b->start[0] = 0;
    for (int64_t i = 0; i < b->L; i++) {
        b->lengths[i] = next_u32() % 5;     /* 0..4 ids, empty bags too */
        b->start[i + 1] = b->start[i] + b->lengths[i];
    }
    b->n = b->start[b->L];
    b->values = malloc(sizeof(int64_t) * (b->n + 1));
    b->weights = malloc(sizeof(float) * (b->n + 1));
    for (int f = 0; f < F; f++)
        for (int64_t i = b->start[b->lopk[f]]; i < b->start[b->lopk[f + 1]]; i++) {
            b->values[i] = next_u32() % E[FEATURE_TABLE[f]];
            b->weights[i] = (float)(1 + next_u32() % 16) / 8.0f;
        }
}

static void free_batch(batch *b)
{
    free(b->inverse);
    free(b->lengths);
    free(b->values);
    free(b->weights);
    free(b->start);
}

/* This rank's part: its bags of every feature (samples rank * B .. rank * B + B - 1 without VBE). */
static void local_part(const batch *g, int64_t **lens, int64_t **vals, float **wts, int64_t *nl, int64_t *n)
{
    *lens = malloc(sizeof(int64_t) * (g->L + 1));
    *vals = malloc(sizeof(int64_t) * (g->n + 1));
    *wts = malloc(sizeof(float) * (g->n + 1));
    *n = *nl = 0;
    for (int f = 0; f < F; f++)
        for (int64_t s = 0; s < g->S[f][rank]; s++) {
            const int64_t gi = bag0(g, f, rank) + s;
            (*lens)[(*nl)++] = g->lengths[gi];
            for (int64_t i = g->start[gi]; i < g->start[gi + 1]; i++) {
                (*wts)[*n] = g->weights[i];
                (*vals)[(*n)++] = g->values[i];
            }
        }
}

static loom_tensor *wrap(void *data, loom_dtype dt, int32_t ndim, const int64_t *shape)
{
    loom_tensor *t = NULL;
    if (loom_tensor_wrap(&t, data, dt, ndim, shape, NULL, NULL) != LOOM_OK)
        die_loom("loom_tensor_wrap");
    return t;
}

/* ------------------------------------------------------------- objects */

static void set(loom_attrs *a, const char *cls, const char *name, const char *v)
{
    if (loom_attrs_parse(a, cls, name, v) != LOOM_OK)
        die_loom(name);
}

static loom_attrs *table_attrs(const char *cls, const char *opt, int weighted)
{
    loom_attrs *a = NULL;
    if (loom_attrs_new(&a) != LOOM_OK)
        die_loom("loom_attrs_new");
    set(a, cls, "tables", "t0,t1,t2,t3");
    set(a, cls, "num_embeddings", "37,50,24,41");
    set(a, cls, "embedding_dim", "8,12,16,4");
    set(a, cls, "feature_names", FEATURES);
    set(a, cls, "is_weighted", weighted ? "true" : "false");
    set(a, cls, "optimizer", opt);
    set(a, cls, "lr", "0.05");
    set(a, cls, "eps", "0.001");
    return a;
}

/* ------------------------------------------------------------- refusals */

/* st failed on every rank; bad_rank's message has mine, the others' theirs. */
static void expect_refused(loom_status st, int bad_rank, const char *mine, const char *theirs, const char *what)
{
    CHECK(st != LOOM_OK, "%s: accepted", what);
    const char *want = bad_rank < 0 || rank == bad_rank ? mine : theirs;
    CHECK(strstr(loom_last_error(), want) != NULL, "%s: the message lacks \"%s\": %s", what, want, loom_last_error());
}

static loom_status create_with(const char *plan, const char *opt, int n_tensors, const loom_named_tensor *named,
                             loom_object **out)
{
    loom_object_options oo = LOOM_OBJECT_OPTIONS_INIT;
    oo.n_tensors = n_tensors;
    oo.tensors = named;
    loom_attrs *a = table_attrs(SHARDED, opt, 0);
    set(a, SHARDED, "plan", plan);
    set(a, SHARDED, "timeout_s", "30");
    *out = NULL;
    loom_status st = loom_object_create_ex(out, SHARDED, a, &oo);
    loom_attrs_free(a);
    return st;
}

/* A call of this rank: every sample has one id (0, or bad_id at value 0), nb samples, n_lengths lengths. */
static loom_status call_with(loom_object *o, int64_t nb, int64_t n_lengths, int64_t bad_id, int64_t grad_cols)
{
    const int64_t D = 8 + 8 + 12 + 16 + 4, n = F * nb;
    int64_t *vals = calloc((size_t)n + 1, sizeof *vals), *lens = calloc((size_t)n_lengths + 1, sizeof *lens);
    float *grad = calloc((size_t)(nb * (D + 1)) + 1, sizeof *grad);
    for (int64_t i = 0; i < n_lengths; i++)
        lens[i] = i < n;
    vals[0] = bad_id;
    int64_t sv[1] = { n }, sl[1] = { n_lengths }, sg[2] = { nb, grad_cols };
    loom_tensor *tv = wrap(vals, LOOM_DTYPE_I64, 1, sv), *tl = wrap(lens, LOOM_DTYPE_I64, 1, sl);
    loom_tensor *tg = wrap(grad, LOOM_DTYPE_F32, 2, sg);
    loom_call_options co = LOOM_CALL_OPTIONS_INIT;
    co.object = o;
    loom_status st;
    if (grad_cols > 0) {
        const loom_tensor *in[4] = { tv, tl, NULL, tg };
        st = loom_run(SHARDED "_backward", in, 4, NULL, NULL, 0, &co);
    } else {
        const loom_tensor *in[3] = { tv, tl, NULL };
        loom_tensor *out = NULL;
        st = loom_run(SHARDED, in, 3, NULL, &out, 1, &co);
        loom_tensor_free(out);
    }
    loom_tensor_free(tv);
    loom_tensor_free(tl);
    loom_tensor_free(tg);
    free(vals);
    free(lens);
    free(grad);
    return st;
}

/* A VBE call of this rank: 2 bags of every feature (one id 0 each), B samples alternating between them;
** bad 1: feature 2's stride is 3 (the strides sum past the lengths), bad 2: inverse_indices[1][3] is 2
** (feature 1 has 2 bags); with_grad: the backward. */
static loom_status vbe_call(loom_object *o, int bad, int with_grad)
{
    const int64_t D = 8 + 8 + 12 + 16 + 4;
    int64_t vals[2 * F] = { 0 }, lens[2 * F], inv[F * B];
    int32_t sp[F];
    float grad[B * (8 + 8 + 12 + 16 + 4)] = { 0 };
    for (int f = 0; f < F; f++) {
        sp[f] = bad == 1 && f == 2 ? 3 : 2;
        lens[2 * f] = lens[2 * f + 1] = 1;
        for (int b = 0; b < B; b++)
            inv[f * B + b] = b % 2;
    }
    if (bad == 2)
        inv[1 * B + 3] = 2;
    int64_t sv[1] = { 2 * F }, ssp[2] = { F, 1 }, sinv[2] = { F, B }, sg[2] = { B, D };
    loom_tensor *tv = wrap(vals, LOOM_DTYPE_I64, 1, sv), *tl = wrap(lens, LOOM_DTYPE_I64, 1, sv);
    loom_tensor *tsp = wrap(sp, LOOM_DTYPE_I32, 2, ssp), *tinv = wrap(inv, LOOM_DTYPE_I64, 2, sinv);
    loom_tensor *tg = wrap(grad, LOOM_DTYPE_F32, 2, sg);
    loom_call_options co = LOOM_CALL_OPTIONS_INIT;
    co.object = o;
    loom_status st;
    if (with_grad) {
        const loom_tensor *in[6] = { tv, tl, NULL, tg, tsp, tinv };
        st = loom_run(SHARDED "_backward", in, 6, NULL, NULL, 0, &co);
    } else {
        const loom_tensor *in[5] = { tv, tl, NULL, tsp, tinv };
        loom_tensor *out = NULL;
        st = loom_run(SHARDED, in, 5, NULL, &out, 1, &co);
        CHECK(st != LOOM_OK || (out->shape[0] == B && out->shape[1] == D), "a VBE forward gave [%lld, %lld]",
              (long long)out->shape[0], (long long)out->shape[1]);
        loom_tensor_free(out);
    }
    loom_tensor_free(tv);
    loom_tensor_free(tl);
    loom_tensor_free(tsp);
    loom_tensor_free(tinv);
    loom_tensor_free(tg);
    return st;
}

/* Bad arguments at create and bad inputs at a call: refused on every rank at
** once (the bad rank naming what and where, the others naming the bad
** rank), and the collection stays usable after a refused call. */
static void run_refusals(int n_named, const loom_named_tensor *named)
{
    loom_object *o = NULL;
    const int last = world - 1;
    expect_refused(create_with("{oops", "sgd", n_named, named, &o), -1, "not valid JSON", NULL, "a plan that is not JSON");
    build_plan("mixed", 0);
    char *p3 = strdup(plan_text);
    memcpy(strstr(p3, "\"world_size\":") + 13, "9", 1);
    expect_refused(create_with(p3, "sgd", n_named, named, &o), -1, "'world_size' is 9", NULL, "world_size");
    char *pn = strdup(plan_text);
    memcpy(strstr(pn, "\"t1\""), "\"tx\"", 4);
    expect_refused(create_with(pn, "sgd", n_named, named, &o), -1, "field 'name' is 'tx'", NULL, "a table's name");
    free(p3);
    free(pn);
    expect_refused(create_with(plan_text, "adam", n_named, named, &o), -1, "not sgd or rowwise_adagrad", NULL,
                   "optimizer");
    expect_refused(create_with(plan_text, "sgd", rank == last ? n_named - 1 : n_named, named, &o), last,
                   "has no tensor 'embedding_bags.t3.weight'", "refused its arguments at setup", "a missing table");
    if (create_with(plan_text, "sgd", n_named, named, &o) != LOOM_OK)
        die_loom("creating " SHARDED);
    const int64_t D = 8 + 8 + 12 + 16 + 4;
    expect_refused(call_with(o, B, rank == last ? F * B + 1 : F * B, 0, 0), last, "not F * B", "refused its input",
                   "lengths of another size");
    expect_refused(call_with(o, B, F * B, rank == 0 ? E[0] : 0, 0), 0, "is not a row of its 37",
                   "rank 0 refused its input", "an id outside its table");
    expect_refused(call_with(o, rank == last ? B - 1 : B, rank == last ? F * (B - 1) : F * B, 0, 0), -1,
                   "has a batch of", NULL, "batches of other sizes");
    expect_refused(call_with(o, B, F * B, 0, rank == last ? D - 1 : D), last, "'grad' is", "refused its input",
                   "a gradient of the wrong shape");
    expect_refused(vbe_call(o, rank == last ? 1 : 0, 0), last, "'stride_per_key_per_rank' sums to 11 bags",
                   "refused its input", "VBE strides that do not match the lengths");
    expect_refused(vbe_call(o, rank == 0 ? 2 : 0, 1), 0, "'inverse_indices'[1][3] is 2: feature 1 has 2 bags",
                   "rank 0 refused its input", "VBE inverse indices out of range");
    CHECK(vbe_call(o, 0, 0) == LOOM_OK, "a good VBE call after the refusals: %s", loom_last_error());
    CHECK(vbe_call(o, 0, 1) == LOOM_OK, "a good VBE backward after the refusals: %s", loom_last_error());
    CHECK(call_with(o, B, F * B, 0, 0) == LOOM_OK, "a good call after the refusals: %s", loom_last_error());
    CHECK(call_with(o, B, F * B, 0, D) == LOOM_OK, "a good backward after the refusals: %s", loom_last_error());
    loom_object_free(o);
    printf("rank %d of %d: refusals: every bad argument and input refused on every rank\n", rank, world);
}

/* --device cuda: this rank's GPU, the CUDA device of its local rank; 0 when
** the machine has fewer GPUs than ranks (every rank decides the same). */
static int cuda_device(loom_dl_device *out)
{
    const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK"), *ls = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const int local = lr ? atoi(lr) : rank, local_size = ls ? atoi(ls) : world;
    int n = 0, found = 0;
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &di) != LOOM_OK || di.device.device_type != LOOM_DEVICE_CUDA)
            continue;
        n++;
        if (di.device.device_id == local) {
            *out = di.device;
            found = 1;
        }
    }
    return found && n >= local_size;
}

/* A copy of t on dev (NULL stays NULL). */
static loom_tensor *to_device(const loom_tensor *t, const loom_dl_device *dev)
{
    loom_tensor *d = NULL;
    if (t != NULL && loom_tensor_copy_to(&d, t, dev) != LOOM_OK)
        die_loom("loom_tensor_copy_to");
    return d;
}

/* The sharded forward of the same KJT on this rank's GPU (rec-mpi-cuda.so,
** over NCCL) against the cpu kernel's output got: bit for bit but for the
** row-wise columns (NCCL's reduce-scatter adds the partial sums in its own
** order: within 1e-6), or everywhere with exact_rw (dyadic data). */
static void check_cuda(loom_object *sharded, const loom_dl_device *dev, const loom_tensor *const *sin, int n_in,
                       const loom_tensor *got, const int *rw_col, int exact_rw, int s, double *worst)
{
    loom_tensor *din[5] = { NULL };
    for (int i = 0; i < n_in; i++)
        din[i] = to_device(sin[i], dev);
    loom_call_options co = LOOM_CALL_OPTIONS_INIT;
    co.object = sharded;
    loom_tensor *dout = NULL, *hout = NULL;
    if (loom_run(SHARDED, (const loom_tensor *const *)din, n_in, NULL, &dout, 1, &co) != LOOM_OK)
        die_loom("cuda forward of " SHARDED);
    CHECK(dout->device.device_type == LOOM_DEVICE_CUDA, "the cuda forward's output is not on the device");
    if (loom_tensor_copy_to(&hout, dout, NULL) != LOOM_OK)
        die_loom("loom_tensor_copy_to (the output to the host)");
    const int64_t D = got->shape[1];
    CHECK(hout->shape[0] == got->shape[0] && hout->shape[1] == D, "cuda output [%lld, %lld], cpu [%lld, %lld]",
          (long long)hout->shape[0], (long long)hout->shape[1], (long long)got->shape[0], (long long)D);
    const float *pc = hout->data, *pg = got->data;
    for (int64_t i = 0; i < got->shape[0] * D; i++) {
        const int c = (int)(i % D);
        const double diff = fabs((double)pc[i] - pg[i]);
        if (exact_rw || !rw_col[c])
            CHECK(memcmp(&pc[i], &pg[i], sizeof(float)) == 0, "batch %d: cuda element [%lld, %d] is %.9g, cpu %.9g: "
                  "not bit-exact", s, (long long)(i / D), c, pc[i], pg[i]);
        CHECK(diff <= 1e-6 + 1e-6 * fabs(pg[i]), "batch %d: cuda element [%lld, %d] is %.9g, cpu %.9g", s,
              (long long)(i / D), c, pc[i], pg[i]);
        if (diff > *worst)
            *worst = diff;
    }
    for (int i = 0; i < n_in; i++)
        loom_tensor_free(din[i]);
    loom_tensor_free(dout);
    loom_tensor_free(hout);
}

int main(int argc, char **argv)
{
    const char *cs = "tw", *data = "random", *opt = "sgd", *exact = "all", *fault = "", *device = "cpu";
    int weighted = 0, steps = 10;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--case") && i + 1 < argc) cs = argv[++i];
        else if (!strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
        else if (!strcmp(argv[i], "--optimizer") && i + 1 < argc) opt = argv[++i];
        else if (!strcmp(argv[i], "--exact") && i + 1 < argc) exact = argv[++i];
        else if (!strcmp(argv[i], "--fault") && i + 1 < argc) fault = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--weighted")) weighted = 1;
        else if (!strcmp(argv[i], "--vbe")) vbe = 1;
        else if (!strcmp(argv[i], "--kernels") && i + 1 < argc) mixed_kernels = !strcmp(argv[++i], "mixed");
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
        else { fprintf(stderr, "usage: see the header of shard_check.c (%s)\n", argv[i]); return 2; }
    }
    const char *r = getenv("OMPI_COMM_WORLD_RANK"), *w = getenv("OMPI_COMM_WORLD_SIZE");
    if (!r || !w) {
        fprintf(stderr, "shard_check runs under mpirun (OMPI_COMM_WORLD_RANK and _SIZE unset)\n");
        return 2;
    }
    rank = atoi(r);
    world = atoi(w);
    if (world < 1 || world > 16) {
        fprintf(stderr, "shard_check runs on 1 to 16 ranks (%d)\n", world);
        return 2;
    }
    dyadic = strcmp(data, "dyadic") == 0;
    loom_init_options io = LOOM_INIT_OPTIONS_INIT;
    io.plugin_path = tu_plugin_path();
    io.no_default_dirs = 1;
    io.num_threads = 1;          /* every rank is a process of its own on a shared machine */
    if (loom_init(&io) != LOOM_OK)
        die_loom("loom_init");

    /* the tables, the same on every rank */
    rng_state = 12345;
    float *tables[T];
    loom_tensor *tt[T];
    loom_named_tensor named[T];
    char keys[T][64];
    for (int t = 0; t < T; t++) {
        tables[t] = malloc(sizeof(float) * E[t] * DIM[t]);
        for (int64_t i = 0; i < E[t] * DIM[t]; i++)
            tables[t][i] = value();
        int64_t shape[2] = { E[t], DIM[t] };
        tt[t] = wrap(tables[t], LOOM_DTYPE_F32, 2, shape);
        snprintf(keys[t], sizeof keys[t], "embedding_bags.%s.weight", NAMES[t]);
        named[t] = (loom_named_tensor){ keys[t], tt[t] };
    }
    loom_object_options oo = LOOM_OBJECT_OPTIONS_INIT;
    oo.n_tensors = T;
    oo.tensors = named;

    /* --device cuda: the same forwards again on this rank's GPU, no training (the cuda kernel is the forward) */
    const int on_cuda = strcmp(device, "cuda") == 0;
    loom_dl_device gpu = { LOOM_DEVICE_CPU, 0 };
    if (on_cuda && !cuda_device(&gpu)) {
        printf("rank %d of %d: skipped: fewer CUDA devices than ranks on this machine (the cuda forward needs one "
               "GPU per rank)\n", rank, world);
        for (int t = 0; t < T; t++) {
            loom_tensor_free(tt[t]);
            free(tables[t]);
        }
        loom_shutdown();
        return 0;
    }
    if (strcmp(cs, "refusals") == 0) {
        run_refusals(T, named);
        for (int t = 0; t < T; t++) {
            loom_tensor_free(tt[t]);
            free(tables[t]);
        }
        loom_shutdown();
        return 0;
    }
    if (strcmp(cs, "planned") == 0)
        planned_plan();
    else
        build_plan(cs, strcmp(fault, "plan") == 0 && rank == world - 1);
    loom_attrs *sa = table_attrs(SHARDED, opt, weighted);
    set(sa, SHARDED, "plan", plan_text);
    set(sa, SHARDED, "timeout_s", *fault ? "5" : "60");
    loom_object *sharded = NULL, *ref = NULL;
    loom_status st = loom_object_create_ex(&sharded, SHARDED, sa, &oo);
    loom_attrs_free(sa);
    if (strcmp(fault, "plan") == 0) {
        CHECK(st != LOOM_OK, "a rank with a different plan was not refused at setup");
        CHECK(strstr(loom_last_error(), "plan mismatch") && strstr(loom_last_error(), "rank"),
              "the refusal does not name the plan mismatch: %s", loom_last_error());
        printf("rank %d: refused as expected: %s\n", rank, loom_last_error());
        for (int t = 0; t < T; t++) {
            loom_tensor_free(tt[t]);
            free(tables[t]);
        }
        loom_shutdown();
        return 0;
    }
    if (st != LOOM_OK)
        die_loom("creating " SHARDED);
    loom_attrs *fa = table_attrs(FUSED, opt, weighted);
    if (loom_object_create_ex(&ref, FUSED, fa, &oo) != LOOM_OK)
        die_loom("creating " FUSED);
    loom_attrs_free(fa);
    loom_attrs *keys_attr = NULL;
    loom_attrs_new(&keys_attr);
    set(keys_attr, FUSED, "keys", "f0,f1,f2,f3,f4");

    const int64_t G = (int64_t)world * B, D = 8 + 8 + 12 + 16 + 4;
    /* columns of row-wise tables, skipped by --exact non-rw in the first forward */
    int rw_col[48] = { 0 };
    {
        int64_t col = 0;
        for (int f = 0; f < F; f++) {
            const char *ty = table_type(cs, FEATURE_TABLE[f]);
            for (int64_t c = 0; c < DIM[FEATURE_TABLE[f]]; c++)
                rw_col[col++] = strstr(ty, "row_wise") != NULL;
        }
    }
    double worst = 0.0;
    for (int s = 0; s <= steps; s++) {
        if (strcmp(fault, "die") == 0 && s == 1 && rank == world - 1) {
            fprintf(stderr, "rank %d: leaving without MPI_Finalize (--fault die)\n", rank);
            _exit(3);
        }
        if (strcmp(fault, "stall") == 0 && s == 1 && rank == world - 1) {
            fprintf(stderr, "rank %d: not taking part any more (--fault stall)\n", rank);
            sleep(120);   /* ended by mpirun once the others have failed */
            _exit(3);
        }
        batch g;
        make_batch(&g, s);
        int64_t *lens, *vals, n, nl;
        float *wts;
        local_part(&g, &lens, &vals, &wts, &nl, &n);
        int64_t sh_n[1] = { n }, sh_l[1] = { nl }, sh_gn[1] = { g.n }, sh_gl[1] = { g.L };
        loom_tensor *tv = wrap(vals, LOOM_DTYPE_I64, 1, sh_n), *tl = wrap(lens, LOOM_DTYPE_I64, 1, sh_l);
        loom_tensor *tw = wrap(wts, LOOM_DTYPE_F32, 1, sh_n);
        loom_tensor *gv = wrap(g.values, LOOM_DTYPE_I64, 1, sh_gn), *gl = wrap(g.lengths, LOOM_DTYPE_I64, 1, sh_gl);
        loom_tensor *gw = wrap(g.weights, LOOM_DTYPE_F32, 1, sh_gn);
        /* VBE: this rank's strides (i32 [F, 1], as torchrec's KJT holds them) and inverse indices [F, B];
        ** the global KJT's strides (i64 [F, W]) and inverse indices [F, W * B] into each key's lengths */
        int32_t lsp[F];
        int64_t gsp[F * 16], *ginv = malloc(sizeof(int64_t) * F * G);
        for (int f = 0; f < F; f++) {
            lsp[f] = (int32_t)g.S[f][rank];
            for (int q = 0; q < world; q++) {
                gsp[f * world + q] = g.S[f][q];
                for (int b = 0; b < B; b++)
                    ginv[f * G + q * B + b] = vbe ? bag0(&g, f, q) - g.lopk[f] + g.inverse[(q * F + f) * B + b]
                                                  : q * B + b;
            }
        }
        int64_t sh_lsp[2] = { F, 1 }, sh_gsp[2] = { F, world }, sh_linv[2] = { F, B }, sh_ginv[2] = { F, G };
        loom_tensor *tsp = vbe ? wrap(lsp, LOOM_DTYPE_I32, 2, sh_lsp) : NULL;
        loom_tensor *tinv = vbe ? wrap(g.inverse + (int64_t)rank * F * B, LOOM_DTYPE_I64, 2, sh_linv) : NULL;
        loom_tensor *gsp_t = vbe ? wrap(gsp, LOOM_DTYPE_I64, 2, sh_gsp) : NULL;
        loom_tensor *ginv_t = vbe ? wrap(ginv, LOOM_DTYPE_I64, 2, sh_ginv) : NULL;
        loom_call_options co = LOOM_CALL_OPTIONS_INIT;
        co.object = sharded;
        const loom_tensor *sin[5] = { tv, tl, weighted ? tw : NULL, tsp, tinv };
        loom_tensor *got = NULL;
        if (loom_run(SHARDED, sin, vbe ? 5 : 3, NULL, &got, 1, &co) != LOOM_OK)
            die_loom("forward of " SHARDED);
        co.object = ref;
        const loom_tensor *rin[6] = { gv, gl, NULL, weighted ? gw : NULL, gsp_t, ginv_t };
        loom_tensor *want = NULL;
        if (loom_run(FUSED, rin, vbe ? 6 : 4, keys_attr, &want, 1, &co) != LOOM_OK)
            die_loom("forward of " FUSED);
        const float *pg = (const float *)got->data, *pw = (const float *)want->data + (int64_t)rank * B * D;
        CHECK(got->shape[0] == B && got->shape[1] == D, "output [%lld, %lld], expected [%d, %lld]",
              (long long)got->shape[0], (long long)got->shape[1], B, (long long)D);
        for (int64_t i = 0; i < B * D; i++) {
            const int c = (int)(i % D);
            const double diff = fabs((double)pg[i] - pw[i]);
            if (s == 0 && (strcmp(exact, "all") == 0 || !rw_col[c]))
                CHECK(memcmp(&pg[i], &pw[i], sizeof(float)) == 0,
                      "step 0: element [%lld, %d] is %.9g, unsharded %.9g: not bit-exact", (long long)(i / D), c,
                      pg[i], pw[i]);
            CHECK(diff <= 1e-6 + 1e-6 * fabs(pw[i]), "step %d: element [%lld, %d] is %.9g, unsharded %.9g", s,
                  (long long)(i / D), c, pg[i], pw[i]);
            if (diff > worst)
                worst = diff;
        }
        if (on_cuda)
            check_cuda(sharded, &gpu, sin, vbe ? 5 : 3, got, rw_col, strcmp(exact, "all") == 0, s, &worst);
        if (s < steps && !on_cuda) {
            /* the same gradient of the global output on every rank */
            float *grad = malloc(sizeof(float) * G * D);
            rng_state = 777 + (uint64_t)s;
            for (int64_t i = 0; i < G * D; i++)
                grad[i] = uniform();
            int64_t gs[2] = { G, D }, ls[2] = { B, D };
            loom_tensor *tg = wrap(grad, LOOM_DTYPE_F32, 2, gs);
            loom_tensor *lg = wrap(grad + (int64_t)rank * B * D, LOOM_DTYPE_F32, 2, ls);
            co.object = sharded;
            const loom_tensor *sb[6] = { tv, tl, weighted ? tw : NULL, lg, tsp, tinv };
            if (loom_run(SHARDED "_backward", sb, vbe ? 6 : 4, NULL, NULL, 0, &co) != LOOM_OK)
                die_loom("backward of " SHARDED);
            co.object = ref;
            const loom_tensor *rb[7] = { gv, gl, NULL, weighted ? gw : NULL, gsp_t, ginv_t, tg };
            if (loom_run(FUSED "_backward", rb, 7, keys_attr, NULL, 0, &co) != LOOM_OK)
                die_loom("backward of " FUSED);
            loom_tensor_free(tg);
            loom_tensor_free(lg);
            free(grad);
        }
        loom_tensor_free(got);
        loom_tensor_free(want);
        loom_tensor_free(tv);
        loom_tensor_free(tl);
        loom_tensor_free(tw);
        loom_tensor_free(gv);
        loom_tensor_free(gl);
        loom_tensor_free(gw);
        loom_tensor_free(tsp);
        loom_tensor_free(tinv);
        loom_tensor_free(gsp_t);
        loom_tensor_free(ginv_t);
        free(ginv);
        free(lens);
        free(vals);
        free(wts);
        free_batch(&g);
    }
    /* the methods' time record: every call counted, the collectives' share within the wall time;
    ** reset=true zeroes it (the cpu kernels' record: not with the cuda forward) */
    if (!on_cuda) {
        loom_call_options co = LOOM_CALL_OPTIONS_INIT;
        co.object = sharded;
        loom_attrs *ra = NULL;
        if (loom_attrs_new(&ra) != LOOM_OK || loom_attrs_set_bool(ra, "reset", 1) != LOOM_OK)
            die_loom("stats attributes");
        loom_tensor *sts = NULL, *st2 = NULL;
        if (loom_run(SHARDED "_stats", NULL, 0, ra, &sts, 1, &co) != LOOM_OK)
            die_loom("stats of " SHARDED);
        const double *v = (const double *)sts->data;
        CHECK(v[0] == steps + 1 && v[4] == steps, "stats count %g forwards and %g backwards, expected %d and %d",
              v[0], v[4], steps + 1, steps);
        for (int m = 0; m < 2; m++)
            CHECK(v[4 * m + 3] >= (m == 0 ? v[0] : v[4]) && v[4 * m + 2] >= 0 && v[4 * m + 2] <= v[4 * m + 1],
                  "stats row %d: %g collectives, %g s of collectives in %g s", m, v[4 * m + 3], v[4 * m + 2],
                  v[4 * m + 1]);
        if (loom_run(SHARDED "_stats", NULL, 0, NULL, &st2, 1, &co) != LOOM_OK)
            die_loom("stats of " SHARDED);
        /* the forwards' input row: without a prefetch every forward ran its KJT all-to-all */
        CHECK(sts->shape[0] == 4 && v[12] == v[0] && v[13] == 0 && v[14] > 0 && v[15] == 0,
              "stats input row: %g KJT all-to-alls, %g reused, %g bytes, %g saved after %g forwards", v[12], v[13],
              v[14], v[15], v[0]);
        for (int i = 0; i < 16; i++)
            CHECK(((const double *)st2->data)[i] == 0.0, "stats after reset: entry %d is %g", i,
                  ((const double *)st2->data)[i]);
        loom_tensor_free(sts);
        loom_tensor_free(st2);
        loom_attrs_free(ra);
    }
    printf("rank %d of %d: %s (%s data, %s%s%s%s; %s %s, %s %s, %s %s, %s %s): first forward bit-exact (%s), %d "
           "training steps, largest difference %.3g\n", rank, world, cs, data, opt, weighted ? ", weighted" : "", vbe ? ", VBE" : "", on_cuda ? ", cuda forward over NCCL against cpu, no training" : "",
           NAMES[0], table_type(cs, 0), NAMES[1], table_type(cs, 1), NAMES[2], table_type(cs, 2), NAMES[3],
           table_type(cs, 3), exact, steps, worst);
    loom_attrs_free(keys_attr);
    loom_object_free(sharded);
    loom_object_free(ref);
    for (int t = 0; t < T; t++) {
        loom_tensor_free(tt[t]);
        free(tables[t]);
    }
    loom_shutdown();
    return 0;
}
