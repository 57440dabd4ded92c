/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rec_dist.c - one rank of the sharded collection's benchmark (tools/bench/rec_dist/run
** runs it under mpirun beside torchrec's DistributedModelParallel):
**
**   rec_dist PLUGIN_DIRS TABLES ROWS DIM BATCH STEPS [prefetch]
**   rec_dist          (one rank, the run script's defaults, packs of $LOOM_BUILD_ROOT)
**
** TABLES tables of ROWS x DIM (seeded uniform values), one feature each,
** pooling factor 2; tables 0, 2, 4, ... table-wise on rank t % W, 1, 3, ...
** row-wise over every rank (the plan the run script gives torchrec too).
** Every rank steps STEPS times: forward of its BATCH samples, backward (SGD,
** lr 0.01) of a gradient of ones, after 2 warm-up steps. Prints
** "cpu_s_per_step <rank> <s>" (getrusage, user + system, of this process)
** and, per step, "method_s <rank> <fwd cpu> <fwd wall> <fwd comm> <bwd cpu>
** <bwd wall> <bwd comm>": each method's CPU seconds (getrusage around the
** call), wall seconds and, of the wall, the seconds inside its collectives
** (rec.sharded_embedding_bag_collection_stats, reset after the warm-up).
** "wall_s_per_step <rank> <s>": the wall seconds of the timed steps over
** their number (the run script takes the slowest rank's for the global
** batch's samples per second). The machine is shared: CPU seconds are the
** steadier figure.
**
** With "prefetch" a step is torchrec's PrefetchTrainPipelineSparseDist:
** rec.sharded_embedding_bag_collection_prefetch stage=dist of the next
** batch (the same KJT here), then the forward, which takes the input that
** dist distributed instead of running the KJT all-to-all, and the
** backward. Also printed: "input_s <rank> <fwd wall> <fwd comm> <prefetch
** wall> <prefetch comm> <kjt all-to-alls> <reused>" per step (the counts
** in total), so the run script can say how much of the step's
** communication the reuse moves out of the forward.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "loom/loom.h"

#define SEBC "rec.sharded_embedding_bag_collection"

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "rec_dist: %s: %s\n", what, loom_last_error());
    exit(1);
}

static uint64_t rng = 88172645463325252ULL;
static uint32_t next_u32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

