/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dlrm_shard_check.c - one rank of the sharded DLRM's checks (rec.dlrm
** with a plan: torchrec's shard / shard_modules), run under mpirun by
** mpi_run.sh (tests/rec/shard/meson.build):
**
**   dlrm_shard_check --case tw|rw|cw|dp|mixed [--steps N] [--exact all|none]
**
** Every rank creates, from the generator's DLRM (tests/data/rec/dlrm:
** 26 tables of D = 4, dense 16,4, over 16,8,1), the sharded model over the
** case's plan and, as the reference, the unsharded model, and makes the
** same global batches of W * B samples (a seeded generator). Each step the
** sharded forward of this rank's B samples must give the reference's
** logits of them; then both take a DLRMTrain step with SGD (dense and
** tables, lr 0.1): the reference on the global batch, the sharded model on
** this rank's part (its loss gradient over the global batch, the dense
** gradients summed over the ranks, the tables' in the sharded backward).
** At the end both save their state_dict (rec.dlrm_save: the sharded
** tables gathered from their shards by name) and every tensor is compared.
**
** Exactness: the first forward bit for bit (--exact all): the dense layers
** are per-sample rows of the same GEMM, the pooled rows are bit-exact on
** table-, column-wise and data-parallel tables. Row-wise bags are partial
** sums per shard added across shards, another order of the same float
** additions whenever a bag's ids interleave shards: the rw and mixed
** cases keep only the tolerance from the first step (--exact none). On the
** AVX2 path their first logits come out bit-exact on this generator's
** batches at -np 2 and 4; on the portable loops the mixed case at -np 4
** differs by 3e-8 (one ulp of a logit near 0.3). After training: |got - want| <= 1e-6
** (+ 1e-6 relative): a dense gradient is the sum of W per-rank GEMMs
** instead of one over the global batch, and fbgemm's backward sums a
** row's gradients in another order; the largest difference is printed.
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
#define SHARD_TEST_PLAN_SIZE 32768
#include "shard_test.h"

#define CLS "rec.dlrm"
#define T 26
#define B 8              /* samples per rank */
#define DENSE 13

static int64_t E[T];
static char num_embeddings[256];

/* ------------------------------------------------------------- the plan */

static const char *table_type(const char *c, int t)
{
    if (strcmp(c, "mixed") == 0) {
        static const char *const m[5] = { "table_wise", "row_wise", "column_wise", "data_parallel",
                                          "table_row_wise" };
        return world < 4 && t % 5 == 4 ? "table_wise" : m[t % 5];
    }
    if (strcmp(c, "tw") == 0) return "table_wise";
    if (strcmp(c, "rw") == 0) return "row_wise";
    if (strcmp(c, "cw") == 0) return "column_wise";
    if (strcmp(c, "dp") == 0) return "data_parallel";
    fprintf(stderr, "unknown case %s\n", c);
    exit(2);
}

static void shard(int first, int64_t r, int64_t r0, int64_t c0, int64_t rows, int64_t cols)
{
    put("%s{\"rank\":%lld,\"offsets\":[%lld,%lld],\"sizes\":[%lld,%lld]}", first ? "" : ",", (long long)r,
        (long long)r0, (long long)c0, (long long)rows, (long long)cols);
}

/* rows cut as torchrec does: ceil(E / n) each, the last ones smaller or empty */
static void row_shards(int t, const int *ranks, int n)
{
    const int64_t block = (E[t] + n - 1) / n;
    put("\"ranks\":[");
    for (int i = 0; i < n; i++)
        put("%s%d", i ? "," : "", ranks[i]);
    put("],\"shards\":[");
    for (int i = 0; i < n; i++) {
        const int64_t r0 = block * i < E[t] ? block * i : E[t], r1 = block * (i + 1) < E[t] ? block * (i + 1) : E[t];
        shard(i == 0, ranks[i], r0, 0, r1 - r0, 4);
    }
    put("]");
}

