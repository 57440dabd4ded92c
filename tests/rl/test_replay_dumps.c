/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_replay_dumps.c - rl.rb_dumps / rl.rb_loads: a round trip of every
** part of a buffer (storage, prioritized trees, max priority, writer
** cursor, sampler stream), refusals that leave the buffer untouched, and
** the fault test: 50 times, a child process (this program run again with
** --dump-child) dumps a buffer over PATH in a loop, each dump tagged with a
** new version in every stored item, and is killed with SIGKILL after a
** random delay; PATH must then load, and hold one complete version (every
** item of a dump carries the same tag).
*/
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "td_test_util.h"

#define CAP 64

static loom_object *make_buffer(void)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "max_size", CAP), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "sampler", "prioritized"), LOOM_OK);
    loom_object *o = NULL;
    if (loom_object_create(&o, "rl.replay_buffer", a, NULL) != LOOM_OK)
        fail_msg("rl.replay_buffer: %s", loom_last_error());
    loom_attrs_free(a);
    return o;
}

/* CAP items whose obs [CAP, 8] all hold `version`, and a NonTensorData tag. */
static void fill(loom_object *rb, double version)
{
    int64_t n = CAP;
    loom_object *td = tdt_new(1, &n);
    const int64_t s[2] = { CAP, 8 };
    loom_tensor *obs = tdt_ramp(2, s, 0.0, version);
    tdt_set(td, "obs", obs);
    char src[48];
    snprintf(src, sizeof src, "source=%lld", (long long)tdt_id(td));
    loom_tensor *ix = NULL;
    if (tdt_call(rb, "rl.rb_extend", NULL, &ix, src, NULL) != LOOM_OK)
        fail_msg("rl.rb_extend: %s", loom_last_error());
    loom_tensor_free(ix);
    loom_tensor_free(obs);
    loom_object_free(td);
}

static loom_status path_call(loom_object *rb, const char *op, const char *path)
{
    char kv[1100];
    snprintf(kv, sizeof kv, "path=%s", path);
    return tdt_call(rb, op, NULL, NULL, kv, NULL);
}

static loom_status dumps(loom_object *rb, const char *path, int sync)
{
    char kv[1100];
    snprintf(kv, sizeof kv, "path=%s", path);
    return tdt_call(rb, "rl.rb_dumps", NULL, NULL, kv, sync ? "sync=true" : "sync=false", NULL);
}

/* The version every item of the buffer holds, or -1 when they differ. */
static double stored_version(loom_object *rb)
{
    loom_object *dest = tdt_new(0, NULL);
    /* 256 draws over CAP = 64 items: every item is drawn with near certainty */
    char kv[48];
    snprintf(kv, sizeof kv, "dest=%lld", (long long)tdt_id(dest));
    loom_tensor *ix = NULL;
    if (tdt_call(rb, "rl.rb_sample", NULL, &ix, "batch_size=256", kv, NULL) != LOOM_OK)
        fail_msg("rl.rb_sample: %s", loom_last_error());
    loom_tensor *obs = tdt_get(dest, "obs");
    double v = ((const float *)obs->data)[0];
    for (int64_t i = 0; i < 256 * 8; i++)
        if (((const float *)obs->data)[i] != (float)v)
            v = -1;
    loom_tensor_free(obs);
    loom_tensor_free(ix);
    loom_object_free(dest);
    return v;
}

