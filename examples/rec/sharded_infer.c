/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_infer.c - a multi-process inference host for a sharded DLRM: one
** rank per device (on CPU, processes of this machine), the tables split
** across the ranks by a plan, the batches answered together.
**
**   mpirun -np W sharded_infer --weights dlrm.safetensors --attr KEY=VALUE ...
**          [--plan plan.json] (--requests req.safetensors | --generate N [--seed S])
**          [--save-requests req.safetensors] [--batch B] --out predictions.npy
**          [--compare ref.npy [--tolerance X]]
**
** Every rank creates rec.dlrm from the same state_dict (torchrec's DLRM
** keys) and the same attributes (--attr, as `loom run --attr` takes them:
** tables, num_embeddings, embedding_dim, feature_names,
** dense_in_features, dense_arch_layer_sizes, over_arch_layer_sizes) and,
** with --plan, the same plan (loom.rec.plan/1): its tables are then a
** rec.sharded_embedding_bag_collection over the ranks (rec.shard), the
** dense and over arch whole on every rank. Without a plan each rank holds
** the whole model (data-parallel inference; at -np 1 the unsharded model).
**
** Rank 0 reads the requests: a safetensors file with `dense` f32 [N, Dn],
** `lengths` i64 [F * N] and `values` i64 (the KJT of the N requests,
** feature-major: every request's ids of feature 0, then of feature 1, ...),
** or N generated ones (seeded, ids uniform in each table). Per batch of B
** requests, rank 0 broadcasts it (MPI_Bcast), each rank takes its slice of
** ceil(B / W) requests (the last slices padded with empty requests: every
** rank of a sharded forward gives the same batch size), all ranks run the
** forward together, and rank 0 gathers the logits and, at the end, writes
** them as `--out` [N, 1] f32 (.npy), the model's output as rec.dlrm returns
** it. --compare: rank 0 compares them with another run's file (e.g. the
** unsharded model's, -np 1 without --plan), within --tolerance (0: bit
** for bit), and fails otherwise.
**
** MPI is initialised here (MPI_THREAD_SERIALIZED, one thread makes every
** call), before loom loads rec-mpi, which then leaves it to this host.
*/
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "loom/loom.h"

#define CLS "rec.dlrm"

static int rank, world;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "sharded_infer: rank %d: ", rank); \
    fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)
#define LOOM(call, what) CHECK((call) == LOOM_OK, "%s: %s", what, loom_last_error())

/* The requests, on rank 0: N of them, F features, Dn dense columns. */
typedef struct requests {
    int64_t N, F, Dn;
    float *dense;                 /* [N, Dn] */
    int64_t *lengths;             /* [F, N] */
    int64_t *values;              /* feature-major */
    int64_t *start;               /* [F * N + 1] offsets of each (feature, request) */
} requests;

static void index_requests(requests *q)
{
    q->start = malloc(sizeof(int64_t) * (size_t)(q->F * q->N + 1));
    CHECK(q->start != NULL, "out of memory");
    q->start[0] = 0;
    for (int64_t i = 0; i < q->F * q->N; i++) {
        CHECK(q->lengths[i] >= 0, "requests: lengths[%lld] is %lld", (long long)i, (long long)q->lengths[i]);
        q->start[i + 1] = q->start[i] + q->lengths[i];
    }
}

static const loom_tensor *get(loom_safetensors *st, const char *path, const char *name, loom_dtype dt)
{
    const loom_tensor *t = NULL;
    LOOM(loom_safetensors_get(st, name, &t), name);
    CHECK(loom_tensor_dtype_of(t) == dt, "%s: '%s' has another dtype than the %s it must be", path, name,
          dt == LOOM_DTYPE_F32 ? "f32" : "i64");
    return t;
}