static void build_plan(const char *c)
{
    plan_text[0] = '\0';
    put("{\"format\":\"loom.rec.plan/1\",\"world_size\":%d,\"tables\":[", world);
    for (int t = 0; t < T; t++) {
        const char *ty = table_type(c, t);
        put("%s{\"name\":\"t%d\",\"num_embeddings\":%lld,\"embedding_dim\":4,\"sharding_type\":\"%s\","
            "\"compute_kernel\":\"%s\",", t ? "," : "", t, (long long)E[t], ty,
            strcmp(ty, "data_parallel") == 0 ? "dense" : "fused");
        int ranks[16];
        if (strcmp(ty, "table_wise") == 0) {
            put("\"ranks\":[%d],\"shards\":[", t % world);
            shard(1, t % world, 0, 0, E[t], 4);
            put("]");
        } else if (strcmp(ty, "row_wise") == 0) {
            for (int i = 0; i < world; i++)
                ranks[i] = i;
            row_shards(t, ranks, world);
        } else if (strcmp(ty, "table_row_wise") == 0) {
            const int hosts = world / 2, h = t % hosts;
            ranks[0] = 2 * h;
            ranks[1] = 2 * h + 1;
            row_shards(t, ranks, 2);
        } else if (strcmp(ty, "column_wise") == 0) {
            put("\"ranks\":[%d,%d],\"shards\":[", t % world, (t + 1) % world);
            shard(1, t % world, 0, 0, E[t], 2);
            shard(0, (t + 1) % world, 0, 2, E[t], 2);
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

/* ------------------------------------------------------------- objects */

static char keys[256];

static loom_status try_model(const char *plan, loom_object **o);

static loom_object *model(const char *plan)
{
    loom_object *o = NULL;
    if (try_model(plan, &o) != LOOM_OK)
        die_loom(plan ? "creating the sharded " CLS : "creating " CLS);
    return o;
}

static loom_status try_model(const char *plan, loom_object **o)
{
    char tables[256], dims[128];
    size_t nt = 0, nd = 0;
    for (int t = 0; t < T; t++) {
        nt += (size_t)snprintf(tables + nt, sizeof tables - nt, t ? ",t%d" : "t%d", t);
        nd += (size_t)snprintf(dims + nd, sizeof dims - nd, t ? ",4" : "4");
    }
    static const char *const names[] = { "tables", "num_embeddings", "embedding_dim", "feature_names",
                                         "dense_arch_layer_sizes", "over_arch_layer_sizes", "lr", "eps",
                                         "dense_optimizer", "embedding_optimizer" };
    const char *values[] = { tables, num_embeddings, dims, keys, "16,4", "16,8,1", "0.1", "1e-8", "sgd", "sgd" };
    loom_attrs *a = NULL;
    if (loom_attrs_new(&a) != LOOM_OK)
        die_loom("loom_attrs_new");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (loom_attrs_parse(a, CLS, names[i], values[i]) != LOOM_OK)
            die_loom(names[i]);
    if (plan && (loom_attrs_parse(a, CLS, "plan", plan) != LOOM_OK || loom_attrs_parse(a, CLS, "timeout_s", "30")))
        die_loom("plan");
    *o = NULL;
    loom_status st = loom_object_create(o, CLS, a, tu_data_path("rec/dlrm/model.safetensors"));
    loom_attrs_free(a);
    return st;
}

static loom_tensor *wrap(void *data, loom_dtype dt, int32_t ndim, const int64_t *shape)
{
    loom_tensor *t = NULL;
    if (loom_tensor_wrap(&t, data, dt, ndim, shape, NULL, NULL) != LOOM_OK)
        die_loom("loom_tensor_wrap");
    return t;
}

/* ------------------------------------------------------------- batches */

typedef struct batch {
    float *dense, *labels;          /* [G, 13], [G] */
    int64_t *lengths, *values, n;   /* [T][G], feature-major */
    int64_t *start;                 /* [T * G + 1] */
} batch;

static void make_batch(batch *b, int step)
{
    const int64_t G = (int64_t)world * B;
    rng_state = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(step + 1) * 7919;
    b->dense = malloc(sizeof(float) * G * DENSE);
    b->labels = malloc(sizeof(float) * G);
    for (int64_t i = 0; i < G * DENSE; i++)
        b->dense[i] = uniform();
    for (int64_t i = 0; i < G; i++)
        b->labels[i] = (float)(next_u32() % 2);
    b->lengths = malloc(sizeof(int64_t) * T * G);
    b->start = malloc(sizeof(int64_t) * (T * G + 1));
    b->start[0] = 0;
    for (int64_t i = 0; i < T * G; i++) {
        b->lengths[i] = next_u32() % 4;
        b->start[i + 1] = b->start[i] + b->lengths[i];
    }
    b->n = b->start[T * G];
    b->values = malloc(sizeof(int64_t) * (b->n + 1));
    for (int t = 0; t < T; t++)
        for (int64_t i = b->start[t * G]; i < b->start[(t + 1) * G]; i++)
            b->values[i] = next_u32() % E[t];
}

static void free_batch(batch *b)
{
    free(b->dense);
    free(b->labels);
    free(b->lengths);
    free(b->values);
    free(b->start);
}

/* The inputs of a call: dense, the KJT (values, lengths; no offsets, weights, VBE), labels. */
typedef struct call_in {
    loom_tensor *dense, *values, *lengths, *labels;
} call_in;

static call_in global_in(batch *g)
{
    const int64_t G = (int64_t)world * B;
    int64_t sd[2] = { G, DENSE }, sv[1] = { g->n }, sl[1] = { T * G }, sy[1] = { G };
    return (call_in){ wrap(g->dense, LOOM_DTYPE_F32, 2, sd), wrap(g->values, LOOM_DTYPE_I64, 1, sv),
                      wrap(g->lengths, LOOM_DTYPE_I64, 1, sl), wrap(g->labels, LOOM_DTYPE_F32, 1, sy) };
}

/* this rank's samples rank * B .. rank * B + B - 1 (its buffers in lens, vals) */
static call_in local_in(batch *g, int64_t **lens, int64_t **vals)
{
    const int64_t G = (int64_t)world * B;
    *lens = malloc(sizeof(int64_t) * T * B);
    *vals = malloc(sizeof(int64_t) * (g->n + 1));
    int64_t n = 0;
    for (int t = 0; t < T; t++)
        for (int s = 0; s < B; s++) {
            const int64_t gi = t * G + rank * B + s;
            (*lens)[t * B + s] = g->lengths[gi];
            for (int64_t i = g->start[gi]; i < g->start[gi + 1]; i++)
                (*vals)[n++] = g->values[i];
        }
    int64_t sd[2] = { B, DENSE }, sv[1] = { n }, sl[1] = { T * B }, sy[1] = { B };
    return (call_in){ wrap(g->dense + (int64_t)rank * B * DENSE, LOOM_DTYPE_F32, 2, sd),
                      wrap(*vals, LOOM_DTYPE_I64, 1, sv), wrap(*lens, LOOM_DTYPE_I64, 1, sl),
                      wrap(g->labels + (int64_t)rank * B, LOOM_DTYPE_F32, 1, sy) };
}

static void free_in(call_in *c)
{
    loom_tensor_free(c->dense);
    loom_tensor_free(c->values);
    loom_tensor_free(c->lengths);
    loom_tensor_free(c->labels);
}

static loom_tensor *run(const char *op, loom_object *o, const call_in *c, const loom_attrs *attrs, int train)
{
    const loom_tensor *in[8] = { c->dense, c->values, c->lengths, NULL, NULL, NULL, NULL, c->labels };
    loom_tensor *out = NULL;
    loom_call_options co = LOOM_CALL_OPTIONS_INIT;
    co.object = o;
    if (loom_run(op, in, train ? 8 : 7, attrs, &out, 1, &co) != LOOM_OK)
        die_loom(op);
    return out;
}

static double worst;

static void compare(const float *got, const float *want, int64_t n, int bitwise, const char *what)
{
    for (int64_t i = 0; i < n; i++) {
        const double diff = fabs((double)got[i] - want[i]);
        if (bitwise)
            CHECK(memcmp(&got[i], &want[i], sizeof(float)) == 0, "%s: element %lld is %.9g, unsharded %.9g: not "
                  "bit-exact", what, (long long)i, got[i], want[i]);
        CHECK(diff <= 1e-6 + 1e-6 * fabs(want[i]), "%s: element %lld is %.9g, unsharded %.9g", what, (long long)i,
              got[i], want[i]);
        worst = diff > worst ? diff : worst;
    }
}

static void save(loom_object *o, const char *path)
{
    loom_attrs *a = NULL;
    loom_call_options co = LOOM_CALL_OPTIONS_INIT;
    co.object = o;
    if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_set_string(a, "path", path) != LOOM_OK ||
        loom_run("rec.dlrm_save", NULL, 0, a, NULL, 0, &co) != LOOM_OK)
        die_loom("rec.dlrm_save");
    loom_attrs_free(a);
}

int main(int argc, char **argv)
{
    const char *cs = "tw", *exact = "all";
    int steps = 10;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--case") && i + 1 < argc) cs = argv[++i];
        else if (!strcmp(argv[i], "--exact") && i + 1 < argc) exact = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else { fprintf(stderr, "usage: see the header of dlrm_shard_check.c (%s)\n", argv[i]); return 2; }
    }
    const char *r = getenv("OMPI_COMM_WORLD_RANK"), *w = getenv("OMPI_COMM_WORLD_SIZE");
    if (!r || !w) {
        fprintf(stderr, "dlrm_shard_check runs under mpirun (OMPI_COMM_WORLD_RANK and _SIZE unset)\n");
        return 2;
    }
    rank = atoi(r);
    world = atoi(w);
    FILE *f = fopen(tu_data_path("rec/dlrm/config.txt"), "r");
    CHECK(f && fscanf(f, "num_embeddings=%255s", num_embeddings) == 1, "cannot read rec/dlrm/config.txt");
    fclose(f);
    const char *p = num_embeddings;
    for (int t = 0; t < T; t++) {
        E[t] = strtoll(p, (char **)&p, 10);
        p += *p == ',';
    }
    size_t nk = 0;
    for (int t = 0; t < T; t++)
        nk += (size_t)snprintf(keys + nk, sizeof keys - nk, t ? ",cat_%d" : "cat_%d", t);
    loom_init_options io = LOOM_INIT_OPTIONS_INIT;
    io.plugin_path = tu_plugin_path();
    io.no_default_dirs = 1;
    io.num_threads = 1;          /* every rank is a process of its own on a shared machine */
    if (loom_init(&io) != LOOM_OK)
        die_loom("loom_init");

    /* a plan for another world is refused at create on every rank, with the sharded collection's reason */
    build_plan(cs);
    char *lie = strdup(plan_text);
    char *ws = strstr(lie, "\"world_size\":") + 13;
    *ws = *ws == '9' ? '8' : '9';
    loom_object *bad = NULL;
    CHECK(try_model(lie, &bad) != LOOM_OK, "a plan for another world size was accepted");
    CHECK(strstr(loom_last_error(), "'world_size' is") != NULL, "the refusal does not name the world size: %s",
          loom_last_error());
    free(lie);
    loom_object *sharded = model(plan_text), *ref = model(NULL);
    loom_attrs *kattr = NULL;
    if (loom_attrs_new(&kattr) != LOOM_OK || loom_attrs_parse(kattr, CLS, "keys", keys) != LOOM_OK)
        die_loom("keys");
    {
        /* a sharded call takes the KJT in the collection's feature order: 'keys' is refused (before any collective) */
        batch g;
        make_batch(&g, -1);
        int64_t *lens, *vals;
        call_in li = local_in(&g, &lens, &vals);
        const loom_tensor *in[7] = { li.dense, li.values, li.lengths, NULL, NULL, NULL, NULL };
        loom_tensor *out = NULL;
        loom_call_options co = LOOM_CALL_OPTIONS_INIT;
        co.object = sharded;
        CHECK(loom_run(CLS, in, 7, kattr, &out, 1, &co) != LOOM_OK, "a sharded call with 'keys' was accepted");
        CHECK(strstr(loom_last_error(), "a sharded model takes this rank's KJT") != NULL,
              "the refusal of 'keys' does not say why: %s", loom_last_error());
        free_in(&li);
        free(lens);
        free(vals);
        free_batch(&g);
    }
    for (int s = 0; s <= steps; s++) {
        batch g;
        make_batch(&g, s);
        int64_t *lens, *vals;
        call_in gi = global_in(&g), li = local_in(&g, &lens, &vals);
        loom_tensor *got = run(CLS, sharded, &li, NULL, 0), *want = run(CLS, ref, &gi, kattr, 0);
        CHECK(got->shape[0] == B && got->shape[1] == 1, "logits [%lld, %lld]", (long long)got->shape[0],
              (long long)got->shape[1]);
        char what[64];
        snprintf(what, sizeof what, "step %d logits", s);
        compare(got->data, (const float *)want->data + (int64_t)rank * B, B, s == 0 && !strcmp(exact, "all"), what);
        loom_tensor_free(got);
        loom_tensor_free(want);
        if (s < steps) {
            loom_tensor_free(run("rec.dlrm_train_step", sharded, &li, NULL, 1));
            loom_tensor_free(run("rec.dlrm_train_step", ref, &gi, kattr, 1));
        }
        free_in(&gi);
        free_in(&li);
        free(lens);
        free(vals);
        free_batch(&g);
    }
    /* the trained state_dicts, the sharded tables gathered by name */
    const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char sp[512], rp[512];
    snprintf(sp, sizeof sp, "%s/dlrm_shard_check.%d.%d.sharded.safetensors", tmp, (int)getpid(), rank);
    snprintf(rp, sizeof rp, "%s/dlrm_shard_check.%d.%d.ref.safetensors", tmp, (int)getpid(), rank);
    save(sharded, sp);
    save(ref, rp);
    loom_safetensors *ss = NULL, *rs = NULL;
    if (loom_safetensors_open(&ss, sp) != LOOM_OK || loom_safetensors_open(&rs, rp) != LOOM_OK)
        die_loom("loom_safetensors_open");
    const int64_t n = loom_safetensors_count(rs);
    CHECK(loom_safetensors_count(ss) == n, "the sharded state_dict has %lld tensors, the unsharded %lld",
          (long long)loom_safetensors_count(ss), (long long)n);
    for (int64_t i = 0; i < n; i++) {
        const char *name = loom_safetensors_name(rs, i);
        const loom_tensor *a = NULL, *b = NULL;
        CHECK(loom_safetensors_get(ss, name, &a) == LOOM_OK && loom_safetensors_get(rs, name, &b) == LOOM_OK,
              "'%s' missing from the sharded state_dict", name);
        int64_t na = 1, nb = 1;
        for (int d = 0; d < a->ndim; d++)
            na *= a->shape[d];
        for (int d = 0; d < b->ndim; d++)
            nb *= b->shape[d];
        CHECK(na == nb, "'%s' has %lld elements, unsharded %lld", name, (long long)na, (long long)nb);
        compare(a->data, b->data, na, 0, name);
    }
    loom_safetensors_close(ss);
    loom_safetensors_close(rs);
    unlink(sp);
    unlink(rp);
    printf("rank %d of %d: dlrm %s: logits equal the unsharded model's (first forward bit-exact: %s), %d SGD "
           "steps, %lld state_dict tensors, largest difference %.3g\n", rank, world, cs, exact, steps, (long long)n,
           worst);
    loom_attrs_free(kattr);
    loom_object_free(sharded);
    loom_object_free(ref);
    loom_shutdown();
    return 0;
}
