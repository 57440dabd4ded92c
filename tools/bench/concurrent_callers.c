/* SPDX-License-Identifier: BSD-3-Clause */
/*
** concurrent_callers.c - several host threads calling one op at once.
**
**   concurrent_callers [ROUNDS] [--full] [--shape N C H W] [--rois K] [--scale S]
**
** Runs vision.roi_align (output 7 x 7, sampling_ratio 2, aligned false) on
** FPN-like rois of 8..308 px in an image of H/S x W/S px: by default the
** case of tools/bench/vision_cases/roi.py one pyramid level coarser, 1000
** rois on features [2, 256, 100, 136] f32 at spatial_scale 1/8 (about 50 ms
** of CPU a call); --full: roi.py's case itself, 1000 rois on
** [2, 256, 200, 272] at 1/4 (two to three times that, with a row cache of
** about 25 MB per pool thread). ROUNDS defaults to 5. Four
** scenarios:
**   (a) 1 host thread calling it 4 times,   (b) 2 host threads, 2 calls each,
**   (c) 4 host threads, 1 call each,        (d) 8 host threads, 1 call each.
** Every call uses the core's default thread budget (the whole pool). Each
** scenario runs ROUNDS times, alternating with the others; the fastest
** round is reported: wall time, calls/s, calls/s relative to (a), the mean
** and the longest latency of one call, and the process CPU time per call.
** A pool that shares its workers among concurrent callers keeps the ratio
** near 1 and the latencies of concurrent calls alike; one that runs a
** second caller inline and serially gives that caller one core's worth
** (its latency grows with the pool size). On a machine shared with other
** work, more host threads also win a larger share of the CPUs: the CPU time
** per call tells the work apart from that share. Every output is compared
** bit for bit with the output of a first call made alone (each roi is
** computed independently, so the split into chunks cannot change a bit).
** Exit status: 0 measured, 1 a loom call failed or gave a wrong result,
** 2 usage error.
*/
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "loom/loom.h"

#define MAX_HOSTS 8

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* xorshift64*: reproducible inputs without libc's shared rand() state. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static double uniform(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 0x2545f4914f6cdd1du) >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct bench {
    const loom_op *op;
    const loom_tensor *in[2];
    loom_attrs *attrs;
    int64_t out_shape[4];
    size_t out_bytes;
    float *reference;               /* output of one call, for the checks */
} bench;

typedef struct host {
    pthread_t thread;
    bench *b;
    int calls;
    pthread_barrier_t *start;
    loom_tensor *out;
    float *out_data;
    loom_status st;
    int wrong;
    double latency_sum, latency_max;    /* seconds, over this host's calls */
} host;

static loom_status call_once(bench *b, loom_tensor *out)
{
    return loom_op_run(b->op, b->in, 2, b->attrs, &out, 1, NULL);
}

