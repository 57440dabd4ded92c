/*
** test_cli.c - the `loom` command end to end: each test spawns the built
** executable ($LOOM_CLI) with the environment meson gives (LOOM_PLUGIN_PATH
** names the core pack's directory), captures stdout, stderr and the exit
** status, and checks them: exit 0/1/2 per the contract, --json output parses
** with cJSON and has the documented keys, `run` writes correct .npy files.
** Tests that need the core pack skip when it is not loaded.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "loom/loom.h"

extern char **environ;

static char tmpdir[256];
static const char *cli;
static int have_core;

typedef struct result {
    int status;             /* exit status, or -1 if the process did not exit normally */
    char *out, *err;
} result;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (buf != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Run `loom ARGS...` (NULL-terminated) and capture everything. */
static result run_loom(const char *first, ...)
{
    const char *argv[64];
    char out_path[300], err_path[300];
    posix_spawn_file_actions_t fa;
    result r = { -1, NULL, NULL };
    va_list ap;
    int n = 0, wstatus;
    pid_t pid;

    argv[n++] = cli;
    va_start(ap, first);
    for (const char *a = first; a != NULL && n < 63; a = va_arg(ap, const char *))
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;

    snprintf(out_path, sizeof out_path, "%s/stdout.txt", tmpdir);
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", tmpdir);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_int_equal(posix_spawn(&pid, cli, &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    if (WIFEXITED(wstatus))
        r.status = WEXITSTATUS(wstatus);
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    assert_non_null(r.out);
    assert_non_null(r.err);
    return r;
}

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

/* Fail with both streams shown when the exit status is not the expected one. */
static void expect_status(const result *r, int status)
{
    if (r->status != status)
        print_error("exit %d (expected %d)\nstdout:\n%s\nstderr:\n%s\n", r->status, status, r->out, r->err);
    assert_int_equal(r->status, status);
}

static void expect_contains(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        print_error("expected '%s' in:\n%s\n", needle, text);
    assert_non_null(strstr(text, needle));
}

static cJSON *parse_json(const result *r)
{
    cJSON *j = cJSON_Parse(r->out);
    if (j == NULL)
        print_error("not JSON:\n%s\n", r->out);
    assert_non_null(j);
    return j;
}

static void tmp_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmpdir, name);
}

static void write_f32_npy(const char *name, int32_t ndim, const int64_t *shape, const float *v)
{
    loom_tensor *t = NULL;
    char path[300];
    tmp_path(path, sizeof path, name);
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F32, ndim, shape, NULL), LOOM_OK);
    memcpy(loom_data(t), v, loom_tensor_nbytes(t));
    assert_int_equal(loom_npy_write(path, t), LOOM_OK);
    loom_tensor_free(t);
}

/* a = [[1,2,3],[4,5,6]], b = [[7,8],[9,10],[11,12]]: a @ b = [[58,64],[139,154]]. */
static void write_matmul_inputs(void)
{
    const float a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 7, 8, 9, 10, 11, 12 };
    const int64_t as[2] = { 2, 3 }, bs[2] = { 3, 2 };
    write_f32_npy("a.npy", 2, as, a);
    write_f32_npy("b.npy", 2, bs, b);
}

/* True (after saying so) when the core pack is not loaded: the test skips. */
static int core_missing(void)
{
    if (!have_core)
        print_message("core pack not loaded: skipping\n");
    return !have_core;
}

/* ------------------------------------------------------------------ usage */

static void help_and_usage_errors_have_their_exit_status(void **state)
{
    static const char *const cmds[] = { "list", "info", "doctor", "run", "bench", "demo" };
    result r;
    (void)state;

    r = run_loom("--help", NULL);
    expect_status(&r, 0);
    expect_contains(r.out, "usage: loom");
    result_free(&r);

    r = run_loom(NULL, NULL);
    expect_status(&r, 2);
    expect_contains(r.err, "usage: loom");
    result_free(&r);

    r = run_loom("frobnicate", NULL);
    expect_status(&r, 2);
    expect_contains(r.err, "unknown command 'frobnicate'");
    result_free(&r);

    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char want[64];
        r = run_loom(cmds[i], "--help", NULL);
        expect_status(&r, 0);
        snprintf(want, sizeof want, "usage: loom %s", cmds[i]);
        expect_contains(r.out, want);
        result_free(&r);

        r = run_loom(cmds[i], "--no-such-flag", NULL);
        expect_status(&r, 2);
        expect_contains(r.err, "--no-such-flag");
        result_free(&r);
    }

    r = run_loom("info", NULL);
    expect_status(&r, 2);
    expect_contains(r.err, "which operator");
    result_free(&r);

    r = run_loom("run", "core.matmul", "--in", NULL);
    expect_status(&r, 2);
    expect_contains(r.err, "needs a value");
    result_free(&r);

    r = run_loom("run", "core.matmul", "--in", "no-equals-sign", NULL);
    expect_status(&r, 2);
    expect_contains(r.err, "NAME=FILE");
    result_free(&r);

    r = run_loom("bench", "core.matmul", "--repeat", "0", NULL);
    expect_status(&r, 2);
    expect_contains(r.err, "--repeat");
    result_free(&r);

    r = run_loom("demo", "no-such-section", NULL);
    expect_status(&r, 2);
    expect_contains(r.err, "no-such-section");
    result_free(&r);
}