static void read_requests(const char *path, requests *q)
{
    loom_safetensors *st = NULL;
    LOOM(loom_safetensors_open(&st, path), path);
    const loom_tensor *d = get(st, path, "dense", LOOM_DTYPE_F32), *l = get(st, path, "lengths", LOOM_DTYPE_I64);
    const loom_tensor *v = get(st, path, "values", LOOM_DTYPE_I64);
    CHECK(d->ndim == 2 && d->shape[0] > 0, "%s: 'dense' must be [N, dense_in_features] with N > 0", path);
    q->N = d->shape[0];
    q->Dn = d->shape[1];
    CHECK(loom_numel(l) % q->N == 0, "%s: 'lengths' has %lld entries, not F * N for N = %lld", path,
          (long long)loom_numel(l), (long long)q->N);
    q->F = loom_numel(l) / q->N;
    q->dense = malloc(sizeof(float) * (size_t)(q->N * q->Dn));
    q->lengths = malloc(sizeof(int64_t) * (size_t)(q->F * q->N));
    q->values = malloc(sizeof(int64_t) * (size_t)(loom_numel(v) + 1));
    CHECK(q->dense && q->lengths && q->values, "out of memory");
    memcpy(q->dense, loom_data(d), sizeof(float) * (size_t)(q->N * q->Dn));
    memcpy(q->lengths, loom_data(l), sizeof(int64_t) * (size_t)(q->F * q->N));
    memcpy(q->values, loom_data(v), sizeof(int64_t) * (size_t)loom_numel(v));
    index_requests(q);
    CHECK(q->start[q->F * q->N] == loom_numel(v), "%s: the lengths add up to %lld ids, 'values' holds %lld", path,
          (long long)q->start[q->F * q->N], (long long)loom_numel(v));
    loom_safetensors_close(st);
}

/* N requests from a seeded generator: per feature, 0 to 3 ids uniform in
** its table; dense uniform in [0, 1). feature_rows[f]: the rows of feature
** f's table. */
static void generate_requests(int64_t N, int64_t F, const int64_t *feature_rows, int64_t Dn, uint64_t seed,
                              requests *q)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
#define NEXT() (s = s * 6364136223846793005ULL + 1442695040888963407ULL, (uint32_t)(s >> 33))
    q->N = N;
    q->F = F;
    q->Dn = Dn;
    q->dense = malloc(sizeof(float) * (size_t)(N * Dn));
    q->lengths = malloc(sizeof(int64_t) * (size_t)(F * N));
    CHECK(q->dense && q->lengths, "out of memory");
    for (int64_t i = 0; i < N * Dn; i++)
        q->dense[i] = (float)(NEXT() >> 8) / 16777216.0f;
    for (int64_t i = 0; i < F * N; i++)
        q->lengths[i] = NEXT() % 4;
    index_requests(q);
    q->values = malloc(sizeof(int64_t) * (size_t)(q->start[F * N] + 1));
    CHECK(q->values != NULL, "out of memory");
    for (int64_t f = 0; f < F; f++)
        for (int64_t i = q->start[f * N]; i < q->start[(f + 1) * N]; i++)
            q->values[i] = NEXT() % (uint32_t)feature_rows[f];
#undef NEXT
}

static void save_requests(const char *path, const requests *q)
{
    loom_tensor *t[3] = { NULL, NULL, NULL };
    int64_t sd[2] = { q->N, q->Dn }, sl[1] = { q->F * q->N }, sv[1] = { q->start[q->F * q->N] };
    LOOM(loom_tensor_wrap(&t[0], q->dense, LOOM_DTYPE_F32, 2, sd, NULL, NULL), "wrap");
    LOOM(loom_tensor_wrap(&t[1], q->lengths, LOOM_DTYPE_I64, 1, sl, NULL, NULL), "wrap");
    LOOM(loom_tensor_wrap(&t[2], q->values, LOOM_DTYPE_I64, 1, sv, NULL, NULL), "wrap");
    const char *const names[3] = { "dense", "lengths", "values" };
    LOOM(loom_safetensors_write(path, names, (const loom_tensor *const *)t, 3), path);
    for (int i = 0; i < 3; i++)
        loom_tensor_free(t[i]);
}

