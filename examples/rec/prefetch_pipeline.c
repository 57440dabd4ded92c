/* SPDX-License-Identifier: BSD-3-Clause */
/*
** prefetch_pipeline.c - torchrec's PrefetchTrainPipelineSparseDist in a C
** host program: a sharded EmbeddingBagCollection whose tables are cached
** (compute_kernel fused_uvm_caching), trained batch after batch while the
** cache fill for the next batch runs on a second thread.
**
**   mpirun -np 2 prefetch_pipeline [--steps N] [--batch B] [--load-factor F]
**                                  [--timeline out.json] [--mixed] [--check | --refusals]
**
** One rank per process (on CPU: processes of this machine). Every rank makes
** the same tables (a seeded generator), the same plan (table-wise and
** row-wise tables, every one fused_uvm_caching with cache_load_factor F) and
** the same global batches; each rank trains on its B samples of each.
**
** Per step i, in torchrec's order (input dist of i+1, prefetch of i+1,
** forward/backward of i):
**   main thread   rec.sharded_embedding_bag_collection_prefetch stage=dist
**                 on batch i+1 (the input all-to-all: collective, so on the
**                 thread that makes every MPI call; MPI is initialised
**                 MPI_THREAD_SERIALIZED), then hands the fill to the worker,
**                 then the forward and the backward (fused SGD) of batch i;
**   worker thread stage=fill on batch i+1: fbgemm.tbe_prefetch on the local
**                 caching TBE (no MPI), while the main thread runs batch i.
** Both join before step i+1. Batch 0 is prefetched before the loop. The
** forward of batch i takes the input that the dist of batch i distributed
** (the collection keeps it, as torchrec's pipeline keeps the input_dist
** context): it runs no KJT all-to-all of its own.
**
** --timeline out.json: every rank records the begin and end
** (CLOCK_MONOTONIC, one clock for every process of the machine) of each
** stage of each step; rank 0 gathers them and writes Chrome trace JSON
** (chrome://tracing, ui.perfetto.dev: one process per rank, the main and
** the prefetch thread) and prints the measured overlap: the time the
** prefetch of i+1 ran while the forward (and the backward) of i ran.
** tools/rec_timeline.py prints the same from the file.
**
** --check: the same batches are also trained, one after the other, by a
** collection over the same plan without the pipeline (each forward fills
** its own cache) and by one whose tables are fused (no cache); every
** forward output and, at the end, every table must be the same bits on all
** three. The stats method's counters must show that every pipelined
** forward took its prefetched input and ran no KJT all-to-all, every
** unpipelined one ran its own; and a forward of another batch than the
** one prefetched (on some ranks only) must distribute its own and give the
** uncached bits, the prefetched batch still taken by its forward after.
** Each rank prints "pipeline equals the unpipelined and the uncached
** collection bit for bit" (tests/rec/shard/meson.build, suite mpi).
** --mixed: table t1 fused, the others cached, so every rank holds shards
** of both kernels and looks them up on two local TBEs (one per kernel, as
** torchrec groups them); --check then holds the same, bit for bit.
** --refusals: a plan giving a rank's cached shards two load factors, a fill
** before its dist, an unknown stage and a dist without its batch are
** refused on every rank, and the collection works afterwards.
*/
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <mpi.h>

#include "loom/loom.h"

#define SEBC "rec.sharded_embedding_bag_collection"
#define T 4
#define F 5

static const int64_t E[T] = { 4000, 2500, 3000, 1500 };
static const int64_t DIM[T] = { 16, 8, 16, 32 };
static const char *const NAMES[T] = { "t0", "t1", "t2", "t3" };
static const int FEATURE_TABLE[F] = { 0, 0, 1, 2, 3 };
static const char *const FEATURES = "f0|f1,f2,f3,f4";
static int64_t D_TOTAL;                       /* sum over features of their table's D */

static int rank, world;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "rank %d: ", rank); fprintf(stderr, __VA_ARGS__); \
    fprintf(stderr, "\n"); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)
#define LOOM(call, what) CHECK((call) == LOOM_OK, "%s: %s", what, loom_last_error())

static uint64_t rng;
static uint32_t next_u32(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng >> 33);
}
static float uniform(void) { return (float)((next_u32() >> 8) * (1.0 / 16777216.0) * 2.0 - 1.0); }

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* CPU seconds of this process, every thread (getrusage). */
static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec
         + 1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* ------------------------------------------------------------ the plan */