/* ---------------------------------------------------------- introspection */

static void list_shows_ops_as_text_and_json(void **state)
{
    result r;
    cJSON *j, *ops, *op;
    int found = 0;
    (void)state;
    if (core_missing())
        skip();

    r = run_loom("list", NULL);
    expect_status(&r, 0);
    expect_contains(r.out, "core.matmul");
    expect_contains(r.out, "core.linear");
    result_free(&r);

    r = run_loom("list", "--json", NULL);
    expect_status(&r, 0);
    j = parse_json(&r);
    ops = cJSON_GetObjectItemCaseSensitive(j, "ops");
    assert_true(cJSON_IsArray(ops));
    cJSON_ArrayForEach(op, ops) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(op, "name");
        const cJSON *kernels = cJSON_GetObjectItemCaseSensitive(op, "kernels");
        assert_true(cJSON_IsString(name));
        assert_true(cJSON_IsArray(kernels));
        assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(op, "version")));
        if (strcmp(name->valuestring, "core.matmul") == 0) {
            const cJSON *k;
            cJSON_ArrayForEach(k, kernels)
                found |= cJSON_IsString(k) && strcmp(k->valuestring, "cpu") == 0;
        }
    }
    assert_true(found);
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "classes")));
    cJSON_Delete(j);
    result_free(&r);
}

static void info_shows_schema_and_kernels(void **state)
{
    result r;
    cJSON *j, *inputs, *kernels;
    (void)state;
    if (core_missing())
        skip();

    r = run_loom("info", "core.matmul", NULL);
    expect_status(&r, 0);
    expect_contains(r.out, "core.matmul (version 1)");
    expect_contains(r.out, "input");
    expect_contains(r.out, "other");
    expect_contains(r.out, "kernels in dispatch order");
    result_free(&r);

    r = run_loom("info", "core.matmul", "--json", NULL);
    expect_status(&r, 0);
    j = parse_json(&r);
    inputs = cJSON_GetObjectItemCaseSensitive(j, "inputs");
    assert_int_equal(cJSON_GetArraySize(inputs), 2);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(inputs, 0), "name")->valuestring,
                        "input");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(inputs, 1), "name")->valuestring,
                        "other");
    kernels = cJSON_GetObjectItemCaseSensitive(j, "kernels");
    assert_true(cJSON_GetArraySize(kernels) >= 1);
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(kernels, 0), "backend")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "object_class")));
    cJSON_Delete(j);
    result_free(&r);

    /* A method shows its class and the class's attributes. */
    r = run_loom("info", "core.linear", "--json", NULL);
    expect_status(&r, 0);
    j = parse_json(&r);
    assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "object_class")));
    cJSON_Delete(j);
    result_free(&r);
}

static void doctor_reports_config_and_every_file(void **state)
{
    result r;
    cJSON *j, *files, *f;
    int core_loaded = 0;
    (void)state;

    r = run_loom("doctor", NULL);
    expect_status(&r, 0);
    expect_contains(r.out, "configuration:");
    expect_contains(r.out, "devices:");
    expect_contains(r.out, "files seen:");
    result_free(&r);

    r = run_loom("doctor", "--json", NULL);
    expect_status(&r, 0);
    j = parse_json(&r);
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "version")));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "abi_version")));
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "config")));
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "search_dirs")));
    assert_true(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "devices")) >= 1);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "threads")));
    files = cJSON_GetObjectItemCaseSensitive(j, "files");
    assert_true(cJSON_IsArray(files));
    cJSON_ArrayForEach(f, files) {
        const cJSON *pack = cJSON_GetObjectItemCaseSensitive(f, "pack");
        const cJSON *res = cJSON_GetObjectItemCaseSensitive(f, "result");
        assert_true(cJSON_IsString(res));
        if (cJSON_IsString(pack) && strcmp(pack->valuestring, "core") == 0
            && strcmp(res->valuestring, "loaded") == 0)
            core_loaded = 1;
    }
    if (have_core)
        assert_true(core_loaded);
    cJSON_Delete(j);
    result_free(&r);
}

