/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ec_shard_check.c - one rank of the sharded EmbeddingCollection's checks
** (rec.sharded_embedding_collection), run under mpirun by mpi_run.sh
** (tests/rec/shard/meson.build):
**
**   ec_shard_check --case tw|rw|cw|dp|mixed [--optimizer sgd|rowwise_adagrad] [--steps N] [--fault plan|stall]
**   ec_shard_check --case refusals
**
** Every rank builds the same tables (one D, from a seeded generator), the
** same plan for the case and the same global batches of W * B samples, and
** creates rec.sharded_embedding_collection over the plan. The reference is
** the unsharded rec.embedding_collection over the same tables, run on the
** whole global batch: each step, this rank's sharded forward (values,
** values_offsets, lengths, keys) must equal the reference's rows of its
** samples. An unpooled row is a copy, so the first forward is compared bit
** for bit for every sharding type.
**
** Training: the unsharded EmbeddingCollection has no backward in loom (the
** fbgemm pack's TBE backward has no pooling none), so the reference step is
** computed here from fbgemm's formulas (plugins/fbgemm/tbe/tbe_optim_update.c):
** a row's gradient is the sum of the gradients of its ids in the global
** batch (feature, sample, position order), then
**   sgd:             w = fmaf(-lr, g, w)
**   rowwise_adagrad: m += sum(g * g) / D; w -= lr / (sqrt(m) + eps) * g
** in f32. Every step the forward is compared within 1e-6 (+ 1e-6 relative:
** fbgemm's vector loops may sum g * g in another order, a few ulp of m),
** and after the last step every table (rec.sharded_embedding_collection_weight)
** within the same bound. Row-wise Adagrad keeps one state per row and
** shard; a column-wise shard's state averages its own columns (torchrec's
** too), so cw and mixed run with sgd only.
**
** The rank and the world size come from OpenMPI's environment; the pack
** initialises MPI. --fault plan gives the last rank a plan with table t0 on
** another rank (setup must refuse it on every rank, naming the mismatch);
** --fault stall makes the last rank sleep before the forward of step 1
** (alive, taking no part): the others must fail by their bounded wait
** (timeout_s 5), not hang.
** --case refusals: a plan with a table_row_wise table, a missing table on
** one rank, fused and cached shards on one rank, and bad inputs on one
** rank (lengths of another size, an id outside its table, another batch
** size, a gradient of the wrong shape) and an unknown table's weight, each
** refused on every rank at once, every
** message naming rec.sharded_embedding_collection (or its method), never
** the bag collection whose checks it shares; the collection usable
** afterwards.
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

#define SHARDED "rec.sharded_embedding_collection"
#define UNSHARDED "rec.embedding_collection"
#define T 4
#define B 6              /* samples per rank */
#define D 8              /* every table's dim: an EmbeddingCollection's tables share one */
#define F 5

static const int64_t E[T] = { 37, 50, 24, 41 };
static const char *const NAMES[T] = { "t0", "t1", "t2", "t3" };
static const char *const FEATURES = "f0|f1,f2,f3,f4";
static const int FEATURE_TABLE[F] = { 0, 0, 1, 2, 3 };

/* ------------------------------------------------------------- the plan */

static const char *table_type(const char *c, int t)
{
    if (strcmp(c, "mixed") == 0) {
        static const char *const m[T] = { "table_wise", "row_wise", "column_wise", "data_parallel" };
        return m[t];
    }
    if (strcmp(c, "tw") == 0) return "table_wise";
    if (strcmp(c, "rw") == 0) return "row_wise";
    if (strcmp(c, "cw") == 0) return "column_wise";
    if (strcmp(c, "dp") == 0) return "data_parallel";
    if (strcmp(c, "twrw") == 0) return "table_row_wise";
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
        shard(i == 0, ranks[i], r0, 0, r1 - r0, D);
    }
    put("]");
}

/* lie: table t0 on another rank (the plan-mismatch fault) */
static int cached_t1;   /* the refusals: table t1 fused_uvm_caching, the others fused */