static void *host_main(void *arg)
{
    host *h = arg;

    pthread_barrier_wait(h->start);
    for (int i = 0; i < h->calls && h->st == LOOM_OK; i++) {
        double t0 = now(), dt;
        h->st = call_once(h->b, h->out);
        dt = now() - t0;
        h->latency_sum += dt;
        if (dt > h->latency_max)
            h->latency_max = dt;
        if (h->st == LOOM_OK && memcmp(h->out_data, h->b->reference, h->b->out_bytes) != 0)
            h->wrong++;
        if (h->st != LOOM_OK)
            fprintf(stderr, "concurrent_callers: %s\n", loom_last_error());
    }
    return NULL;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec
         + (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

typedef struct result { double wall, cpu, latency_mean, latency_max; } result;

/* `hosts` threads each making `calls` calls, all released at once; wall < 0
** when a call failed or gave a wrong result. */
static result scenario(bench *b, host *hs, int hosts, int calls)
{
    pthread_barrier_t start;
    double t0, t1, c0;
    result r = { 0 };
    int bad = 0;

    pthread_barrier_init(&start, NULL, (unsigned)hosts + 1);
    for (int i = 0; i < hosts; i++) {
        hs[i].b = b;
        hs[i].calls = calls;
        hs[i].start = &start;
        hs[i].st = LOOM_OK;
        hs[i].wrong = 0;
        hs[i].latency_sum = hs[i].latency_max = 0;
        memset(hs[i].out_data, 0, b->out_bytes);
        if (pthread_create(&hs[i].thread, NULL, host_main, &hs[i]) != 0) {
            fprintf(stderr, "concurrent_callers: cannot start host thread %d\n", i);
            exit(1);
        }
    }
    c0 = cpu_seconds();
    pthread_barrier_wait(&start);
    t0 = now();
    for (int i = 0; i < hosts; i++) {
        pthread_join(hs[i].thread, NULL);
        bad |= hs[i].st != LOOM_OK || hs[i].wrong != 0;
        r.latency_mean += hs[i].latency_sum / (double)(hosts * calls);
        if (hs[i].latency_max > r.latency_max)
            r.latency_max = hs[i].latency_max;
    }
    t1 = now();
    r.cpu = (cpu_seconds() - c0) / (double)(hosts * calls);
    pthread_barrier_destroy(&start);
    r.wall = bad ? -1.0 : t1 - t0;
    return r;
}

static int usage(void)
{
    fprintf(stderr, "usage: concurrent_callers [ROUNDS >= 1] [--full] [--shape N C H W] [--rois K] [--scale S]\n");
    return 2;
}

static int fail(const char *what)
{
    fprintf(stderr, "concurrent_callers: %s: %s\n", what, loom_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    static const struct { const char *name; int hosts, calls; } cases[] = {
        { "(a) 1 host thread  x 4 calls", 1, 4 },
        { "(b) 2 host threads x 2 calls", 2, 2 },
        { "(c) 4 host threads x 1 call ", 4, 1 },
        { "(d) 8 host threads x 1 call ", 8, 1 },
    };
    enum { N_CASES = sizeof cases / sizeof cases[0] };
    int64_t feat_shape[4] = { 2, 256, 100, 136 }, box_shape[2] = { 1000, 5 };
    const int64_t out_size[2] = { 7, 7 };
    result best[N_CASES];
    long rounds = 5;
    double scale = 0.125;
    bench b = { 0 };
    host hs[MAX_HOSTS];
    float *feat = NULL, *boxes = NULL;
    loom_tensor *tf = NULL, *tb = NULL;
    int rc = 0;
    size_t n_feat;

    for (int i = 1; i < argc; i++) {
        char *end;
        if (strcmp(argv[i], "--full") == 0) {
            feat_shape[1] = 256, feat_shape[2] = 200, feat_shape[3] = 272, box_shape[0] = 1000, scale = 0.25;
            continue;
        }
        if (strcmp(argv[i], "--shape") == 0 && i + 4 < argc) {
            for (int d = 0; d < 4; d++)
                feat_shape[d] = atoll(argv[++i]);
            continue;
        }
        if (strcmp(argv[i], "--rois") == 0 && i + 1 < argc) {
            box_shape[0] = atoll(argv[++i]);
            continue;
        }
        if (strcmp(argv[i], "--scale") == 0 && i + 1 < argc) {
            scale = atof(argv[++i]);
            continue;
        }
        errno = 0;
        rounds = strtol(argv[i], &end, 10);
        if (errno != 0 || end == argv[i] || *end != '\0' || rounds < 1 || rounds > 1000)
            return usage();
    }
    for (int d = 0; d < 4; d++)
        if (feat_shape[d] < 1 || feat_shape[d] > 4096)
            return usage();
    if (box_shape[0] < 1 || box_shape[0] > 1000000 || !(scale > 0 && scale <= 1))
        return usage();
    if (loom_init(NULL) != LOOM_OK)
        return fail("loom_init");

    /* The inputs of roi.py's case: boxes of 8..308 px in an 800 x 1088 image. */
    n_feat = (size_t)(feat_shape[0] * feat_shape[1] * feat_shape[2] * feat_shape[3]);
    feat = malloc(n_feat * sizeof *feat);
    boxes = malloc((size_t)box_shape[0] * 5 * sizeof *boxes);
    if (feat == NULL || boxes == NULL) {
        fprintf(stderr, "concurrent_callers: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n_feat; i++)
        feat[i] = (float)(uniform() * 2.0 - 1.0);
    for (int64_t k = 0; k < box_shape[0]; k++) {
        double img_w = (double)feat_shape[3] / scale, img_h = (double)feat_shape[2] / scale;
        double x = uniform() * img_w, y = uniform() * img_h;
        double w = uniform() * 300.0 + 8.0, h = uniform() * 300.0 + 8.0;
        float *r = boxes + 5 * k;
        r[0] = (float)(int)(uniform() * (double)feat_shape[0]);
        r[1] = (float)x, r[2] = (float)y, r[3] = (float)(x + w), r[4] = (float)(y + h);
    }
    if (loom_tensor_wrap(&tf, feat, LOOM_DTYPE_F32, 4, feat_shape, NULL, NULL) != LOOM_OK
        || loom_tensor_wrap(&tb, boxes, LOOM_DTYPE_F32, 2, box_shape, NULL, NULL) != LOOM_OK
        || loom_attrs_new(&b.attrs) != LOOM_OK
        || loom_attrs_set_ints(b.attrs, "output_size", out_size, 2) != LOOM_OK
        || loom_attrs_set_float(b.attrs, "spatial_scale", scale) != LOOM_OK
        || loom_attrs_set_int(b.attrs, "sampling_ratio", 2) != LOOM_OK
        || loom_attrs_set_bool(b.attrs, "aligned", 0) != LOOM_OK
        || (b.op = loom_op_find("vision.roi_align")) == NULL)
        return fail("setup");
    b.in[0] = tf;
    b.in[1] = tb;
    b.out_shape[0] = box_shape[0], b.out_shape[1] = feat_shape[1];
    b.out_shape[2] = out_size[0], b.out_shape[3] = out_size[1];
    b.out_bytes = (size_t)(b.out_shape[0] * b.out_shape[1] * b.out_shape[2] * b.out_shape[3]) * sizeof(float);
    b.reference = malloc(b.out_bytes);
    for (int i = 0; i < MAX_HOSTS; i++) {
        hs[i].out_data = malloc(b.out_bytes);
        if (hs[i].out_data == NULL || b.reference == NULL
            || loom_tensor_wrap(&hs[i].out, hs[i].out_data, LOOM_DTYPE_F32, 4, b.out_shape, NULL, NULL) != LOOM_OK)
            return fail("output tensors");
    }

    /* The reference output, and a warm-up of every host output buffer. */
    {
        loom_tensor *ref = NULL;
        double t0 = now();
        if (loom_tensor_wrap(&ref, b.reference, LOOM_DTYPE_F32, 4, b.out_shape, NULL, NULL) != LOOM_OK
            || call_once(&b, ref) != LOOM_OK)
            return fail("vision.roi_align");
        printf("vision.roi_align [%lld, %lld, %lld, %lld] f32, %lld rois, 7x7, sampling 2, scale 1/%g\n",
               (long long)feat_shape[0], (long long)feat_shape[1], (long long)feat_shape[2],
               (long long)feat_shape[3], (long long)box_shape[0], 1.0 / scale);
        printf("CPUs online %ld, pool threads %d; one call %.1f ms; fastest of %ld rounds\n",
               sysconf(_SC_NPROCESSORS_ONLN), (int)loom_num_threads(), (now() - t0) * 1e3, rounds);
        loom_tensor_free(ref);
    }
    if (scenario(&b, hs, MAX_HOSTS, 1).wall < 0) {
        fprintf(stderr, "concurrent_callers: warm-up failed or gave a wrong result\n");
        rc = 1;
    }

    for (int c = 0; c < N_CASES; c++)
        best[c].wall = INFINITY;
    for (long r = 0; rc == 0 && r < rounds; r++) {
        for (int c = 0; rc == 0 && c < N_CASES; c++) {
            result s = scenario(&b, hs, cases[c].hosts, cases[c].calls);
            if (s.wall < 0) {
                fprintf(stderr, "concurrent_callers: %s failed or gave a wrong result\n", cases[c].name);
                rc = 1;
            } else if (s.wall < best[c].wall) {
                best[c] = s;
            }
        }
    }
    if (rc == 0) {
        double base = (double)(cases[0].hosts * cases[0].calls) / best[0].wall;
        printf("  %-30s %9s %9s %8s %11s %10s %11s\n", "scenario", "wall ms", "calls/s", "vs (a)",
               "latency ms", "max ms", "CPU ms/call");
        for (int c = 0; c < N_CASES; c++) {
            double cps = (double)(cases[c].hosts * cases[c].calls) / best[c].wall;
            printf("  %-30s %9.1f %9.2f %7.2fx %11.1f %10.1f %11.1f\n", cases[c].name, best[c].wall * 1e3, cps,
                   cps / base, best[c].latency_mean * 1e3, best[c].latency_max * 1e3, best[c].cpu * 1e3);
        }
    }

    for (int i = 0; i < MAX_HOSTS; i++) {
        loom_tensor_free(hs[i].out);
        free(hs[i].out_data);
    }
    free(b.reference);
    loom_attrs_free(b.attrs);
    loom_tensor_free(tf);
    loom_tensor_free(tb);
    free(feat);
    free(boxes);
    loom_shutdown();
    return rc;
}