/* -------------------------------------------------------------------- run */

static void run_matmul_writes_the_product(void **state)
{
    const float want[4] = { 58, 64, 139, 154 };
    char a[300], b[300], c[300], in_a[320], in_b[320], out_c[320];
    loom_tensor *t = NULL;
    result r;
    (void)state;
    if (core_missing())
        skip();

    write_matmul_inputs();
    tmp_path(a, sizeof a, "a.npy");
    tmp_path(b, sizeof b, "b.npy");
    tmp_path(c, sizeof c, "c.npy");
    snprintf(in_a, sizeof in_a, "input=%s", a);
    snprintf(in_b, sizeof in_b, "other=%s", b);
    snprintf(out_c, sizeof out_c, "output=%s", c);
    unlink(c);

    r = run_loom("run", "core.matmul", "--in", in_a, "--in", in_b, "--out", out_c, NULL);
    expect_status(&r, 0);
    expect_contains(r.out, "core.matmul ran on");
    result_free(&r);

    assert_int_equal(loom_npy_read(&t, c), LOOM_OK);
    assert_int_equal(loom_tensor_dtype_of(t), LOOM_DTYPE_F32);
    assert_int_equal(t->ndim, 2);
    assert_int_equal(t->shape[0], 2);
    assert_int_equal(t->shape[1], 2);
    for (int i = 0; i < 4; i++)
        assert_float_equal(((const float *)loom_data(t))[i], want[i], 1e-4);
    loom_tensor_free(t);
}

static void run_json_reports_outputs_and_backend(void **state)
{
    char a[300], b[300], in_a[320], in_b[320];
    cJSON *j, *out, *shape;
    result r;
    (void)state;
    if (core_missing())
        skip();

    write_matmul_inputs();
    tmp_path(a, sizeof a, "a.npy");
    tmp_path(b, sizeof b, "b.npy");
    snprintf(in_a, sizeof in_a, "input=%s", a);
    snprintf(in_b, sizeof in_b, "other=%s", b);

    r = run_loom("run", "core.matmul", "--in", in_a, "--in", in_b, "--backend", "cpu", "--json", NULL);
    expect_status(&r, 0);
    j = parse_json(&r);
    out = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "outputs"), "output");
    assert_non_null(out);
    shape = cJSON_GetObjectItemCaseSensitive(out, "shape");
    assert_int_equal(cJSON_GetArraySize(shape), 2);
    assert_int_equal(cJSON_GetArrayItem(shape, 0)->valueint, 2);
    assert_int_equal(cJSON_GetArrayItem(shape, 1)->valueint, 2);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(out, "dtype")->valuestring, "f32");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(out, "file")));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "backend")->valuestring, "cpu");
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "impl")));
    cJSON_Delete(j);
    result_free(&r);
}

static void run_add_parses_attributes(void **state)
{
    const float x[3] = { 1, 2, 3 }, y[3] = { 10, 20, 30 };
    const int64_t s[1] = { 3 };
    char in_x[320], in_y[320], out[300], out_arg[320], p[300];
    loom_tensor *t = NULL;
    result r;
    (void)state;
    if (core_missing())
        skip();

    write_f32_npy("x.npy", 1, s, x);
    write_f32_npy("y.npy", 1, s, y);
    tmp_path(p, sizeof p, "x.npy");
    snprintf(in_x, sizeof in_x, "input=%s", p);
    tmp_path(p, sizeof p, "y.npy");
    snprintf(in_y, sizeof in_y, "other=%s", p);
    tmp_path(out, sizeof out, "sum.npy");
    snprintf(out_arg, sizeof out_arg, "output=%s", out);

    r = run_loom("run", "core.add", "--in", in_x, "--in", in_y, "--attr", "alpha=0.5", "--out", out_arg, NULL);
    expect_status(&r, 0);
    result_free(&r);
    assert_int_equal(loom_npy_read(&t, out), LOOM_OK);
    for (int i = 0; i < 3; i++)
        assert_float_equal(((const float *)loom_data(t))[i], x[i] + 0.5f * y[i], 1e-6);
    loom_tensor_free(t);

    /* A value that does not parse as the declared type is a failed loom call. */
    r = run_loom("run", "core.add", "--in", in_x, "--in", in_y, "--attr", "alpha=abc", NULL);
    expect_status(&r, 1);
    expect_contains(r.err, "loom: ");
    expect_contains(r.err, "alpha");
    result_free(&r);
}