static void put(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char *buf, size_t cap, const char *fmt, ...)
{
    size_t n = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
}

/* Tables 0 and 2 table-wise (on ranks 0 and 1 % W), 1 and 3 row-wise over
** every rank; kernel fused_uvm_caching with load factor lf (cached 1), or
** fused (0), or t1 fused and the others cached (2: both kernels on every
** rank, two local TBEs each), or every table cached but t1 with load
** factor lf / 2 (3: two load factors on every rank, refused). */
static void make_plan(char *buf, size_t cap, int cached, double lf)
{
    buf[0] = '\0';
    put(buf, cap, "{\"format\":\"loom.rec.plan/1\",\"world_size\":%d,\"tables\":[", world);
    for (int t = 0; t < T; t++) {
        put(buf, cap, "%s{\"name\":\"%s\",\"num_embeddings\":%lld,\"embedding_dim\":%lld,\"sharding_type\":\"%s\","
            "\"compute_kernel\":\"%s\",", t ? "," : "", NAMES[t], (long long)E[t], (long long)DIM[t],
            t % 2 == 0 ? "table_wise" : "row_wise", cached && !(cached == 2 && t == 1) ? "fused_uvm_caching" : "fused");
        if (cached && !(cached == 2 && t == 1))
            put(buf, cap, "\"cache_load_factor\":%.17g,\"prefetch_pipeline\":true,",
                cached == 3 && t == 1 ? lf / 2 : lf);
        if (t % 2 == 0) {
            const int r = (t / 2) % world;
            put(buf, cap, "\"ranks\":[%d],\"shards\":[{\"rank\":%d,\"offsets\":[0,0],\"sizes\":[%lld,%lld]}]}", r, r,
                (long long)E[t], (long long)DIM[t]);
            continue;
        }
        const int64_t block = (E[t] + world - 1) / world;
        put(buf, cap, "\"ranks\":[");
        for (int q = 0; q < world; q++)
            put(buf, cap, "%s%d", q ? "," : "", q);
        put(buf, cap, "],\"shards\":[");
        for (int q = 0; q < world; q++) {
            const int64_t r0 = block * q < E[t] ? block * q : E[t];
            const int64_t r1 = block * (q + 1) < E[t] ? block * (q + 1) : E[t];
            put(buf, cap, "%s{\"rank\":%d,\"offsets\":[%lld,0],\"sizes\":[%lld,%lld]}", q ? "," : "", q,
                (long long)r0, (long long)(r1 - r0), (long long)DIM[t]);
        }
        put(buf, cap, "]}");
    }
    put(buf, cap, "]}");
}