static void test_round_trip(void **state)
{
    (void)state;
    char tmp[] = "/tmp/loom-dump-XXXXXX", path[128], cmd[200];
    assert_non_null(mkdtemp(tmp));
    snprintf(path, sizeof path, "%s/rb", tmp);
    loom_object *rb = make_buffer();
    fill(rb, 3.0);
    const double ix[2] = { 5, 9 };
    const int64_t two = 2;
    loom_tensor *index = tdt_tensor(LOOM_DTYPE_I64, 1, &two, ix);
    loom_tensor *prio = tdt_ramp(1, &two, 4.0, 2.0);   /* 2, 6 */
    const loom_tensor *in[2] = { index, prio };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = rb;
    assert_int_equal(loom_run("rl.rb_update_priority", in, 2, NULL, NULL, 0, &opt), LOOM_OK);
    if (path_call(rb, "rl.rb_dumps", path) != LOOM_OK)
        fail_msg("dumps: %s", loom_last_error());
    /* torchrl's layout */
    static const char *const files[] = { "storage/meta.json", "storage/obs.memmap", "storage/storage_metadata.json",
                                         "sampler/sumtree.memmap", "sampler/mintree.memmap",
                                         "sampler/sampler_metadata.json", "writer/metadata.json",
                                         "buffer_metadata.json" };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        struct stat sb;
        snprintf(cmd, sizeof cmd, "%s/%s", path, files[i]);
        if (stat(cmd, &sb) != 0)
            fail_msg("%s is missing", cmd);
    }
    loom_object *back = make_buffer();
    if (path_call(back, "rl.rb_loads", path) != LOOM_OK)
        fail_msg("loads: %s", loom_last_error());
    loom_tensor *p1 = NULL, *p2 = NULL;
    assert_int_equal(tdt_call(rb, "rl.rb_priorities", NULL, &p1, NULL), LOOM_OK);
    assert_int_equal(tdt_call(back, "rl.rb_priorities", NULL, &p2, NULL), LOOM_OK);
    tdt_assert_bytes(p2, p1, "priorities");
    assert_true(stored_version(back) == 3.0);
    /* the new items after loads take the max priority 6 again */
    fill(back, 4.0);
    loom_tensor_free(p2);
    assert_int_equal(tdt_call(back, "rl.rb_priorities", NULL, &p2, NULL), LOOM_OK);
    assert_true(((const double *)p2->data)[0] == ((const double *)p1->data)[9]);

    /* a second dump replaces the first; refused loads change nothing */
    if (path_call(back, "rl.rb_dumps", path) != LOOM_OK)
        fail_msg("dumps again: %s", loom_last_error());
    snprintf(cmd, sizeof cmd, "%s/writer/metadata.json", path);
    FILE *f = fopen(cmd, "w");
    assert_non_null(f);
    fputs("{\"cursor\": -3}", f);
    fclose(f);
    tdt_assert_fails(path_call(rb, "rl.rb_loads", path), LOOM_EINVAL, "cursor");
    assert_true(stored_version(rb) == 3.0);
    snprintf(cmd, sizeof cmd, "%s/storage/obs.memmap", path);
    assert_int_equal(truncate(cmd, 100), 0);
    tdt_assert_fails(path_call(rb, "rl.rb_loads", path), LOOM_EINVAL, NULL);
    tdt_assert_fails(path_call(rb, "rl.rb_loads", "/nonexistent/loom-dump"), LOOM_ENOENT, "buffer_metadata.json");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    assert_int_equal(system(cmd), 0);
    loom_tensor_free(p1);
    loom_tensor_free(p2);
    loom_tensor_free(index);
    loom_tensor_free(prio);
    loom_object_free(back);
    loom_object_free(rb);
}

/* The child: dump versions 1, 2, 3, ... over path until killed, synced
** when sync is 1. */
static int dump_child(const char *path, int ready_fd, int sync)
{
    /* only the rl pack: the child starts 50 times, loading every pack would dominate */
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
    if (tu_setup(NULL) != 0)
        return 2;
    loom_object *rb = make_buffer();
    fill(rb, 1.0);
    (void)!write(ready_fd, "r", 1);   /* the kill may land in the first dump already */
    close(ready_fd);
    for (int v = 1;; v++) {
        if (dumps(rb, path, sync) != LOOM_OK) {
            fprintf(stderr, "child dumps: %s\n", loom_last_error());
            return 3;
        }
        fill(rb, (double)(v + 1));
    }
}

static void test_sigkill_during_dumps(void **state)
{
    (void)state;
    char tmp[] = "/tmp/loom-dump-XXXXXX", path[128], cmd[200], fd_text[16];
    assert_non_null(mkdtemp(tmp));
    snprintf(path, sizeof path, "%s/rb", tmp);
    loom_object *rb = make_buffer();
    fill(rb, 1000.0);
    if (dumps(rb, path, 1) != LOOM_OK)
        fail_msg("first dumps: %s", loom_last_error());
    srand(20261201);
    int in_flight = 0, changed = 0;
    for (int k = 0; k < 50; k++) {
        int pipefd[2];
        assert_int_equal(pipe(pipefd), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(pipefd[0]);
            snprintf(fd_text, sizeof fd_text, "%d", pipefd[1]);
            /* every tenth run syncs its dumps (slow on a busy disk); atomicity against a kill is the rename's */
            execl("/proc/self/exe", "test_rl_replay_dumps", "--dump-child", path, fd_text, k % 10 == 0 ? "1" : "0",
                  (char *)NULL);
            _exit(127);
        }
        close(pipefd[1]);
        char c;
        assert_int_equal(read(pipefd[0], &c, 1), 1);
        close(pipefd[0]);
        struct timespec d = { 0, (long)(rand() % 8000) * 1000L };   /* 0-8 ms: in the first few dumps */
        nanosleep(&d, NULL);
        assert_int_equal(kill(pid, SIGKILL), 0);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        struct stat sb;
        snprintf(cmd, sizeof cmd, "%s.partial", path);
        in_flight += stat(cmd, &sb) == 0;
        if (path_call(rb, "rl.rb_loads", path) != LOOM_OK)
            fail_msg("kill %d: the previous dump does not load: %s", k, loom_last_error());
        double v = stored_version(rb);
        if (!(v >= 1.0))
            fail_msg("kill %d: the loaded dump mixes versions", k);
        changed += v != 1000.0;
    }
    /* most kills should land inside a dump, leaving a partial one behind */
    print_message("%d of 50 kills left a partial dump beside the previous one; %d found a child's dump\n",
                  in_flight, changed);
    assert_true(in_flight > 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    assert_int_equal(system(cmd), 0);
    loom_object_free(rb);
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--dump-child") == 0)
        return dump_child(argv[2], atoi(argv[3]), atoi(argv[4]));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_sigkill_during_dumps),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