static void run_linear_method_uses_weights_file(void **state)
{
    const float w[6] = { 1, 2, 3, 4, 5, 6 }, bias[2] = { 0.5f, -0.5f }, x[3] = { 1, 1, 1 };
    const int64_t ws[2] = { 2, 3 }, bs[1] = { 2 }, xs[2] = { 1, 3 };
    const char *names[2] = { "weight", "bias" };
    loom_tensor *wt = NULL, *bt = NULL, *t = NULL;
    char st[300], xp[300], in_x[320], out[300], out_arg[320];
    result r;
    (void)state;
    if (core_missing())
        skip();

    assert_int_equal(loom_tensor_new(&wt, LOOM_DTYPE_F32, 2, ws, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&bt, LOOM_DTYPE_F32, 1, bs, NULL), LOOM_OK);
    memcpy(loom_data(wt), w, sizeof w);
    memcpy(loom_data(bt), bias, sizeof bias);
    tmp_path(st, sizeof st, "linear.safetensors");
    {
        const loom_tensor *ts[2] = { wt, bt };
        assert_int_equal(loom_safetensors_write(st, names, ts, 2), LOOM_OK);
    }
    loom_tensor_free(wt);
    loom_tensor_free(bt);
    write_f32_npy("lx.npy", 2, xs, x);
    tmp_path(xp, sizeof xp, "lx.npy");
    snprintf(in_x, sizeof in_x, "input=%s", xp);
    tmp_path(out, sizeof out, "ly.npy");
    snprintf(out_arg, sizeof out_arg, "output=%s", out);

    r = run_loom("run", "core.linear", "--in", in_x, "--weights", st, "--out", out_arg, NULL);
    expect_status(&r, 0);
    result_free(&r);
    assert_int_equal(loom_npy_read(&t, out), LOOM_OK);
    assert_int_equal(loom_numel(t), 2);
    assert_float_equal(((const float *)loom_data(t))[0], 6.5f, 1e-5);
    assert_float_equal(((const float *)loom_data(t))[1], 14.5f, 1e-5);
    loom_tensor_free(t);

    /* --weights on an op that is no method is a usage error. */
    r = run_loom("run", "core.add", "--weights", st, NULL);
    expect_status(&r, 2);
    expect_contains(r.err, "--weights");
    result_free(&r);
}

static void run_names_are_checked_against_the_schema(void **state)
{
    char a[300], in_bad[320], in_a[320];
    result r;
    (void)state;
    if (core_missing())
        skip();

    write_matmul_inputs();
    tmp_path(a, sizeof a, "a.npy");
    snprintf(in_bad, sizeof in_bad, "lhs=%s", a);
    snprintf(in_a, sizeof in_a, "input=%s", a);

    r = run_loom("run", "core.matmul", "--in", in_bad, NULL);
    expect_status(&r, 2);
    expect_contains(r.err, "'lhs'");
    expect_contains(r.err, "input, other");
    result_free(&r);

    r = run_loom("run", "core.matmul", "--in", in_a, NULL);
    expect_status(&r, 2);
    expect_contains(r.err, "'other'");
    result_free(&r);

    r = run_loom("run", "core.matmul", "--in", in_a, "--in", in_a, NULL);
    expect_status(&r, 2);
    expect_contains(r.err, "twice");
    result_free(&r);

    r = run_loom("run", "core.matmul", "--in", in_a, "--in", "other=x.npy", "--out", "result=c.npy", NULL);
    expect_status(&r, 2);
    expect_contains(r.err, "'result'");
    expect_contains(r.err, "output");
    result_free(&r);

    r = run_loom("run", "core.matmul", "--in", in_a, "--in", "other=x.npy", "--attr", "nosuch=1", NULL);
    expect_status(&r, 2);
    expect_contains(r.err, "'nosuch'");
    result_free(&r);
}

static void unknown_op_fails_naming_it(void **state)
{
    result r;
    (void)state;

    r = run_loom("run", "no.such_op", "--in", "x=y.npy", NULL);
    expect_status(&r, 1);
    expect_contains(r.err, "loom: ");
    expect_contains(r.err, "no.such_op");
    result_free(&r);

    r = run_loom("info", "no.such_op", NULL);
    expect_status(&r, 1);
    expect_contains(r.err, "no.such_op");
    result_free(&r);
}