static loom_object *make_collection(const char *plan, loom_tensor *const *tables)
{
    char keys[T][64];
    loom_named_tensor named[T];
    for (int t = 0; t < T; t++) {
        snprintf(keys[t], sizeof keys[t], "embedding_bags.%s.weight", NAMES[t]);
        named[t] = (loom_named_tensor){ keys[t], tables[t] };
    }
    loom_attrs *a = NULL;
    LOOM(loom_attrs_new(&a), "loom_attrs_new");
    static const char *const names[] = { "tables", "num_embeddings", "embedding_dim", "feature_names", "optimizer",
                                         "lr", "timeout_s" };
    char ne[128] = "", ed[128] = "", tn[64] = "";
    for (int t = 0; t < T; t++) {
        put(ne, sizeof ne, "%s%lld", t ? "," : "", (long long)E[t]);
        put(ed, sizeof ed, "%s%lld", t ? "," : "", (long long)DIM[t]);
        put(tn, sizeof tn, "%s%s", t ? "," : "", NAMES[t]);
    }
    const char *values[] = { tn, ne, ed, FEATURES, "sgd", "0.05", "60" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        LOOM(loom_attrs_parse(a, SEBC, names[i], values[i]), names[i]);
    LOOM(loom_attrs_parse(a, SEBC, "plan", plan), "plan");
    loom_object_options oo = LOOM_OBJECT_OPTIONS_INIT;
    oo.n_tensors = T;
    oo.tensors = named;
    loom_object *o = NULL;
    LOOM(loom_object_create_ex(&o, SEBC, a, &oo), "creating " SEBC);
    loom_attrs_free(a);
    return o;
}

/* ------------------------------------------------------------ batches */

/* This rank's B samples of global batch `step`: the KJT (values, lengths
** [F * B], feature-major) and the gradient [B, D_TOTAL] of its output. */
typedef struct batch {
    int64_t *values, *lengths;
    float *grad;
    loom_tensor *tv, *tl, *tg;
} batch;

static void make_batch(batch *b, int step, int64_t B)
{
    const int64_t G = (int64_t)world * B;
    rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(step + 1) * 7919;
    int64_t *glen = malloc(sizeof(int64_t) * F * G);
    int64_t total = 0;
    for (int64_t i = 0; i < F * G; i++)
        total += glen[i] = 1 + next_u32() % 4;
    b->lengths = malloc(sizeof(int64_t) * F * B);
    b->values = malloc(sizeof(int64_t) * (total + 1));
    int64_t n = 0;
    for (int f = 0; f < F; f++)
        for (int64_t s = 0; s < G; s++) {
            const int mine = s / B == rank;
            if (mine)
                b->lengths[f * B + s % B] = glen[f * G + s];
            for (int64_t k = 0; k < glen[f * G + s]; k++) {
                /* skewed ids, E u^2 for a uniform u in [0, 1): the low rows are hot, as in click logs */
                const uint64_t u = next_u32() % 65536;
                const int64_t id = (int64_t)((u * u * (uint64_t)E[FEATURE_TABLE[f]]) >> 32);
                if (mine)
                    b->values[n++] = id;
            }
        }
    free(glen);
    b->grad = malloc(sizeof(float) * B * D_TOTAL);
    rng ^= (uint64_t)rank * 0x2545F4914F6CDD1DULL;
    for (int64_t i = 0; i < B * D_TOTAL; i++)
        b->grad[i] = uniform() / 8.0f;
    int64_t sv[1] = { n }, sl[1] = { F * B }, sg[2] = { B, D_TOTAL };
    LOOM(loom_tensor_wrap(&b->tv, b->values, LOOM_DTYPE_I64, 1, sv, NULL, NULL), "wrap");
    LOOM(loom_tensor_wrap(&b->tl, b->lengths, LOOM_DTYPE_I64, 1, sl, NULL, NULL), "wrap");
    LOOM(loom_tensor_wrap(&b->tg, b->grad, LOOM_DTYPE_F32, 2, sg, NULL, NULL), "wrap");
}

static void free_batch(batch *b)
{
    loom_tensor_free(b->tv);
    loom_tensor_free(b->tl);
    loom_tensor_free(b->tg);
    free(b->values);
    free(b->lengths);
    free(b->grad);
}

/* ------------------------------------------------------------ the timeline */

enum { ST_DIST, ST_PREFETCH, ST_FORWARD, ST_BACKWARD, ST_N };
static const char *const STAGE[ST_N] = { "input_dist", "prefetch", "forward", "backward" };

typedef struct event {
    double t0, t1;            /* CLOCK_MONOTONIC, microseconds */
    int32_t stage, step;      /* step: the batch the stage works on */
    int32_t tid, rank;        /* 0 main, 1 prefetch */
} event;

static event *events;
static int n_events, cap_events;
static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;

static void record(int stage, int step, int tid, double t0, double t1)
{
    pthread_mutex_lock(&events_lock);
    if (n_events == cap_events) {
        cap_events = cap_events ? 2 * cap_events : 256;
        events = realloc(events, sizeof *events * (size_t)cap_events);
        CHECK(events != NULL, "out of memory");
    }
    events[n_events++] = (event){ t0, t1, stage, step, tid, rank };
    pthread_mutex_unlock(&events_lock);
}

/* The overlap of the prefetch of i + 1 with the forward (and the backward)
** of i, summed over the steps of one rank's events. */
static void overlap(const event *ev, int n, int r, double *pf, double *fwd, double *with_fwd, double *with_fb)
{
    *pf = *fwd = *with_fwd = *with_fb = 0;
    for (int a = 0; a < n; a++) {
        if (ev[a].rank != r)
            continue;
        if (ev[a].stage == ST_FORWARD)
            *fwd += ev[a].t1 - ev[a].t0;
        if (ev[a].stage != ST_PREFETCH || ev[a].tid != 1)
            continue;
        *pf += ev[a].t1 - ev[a].t0;
        for (int b = 0; b < n; b++) {
            if (ev[b].rank != r || ev[b].step != ev[a].step - 1 || (ev[b].stage != ST_FORWARD && ev[b].stage != ST_BACKWARD))
                continue;
            const double lo = ev[a].t0 > ev[b].t0 ? ev[a].t0 : ev[b].t0;
            const double hi = ev[a].t1 < ev[b].t1 ? ev[a].t1 : ev[b].t1;
            if (hi > lo) {
                *with_fb += hi - lo;
                if (ev[b].stage == ST_FORWARD)
                    *with_fwd += hi - lo;
            }
        }
    }
}

/* Rank 0 gathers every rank's events, writes the trace and prints the overlap. */
static void write_timeline(const char *path)
{
    int mine = n_events * (int)sizeof(event);
    int *counts = rank == 0 ? calloc((size_t)world, sizeof *counts) : NULL;
    int *displs = rank == 0 ? calloc((size_t)world, sizeof *displs) : NULL;
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    for (int q = 0; rank == 0 && q < world; q++) {
        displs[q] = total;
        total += counts[q];
    }
    event *all = rank == 0 ? malloc((size_t)total + 1) : NULL;
    MPI_Gatherv(events, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        const int n = total / (int)sizeof(event);
        double origin = n > 0 ? all[0].t0 : 0;
        for (int i = 0; i < n; i++)
            origin = all[i].t0 < origin ? all[i].t0 : origin;
        FILE *fp = fopen(path, "w");
        CHECK(fp != NULL, "cannot write %s", path);
        fprintf(fp, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
        for (int q = 0; q < world; q++) {
            fprintf(fp, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank %d\"}},\n", q, q);
            fprintf(fp, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"main\"}},\n", q);
            fprintf(fp, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":1,\"args\":{\"name\":\"prefetch\"}},\n",
                    q);
        }
        for (int i = 0; i < n; i++)
            fprintf(fp, "{\"name\":\"%s %d\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":%d,"
                    "\"args\":{\"step\":%d}}%s\n", STAGE[all[i].stage], all[i].step, STAGE[all[i].stage],
                    all[i].t0 - origin, all[i].t1 - all[i].t0, all[i].rank, all[i].tid, all[i].step,
                    i + 1 < n ? "," : "");
        fprintf(fp, "]}\n");
        fclose(fp);
        printf("timeline: %d events of %d ranks written to %s\n", n, world, path);
        for (int q = 0; q < world; q++) {
            double pf, fwd, wf, wfb;
            overlap(all, n, q, &pf, &fwd, &wf, &wfb);
            printf("timeline: rank %d: prefetch %.2f ms, forward %.2f ms; prefetch of i+1 overlapping the forward of "
                   "i %.2f ms (%.0f%% of the prefetch), the forward or backward of i %.2f ms (%.0f%%)\n", q,
                   pf / 1e3, fwd / 1e3, wf / 1e3, pf > 0 ? 100 * wf / pf : 0, wfb / 1e3, pf > 0 ? 100 * wfb / pf : 0);
        }
    }
    free(all);
    free(counts);
    free(displs);
}

/* ------------------------------------------------------------ steps */

static void call(loom_object *o, const char *op, const batch *b, const char *stage, loom_tensor **out)
{
    loom_call_options co = LOOM_CALL_OPTIONS_INIT;
    co.object = o;
    loom_attrs *a = NULL;
    if (stage != NULL) {
        LOOM(loom_attrs_new(&a), "loom_attrs_new");
        LOOM(loom_attrs_parse(a, op, "stage", stage), "stage");
    }
    const loom_tensor *in[4] = { b->tv, b->tl, NULL, b->tg };
    const int backward = strstr(op, "_backward") != NULL;
    LOOM(loom_run(op, in, backward ? 4 : 3, a, out, out ? 1 : 0, &co), op);
    loom_attrs_free(a);
}

typedef struct fill_job {
    loom_object *o;
    const batch *b;
    int step;
} fill_job;

static void *fill_thread(void *arg)
{
    const fill_job *j = arg;
    const double t0 = now_us();
    call(j->o, SEBC "_prefetch", j->b, "fill", NULL);
    record(ST_PREFETCH, j->step, 1, t0, now_us());
    return NULL;
}

/* Train `steps` batches; pipelined: the prefetch pipeline above, else each
** forward fills its own cache. outs[i] receives forward i's output. */
static void train(loom_object *o, batch *batches, int steps, int pipelined, loom_tensor **outs, int timed)
{
    if (pipelined) {
        const double t0 = now_us();
        call(o, SEBC "_prefetch", &batches[0], "all", NULL);
        if (timed)
            record(ST_PREFETCH, 0, 0, t0, now_us());
    }
    for (int i = 0; i < steps; i++) {
        pthread_t th;
        fill_job j = { o, &batches[i + 1], i + 1 };
        const int ahead = pipelined && i + 1 < steps;
        if (ahead) {
            const double t0 = now_us();
            call(o, SEBC "_prefetch", &batches[i + 1], "dist", NULL);
            if (timed)
                record(ST_DIST, i + 1, 0, t0, now_us());
            CHECK(pthread_create(&th, NULL, fill_thread, &j) == 0, "pthread_create");
        }
        double t0 = now_us();
        call(o, SEBC, &batches[i], NULL, &outs[i]);
        double t1 = now_us();
        call(o, SEBC "_backward", &batches[i], NULL, NULL);
        if (timed) {
            record(ST_FORWARD, i, 0, t0, t1);
            record(ST_BACKWARD, i, 0, t1, now_us());
        }
        if (ahead)
            CHECK(pthread_join(th, NULL) == 0, "pthread_join");
    }
}

/* --refusals: a plan giving a rank's cached shards two load factors, a fill
** before any dist and an unknown stage are refused, on every rank, saying why. */
static void refusals(loom_tensor *const *tables, double lf, const batch *b)
{
    static char plan[65536];
    make_plan(plan, sizeof plan, 3, lf);
    char keys[T][64];
    loom_named_tensor named[T];
    for (int t = 0; t < T; t++) {
        snprintf(keys[t], sizeof keys[t], "embedding_bags.%s.weight", NAMES[t]);
        named[t] = (loom_named_tensor){ keys[t], tables[t] };
    }
    loom_attrs *a = NULL;
    LOOM(loom_attrs_new(&a), "loom_attrs_new");
    LOOM(loom_attrs_parse(a, SEBC, "tables", "t0,t1,t2,t3"), "tables");
    LOOM(loom_attrs_parse(a, SEBC, "num_embeddings", "4000,2500,3000,1500"), "num_embeddings");
    LOOM(loom_attrs_parse(a, SEBC, "embedding_dim", "16,8,16,32"), "embedding_dim");
    LOOM(loom_attrs_parse(a, SEBC, "feature_names", FEATURES), "feature_names");
    LOOM(loom_attrs_parse(a, SEBC, "plan", plan), "plan");
    loom_object_options oo = LOOM_OBJECT_OPTIONS_INIT;
    oo.n_tensors = T;
    oo.tensors = named;
    loom_object *o = NULL;
    CHECK(loom_object_create_ex(&o, SEBC, a, &oo) != LOOM_OK, "a plan with two load factors on a rank was accepted");
    CHECK(strstr(loom_last_error(), "holds shards of table 't0'") && strstr(loom_last_error(), "one cache_load_factor"),
          "the refusal of two load factors does not say why: %s", loom_last_error());
    printf("rank %d: refused: %s\n", rank, loom_last_error());
    loom_attrs_free(a);
    make_plan(plan, sizeof plan, 1, lf);
    o = make_collection(plan, tables);
    loom_call_options co = LOOM_CALL_OPTIONS_INIT;
    co.object = o;
    const loom_tensor *in[2] = { b->tv, b->tl };
    loom_attrs *st = NULL;
    LOOM(loom_attrs_new(&st), "loom_attrs_new");
    LOOM(loom_attrs_parse(st, SEBC "_prefetch", "stage", "fill"), "stage");
    CHECK(loom_run(SEBC "_prefetch", in, 2, st, NULL, 0, &co) != LOOM_OK && strstr(loom_last_error(), "no batch to fill"),
          "a fill before any dist: %s", loom_last_error());
    LOOM(loom_attrs_parse(st, SEBC "_prefetch", "stage", "later"), "stage");
    CHECK(loom_run(SEBC "_prefetch", in, 2, st, NULL, 0, &co) != LOOM_OK && strstr(loom_last_error(), "stage 'later'"),
          "an unknown stage: %s", loom_last_error());
    LOOM(loom_attrs_parse(st, SEBC "_prefetch", "stage", "dist"), "stage");
    CHECK(loom_run(SEBC "_prefetch", NULL, 0, st, NULL, 0, &co) != LOOM_OK && strstr(loom_last_error(), "needs the next"),
          "a dist without the batch: %s", loom_last_error());
    /* usable afterwards */
    LOOM(loom_run(SEBC "_prefetch", in, 2, st, NULL, 0, &co), "a dist after the refusals");
    LOOM(loom_attrs_parse(st, SEBC "_prefetch", "stage", "fill"), "stage");
    LOOM(loom_run(SEBC "_prefetch", NULL, 0, st, NULL, 0, &co), "its fill");
    loom_attrs_free(st);
    loom_object_free(o);
    printf("rank %d of %d: refusals: a rank with two load factors, a fill before its dist, an unknown stage, a "
           "dist without its batch\n", rank, world);
}

static int same_bits(const loom_tensor *a, const loom_tensor *b)
{
    const int64_t n = loom_numel(a);
    return n == loom_numel(b) && memcmp(a->data, b->data, (size_t)n * sizeof(float)) == 0;
}

/* The collection's stats record, f64 [4, 4] (rec.sharded_embedding_bag_collection_stats). */
static void read_stats(loom_object *o, double v[16])
{
    loom_call_options co = LOOM_CALL_OPTIONS_INIT;
    co.object = o;
    loom_tensor *st = NULL;
    LOOM(loom_run(SEBC "_stats", NULL, 0, NULL, &st, 1, &co), SEBC "_stats");
    CHECK(loom_numel(st) == 16, "the stats record has %lld entries, not 16", (long long)loom_numel(st));
    memcpy(v, st->data, 16 * sizeof *v);
    loom_tensor_free(st);
}

/* A forward of a batch other than the one prefetched, on ranks >= 1 only:
** every rank distributes its input again (the ranks agree on it), the
** output is the uncached one; the next forward of the prefetched batch on
** every rank takes it. */
static void mismatch(const char *plan, const char *fused, loom_tensor *const *tables, batch *batches)
{
    loom_object *o = make_collection(plan, tables), *ref = make_collection(fused, tables);
    call(o, SEBC "_prefetch", &batches[1], "all", NULL);
    const batch *mine = rank == 0 ? &batches[1] : &batches[2];
    loom_tensor *a = NULL, *b = NULL;
    call(o, SEBC, mine, NULL, &a);
    call(ref, SEBC, mine, NULL, &b);
    CHECK(same_bits(a, b), "a forward of another batch than the prefetched one differs from the uncached one");
    double v[16];
    read_stats(o, v);
    /* on one rank the batch is the prefetched one everywhere */
    const double reused = world == 1 ? 1 : 0;
    CHECK(v[13] == reused && v[12] == 1 - reused, "another batch on ranks >= 1: %g KJT all-to-alls and %g reuses, "
          "expected %g and %g", v[12], v[13], 1 - reused, reused);
    loom_tensor_free(a);
    loom_tensor_free(b);
    a = b = NULL;
    if (world > 1) {
        call(o, SEBC, &batches[1], NULL, &a);
        call(ref, SEBC, &batches[1], NULL, &b);
        CHECK(same_bits(a, b), "the prefetched batch's forward after a mismatch differs from the uncached one");
        read_stats(o, v);
        CHECK(v[12] == 1 && v[13] == 1 && v[15] > 0, "the prefetched batch after a mismatch: %g KJT all-to-alls, "
              "%g reuses (%g bytes saved), expected 1 and 1", v[12], v[13], v[15]);
        loom_tensor_free(a);
        loom_tensor_free(b);
    }
    loom_object_free(o);
    loom_object_free(ref);
}

/* Every table of o, gathered from its shards (collective). */
static void weights(loom_object *o, loom_tensor **w)
{
    loom_call_options co = LOOM_CALL_OPTIONS_INIT;
    co.object = o;
    for (int t = 0; t < T; t++) {
        loom_attrs *a = NULL;
        LOOM(loom_attrs_new(&a), "loom_attrs_new");
        LOOM(loom_attrs_parse(a, SEBC "_weight", "table", NAMES[t]), "table");
        w[t] = NULL;
        LOOM(loom_run(SEBC "_weight", NULL, 0, a, &w[t], 1, &co), SEBC "_weight");
        loom_attrs_free(a);
    }
}

int main(int argc, char **argv)
{
    int steps = 8, check = 0, mixed = 0;
    int64_t B = 64;
    double lf = 0.2;
    const char *timeline = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc) B = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--load-factor") && i + 1 < argc) lf = atof(argv[++i]);
        else if (!strcmp(argv[i], "--timeline") && i + 1 < argc) timeline = argv[++i];
        else if (!strcmp(argv[i], "--check")) check = 1;
        else if (!strcmp(argv[i], "--refusals")) check = 2;
        else if (!strcmp(argv[i], "--mixed")) mixed = 1;
        else {
            fprintf(stderr, "usage: mpirun -np W %s [--steps N] [--batch B] [--load-factor F] [--timeline out.json] "
                    "[--mixed] [--check | --refusals]\n", argv[0]);
            return 2;
        }
    }
    if (steps < 1 || B < 1 || !(lf > 0 && lf < 1)) {
        fprintf(stderr, "--steps and --batch must be positive, --load-factor in (0, 1)\n");
        return 2;
    }
    /* the host initialises MPI (the pack then leaves it alone); serialized:
    ** only the main thread calls MPI, the prefetch thread does not */
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    CHECK(provided >= MPI_THREAD_SERIALIZED, "MPI gives thread level %d, below MPI_THREAD_SERIALIZED", provided);
    loom_init_options io = LOOM_INIT_OPTIONS_INIT;
    io.num_threads = 1;          /* one process per rank on a shared machine */
    LOOM(loom_init(&io), "loom_init");
    for (int f = 0; f < F; f++)
        D_TOTAL += DIM[FEATURE_TABLE[f]];

    /* the tables, the same on every rank */
    float *data[T];
    loom_tensor *tables[T];
    rng = 12345;
    for (int t = 0; t < T; t++) {
        data[t] = malloc(sizeof(float) * E[t] * DIM[t]);
        for (int64_t i = 0; i < E[t] * DIM[t]; i++)
            data[t][i] = uniform();
        int64_t shape[2] = { E[t], DIM[t] };
        LOOM(loom_tensor_wrap(&tables[t], data[t], LOOM_DTYPE_F32, 2, shape, NULL, NULL), "wrap");
    }
    batch *batches = calloc((size_t)steps + 1, sizeof *batches);
    for (int i = 0; i <= steps; i++)
        make_batch(&batches[i], i, B);
    static char plan[65536];
    make_plan(plan, sizeof plan, mixed ? 2 : 1, lf);
    if (check == 2) {
        refusals(tables, lf, &batches[0]);
        for (int i = 0; i <= steps; i++)
            free_batch(&batches[i]);
        free(batches);
        for (int t = 0; t < T; t++) {
            loom_tensor_free(tables[t]);
            free(data[t]);
        }
        loom_shutdown();
        MPI_Finalize();
        return 0;
    }

    loom_tensor **outs = calloc((size_t)steps, sizeof *outs);
    loom_object *piped = make_collection(plan, tables);
    MPI_Barrier(MPI_COMM_WORLD);
    const double cpu0 = cpu_seconds(), wall0 = now_us();
    train(piped, batches, steps, 1, outs, 1);
    const double cpu = cpu_seconds() - cpu0, wall = (now_us() - wall0) * 1e-6;
    printf("rank %d: %d pipelined steps of %lld samples: %.4f CPU s per step (both threads), %.4f s wall per step\n",
           rank, steps, (long long)B, cpu / steps, wall / steps);
    if (timeline != NULL)
        write_timeline(timeline);
    {
        /* this rank's cache counters (fbgemm.tbe_cache_stats of its local TBE) */
        loom_tensor *cs = NULL;
        loom_call_options co = LOOM_CALL_OPTIONS_INIT;
        co.object = piped;
        loom_attrs *a = NULL;
        LOOM(loom_attrs_new(&a), "loom_attrs_new");
        LOOM(loom_attrs_parse(a, SEBC "_prefetch", "stage", "stats"), "stage");
        LOOM(loom_run(SEBC "_prefetch", NULL, 0, a, &cs, 1, &co), SEBC "_prefetch stats");
        loom_attrs_free(a);
        const int64_t *v = loom_data(cs);
        printf("rank %d: cache: %lld fills, %lld ids (%lld unique, %lld unique misses, %lld conflict misses); "
               "%lld lookups, %lld hits (%.0f%%)\n", rank, (long long)v[0], (long long)v[1], (long long)v[2],
               (long long)v[3], (long long)v[5], (long long)v[6], (long long)v[7],
               v[6] > 0 ? 100.0 * (double)v[7] / (double)v[6] : 0.0);
        /* every batch was filled once, by the pipeline (the forwards did not fill again), and looked up */
        CHECK(!check || (v[0] == steps && v[6] > 0 && v[7] > 0), "the cache counters do not show %d prefetched "
              "batches with hits", steps);
        loom_tensor_free(cs);
    }

    {
        /* the forwards' input: the pipelined ones took what their prefetch distributed */
        double v[16];
        read_stats(piped, v);
        printf("rank %d: forward: %.0f KJT all-to-alls, %.0f prefetched inputs reused (%.0f bytes not sent again); "
               "prefetch: %.0f calls, %.4f s of collectives\n", rank, v[12], v[13], v[15], v[8], v[10]);
        /* prefetch calls: all of batch 0, dist and fill of the others, the stats stage above */
        CHECK(!check || (v[12] == 0 && v[13] == steps && v[8] == 2 * steps),
              "the pipelined forwards ran %g KJT all-to-alls and reused %g prefetched inputs (expected 0 and %d), "
              "%g prefetch calls (expected %d)", v[12], v[13], steps, v[8], 2 * steps);
    }

    if (check) {
        loom_tensor **o2 = calloc((size_t)steps, sizeof *o2), **o3 = calloc((size_t)steps, sizeof *o3);
        loom_object *unpiped = make_collection(plan, tables);
        MPI_Barrier(MPI_COMM_WORLD);
        const double c0 = cpu_seconds(), w0 = now_us();
        train(unpiped, batches, steps, 0, o2, 0);
        printf("rank %d: the same %d steps unpipelined (each forward fills its cache): %.4f CPU s per step, %.4f s wall "
               "per step\n", rank, steps, (cpu_seconds() - c0) / steps, (now_us() - w0) * 1e-6 / steps);
        static char fused[65536];
        make_plan(fused, sizeof fused, 0, lf);
        loom_object *uncached = make_collection(fused, tables);
        train(uncached, batches, steps, 0, o3, 0);
        double v[16];
        read_stats(unpiped, v);
        CHECK(v[12] == steps && v[13] == 0, "the unpipelined forwards ran %g KJT all-to-alls and reused %g inputs, "
              "expected %d and 0", v[12], v[13], steps);
        if (steps >= 2)
            mismatch(plan, fused, tables, batches);
        for (int i = 0; i < steps; i++) {
            CHECK(same_bits(outs[i], o3[i]), "step %d: the pipelined forward differs from the uncached one", i);
            CHECK(same_bits(o2[i], o3[i]), "step %d: the cached forward differs from the uncached one", i);
            loom_tensor_free(o2[i]);
            loom_tensor_free(o3[i]);
        }
        loom_tensor *w1[T], *w2[T], *w3[T];
        weights(piped, w1);
        weights(unpiped, w2);
        weights(uncached, w3);
        for (int t = 0; t < T; t++) {
            CHECK(same_bits(w1[t], w3[t]) && same_bits(w2[t], w3[t]), "table %s differs after %d steps", NAMES[t],
                  steps);
            loom_tensor_free(w1[t]);
            loom_tensor_free(w2[t]);
            loom_tensor_free(w3[t]);
        }
        loom_object_free(unpiped);
        loom_object_free(uncached);
        free(o2);
        free(o3);
        printf("rank %d of %d: %d steps%s: pipeline equals the unpipelined and the uncached collection bit for bit "
               "(forward outputs and tables)\n", rank, world, steps, mixed ? " (fused and cached shards on every rank)" : "");
    }
    for (int i = 0; i < steps; i++)
        loom_tensor_free(outs[i]);
    free(outs);
    loom_object_free(piped);
    for (int i = 0; i <= steps; i++)
        free_batch(&batches[i]);
    free(batches);
    for (int t = 0; t < T; t++) {
        loom_tensor_free(tables[t]);
        free(data[t]);
    }
    free(events);
    loom_shutdown();
    MPI_Finalize();
    return 0;
}
