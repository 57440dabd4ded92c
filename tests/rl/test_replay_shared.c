/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_replay_shared.c - one rl.replay_buffer (storage=memmap, shared=true)
** opened by 4 writer and 2 reader processes at once (this program run
** again with --writer / --reader) for LOOM_RL_SHARE_SECONDS seconds
** (default 2; the soak is 10). Writers extend batches of 8 items
** whose fields encode (writer, k) redundantly; readers sample 64 items at
** a time and count items whose fields disagree (torn). Afterwards: no
** reader saw a torn item, the write count is the sum of what the writers
** wrote, and every (writer, k) sits in the storage exactly once (the
** capacity exceeds what is written, so nothing is overwritten): nothing
** lost, nothing duplicated.
*/
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "td_test_util.h"

#define CAP (1 << 22)
#define WRITERS 4
#define READERS 2
#define BATCH 8
#define MAX_PER_WRITER (1 << 20)   /* 4 writers fill at most the capacity: nothing is overwritten */

static loom_object *open_shared(const char *dir)
{
    char kv[1100];
    snprintf(kv, sizeof kv, "%s", dir);
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "max_size", CAP), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "storage", "memmap"), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "scratch_dir", kv), LOOM_OK);
    assert_int_equal(loom_attrs_set_bool(a, "shared", 1), LOOM_OK);
    loom_object *o = NULL;
    if (loom_object_create(&o, "rl.replay_buffer", a, NULL) != LOOM_OK)
        fail_msg("shared rl.replay_buffer: %s", loom_last_error());
    loom_attrs_free(a);
    return o;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void only_rl_packs(void)
{
    const char *all = tu_plugin_path();
    char keep[4096] = "";
    for (const char *p = all; *p != '\0';) {
        const char *colon = strchr(p, ':');
        size_t n = colon != NULL ? (size_t)(colon - p) : strlen(p);
        if (n >= 10 && memcmp(p + n - 10, "plugins/rl", 10) == 0 && n + 2 < sizeof keep - strlen(keep))
            snprintf(keep + strlen(keep), sizeof keep - strlen(keep), "%s%.*s", keep[0] ? ":" : "", (int)n, p);
        p += n + (colon != NULL);
    }
    if (keep[0] != '\0')
        setenv("LOOM_PLUGIN_PATH", keep, 1);
}