static void missing_input_file_is_named(void **state)
{
    char a[300], in_a[320];
    result r;
    (void)state;
    if (core_missing())
        skip();

    write_matmul_inputs();
    tmp_path(a, sizeof a, "a.npy");
    snprintf(in_a, sizeof in_a, "input=%s", a);
    r = run_loom("run", "core.matmul", "--in", in_a, "--in", "other=/nonexistent/missing-b.npy", NULL);
    expect_status(&r, 1);
    expect_contains(r.err, "/nonexistent/missing-b.npy");
    result_free(&r);
}

/* ------------------------------------------------------------------ bench */

static void bench_json_has_timing_keys(void **state)
{
    char a[300], b[300], in_a[320], in_b[320];
    cJSON *j;
    result r;
    (void)state;
    if (core_missing())
        skip();

    write_matmul_inputs();
    tmp_path(a, sizeof a, "a.npy");
    tmp_path(b, sizeof b, "b.npy");
    snprintf(in_a, sizeof in_a, "input=%s", a);
    snprintf(in_b, sizeof in_b, "other=%s", b);

    r = run_loom("bench", "core.matmul", "--in", in_a, "--in", in_b, "--repeat", "5", "--warmup", "1",
                 "--json", NULL);
    expect_status(&r, 0);
    j = parse_json(&r);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "median_s")));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "p10_s")));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "p90_s")));
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(j, "repeats")->valueint, 5);
    assert_true(cJSON_GetObjectItemCaseSensitive(j, "p10_s")->valuedouble
                <= cJSON_GetObjectItemCaseSensitive(j, "p90_s")->valuedouble);
    /* core.matmul declares its cost. */
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "gflops")));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "gbps")));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "backend")));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "impl")));
    cJSON_Delete(j);
    result_free(&r);

    r = run_loom("bench", "core.matmul", "--in", in_a, "--in", in_b, "--repeat", "3", NULL);
    expect_status(&r, 0);
    expect_contains(r.out, "median");
    expect_contains(r.out, "GFLOP/s");
    result_free(&r);
}

/* ------------------------------------------------------------------- demo */

static void demo_runs_and_says_where_calls_ran(void **state)
{
    result r;
    (void)state;
    if (core_missing())
        skip();

    r = run_loom("demo", NULL);
    expect_status(&r, 0);
    expect_contains(r.out, "core.matmul");
    expect_contains(r.out, "Where each call ran");
    result_free(&r);

    r = run_loom("demo", "--list", NULL);
    expect_status(&r, 0);
    expect_contains(r.out, "cast");
    result_free(&r);
}

/* ------------------------------------------------------------------ setup */

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    const char *base = getenv("TMPDIR");
    (void)state;
    cli = getenv("LOOM_CLI");
    if (cli == NULL || cli[0] == '\0') {
        print_error("LOOM_CLI is not set: run through meson test\n");
        return -1;
    }
    snprintf(tmpdir, sizeof tmpdir, "%s/loom-cli-test-XXXXXX", base != NULL && base[0] != '\0' ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL)
        return -1;
    if (loom_init(NULL) != LOOM_OK) {
        print_error("loom_init: %s\n", loom_last_error());
        return -1;
    }
    have_core = loom_op_find("core.matmul") != NULL && loom_op_find("core.linear") != NULL;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    loom_shutdown();
    nftw(tmpdir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(help_and_usage_errors_have_their_exit_status),
        cmocka_unit_test(list_shows_ops_as_text_and_json),
        cmocka_unit_test(info_shows_schema_and_kernels),
        cmocka_unit_test(doctor_reports_config_and_every_file),
        cmocka_unit_test(run_matmul_writes_the_product),
        cmocka_unit_test(run_json_reports_outputs_and_backend),
        cmocka_unit_test(run_add_parses_attributes),
        cmocka_unit_test(run_linear_method_uses_weights_file),
        cmocka_unit_test(run_names_are_checked_against_the_schema),
        cmocka_unit_test(unknown_op_fails_naming_it),
        cmocka_unit_test(missing_input_file_is_named),
        cmocka_unit_test(bench_json_has_timing_keys),
        cmocka_unit_test(demo_runs_and_says_where_calls_ran),
    };
    return cmocka_run_group_tests_name("cli", tests, setup, teardown);
}