/* The rows of each feature's table, from the attributes num_embeddings and
** feature_names ("f0|f1,f2": features of each table; none: one per table). */
static int64_t feature_rows(const char *num_embeddings, const char *feature_names, int64_t *rows, int64_t cap)
{
    int64_t F = 0;
    const char *ne = num_embeddings, *fn = feature_names;
    while (ne && *ne) {
        char *end;
        const long long e = strtoll(ne, &end, 10);
        CHECK(end != ne && e > 0, "--generate: num_embeddings '%s' is not a list of row counts", num_embeddings);
        int64_t nf = 1;
        if (fn && *fn) {
            for (const char *p = fn; *p && *p != ','; p++)
                nf += *p == '|';
            fn = strchr(fn, ',');
            fn = fn ? fn + 1 : NULL;
        }
        for (int64_t k = 0; k < nf; k++) {
            CHECK(F < cap, "--generate: more than %lld features", (long long)cap);
            rows[F++] = e;
        }
        ne = *end == ',' ? end + 1 : NULL;
    }
    return F;
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    const char *weights = NULL, *plan = NULL, *req_path = NULL, *save_path = NULL, *out_path = NULL, *cmp = NULL;
    const char *attr_k[64], *attr_v[64];
    int n_attr = 0;
    int64_t generate = 0, B = 64;
    uint64_t seed = 1;
    double tol = 0.0;
    char *kv[64];
    const char *ne = NULL, *fn = "", *dense_in = "13";
    for (int i = 1; i < argc; i++) {
        const int more = i + 1 < argc;
        if (!strcmp(argv[i], "--weights") && more) weights = argv[++i];
        else if (!strcmp(argv[i], "--plan") && more) plan = argv[++i];
        else if (!strcmp(argv[i], "--requests") && more) req_path = argv[++i];
        else if (!strcmp(argv[i], "--generate") && more) generate = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && more) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--save-requests") && more) save_path = argv[++i];
        else if (!strcmp(argv[i], "--batch") && more) B = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--out") && more) out_path = argv[++i];
        else if (!strcmp(argv[i], "--compare") && more) cmp = argv[++i];
        else if (!strcmp(argv[i], "--tolerance") && more) tol = atof(argv[++i]);
        else if (!strcmp(argv[i], "--attr") && more && n_attr < 64) {
            kv[n_attr] = strdup(argv[++i]);
            char *eq = strchr(kv[n_attr], '=');
            CHECK(eq != NULL, "--attr %s: expected KEY=VALUE", argv[i]);
            *eq = '\0';
            attr_k[n_attr] = kv[n_attr];
            attr_v[n_attr] = eq + 1;
            if (!strcmp(attr_k[n_attr], "num_embeddings")) ne = attr_v[n_attr];
            if (!strcmp(attr_k[n_attr], "feature_names")) fn = attr_v[n_attr];
            if (!strcmp(attr_k[n_attr], "dense_in_features")) dense_in = attr_v[n_attr];
            n_attr++;
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: mpirun -np W %s --weights W.safetensors --attr KEY=VALUE ... [--plan PLAN] "
                        "(--requests R.safetensors | --generate N [--seed S]) [--save-requests R.safetensors] "
                        "[--batch B] --out P.npy [--compare REF.npy [--tolerance X]]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    CHECK(weights && out_path && (req_path || generate > 0) && B > 0,
          "--weights, --out and --requests or --generate N are required, --batch positive");
    loom_init_options io = LOOM_INIT_OPTIONS_INIT;
    io.num_threads = 1;        /* one process per rank on a shared machine */
    LOOM(loom_init(&io), "loom_init");

    /* the model, the same on every rank */
    loom_attrs *a = NULL;
    LOOM(loom_attrs_new(&a), "loom_attrs_new");
    for (int i = 0; i < n_attr; i++)
        LOOM(loom_attrs_parse(a, CLS, attr_k[i], attr_v[i]), attr_k[i]);
    if (plan)
        LOOM(loom_attrs_parse(a, CLS, "plan", plan), "plan");
    loom_object *model = NULL;
    LOOM(loom_object_create(&model, CLS, a, weights), "creating " CLS);
    loom_attrs_free(a);

    /* the unsharded model names the KJT's keys (every feature, in the
    ** collection's order); a sharded call takes them in that order unnamed */
    loom_attrs *call_attrs = NULL;
    char *keys = strdup(fn);
    CHECK(keys != NULL, "out of memory");
    for (char *p = keys; *p; p++)
        *p = *p == '|' ? ',' : *p;
    if (!plan && *keys) {
        LOOM(loom_attrs_new(&call_attrs), "loom_attrs_new");
        LOOM(loom_attrs_parse(call_attrs, CLS, "keys", keys), "keys");
    }

    /* the requests, on rank 0; their sizes to every rank */
    requests q = { 0 };
    if (rank == 0) {
        if (req_path) {
            read_requests(req_path, &q);
        } else {
            int64_t rows[1024];
            CHECK(ne != NULL, "--generate needs --attr num_embeddings=...");
            const int64_t F = feature_rows(ne, fn, rows, 1024);
            generate_requests(generate, F, rows, atoll(dense_in), seed, &q);
        }
        if (save_path)
            save_requests(save_path, &q);
    }
    int64_t dims[3] = { q.N, q.F, q.Dn };
    MPI_Bcast(dims, 3, MPI_INT64_T, 0, MPI_COMM_WORLD);
    const int64_t N = dims[0], F = dims[1], Dn = dims[2];
    float *pred = rank == 0 ? malloc(sizeof(float) * (size_t)N) : NULL;
    const int64_t S = (B + world - 1) / world;                      /* requests per rank per batch */
    float *gathered = rank == 0 ? malloc(sizeof(float) * (size_t)(S * world)) : NULL;
    int64_t batches = 0;
    for (int64_t r0 = 0; r0 < N; r0 += B, batches++) {
        const int64_t b = N - r0 < B ? N - r0 : B;
        /* rank 0 packs the batch: dense [b, Dn], lengths [F, b], values; broadcast */
        int64_t hdr[1] = { 0 };
        int64_t *blen = malloc(sizeof(int64_t) * (size_t)(F * b));
        float *bden = malloc(sizeof(float) * (size_t)(b * Dn));
        int64_t *bval = NULL;
        CHECK(blen && bden, "out of memory");
        if (rank == 0) {
            for (int64_t f = 0; f < F; f++)
                for (int64_t s = 0; s < b; s++) {
                    blen[f * b + s] = q.lengths[f * N + r0 + s];
                    hdr[0] += blen[f * b + s];
                }
            memcpy(bden, q.dense + r0 * Dn, sizeof(float) * (size_t)(b * Dn));
        }
        MPI_Bcast(hdr, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
        bval = malloc(sizeof(int64_t) * (size_t)(hdr[0] + 1));
        CHECK(bval != NULL, "out of memory");
        if (rank == 0) {
            int64_t n = 0;
            for (int64_t f = 0; f < F; f++) {
                const int64_t i0 = q.start[f * N + r0], i1 = q.start[f * N + r0 + b];
                memcpy(bval + n, q.values + i0, sizeof(int64_t) * (size_t)(i1 - i0));
                n += i1 - i0;
            }
        }
        CHECK(F * b <= INT32_MAX && b * Dn <= INT32_MAX && hdr[0] <= INT32_MAX, "a batch exceeds MPI's int counts");
        MPI_Bcast(blen, (int)(F * b), MPI_INT64_T, 0, MPI_COMM_WORLD);
        MPI_Bcast(bden, (int)(b * Dn), MPI_FLOAT, 0, MPI_COMM_WORLD);
        MPI_Bcast(bval, (int)hdr[0], MPI_INT64_T, 0, MPI_COMM_WORLD);

        /* this rank's slice: requests rank * S .., padded to S with empty ones */
        int64_t *llen = calloc((size_t)(F * S), sizeof *llen);
        float *lden = calloc((size_t)(S * Dn), sizeof *lden);
        int64_t *lval = malloc(sizeof(int64_t) * (size_t)(hdr[0] + 1));
        CHECK(llen && lden && lval, "out of memory");
        const int64_t s0 = rank * S < b ? rank * S : b, s1 = (rank + 1) * S < b ? (rank + 1) * S : b;
        int64_t n = 0, at = 0;
        for (int64_t f = 0; f < F; f++)
            for (int64_t s = 0; s < b; s++) {
                const int64_t len = blen[f * b + s];
                if (s >= s0 && s < s1) {
                    llen[f * S + s - s0] = len;
                    memcpy(lval + n, bval + at, sizeof(int64_t) * (size_t)len);
                    n += len;
                }
                at += len;
            }
        if (s1 > s0)
            memcpy(lden, bden + s0 * Dn, sizeof(float) * (size_t)((s1 - s0) * Dn));
        loom_tensor *td = NULL, *tv = NULL, *tl = NULL, *out = NULL;
        int64_t sd[2] = { S, Dn }, sv[1] = { n }, sl[1] = { F * S };
        LOOM(loom_tensor_wrap(&td, lden, LOOM_DTYPE_F32, 2, sd, NULL, NULL), "wrap");
        LOOM(loom_tensor_wrap(&tv, lval, LOOM_DTYPE_I64, 1, sv, NULL, NULL), "wrap");
        LOOM(loom_tensor_wrap(&tl, llen, LOOM_DTYPE_I64, 1, sl, NULL, NULL), "wrap");
        const loom_tensor *in[3] = { td, tv, tl };
        loom_call_options co = LOOM_CALL_OPTIONS_INIT;
        co.object = model;
        LOOM(loom_run(CLS, in, 3, call_attrs, &out, 1, &co), CLS);   /* collective with a plan */
        CHECK(loom_numel(out) == S, "%s returned %lld logits for %lld requests", CLS, (long long)loom_numel(out),
              (long long)S);
        CHECK(S <= INT32_MAX, "a slice exceeds MPI's int counts");
        MPI_Gather(loom_data(out), (int)S, MPI_FLOAT, gathered, (int)S, MPI_FLOAT, 0, MPI_COMM_WORLD);
        if (rank == 0)
            memcpy(pred + r0, gathered, sizeof(float) * (size_t)b);  /* slices in rank order; the padding is last */
        loom_tensor_free(out);
        loom_tensor_free(td);
        loom_tensor_free(tv);
        loom_tensor_free(tl);
        free(llen);
        free(lden);
        free(lval);
        free(blen);
        free(bden);
        free(bval);
    }
    printf("sharded_infer: rank %d of %d: answered %lld requests in %lld batches (%s)\n", rank, world, (long long)N,
           (long long)batches, plan ? "sharded" : "whole model on each rank");
    if (rank == 0) {
        loom_tensor *tp = NULL;
        int64_t sp[2] = { N, 1 };
        LOOM(loom_tensor_wrap(&tp, pred, LOOM_DTYPE_F32, 2, sp, NULL, NULL), "wrap");
        LOOM(loom_npy_write(out_path, tp), out_path);
        loom_tensor_free(tp);
        if (cmp) {
            loom_tensor *ref = NULL;
            LOOM(loom_npy_read(&ref, cmp), cmp);
            CHECK(loom_tensor_dtype_of(ref) == LOOM_DTYPE_F32 && loom_numel(ref) == N,
                  "%s is not %lld f32 predictions", cmp, (long long)N);
            const float *r = loom_data(ref);
            double worst = 0;
            int64_t differ = 0;
            for (int64_t i = 0; i < N; i++) {
                const double d = fabs((double)pred[i] - (double)r[i]);
                worst = d > worst ? d : worst;
                differ += memcmp(&pred[i], &r[i], sizeof(float)) != 0;
            }
            CHECK(worst <= tol && (tol > 0 || differ == 0), "%lld of %lld predictions differ from %s, by up to %g "
                  "(tolerance %g)", (long long)differ, (long long)N, cmp, worst, tol);
            printf("sharded_infer: the %lld predictions equal %s (%lld differ in any bit, largest difference %g, "
                   "tolerance %g)\n", (long long)N, cmp, (long long)differ, worst, tol);
            loom_tensor_free(ref);
        }
    }
    free(pred);
    free(gathered);
    loom_object_free(model);
    loom_attrs_free(call_attrs);
    free(keys);
    for (int i = 0; i < n_attr; i++)
        free(kv[i]);
    free(q.dense);
    free(q.lengths);
    free(q.values);
    free(q.start);
    loom_shutdown();
    MPI_Finalize();
    return 0;
}
