/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ec_dist.c - one rank of the sharded EmbeddingCollection's benchmark
** (tools/bench/rec_dist/ec_run runs it under mpirun beside torchrec's
** DistributedModelParallel over an EmbeddingCollection, ec_dmp.py):
**
**   ec_dist PLUGIN_DIRS TABLES ROWS DIM BATCH STEPS
**   ec_dist          (one rank, the run script's defaults, packs of $LOOM_BUILD_ROOT)
**
** TABLES tables of ROWS x DIM (seeded uniform values), one feature each, 2
** ids per sample; tables 0, 2, 4, ... table-wise on rank t % W, 1, 3, ...
** row-wise over every rank (the plan ec_run gives torchrec too). Every rank
** steps STEPS times: rec.sharded_embedding_collection on its BATCH samples,
** then its backward (fused SGD, lr 0.01) of a gradient of ones, after 2
** warm-up steps. Prints "cpu_s_per_step <rank> <s>" (getrusage, user +
** system, of this process: the machine is shared, so wall time is not
** reported).
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "loom/loom.h"

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static void die(const char *what)
{
    fprintf(stderr, "ec_dist: %s: %s\n", what, loom_last_error());
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

/* The plan: even tables table-wise on rank t % W, odd ones row-wise (ceil(E / W) rows a shard). */
static char *make_plan(int T, int64_t E, int64_t D, int world)
{
    size_t cap = 4096 + (size_t)T * (256 + (size_t)world * 96), n = 0;
    char *plan = malloc(cap);
    n += (size_t)snprintf(plan + n, cap - n, "{\"format\":\"loom.rec.plan/1\",\"world_size\":%d,\"tables\":[", world);
    for (int t = 0; t < T; t++) {
        n += (size_t)snprintf(plan + n, cap - n, "%s{\"name\":\"t%d\",\"num_embeddings\":%lld,\"embedding_dim\":%lld,",
                              t ? "," : "", t, (long long)E, (long long)D);
        if (t % 2 == 0) {
            n += (size_t)snprintf(plan + n, cap - n, "\"sharding_type\":\"table_wise\",\"compute_kernel\":\"fused\","
                                  "\"ranks\":[%d],\"shards\":[{\"rank\":%d,\"offsets\":[0,0],\"sizes\":[%lld,%lld]}]}",
                                  t % world, t % world, (long long)E, (long long)D);
            continue;
        }
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
    snprintf(plan + n, cap - n, "]}");
    return plan;
}

int main(int argc, char **argv)
{
    /* without arguments (tools/dev bench runs every program here so): one rank, the run script's defaults */
    static char plugdirs[4096];
    static char *defaults[] = { "ec_dist", plugdirs, "8", "20000", "64", "256", "20" };
    if (argc == 1) {
        const char *root = getenv("LOOM_BUILD_ROOT");
        root = root ? root : "build";
        snprintf(plugdirs, sizeof plugdirs, "%s/plugins/core:%s/plugins/fbgemm:%s/plugins/rec", root, root, root);
        argv = defaults;
        argc = 7;
        printf("ec_dist: one rank, 8 x 20000 x 64, B 256 (tools/bench/rec_dist/ec_run runs 1, 2, 4 ranks beside "
               "torchrec)\n");
    }
    if (argc != 7) {
        fprintf(stderr, "usage: ec_dist PLUGIN_DIRS TABLES ROWS DIM BATCH STEPS\n");
        return 2;
    }
    const int T = atoi(argv[2]), steps = atoi(argv[6]);
    const int64_t E = atoll(argv[3]), D = atoll(argv[4]), B = atoll(argv[5]);
    const char *r = getenv("OMPI_COMM_WORLD_RANK"), *w = getenv("OMPI_COMM_WORLD_SIZE");
    const int rank = r ? atoi(r) : 0, world = w ? atoi(w) : 1;
    if (T < 1 || E < 1 || D < 1 || B < 1 || steps < 1) {
        fprintf(stderr, "ec_dist: TABLES, ROWS, DIM, BATCH and STEPS must be positive\n");
        return 2;
    }
    loom_init_options io = LOOM_INIT_OPTIONS_INIT;
    io.plugin_path = argv[1];
    io.no_default_dirs = 1;
    io.num_threads = 1;
    if (loom_init(&io) != LOOM_OK)
        die("loom_init");

    char *plan = make_plan(T, E, D, world), *names = malloc((size_t)T * 16), *rows = malloc((size_t)T * 24);
    char *dims = malloc((size_t)T * 24);
    float **tab = calloc((size_t)T, sizeof *tab);
    loom_tensor **tt = calloc((size_t)T, sizeof *tt);
    loom_named_tensor *named = calloc((size_t)T, sizeof *named);
    char (*keys)[48] = calloc((size_t)T, sizeof *keys);
    names[0] = rows[0] = dims[0] = '\0';
    for (int t = 0; t < T; t++) {
        tab[t] = malloc(sizeof(float) * (size_t)(E * D));
        for (int64_t i = 0; i < E * D; i++)
            tab[t][i] = (float)(next_u32() % 65536) / 65536.0f - 0.5f;
        int64_t shape[2] = { E, D };
        if (loom_tensor_wrap(&tt[t], tab[t], LOOM_DTYPE_F32, 2, shape, NULL, NULL) != LOOM_OK)
            die("wrap");
        snprintf(keys[t], sizeof keys[t], "embeddings.t%d.weight", t);
        named[t] = (loom_named_tensor){ keys[t], tt[t] };
        sprintf(names + strlen(names), "%st%d", t ? "," : "", t);
        sprintf(rows + strlen(rows), "%s%lld", t ? "," : "", (long long)E);
        sprintf(dims + strlen(dims), "%s%lld", t ? "," : "", (long long)D);
    }
    loom_attrs *a = NULL;
    const char *cls = "rec.sharded_embedding_collection";
    if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_parse(a, cls, "tables", names) != LOOM_OK ||
        loom_attrs_parse(a, cls, "num_embeddings", rows) != LOOM_OK ||
        loom_attrs_parse(a, cls, "embedding_dim", dims) != LOOM_OK || loom_attrs_set_string(a, "plan", plan) != LOOM_OK)
        die("attributes");
    loom_object_options oo = LOOM_OBJECT_OPTIONS_INIT;
    oo.n_tensors = T;
    oo.tensors = named;
    loom_object *o = NULL;
    if (loom_object_create_ex(&o, cls, a, &oo) != LOOM_OK)
        die("create");

    /* one batch: 2 ids per sample */
    const int64_t nv = (int64_t)T * B * 2;
    int64_t *vals = malloc(sizeof(int64_t) * (size_t)nv), *lens = malloc(sizeof(int64_t) * (size_t)(T * B));
    float *grad = malloc(sizeof(float) * (size_t)(nv * D));
    for (int64_t i = 0; i < nv; i++)
        vals[i] = next_u32() % E;
    for (int64_t i = 0; i < T * B; i++)
        lens[i] = 2;
    for (int64_t i = 0; i < nv * D; i++)
        grad[i] = 1.0f;
    int64_t sv[1] = { nv }, sl[1] = { T * B }, sg[2] = { nv, D };
    loom_tensor *tv, *tl, *tg;
    if (loom_tensor_wrap(&tv, vals, LOOM_DTYPE_I64, 1, sv, NULL, NULL) != LOOM_OK ||
        loom_tensor_wrap(&tl, lens, LOOM_DTYPE_I64, 1, sl, NULL, NULL) != LOOM_OK ||
        loom_tensor_wrap(&tg, grad, LOOM_DTYPE_F32, 2, sg, NULL, NULL) != LOOM_OK)
        die("wrap");
    loom_call_options co = LOOM_CALL_OPTIONS_INIT;
    co.object = o;
    const loom_tensor *fin[2] = { tv, tl }, *bin[3] = { tv, tl, tg };
    double t0 = 0;
    for (int s = 0; s < steps + 2; s++) {
        if (s == 2)
            t0 = cpu_seconds();
        loom_tensor *y[6] = { NULL };
        if (loom_run(cls, fin, 2, NULL, y, 6, &co) != LOOM_OK)
            die("forward");
        for (int k = 0; k < 6; k++)
            loom_tensor_free(y[k]);
        if (loom_run("rec.sharded_embedding_collection_backward", bin, 3, NULL, NULL, 0, &co) != LOOM_OK)
            die("backward");
    }
    printf("cpu_s_per_step %d %.6f\n", rank, (cpu_seconds() - t0) / steps);
    loom_object_free(o);
    loom_tensor_free(tv);
    loom_tensor_free(tl);
    loom_tensor_free(tg);
    for (int t = 0; t < T; t++) {
        loom_tensor_free(tt[t]);
        free(tab[t]);
    }
    free(tab);
    free(tt);
    free(named);
    free(keys);
    free(plan);
    free(names);
    free(rows);
    free(dims);
    free(vals);
    free(lens);
    free(grad);
    loom_attrs_free(a);
    loom_shutdown();
    return 0;
}