static void build_plan(const char *c, int lie)
{
    plan_text[0] = '\0';
    put("{\"format\":\"loom.rec.plan/1\",\"world_size\":%d,\"tables\":[", world);
    for (int t = 0; t < T; t++) {
        const char *ty = table_type(c, t);
        put("%s{\"name\":\"%s\",\"num_embeddings\":%lld,\"embedding_dim\":%d,\"sharding_type\":\"%s\","
            "\"compute_kernel\":\"%s\",", t ? "," : "", NAMES[t], (long long)E[t], D, ty,
            strcmp(ty, "data_parallel") == 0 ? "dense" : cached_t1 && t == 1 ? "fused_uvm_caching" : "fused");
        int ranks[16];
        if (strcmp(ty, "table_wise") == 0) {
            const int r = (t + (lie && t == 0)) % world;
            put("\"ranks\":[%d],\"shards\":[", r);
            shard(1, r, 0, 0, E[t], D);
            put("]");
        } else if (strcmp(ty, "row_wise") == 0) {
            for (int i = 0; i < world; i++)
                ranks[i] = i;
            row_shards(t, ranks, world);
        } else if (strcmp(ty, "table_row_wise") == 0) {
            const int n = world >= 2 ? 2 : 1;
            for (int i = 0; i < n; i++)
                ranks[i] = i;
            row_shards(t, ranks, n);
        } else if (strcmp(ty, "column_wise") == 0) {
            /* two column shards of 4, on ranks t and t + 1 (the same rank at -np 1) */
            put("\"ranks\":[%d,%d],\"shards\":[", t % world, (t + 1) % world);
            shard(1, t % world, 0, 0, E[t], 4);
            shard(0, (t + 1) % world, 0, 4, E[t], 4);
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

typedef struct batch {
    int64_t *lengths;    /* [F][W * B] */
    int64_t *values;     /* global, feature-major */
    int64_t n;
    int64_t *start;      /* [F * W * B + 1] */
} batch;

static void make_batch(batch *b, int step)
{
    const int64_t G = (int64_t)world * B;
    rng_state = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(step + 1) * 7919;
    b->lengths = malloc(sizeof(int64_t) * F * G);
    b->start = malloc(sizeof(int64_t) * (F * G + 1));
    b->start[0] = 0;
    for (int64_t i = 0; i < F * G; i++) {
        b->lengths[i] = next_u32() % 5;     /* 0..4 ids, empty samples too */
        b->start[i + 1] = b->start[i] + b->lengths[i];
    }
    b->n = b->start[F * G];
    b->values = malloc(sizeof(int64_t) * (b->n + 1));
    for (int f = 0; f < F; f++)
        for (int64_t i = b->start[f * G]; i < b->start[(f + 1) * G]; i++)
            b->values[i] = next_u32() % E[FEATURE_TABLE[f]];   /* repeats too: rows with several gradients */
}

static void free_batch(batch *b)
{
    free(b->lengths);
    free(b->values);
    free(b->start);
}

/* The global index of this rank's i-th value (its part: samples rank * B .. rank * B + B - 1 of each feature). */
static int64_t *local_part(const batch *g, int64_t **lens, int64_t **vals, int64_t *n)
{
    const int64_t G = (int64_t)world * B;
    int64_t *where = malloc(sizeof(int64_t) * (g->n + 1));
    *lens = malloc(sizeof(int64_t) * F * B);
    *vals = malloc(sizeof(int64_t) * (g->n + 1));
    *n = 0;
    for (int f = 0; f < F; f++)
        for (int s = 0; s < B; s++) {
            const int64_t gi = f * G + rank * B + s;
            (*lens)[f * B + s] = g->lengths[gi];
            for (int64_t i = g->start[gi]; i < g->start[gi + 1]; i++) {
                where[*n] = i;
                (*vals)[(*n)++] = g->values[i];
            }
        }
    return where;
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

static loom_attrs *table_attrs(const char *cls)
{
    loom_attrs *a = NULL;
    if (loom_attrs_new(&a) != LOOM_OK)
        die_loom("loom_attrs_new");
    set(a, cls, "tables", "t0,t1,t2,t3");
    set(a, cls, "num_embeddings", "37,50,24,41");
    set(a, cls, "embedding_dim", "8,8,8,8");
    set(a, cls, "feature_names", FEATURES);
    return a;
}

static loom_status create_sharded(const char *plan, const char *opt, const char *timeout, int n_tensors,
                                  const loom_named_tensor *named, loom_object **out)
{
    loom_object_options oo = LOOM_OBJECT_OPTIONS_INIT;
    oo.n_tensors = n_tensors;
    oo.tensors = named;
    loom_attrs *a = table_attrs(SHARDED);
    set(a, SHARDED, "plan", plan);
    set(a, SHARDED, "optimizer", opt);
    set(a, SHARDED, "lr", "0.05");
    set(a, SHARDED, "eps", "0.001");
    set(a, SHARDED, "timeout_s", timeout);
    *out = NULL;
    loom_status st = loom_object_create_ex(out, SHARDED, a, &oo);
    loom_attrs_free(a);
    return st;
}

/* ------------------------------------------------------------- refusals */

/* The message of a refusal names this class (the create, input and
** collective checks are shared with the bag collection, and must still
** speak of the caller), never the bag collection. */
static void expect_named(const char *what)
{
    const char *msg = loom_last_error();
    CHECK(strstr(msg, SHARDED ":") != NULL && strstr(msg, "embedding_bag_collection") == NULL,
          "%s: the message does not name " SHARDED " (or names the bag collection): %s", what, msg);
}

/* st failed on every rank; bad_rank's message has mine, the others' theirs. */
static void expect_refused(loom_status st, int bad_rank, const char *mine, const char *theirs, const char *what)
{
    CHECK(st != LOOM_OK, "%s: accepted", what);
    const char *want = bad_rank < 0 || rank == bad_rank ? mine : theirs;
    CHECK(strstr(loom_last_error(), want) != NULL, "%s: the message lacks \"%s\": %s", what, want, loom_last_error());
    expect_named(what);
}

/* A call of this rank: every sample has one id (0, or bad_id at value 0), nb samples, n_lengths lengths;
** a backward with a gradient of grad_rows rows when grad_rows >= 0. */
static loom_status call_with(loom_object *o, int64_t nb, int64_t n_lengths, int64_t bad_id, int64_t grad_rows)
{
    const int64_t n = n_lengths < F * nb ? n_lengths : F * nb;
    int64_t *vals = calloc((size_t)n + 1, sizeof *vals), *lens = calloc((size_t)n_lengths + 1, sizeof *lens);
    float *grad = calloc((size_t)((grad_rows > 0 ? grad_rows : 0) * D) + 1, sizeof *grad);
    for (int64_t i = 0; i < n_lengths; i++)
        lens[i] = i < n;
    vals[0] = bad_id;
    int64_t sv[1] = { n }, sl[1] = { n_lengths }, sg[2] = { grad_rows, D };
    loom_tensor *tv = wrap(vals, LOOM_DTYPE_I64, 1, sv), *tl = wrap(lens, LOOM_DTYPE_I64, 1, sl);
    loom_tensor *tg = grad_rows >= 0 ? wrap(grad, LOOM_DTYPE_F32, 2, sg) : NULL;
    loom_call_options co = LOOM_CALL_OPTIONS_INIT;
    co.object = o;
    loom_status st;
    if (tg) {
        const loom_tensor *in[3] = { tv, tl, tg };
        st = loom_run(SHARDED "_backward", in, 3, NULL, NULL, 0, &co);
    } else {
        const loom_tensor *in[2] = { tv, tl };
        loom_tensor *out = NULL;
        st = loom_run(SHARDED, in, 2, NULL, &out, 1, &co);
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

static void run_refusals(int n_named, const loom_named_tensor *named)
{
    loom_object *o = NULL;
    const int last = world - 1;
    build_plan("twrw", 0);
    expect_refused(create_sharded(plan_text, "sgd", "30", n_named, named, &o), -1,
                   "field 'sharding_type' table_row_wise", NULL, "a table_row_wise table");
    /* the sequence collection's lookups run on one local TBE per rank: no rank may mix kernels */
    cached_t1 = 1;
    build_plan("rw", 0);
    cached_t1 = 0;
    expect_refused(create_sharded(plan_text, "sgd", "30", n_named, named, &o), -1,
                   "so they need one compute kernel", NULL, "fused and cached shards on one rank");
    build_plan("mixed", 0);
    expect_refused(create_sharded(plan_text, "sgd", "30", rank == last ? n_named - 1 : n_named, named, &o), last,
                   "has no tensor 'embeddings.t3.weight'", "refused its arguments at setup", "a missing table");
    if (create_sharded(plan_text, "sgd", "30", n_named, named, &o) != LOOM_OK)
        die_loom("creating " SHARDED);
    expect_refused(call_with(o, B, rank == last ? F * B + 1 : F * B, 0, -1), last, "not F * B", "refused its input",
                   "lengths of another size");
    expect_refused(call_with(o, B, F * B, rank == 0 ? E[0] : 0, -1), 0, "is not a row of its 37",
                   "rank 0 refused its input", "an id outside its table");
    expect_refused(call_with(o, rank == last ? B - 1 : B, rank == last ? F * (B - 1) : F * B, 0, -1), -1,
                   "has a batch of", NULL, "batches of other sizes");
    expect_refused(call_with(o, B, F * B, 0, rank == last ? F * B - 1 : F * B), last, "'grad' is",
                   "refused its input", "a gradient of the wrong shape");
    {
        /* the weight method (local before its gather: every rank refuses the same name) names itself */
        loom_attrs *a = NULL;
        if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_parse(a, SHARDED "_weight", "table", "nope") != LOOM_OK)
            die_loom("weight attributes");
        loom_call_options co = LOOM_CALL_OPTIONS_INIT;
        co.object = o;
        loom_tensor *w = NULL;
        CHECK(loom_run(SHARDED "_weight", NULL, 0, a, &w, 1, &co) != LOOM_OK, "an unknown table's weight: accepted");
        CHECK(strstr(loom_last_error(), SHARDED "_weight: the collection has no table 'nope'") != NULL &&
              strstr(loom_last_error(), "embedding_bag_collection") == NULL,
              "an unknown table's weight: the message does not name " SHARDED "_weight: %s", loom_last_error());
        loom_attrs_free(a);
    }
    CHECK(call_with(o, B, F * B, 0, -1) == LOOM_OK, "a good call after the refusals: %s", loom_last_error());
    CHECK(call_with(o, B, F * B, 0, F * B) == LOOM_OK, "a good backward after the refusals: %s", loom_last_error());
    loom_object_free(o);
    printf("rank %d of %d: refusals: every bad argument and input refused on every rank\n", rank, world);
}

/* ------------------------------------------------------- the reference */

/* The unsharded forward of the global batch over the reference tables. */
static void reference_forward(float *const *tables, const batch *g, loom_tensor **out)
{
    loom_tensor *tt[T];
    loom_named_tensor named[T];
    char keys[T][64];
    for (int t = 0; t < T; t++) {
        int64_t shape[2] = { E[t], D };
        tt[t] = wrap(tables[t], LOOM_DTYPE_F32, 2, shape);
        snprintf(keys[t], sizeof keys[t], "embeddings.%s.weight", NAMES[t]);
        named[t] = (loom_named_tensor){ keys[t], tt[t] };
    }
    loom_object_options oo = LOOM_OBJECT_OPTIONS_INIT;
    oo.n_tensors = T;
    oo.tensors = named;
    loom_attrs *a = table_attrs(UNSHARDED);
    loom_object *ec = NULL;
    if (loom_object_create_ex(&ec, UNSHARDED, a, &oo) != LOOM_OK)
        die_loom("creating " UNSHARDED);
    loom_attrs_free(a);
    loom_attrs *ka = NULL;
    loom_attrs_new(&ka);
    set(ka, UNSHARDED, "keys", "f0,f1,f2,f3,f4");
    const int64_t G = (int64_t)world * B;
    int64_t sn[1] = { g->n }, sl[1] = { F * G };
    loom_tensor *gv = wrap(g->values, LOOM_DTYPE_I64, 1, sn), *gl = wrap(g->lengths, LOOM_DTYPE_I64, 1, sl);
    const loom_tensor *in[4] = { gv, gl, NULL, NULL };
    loom_call_options co = LOOM_CALL_OPTIONS_INIT;
    co.object = ec;
    for (int k = 0; k < 6; k++)
        out[k] = NULL;
    if (loom_run(UNSHARDED, in, 4, ka, out, 6, &co) != LOOM_OK)
        die_loom("forward of " UNSHARDED);
    loom_attrs_free(ka);
    loom_tensor_free(gv);
    loom_tensor_free(gl);
    loom_object_free(ec);
    for (int t = 0; t < T; t++)
        loom_tensor_free(tt[t]);
}

/* One step of fbgemm's formulas on the reference tables: grad [g->n, D] of the global values. */
static void reference_step(float *const *tables, float *const *m1, const batch *g, const float *grad, int adagrad)
{
    const int64_t G = (int64_t)world * B;
    const float lr = 0.05f, eps = 0.001f;
    for (int t = 0; t < T; t++) {
        float *acc = calloc((size_t)(E[t] * D), sizeof *acc);
        unsigned char *hit = calloc((size_t)E[t], 1);
        for (int f = 0; f < F; f++) {
            if (FEATURE_TABLE[f] != t)
                continue;
            for (int64_t i = g->start[f * G]; i < g->start[(f + 1) * G]; i++) {
                const int64_t r = g->values[i];
                hit[r] = 1;
                for (int d = 0; d < D; d++)
                    acc[r * D + d] = fmaf(1.0f, grad[i * D + d], acc[r * D + d]);
            }
        }
        for (int64_t r = 0; r < E[t]; r++) {
            if (!hit[r])
                continue;
            float *w = tables[t] + r * D;
            const float *gr = acc + r * D;
            if (!adagrad) {
                for (int d = 0; d < D; d++)
                    w[d] = fmaf(-lr, gr[d], w[d]);
            } else {
                float s = 0.0f;
                for (int d = 0; d < D; d++)
                    s = fmaf(gr[d], gr[d], s);
                m1[t][r] += s / (float)D;
                const float mult = lr / (sqrtf(m1[t][r]) + eps);
                for (int d = 0; d < D; d++)
                    w[d] = fmaf(1.0f, w[d], -mult * gr[d]);
            }
        }
        free(acc);
        free(hit);
    }
}

static double worst;

static void expect_close(const float *got, const float *want, int64_t n, int exact, const char *what, int step)
{
    for (int64_t i = 0; i < n; i++) {
        if (exact)
            CHECK(memcmp(&got[i], &want[i], sizeof(float)) == 0, "step %d: %s [%lld, %lld] is %.9g, unsharded %.9g: "
                  "not bit-exact", step, what, (long long)(i / D), (long long)(i % D), got[i], want[i]);
        const double diff = fabs((double)got[i] - want[i]);
        CHECK(diff <= 1e-6 + 1e-6 * fabs(want[i]), "step %d: %s [%lld, %lld] is %.9g, reference %.9g", step, what,
              (long long)(i / D), (long long)(i % D), got[i], want[i]);
        if (diff > worst)
            worst = diff;
    }
}

int main(int argc, char **argv)
{
    const char *cs = "tw", *opt = "sgd", *fault = "";
    int steps = 10;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--case") && i + 1 < argc) cs = argv[++i];
        else if (!strcmp(argv[i], "--optimizer") && i + 1 < argc) opt = argv[++i];
        else if (!strcmp(argv[i], "--fault") && i + 1 < argc) fault = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else { fprintf(stderr, "usage: see the header of ec_shard_check.c (%s)\n", argv[i]); return 2; }
    }
    const char *r = getenv("OMPI_COMM_WORLD_RANK"), *w = getenv("OMPI_COMM_WORLD_SIZE");
    if (!r || !w) {
        fprintf(stderr, "ec_shard_check runs under mpirun (OMPI_COMM_WORLD_RANK and _SIZE unset)\n");
        return 2;
    }
    rank = atoi(r);
    world = atoi(w);
    const int adagrad = strcmp(opt, "rowwise_adagrad") == 0;
    loom_init_options io = LOOM_INIT_OPTIONS_INIT;
    io.plugin_path = tu_plugin_path();
    io.no_default_dirs = 1;
    io.num_threads = 1;          /* every rank is a process of its own on a shared machine */
    if (loom_init(&io) != LOOM_OK)
        die_loom("loom_init");

    /* the tables, the same on every rank; ref: the reference's copy, trained by reference_step */
    rng_state = 12345;
    float *tables[T], *ref[T], *m1[T];
    loom_tensor *tt[T];
    loom_named_tensor named[T];
    char keys[T][64];
    for (int t = 0; t < T; t++) {
        tables[t] = malloc(sizeof(float) * E[t] * D);
        ref[t] = malloc(sizeof(float) * E[t] * D);
        m1[t] = calloc((size_t)E[t], sizeof(float));
        for (int64_t i = 0; i < E[t] * D; i++)
            tables[t][i] = uniform();
        memcpy(ref[t], tables[t], sizeof(float) * E[t] * D);
        int64_t shape[2] = { E[t], D };
        tt[t] = wrap(tables[t], LOOM_DTYPE_F32, 2, shape);
        snprintf(keys[t], sizeof keys[t], "embeddings.%s.weight", NAMES[t]);
        named[t] = (loom_named_tensor){ keys[t], tt[t] };
    }
    int rc = 0;
    if (strcmp(cs, "refusals") == 0) {
        run_refusals(T, named);
        goto done;
    }
    build_plan(cs, strcmp(fault, "plan") == 0 && rank == world - 1);
    loom_object *sharded = NULL;
    loom_status st = create_sharded(plan_text, opt, *fault ? "5" : "60", T, named, &sharded);
    if (strcmp(fault, "plan") == 0) {
        CHECK(st != LOOM_OK, "a rank with a different plan was not refused at setup");
        CHECK(strstr(loom_last_error(), "plan mismatch") && strstr(loom_last_error(), "rank"),
              "the refusal does not name the plan mismatch: %s", loom_last_error());
        expect_named("a different plan");
        printf("rank %d: refused as expected: %s\n", rank, loom_last_error());
        goto done;
    }
    if (st != LOOM_OK)
        die_loom("creating " SHARDED);

    for (int s = 0; s <= steps; s++) {
        if (strcmp(fault, "stall") == 0 && s == 1 && rank == world - 1) {
            fprintf(stderr, "rank %d: not taking part any more (--fault stall)\n", rank);
            sleep(120);   /* ended by mpirun once the others have failed */
            _exit(3);
        }
        batch g;
        make_batch(&g, s);
        int64_t *lens, *vals, n;
        int64_t *where = local_part(&g, &lens, &vals, &n);
        int64_t sh_n[1] = { n }, sh_l[1] = { F * B };
        loom_tensor *tv = wrap(vals, LOOM_DTYPE_I64, 1, sh_n), *tl = wrap(lens, LOOM_DTYPE_I64, 1, sh_l);
        loom_call_options co = LOOM_CALL_OPTIONS_INIT;
        co.object = sharded;
        const loom_tensor *sin[2] = { tv, tl };
        loom_tensor *got[6] = { NULL }, *want[6];
        if (loom_run(SHARDED, sin, 2, NULL, got, 6, &co) != LOOM_OK)
            die_loom("forward of " SHARDED);
        reference_forward(ref, &g, want);
        /* values: this rank's rows of the global output, in its input order */
        CHECK(got[0]->ndim == 2 && got[0]->shape[0] == n && got[0]->shape[1] == D,
              "values [%lld, %lld], expected [%lld, %d]", (long long)got[0]->shape[0], (long long)got[0]->shape[1],
              (long long)n, D);
        float *wrows = malloc(sizeof(float) * (n * D + 1));
        for (int64_t i = 0; i < n; i++)
            memcpy(wrows + i * D, (const float *)want[0]->data + where[i] * D, sizeof(float) * D);
        expect_close(got[0]->data, wrows, n * D, s == 0, "values", s);
        free(wrows);
        /* the jagged structure: offsets of this rank's part, its lengths, the same keys */
        const int64_t *vo = got[1]->data, *lo = got[3]->data, *gl = got[2]->data;
        CHECK(got[1]->shape[0] == F + 1 && got[3]->shape[0] == F + 1 && got[2]->shape[0] == F * B,
              "offsets or lengths of the wrong size");
        for (int f = 0; f <= F; f++) {
            int64_t at = 0;
            for (int h = 0; h < f; h++)
                for (int b = 0; b < B; b++)
                    at += lens[h * B + b];
            CHECK(vo[f] == at && lo[f] == (int64_t)f * B, "values_offsets[%d] %lld (want %lld), lengths_offsets "
                  "%lld", f, (long long)vo[f], (long long)at, (long long)lo[f]);
        }
        CHECK(memcmp(gl, lens, sizeof(int64_t) * F * B) == 0, "lengths differ from the input's");
        CHECK(got[4]->shape[0] == want[4]->shape[0] && memcmp(got[4]->data, want[4]->data,
              (size_t)got[4]->shape[0]) == 0 && memcmp(got[5]->data, want[5]->data, sizeof(int64_t) * (F + 1)) == 0,
              "keys differ from the unsharded collection's");
        if (s < steps) {
            /* the same gradient of the global values on every rank; this rank's rows to the sharded */
            float *grad = malloc(sizeof(float) * (g.n * D + 1)), *lg = malloc(sizeof(float) * (n * D + 1));
            rng_state = 777 + (uint64_t)s;
            for (int64_t i = 0; i < g.n * D; i++)
                grad[i] = uniform();
            for (int64_t i = 0; i < n; i++)
                memcpy(lg + i * D, grad + where[i] * D, sizeof(float) * D);
            int64_t ls[2] = { n, D };
            loom_tensor *tg = wrap(lg, LOOM_DTYPE_F32, 2, ls);
            const loom_tensor *sb[3] = { tv, tl, tg };
            if (loom_run(SHARDED "_backward", sb, 3, NULL, NULL, 0, &co) != LOOM_OK)
                die_loom("backward of " SHARDED);
            reference_step(ref, m1, &g, grad, adagrad);
            loom_tensor_free(tg);
            free(grad);
            free(lg);
        }
        for (int k = 0; k < 6; k++) {
            loom_tensor_free(got[k]);
            loom_tensor_free(want[k]);
        }
        loom_tensor_free(tv);
        loom_tensor_free(tl);
        free(lens);
        free(vals);
        free(where);
        free_batch(&g);
    }
    /* every table whole, by name, against the reference's */
    double moved = 0.0;
    for (int t = 0; t < T; t++) {
        loom_attrs *wa = NULL;
        loom_attrs_new(&wa);
        set(wa, SHARDED "_weight", "table", NAMES[t]);
        loom_call_options co = LOOM_CALL_OPTIONS_INIT;
        co.object = sharded;
        loom_tensor *wt = NULL;
        if (loom_run(SHARDED "_weight", NULL, 0, wa, &wt, 1, &co) != LOOM_OK)
            die_loom("rec.sharded_embedding_collection_weight");
        CHECK(wt->shape[0] == E[t] && wt->shape[1] == D, "table %s: weight of the wrong shape", NAMES[t]);
        expect_close(wt->data, ref[t], E[t] * D, 0, NAMES[t], steps);
        /* and the training did move them (a step that changed nothing would pass the forward checks too) */
        for (int64_t i = 0; i < E[t] * D; i++) {
            const double m = fabs((double)((const float *)wt->data)[i] - tables[t][i]);
            moved = m > moved ? m : moved;
        }
        loom_tensor_free(wt);
        loom_attrs_free(wa);
    }
    CHECK(steps == 0 || moved > 1e-3, "%d training steps moved no weight by more than %g", steps, moved);
    printf("rank %d of %d: %s (%s; %s %s, %s %s, %s %s, %s %s): forward equals the unsharded collection bit for "
           "bit, %d training steps and the tables within 1e-6 of the reference, largest difference %.3g (weights "
           "moved up to %.3g)\n", rank, world, cs, opt, NAMES[0], table_type(cs, 0), NAMES[1], table_type(cs, 1),
           NAMES[2], table_type(cs, 2), NAMES[3], table_type(cs, 3), steps, worst, moved);
    loom_object_free(sharded);
done:
    for (int t = 0; t < T; t++) {
        loom_tensor_free(tt[t]);
        free(tables[t]);
        free(ref[t]);
        free(m1[t]);
    }
    loom_shutdown();
    return rc;
}