/* Writer w: batches until the time is up; the count goes to DIR/count<w>. */
static int writer(const char *dir, int w, double seconds)
{
    only_rl_packs();
    if (tu_setup(NULL) != 0)
        return 100;
    loom_object *rb = open_shared(dir);
    int64_t n = BATCH;
    loom_object *td = tdt_new(1, &n);
    char src[48];
    snprintf(src, sizeof src, "source=%lld", (long long)tdt_id(td));
    const int64_t shape[2] = { BATCH, 4 };
    loom_tensor *obs = NULL;
    assert_int_equal(loom_tensor_new(&obs, LOOM_DTYPE_F32, 2, shape, NULL), LOOM_OK);
    int64_t k = 0;
    const double end = now() + seconds;
    while (now() < end && k + BATCH <= MAX_PER_WRITER) {
        float *o = obs->data;
        for (int i = 0; i < BATCH; i++, k++) {
            o[4 * i + 0] = (float)w;
            o[4 * i + 1] = (float)k;
            o[4 * i + 2] = (float)(w * 100000 + k);
            o[4 * i + 3] = (float)(w + 3 * k);
        }
        tdt_set(td, "obs", obs);
        loom_tensor *ix = NULL;
        if (tdt_call(rb, "rl.rb_extend", NULL, &ix, src, NULL) != LOOM_OK) {
            fprintf(stderr, "writer %d: %s\n", w, loom_last_error());
            return 101;
        }
        loom_tensor_free(ix);
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/count%d", dir, w);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return 102;
    fprintf(f, "%lld\n", (long long)k);
    fclose(f);
    loom_tensor_free(obs);
    loom_object_free(td);
    loom_object_free(rb);
    tu_teardown(NULL);
    return 0;
}

/* Reader: samples until the time is up; exit status 0, or 1 on a torn item. */
static int reader(const char *dir, double seconds)
{
    only_rl_packs();
    if (tu_setup(NULL) != 0)
        return 100;
    loom_object *rb = open_shared(dir);
    loom_object *dest = tdt_new(0, NULL);
    char kv[48];
    snprintf(kv, sizeof kv, "dest=%lld", (long long)tdt_id(dest));
    const double end = now() + seconds;
    int64_t checked = 0, torn = 0;
    while (now() < end) {
        loom_tensor *ix = NULL;
        loom_status st = tdt_call(rb, "rl.rb_sample", NULL, &ix, "batch_size=64", kv, NULL);
        if (st != LOOM_OK) {    /* nothing written yet */
            usleep(1000);
            continue;
        }
        loom_tensor *obs = tdt_get(dest, "obs");
        const float *o = obs->data;
        for (int64_t i = 0; i < obs->shape[0]; i++, checked++) {
            const double w = o[4 * i], k = o[4 * i + 1];
            if (o[4 * i + 2] != (float)(w * 100000 + k) || o[4 * i + 3] != (float)(w + 3 * k))
                torn++;
        }
        loom_tensor_free(obs);
        loom_tensor_free(ix);
    }
    fprintf(stderr, "reader: %lld items checked, %lld torn\n", (long long)checked, (long long)torn);
    loom_object_free(dest);
    loom_object_free(rb);
    tu_teardown(NULL);
    return torn != 0 || checked == 0;
}

static void test_four_writers_two_readers(void **state)
{
    (void)state;
    const char *env = getenv("LOOM_RL_SHARE_SECONDS");
    const double seconds = env != NULL && atof(env) > 0 ? atof(env) : 2.0;
    char tmp[] = "/tmp/loom-share-XXXXXX", dir[128], secs[32], cmd[200];
    assert_non_null(mkdtemp(tmp));
    snprintf(dir, sizeof dir, "%s/rb", tmp);
    snprintf(secs, sizeof secs, "%g", seconds);
    /* the control block exists before anyone races to make it (each process would also do it safely) */
    loom_object *rb = open_shared(dir);
    pid_t pids[WRITERS + READERS];
    for (int p = 0; p < WRITERS + READERS; p++) {
        pids[p] = fork();
        assert_true(pids[p] >= 0);
        if (pids[p] == 0) {
            char id[8];
            snprintf(id, sizeof id, "%d", p);
            execl("/proc/self/exe", "test_rl_replay_shared", p < WRITERS ? "--writer" : "--reader", dir, id, secs,
                  (char *)NULL);
            _exit(127);
        }
    }
    for (int p = 0; p < WRITERS + READERS; p++) {
        int status;
        assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("%s %d ended with status %d", p < WRITERS ? "writer" : "reader", p, status);
    }
    int64_t counts[WRITERS], total = 0;
    for (int w = 0; w < WRITERS; w++) {
        snprintf(cmd, sizeof cmd, "%s/count%d", dir, w);
        FILE *f = fopen(cmd, "r");
        assert_non_null(f);
        long long c = 0;
        assert_int_equal(fscanf(f, "%lld", &c), 1);
        fclose(f);
        counts[w] = c;
        total += c;
    }
    loom_tensor *len = NULL;
    assert_int_equal(tdt_call(rb, "rl.rb_len", NULL, &len, NULL), LOOM_OK);
    assert_int_equal(((const int64_t *)len->data)[1], total);
    assert_int_equal(((const int64_t *)len->data)[0], total);
    loom_tensor_free(len);
    /* every item once: read the storage as the TensorDict it is */
    char kv[200];
    snprintf(kv, sizeof kv, "path=%s", dir);
    loom_object *view = tdt_create(NULL, "from=load", kv, NULL);
    loom_tensor *obs = tdt_get(view, "obs");
    char *seen = calloc((size_t)WRITERS * MAX_PER_WRITER, 1);
    assert_non_null(seen);
    const float *o = obs->data;
    for (int64_t i = 0; i < total; i++) {
        const int w = (int)o[4 * i];
        const int64_t k = (int64_t)o[4 * i + 1];
        if (w < 0 || w >= WRITERS || k < 0 || k >= counts[w] || seen[w * MAX_PER_WRITER + k]++)
            fail_msg("slot %lld holds writer %d item %lld: out of range or a duplicate", (long long)i, w, (long long)k);
    }
    print_message("%lld items from %d writers, read by %d readers in %g s: none lost, none torn\n",
                  (long long)total, WRITERS, READERS, seconds);
    free(seen);
    loom_tensor_free(obs);
    loom_object_free(view);
    loom_object_free(rb);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    assert_int_equal(system(cmd), 0);
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--writer") == 0)
        return writer(argv[2], atoi(argv[3]), atof(argv[4]));
    if (argc == 5 && strcmp(argv[1], "--reader") == 0)
        return reader(argv[2], atof(argv[4]));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_writers_two_readers),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