int main(int argc, char **argv)
{
    /* without arguments (tools/dev bench runs every program here so): one rank, the run script's defaults */
    static char plugdirs[4096];
    static char *defaults[] = { "rec_dist", plugdirs, "8", "20000", "64", "256", "20" };
    if (argc == 1) {
        const char *root = getenv("LOOM_BUILD_ROOT");
        root = root ? root : "build";
        snprintf(plugdirs, sizeof plugdirs, "%s/plugins/core:%s/plugins/fbgemm:%s/plugins/rec", root, root, root);
        argv = defaults;
        argc = 7;
        printf("rec_dist: one rank, 8 x 20000 x 64, B 256 (tools/bench/rec_dist/run runs 1, 2, 4 ranks beside "
               "torchrec)\n");
    }
    const int pipelined = argc == 8 && strcmp(argv[7], "prefetch") == 0;
    if (argc != 7 && !pipelined) {
        fprintf(stderr, "usage: rec_dist PLUGIN_DIRS TABLES ROWS DIM BATCH STEPS [prefetch]\n");
        return 2;
    }
    const int T = atoi(argv[2]), steps = atoi(argv[6]);
    const int64_t E = atoll(argv[3]), D = atoll(argv[4]), B = atoll(argv[5]);
    const char *r = getenv("OMPI_COMM_WORLD_RANK"), *w = getenv("OMPI_COMM_WORLD_SIZE");
    const int rank = r ? atoi(r) : 0, world = w ? atoi(w) : 1;
    loom_init_options io = LOOM_INIT_OPTIONS_INIT;
    io.plugin_path = argv[1];
    io.no_default_dirs = 1;
    io.num_threads = 1;
    if (loom_init(&io) != LOOM_OK)
        die("loom_init");

    /* tables, names, plan */
    size_t cap = 4096 + (size_t)T * (256 + (size_t)world * 96);
    char *plan = malloc(cap), *names = malloc((size_t)T * 16), *rows = malloc((size_t)T * 24), *dims = malloc((size_t)T * 24);
    float **tab = calloc((size_t)T, sizeof *tab);
    loom_tensor **tt = calloc((size_t)T, sizeof *tt);
    loom_named_tensor *named = calloc((size_t)T, sizeof *named);
    char (*keys)[48] = calloc((size_t)T, sizeof *keys);
    size_t n = (size_t)snprintf(plan, cap, "{\"format\":\"loom.rec.plan/1\",\"world_size\":%d,\"tables\":[", world);
    names[0] = rows[0] = dims[0] = '\0';
    for (int t = 0; t < T; t++) {
        tab[t] = malloc(sizeof(float) * (size_t)(E * D));
        for (int64_t i = 0; i < E * D; i++)
            tab[t][i] = (float)(next_u32() % 65536) / 65536.0f - 0.5f;
        int64_t shape[2] = { E, D };
        if (loom_tensor_wrap(&tt[t], tab[t], LOOM_DTYPE_F32, 2, shape, NULL, NULL) != LOOM_OK)
            die("wrap");
        snprintf(keys[t], sizeof keys[t], "embedding_bags.t%d.weight", t);
        named[t] = (loom_named_tensor){ keys[t], tt[t] };
        sprintf(names + strlen(names), "%st%d", t ? "," : "", t);
        sprintf(rows + strlen(rows), "%s%lld", t ? "," : "", (long long)E);
        sprintf(dims + strlen(dims), "%s%lld", t ? "," : "", (long long)D);
        n += (size_t)snprintf(plan + n, cap - n, "%s{\"name\":\"t%d\",\"num_embeddings\":%lld,\"embedding_dim\":%lld,",
                              t ? "," : "", t, (long long)E, (long long)D);
        if (t % 2 == 0) {
            n += (size_t)snprintf(plan + n, cap - n, "\"sharding_type\":\"table_wise\",\"compute_kernel\":\"fused\","
                                  "\"ranks\":[%d],\"shards\":[{\"rank\":%d,\"offsets\":[0,0],\"sizes\":[%lld,%lld]}]}",
                                  t % world, t % world, (long long)E, (long long)D);
        } else {
            const int64_t blk = (E + world - 1) / world;
            n += (size_t)snprintf(plan + n, cap - n, "\"sharding_type\":\"row_wise\",\"compute_kernel\":\"fused\",\"ranks\":[");
            for (int q = 0; q < world; q++)
                n += (size_t)snprintf(plan + n, cap - n, "%s%d", q ? "," : "", q);
            n += (size_t)snprintf(plan + n, cap - n, "],\"shards\":[");
            for (int q = 0; q < world; q++) {
                const int64_t r0 = blk * q < E ? blk * q : E, r1 = blk * (q + 1) < E ? blk * (q + 1) : E;
                n += (size_t)snprintf(plan + n, cap - n, "%s{\"rank\":%d,\"offsets\":[%lld,0],\"sizes\":[%lld,%lld]}",
                                      q ? "," : "", q, (long long)r0, (long long)(r1 - r0), (long long)D);
            }
            n += (size_t)snprintf(plan + n, cap - n, "]}");
        }
    }
    snprintf(plan + n, cap - n, "]}");
    loom_attrs *a = NULL;
    if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_parse(a, SEBC, "tables", names) != LOOM_OK ||
        loom_attrs_parse(a, SEBC, "num_embeddings", rows) != LOOM_OK ||
        loom_attrs_parse(a, SEBC, "embedding_dim", dims) != LOOM_OK || loom_attrs_set_string(a, "plan", plan) != LOOM_OK)
        die("attributes");
    loom_object_options oo = LOOM_OBJECT_OPTIONS_INIT;
    oo.n_tensors = T;
    oo.tensors = named;
    loom_object *o = NULL;
    if (loom_object_create_ex(&o, SEBC, a, &oo) != LOOM_OK)
        die("create");

    /* one batch: pooling factor 2 */
    const int64_t nv = (int64_t)T * B * 2;
    int64_t *vals = malloc(sizeof(int64_t) * (size_t)nv), *lens = malloc(sizeof(int64_t) * (size_t)(T * B));
    float *grad = malloc(sizeof(float) * (size_t)(B * T * D));
    for (int64_t i = 0; i < nv; i++)
        vals[i] = next_u32() % E;
    for (int64_t i = 0; i < T * B; i++)
        lens[i] = 2;
    for (int64_t i = 0; i < B * T * D; i++)
        grad[i] = 1.0f;
    int64_t sv[1] = { nv }, sl[1] = { T * B }, sg[2] = { B, T * D };
    loom_tensor *tv, *tl, *tg;
    if (loom_tensor_wrap(&tv, vals, LOOM_DTYPE_I64, 1, sv, NULL, NULL) != LOOM_OK ||
        loom_tensor_wrap(&tl, lens, LOOM_DTYPE_I64, 1, sl, NULL, NULL) != LOOM_OK ||
        loom_tensor_wrap(&tg, grad, LOOM_DTYPE_F32, 2, sg, NULL, NULL) != LOOM_OK)
        die("wrap");
    loom_call_options co = LOOM_CALL_OPTIONS_INIT;
    co.object = o;
    const loom_tensor *fin[3] = { tv, tl, NULL }, *bin[4] = { tv, tl, NULL, tg };
    loom_attrs *reset = NULL, *dist = NULL;
    if (loom_attrs_new(&reset) != LOOM_OK || loom_attrs_set_bool(reset, "reset", 1) != LOOM_OK ||
        loom_attrs_new(&dist) != LOOM_OK || loom_attrs_set_string(dist, "stage", "dist") != LOOM_OK)
        die("attributes");
    double t0 = 0, tw0 = 0, cpu[2] = { 0, 0 }, wall[2] = { 0, 0 };
    if (pipelined) {
        /* batch 0's input dist, before the loop as the pipeline's */
        loom_tensor *cs = NULL;
        if (loom_run(SEBC "_prefetch", fin, 3, dist, &cs, 1, &co) != LOOM_OK)
            die("prefetch");
        loom_tensor_free(cs);
    }
    for (int s = 0; s < steps + 2; s++) {
        if (s == 2) {
            /* the warm-up is over: the methods' record starts again */
            loom_tensor *st = NULL;
            if (loom_run(SEBC "_stats", NULL, 0, reset, &st, 1, &co) != LOOM_OK)
                die("stats");
            loom_tensor_free(st);
            t0 = cpu_seconds();
            tw0 = wall_seconds();
            cpu[0] = cpu[1] = wall[0] = wall[1] = 0;
        }
        if (pipelined) {
            /* the next batch's input dist (fused tables: no cache to fill) */
            loom_tensor *cs = NULL;
            if (loom_run(SEBC "_prefetch", fin, 3, dist, &cs, 1, &co) != LOOM_OK)
                die("prefetch");
            loom_tensor_free(cs);
        }
        double c = cpu_seconds(), w0 = wall_seconds();
        loom_tensor *y = NULL;
        if (loom_run(SEBC, fin, 3, NULL, &y, 1, &co) != LOOM_OK)
            die("forward");
        loom_tensor_free(y);
        double c1 = cpu_seconds(), w1 = wall_seconds();
        if (loom_run(SEBC "_backward", bin, 4, NULL, NULL, 0, &co) != LOOM_OK)
            die("backward");
        cpu[0] += c1 - c;
        wall[0] += w1 - w0;
        cpu[1] += cpu_seconds() - c1;
        wall[1] += wall_seconds() - w1;
    }
    printf("cpu_s_per_step %d %.6f\n", rank, (cpu_seconds() - t0) / steps);
    printf("wall_s_per_step %d %.6f\n", rank, (wall_seconds() - tw0) / steps);
    loom_tensor *st = NULL;
    if (loom_run(SEBC "_stats", NULL, 0, NULL, &st, 1, &co) != LOOM_OK)
        die("stats");
    const double *v = loom_data(st);
    printf("method_s %d %.6f %.6f %.6f %.6f %.6f %.6f\n", rank, cpu[0] / steps, wall[0] / steps, v[2] / steps,
           cpu[1] / steps, wall[1] / steps, v[6] / steps);
    printf("input_s %d %.6f %.6f %.6f %.6f %.0f %.0f\n", rank, v[1] / steps, v[2] / steps, v[9] / steps,
           v[10] / steps, v[12], v[13]);
    loom_tensor_free(st);
    loom_attrs_free(reset);
    loom_attrs_free(dist);
    loom_object_free(o);
    loom_tensor_free(tv);
    loom_tensor_free(tl);
    loom_tensor_free(tg);
    for (int t = 0; t < T; t++) {
        loom_tensor_free(tt[t]);
        free(tab[t]);
    }
    loom_attrs_free(a);
    loom_shutdown();
    return 0;
}
