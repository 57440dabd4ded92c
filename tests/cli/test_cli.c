/* SPDX-License-Identifier: BSD-3-Clause */
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

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "loom/loom.h"
#include "cli_spawn.h"

static char tmpdir[256];
static const char *cli;
static int have_core;

/* One `loom` call in the test's folder (cli_spawn.h). */
static cli_result run_loom(const char *const *args)
{
    return cli_run(cli, tmpdir, args);
}

static cJSON *parse_json(const cli_result *r)
{
    cJSON *j = cJSON_Parse(r->out);
    if (j == NULL)
        print_error("not JSON:\n%s\n", r->out);
    assert_non_null(j);
    return j;
}

/* Run `loom ARGS...`, expect exit `status` and each of the NULL-terminated
** texts after args in stdout (status 0) or stderr (any other status). */
static void expect_run(int status, const char *const *args, ...)
{
    cli_result r = run_loom(args);
    va_list ap;
    cli_expect_status(&r, status);
    va_start(ap, args);
    for (const char *t = va_arg(ap, const char *); t != NULL; t = va_arg(ap, const char *))
        cli_expect_contains(status == 0 ? r.out : r.err, t);
    va_end(ap);
    cli_result_free(&r);
}

/* Run `loom ARGS...`, expect exit 0 and return its stdout parsed as JSON. */
static cJSON *run_json(const char *const *args)
{
    cli_result r = run_loom(args);
    cJSON *j;
    cli_expect_status(&r, 0);
    j = parse_json(&r);
    cli_result_free(&r);
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

/* Write the matmul inputs and the `--in` values naming them. */
static void matmul_in_args(char in_a[320], char in_b[320])
{
    char a[300], b[300];
    write_matmul_inputs();
    tmp_path(a, sizeof a, "a.npy");
    tmp_path(b, sizeof b, "b.npy");
    snprintf(in_a, 320, "a=%s", a);
    snprintf(in_b, 320, "b=%s", b);
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
    (void)state;

    expect_run(0, CLI_ARGV("--help"), "usage: loom", NULL);

    expect_run(2, CLI_ARGV(NULL), "usage: loom", NULL);

    expect_run(2, CLI_ARGV("frobnicate"), "unknown command 'frobnicate'", NULL);

    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "usage: loom %s", cmds[i]);
        expect_run(0, CLI_ARGV(cmds[i], "--help"), want, NULL);
        expect_run(2, CLI_ARGV(cmds[i], "--no-such-flag"), "--no-such-flag", NULL);
    }

    expect_run(2, CLI_ARGV("info"), "which operator", NULL);

    expect_run(2, CLI_ARGV("run", "core.matmul", "--in"), "needs a value", NULL);

    expect_run(2, CLI_ARGV("run", "core.matmul", "--in", "no-equals-sign"), "NAME=FILE", NULL);

    expect_run(2, CLI_ARGV("bench", "core.matmul", "--repeat", "0"), "--repeat", NULL);

    expect_run(2, CLI_ARGV("demo", "no-such-section"), "no-such-section", NULL);
}

/* ---------------------------------------------------------- introspection */

static void list_shows_ops_as_text_and_json(void **state)
{
    cJSON *j, *ops, *op;
    int found = 0;
    (void)state;
    if (core_missing())
        skip();

    expect_run(0, CLI_ARGV("list"), "core.matmul", "core.linear", NULL);

    j = run_json(CLI_ARGV("list", "--json"));
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
}

static void info_shows_schema_and_kernels(void **state)
{
    cJSON *j, *inputs, *kernels;
    (void)state;
    if (core_missing())
        skip();

    expect_run(0, CLI_ARGV("info", "core.matmul"), "core.matmul (version 1)", "a", "b",
               "kernels in dispatch order", NULL);

    j = run_json(CLI_ARGV("info", "core.matmul", "--json"));
    inputs = cJSON_GetObjectItemCaseSensitive(j, "inputs");
    assert_int_equal(cJSON_GetArraySize(inputs), 2);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(inputs, 0), "name")->valuestring,
                        "a");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(inputs, 1), "name")->valuestring,
                        "b");
    kernels = cJSON_GetObjectItemCaseSensitive(j, "kernels");
    assert_true(cJSON_GetArraySize(kernels) >= 1);
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(kernels, 0), "backend")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "object_class")));
    cJSON_Delete(j);

    /* A method shows its class and the class's attributes. */
    j = run_json(CLI_ARGV("info", "core.linear", "--json"));
    assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "object_class")));
    cJSON_Delete(j);
}

static void doctor_reports_config_and_every_file(void **state)
{
    cJSON *j, *files, *f;
    int core_loaded = 0;
    (void)state;

    expect_run(0, CLI_ARGV("doctor"), "configuration:", "devices:", "files seen:", NULL);

    j = run_json(CLI_ARGV("doctor", "--json"));
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

    /* a CUDA sibling loaded without a device is credited with what it
    ** brings, and its kernels are marked as unable to run */
    cli_result r = run_loom(CLI_ARGV("doctor"));
    cli_expect_status(&r, 0);
    if (strstr(r.out, "no device ") != NULL && strstr(r.out, "pack core-cuda ") != NULL)
        cli_expect_contains(r.out, "brings 2 kernels (none can run: no device)");
    cli_result_free(&r);
}

/* LOOM_CPU_MAX_ISA is read by the core alone: doctor and the core pack's
** kernel choice agree, whatever the level. */
static void cpu_cap_is_one_rule_for_doctor_and_packs(void **state)
{
    static const char *const levels[] = { "scalar", "sse4" };
    (void)state;
    if (core_missing())
        skip();
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        char want[64];
        setenv("LOOM_CPU_MAX_ISA", levels[i], 1);
        snprintf(want, sizeof want, "LOOM_CPU_MAX_ISA=%s (environment)", levels[i]);
        expect_run(0, CLI_ARGV("doctor"), want, NULL);
        expect_run(0, CLI_ARGV("info", "core.matmul"), "cpu:blocked-scalar", NULL);
    }
    setenv("LOOM_CPU_MAX_ISA", "native", 1);
    expect_run(0, CLI_ARGV("doctor"), "LOOM_CPU_MAX_ISA=native", NULL);
    unsetenv("LOOM_CPU_MAX_ISA");
}

/* -------------------------------------------------------------------- run */

static void run_matmul_writes_the_product(void **state)
{
    const float want[4] = { 58, 64, 139, 154 };
    char c[300], in_a[320], in_b[320], out_c[320];
    loom_tensor *t = NULL;
    (void)state;
    if (core_missing())
        skip();

    matmul_in_args(in_a, in_b);
    tmp_path(c, sizeof c, "c.npy");
    snprintf(out_c, sizeof out_c, "output=%s", c);
    unlink(c);

    expect_run(0, CLI_ARGV("run", "core.matmul", "--in", in_a, "--in", in_b, "--out", out_c),
               "core.matmul ran on", NULL);

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
    char in_a[320], in_b[320];
    cJSON *j, *out, *shape;
    (void)state;
    if (core_missing())
        skip();

    matmul_in_args(in_a, in_b);

    j = run_json(CLI_ARGV("run", "core.matmul", "--in", in_a, "--in", in_b, "--backend", "cpu", "--json"));
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
}

/* `--in NAME=@FILE` gives the file's raw bytes as u8 [N] (here cast to i64
** by core.cast and written out); a missing file is an error naming it. */
static void run_in_at_file_reads_raw_bytes(void **state)
{
    const uint8_t bytes[5] = { 0x01, 0x02, 0xFF, 0x00, 0x80 };
    char path[300], arg[320], out[300], out_arg[320];
    loom_tensor *t = NULL;
    (void)state;
    if (core_missing())
        skip();
    tmp_path(path, sizeof path, "raw.bin");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, sizeof bytes, f), sizeof bytes);
    fclose(f);
    snprintf(arg, sizeof arg, "input=@%s", path);
    tmp_path(out, sizeof out, "raw_i64.npy");
    snprintf(out_arg, sizeof out_arg, "output=%s", out);
    expect_run(0, CLI_ARGV("run", "core.cast", "--in", arg, "--attr", "dtype=i64", "--out", out_arg), "i64[5]", NULL);
    assert_int_equal(loom_npy_read(&t, out), LOOM_OK);
    assert_int_equal(t->ndim, 1);
    assert_int_equal(t->shape[0], 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(((const int64_t *)loom_data(t))[i], bytes[i]);
    loom_tensor_free(t);
    tmp_path(path, sizeof path, "no-such-file.jpg");
    snprintf(arg, sizeof arg, "input=@%s", path);
    expect_run(1, CLI_ARGV("run", "core.cast", "--in", arg, "--attr", "dtype=i64"), "cannot open", "no-such-file.jpg",
               NULL);
    expect_run(0, CLI_ARGV("run", "--help"), "NAME=@FILE", NULL);
}

static void run_add_parses_attributes(void **state)
{
    const float x[3] = { 1, 2, 3 }, y[3] = { 10, 20, 30 };
    const int64_t s[1] = { 3 };
    char in_x[320], in_y[320], out[300], out_arg[320], p[300];
    loom_tensor *t = NULL;
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

    expect_run(0, CLI_ARGV("run", "core.add", "--in", in_x, "--in", in_y, "--attr", "alpha=0.5", "--out",
               out_arg), NULL);
    assert_int_equal(loom_npy_read(&t, out), LOOM_OK);
    for (int i = 0; i < 3; i++)
        assert_float_equal(((const float *)loom_data(t))[i], x[i] + 0.5f * y[i], 1e-6);
    loom_tensor_free(t);

    /* A value that does not parse as the declared type is a failed loom call. */
    expect_run(1, CLI_ARGV("run", "core.add", "--in", in_x, "--in", in_y, "--attr", "alpha=abc"), "loom: ",
               "alpha", NULL);
}

static void run_linear_method_uses_weights_file(void **state)
{
    const float w[6] = { 1, 2, 3, 4, 5, 6 }, bias[2] = { 0.5f, -0.5f }, x[3] = { 1, 1, 1 };
    const int64_t ws[2] = { 2, 3 }, bs[1] = { 2 }, xs[2] = { 1, 3 };
    const char *names[2] = { "weight", "bias" };
    loom_tensor *wt = NULL, *bt = NULL, *t = NULL;
    char st[300], xp[300], in_x[320], out[300], out_arg[320];
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

    expect_run(0, CLI_ARGV("run", "core.linear", "--in", in_x, "--weights", st, "--out", out_arg), NULL);
    assert_int_equal(loom_npy_read(&t, out), LOOM_OK);
    assert_int_equal(loom_numel(t), 2);
    assert_float_equal(((const float *)loom_data(t))[0], 6.5f, 1e-5);
    assert_float_equal(((const float *)loom_data(t))[1], 14.5f, 1e-5);
    loom_tensor_free(t);

    /* --weights on an op that is no method is a usage error. */
    expect_run(2, CLI_ARGV("run", "core.add", "--weights", st), "--weights", NULL);
}

static void run_names_are_checked_against_the_schema(void **state)
{
    char a[300], in_bad[320], in_a[320];
    (void)state;
    if (core_missing())
        skip();

    write_matmul_inputs();
    tmp_path(a, sizeof a, "a.npy");
    snprintf(in_bad, sizeof in_bad, "lhs=%s", a);
    snprintf(in_a, sizeof in_a, "a=%s", a);

    expect_run(2, CLI_ARGV("run", "core.matmul", "--in", in_bad), "'lhs'", "a, b", NULL);

    expect_run(2, CLI_ARGV("run", "core.matmul", "--in", in_a), "'b'", NULL);

    expect_run(2, CLI_ARGV("run", "core.matmul", "--in", in_a, "--in", in_a), "twice", NULL);

    expect_run(2, CLI_ARGV("run", "core.matmul", "--in", in_a, "--in", "b=x.npy", "--out", "result=c.npy"),
               "'result'", "output", NULL);

    expect_run(2, CLI_ARGV("run", "core.matmul", "--in", in_a, "--in", "b=x.npy", "--attr", "nosuch=1"),
               "'nosuch'", NULL);
}

static void unknown_op_fails_naming_it(void **state)
{
    (void)state;

    expect_run(1, CLI_ARGV("run", "no.such_op", "--in", "x=y.npy"), "loom: ", "no.such_op", NULL);

    expect_run(1, CLI_ARGV("info", "no.such_op"), "no.such_op", NULL);
}

/* Mistakes are answered in one line with the closest name and a pointer to
** --help; with --json the error is JSON on stdout as well. */
static void mistakes_get_one_line_and_a_suggestion(void **state)
{
    cli_result r;
    (void)state;
    expect_run(2, CLI_ARGV("lsit"), "unknown command 'lsit'; did you mean 'list'?", "Try 'loom --help'.", NULL);

    r = run_loom(CLI_ARGV("run", "--no-such-flag"));
    cli_expect_status(&r, 2);
    cli_expect_contains(r.err, "loom run: unknown option '--no-such-flag'\nTry 'loom run --help'.\n");
    assert_null(strstr(r.err, "usage:"));               /* not the whole usage text */
    cli_result_free(&r);

    if (core_missing())
        return;
    expect_run(1, CLI_ARGV("info", "core.amtmul"), "no operator named 'core.amtmul'; did you mean 'core.matmul'?", NULL);

    r = run_loom(CLI_ARGV("info", "core.amtmul", "--json"));
    cli_expect_status(&r, 1);
    cJSON *j = parse_json(&r), *e = cJSON_GetObjectItem(j, "error");
    assert_non_null(e);
    assert_string_equal(cJSON_GetObjectItem(e, "status")->valuestring, "LOOM_ENOENT");
    cli_expect_contains(cJSON_GetObjectItem(e, "message")->valuestring, "did you mean 'core.matmul'?");
    assert_int_equal(cJSON_GetObjectItem(e, "exit")->valueint, 1);
    cJSON_Delete(j);
    cli_result_free(&r);

    r = run_loom(CLI_ARGV("list", "--json", "--bogus"));
    cli_expect_status(&r, 2);
    j = parse_json(&r);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "status")->valuestring, "usage");
    cJSON_Delete(j);
    cli_result_free(&r);

    char in_a[320], in_b[320];
    write_matmul_inputs();
    matmul_in_args(in_a, in_b);
    expect_run(1, CLI_ARGV("run", "core.matmul", "--backend", "gpu", "--in", in_a, "--in", in_b),
               "'gpu' is not a backend of core.matmul (it has: ", NULL);
}

/* info and list follow LOOM_BACKENDS and say which kernels cannot run. */
static void kernels_excluded_or_without_device_are_marked(void **state)
{
    (void)state;
    if (core_missing())
        return;
    setenv("LOOM_BACKENDS", "cpu", 1);
    cli_result r = run_loom(CLI_ARGV("info", "core.matmul"));
    unsetenv("LOOM_BACKENDS");
    cli_expect_status(&r, 0);
    cli_expect_contains(r.out, "kernels in dispatch order:\n  1. cpu ");
    if (strstr(r.out, "onednn") != NULL)
        cli_expect_contains(r.out, "onednn:matmul            pack core       cpu   dtypes f32  (excluded by LOOM_BACKENDS)");
    cli_result_free(&r);
    r = run_loom(CLI_ARGV("list"));
    cli_expect_status(&r, 0);
    /* without a CUDA device, core.add's cuda kernel is shown as unable to run */
    if (strstr(r.out, "cuda") != NULL && system("nvidia-smi -L >/dev/null 2>&1") != 0)
        cli_expect_contains(r.out, "cpu (cuda: no device)");
    cli_result_free(&r);
}

static void missing_input_file_is_named(void **state)
{
    char in_a[320], in_b[320];
    (void)state;
    if (core_missing())
        skip();

    matmul_in_args(in_a, in_b);
    expect_run(1, CLI_ARGV("run", "core.matmul", "--in", in_a, "--in", "b=/nonexistent/missing-b.npy"),
               "/nonexistent/missing-b.npy", NULL);
}

/* ------------------------------------------------------------------ bench */

static void bench_json_has_timing_keys(void **state)
{
    char in_a[320], in_b[320];
    cJSON *j;
    (void)state;
    if (core_missing())
        skip();

    matmul_in_args(in_a, in_b);

    j = run_json(CLI_ARGV("bench", "core.matmul", "--in", in_a, "--in", in_b, "--repeat", "5", "--warmup", "1",
                 "--json"));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "median_s")));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "p10_s")));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "p90_s")));
    /* CPU seconds per call: the process's, every thread */
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "cpu_median_s")));
    assert_true(cJSON_GetObjectItemCaseSensitive(j, "cpu_median_s")->valuedouble >= 0.0);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(j, "repeats")->valueint, 5);
    assert_true(cJSON_GetObjectItemCaseSensitive(j, "p10_s")->valuedouble
                <= cJSON_GetObjectItemCaseSensitive(j, "p90_s")->valuedouble);
    /* core.matmul declares its cost. */
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "gflops")));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "gbps")));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "backend")));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "impl")));
    cJSON_Delete(j);

    expect_run(0, CLI_ARGV("bench", "core.matmul", "--in", in_a, "--in", in_b, "--repeat", "3"), "median",
               "CPU median", "GFLOP/s", NULL);
}

/* A progress line on stderr: only on a terminal (never in a pipe or a log,
** as here) unless LOOM_PROGRESS=1 forces it; erased when the run ends. */
static void bench_progress_only_on_a_terminal(void **state)
{
    char in_a[320], in_b[320];
    cli_result r;
    (void)state;
    if (core_missing())
        skip();
    matmul_in_args(in_a, in_b);
    r = run_loom(CLI_ARGV("bench", "core.matmul", "--in", in_a, "--in", in_b, "--repeat", "4", "--warmup", "1"));
    cli_expect_status(&r, 0);
    assert_null(strstr(r.err, "core.matmul  "));
    cli_result_free(&r);
    setenv("LOOM_PROGRESS", "1", 1);
    r = run_loom(CLI_ARGV("bench", "core.matmul", "--in", in_a, "--in", in_b, "--repeat", "4", "--warmup", "1"));
    unsetenv("LOOM_PROGRESS");
    cli_expect_status(&r, 0);
    cli_expect_contains(r.err, "\rcore.matmul  5/5  100%");
    cli_result_free(&r);
}

/* The completion script completes from the registry: op names, an op's
** inputs and the backends, run through bash itself when it is there. */
static void completion_comes_from_the_registry(void **state)
{
    (void)state;
    expect_run(0, CLI_ARGV("completion", "bash"), "complete -F _loom loom", NULL);
    expect_run(0, CLI_ARGV("completion", "zsh"), "#compdef loom", "bashcompinit", NULL);
    expect_run(0, CLI_ARGV("completion", "--words", "commands"), "list\ninfo\n", "completion\n", NULL);
    expect_run(2, CLI_ARGV("completion", "fish"), "unknown argument 'fish'", NULL);
    if (core_missing())
        return;
    expect_run(0, CLI_ARGV("completion", "--words", "ops"), "core.matmul\n", NULL);
    expect_run(0, CLI_ARGV("completion", "--words", "inputs", "core.matmul"), "a=\nb=\n", NULL);
    expect_run(0, CLI_ARGV("completion", "--words", "attrs", "core.add"), "alpha=\n", NULL);
    expect_run(0, CLI_ARGV("completion", "--words", "backends"), "cpu\n", NULL);
    if (system("bash --version >/dev/null 2>&1") != 0) {
        print_message("no bash: the script itself was not run\n");
        return;
    }
    char cmd[1024], line[256] = "";
    snprintf(cmd, sizeof cmd,
             "bash -c 'source <(\"%s\" completion bash) && COMP_WORDS=(\"%s\" run core.matm) && COMP_CWORD=2 "
             "&& _loom; echo \"${COMPREPLY[*]}\"; COMP_WORDS=(\"%s\" run core.add --in i) && COMP_CWORD=4 "
             "&& _loom; echo \"${COMPREPLY[*]}\"'", cli, cli, cli);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(line, sizeof line, p));
    assert_string_equal(line, "core.matmul\n");
    assert_non_null(fgets(line, sizeof line, p));
    assert_string_equal(line, "input=\n");
    assert_int_equal(pclose(p), 0);
}

/* ------------------------------------------------------------------- demo */

/* The demo programs of the build tree (examples/demos): the core ones run,
** the others say which op they miss (only the core pack is loaded). */
static void demo_runs_and_says_where_calls_ran(void **state)
{
    (void)state;
    if (core_missing())
        skip();

    expect_run(0, CLI_ARGV("demo"), "core.matmul", "bf16 keeps", "max |difference| to a plain C loop",
               "skipped: op vision.batched_nms is not loaded", "Where each call ran", "add (alpha=-1)", NULL);

    expect_run(0, CLI_ARGV("demo", "--list"), "cast", "detect", "examples/demos/core_cast", NULL);

    expect_run(0, CLI_ARGV("demo", "add"), "== core.add with broadcasting ==", "add (broadcast)", NULL);
}

/* Write an executable shell script DIR/name. */
static void write_script(const char *dir, const char *name, const char *text)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
}

/* LOOM_DEMO_PATH adds programs that speak the demo protocol (any language):
** they come first (a name there hides the built demo of that name), one
** whose op is not loaded is skipped, and a program that does not describe
** itself is left out with a message. */
static void demo_path_adds_programs(void **state)
{
    char dir[300];
    (void)state;
    if (core_missing())
        skip();
    tmp_path(dir, sizeof dir, "demos");
    assert_int_equal(mkdir(dir, 0755), 0);
    write_script(dir, "hello",
                 "#!/bin/sh\n"
                 "if [ \"$1\" = --describe ]; then\n"
                 "  printf 'name: hello\\norder: 1\\nops: core.add\\ntitle: a demo from LOOM_DEMO_PATH\\n'; exit 0\n"
                 "fi\n"
                 "echo '  hello from a script'\n"
                 "[ \"$1\" = --record-fd ] && printf 'hello\\tcore.add\\tcpu\\tcpu:script\\n' >&\"$2\"\n"
                 "exit 0\n");
    write_script(dir, "needs",
                 "#!/bin/sh\n"
                 "[ \"$1\" = --describe ] && printf 'name: needs\\norder: 2\\nops: core.add,nosuch.op\\ntitle: needs an op\\n'\n"
                 "exit 0\n");
    write_script(dir, "matmul",
                 "#!/bin/sh\n"
                 "[ \"$1\" = --describe ] && printf 'name: matmul\\norder: 3\\nops: core.matmul\\ntitle: matmul of the path\\n' && exit 0\n"
                 "echo '  the matmul of LOOM_DEMO_PATH'\n");
    write_script(dir, "junk", "#!/bin/sh\nexit 1\n");
    assert_int_equal(setenv("LOOM_DEMO_PATH", dir, 1), 0);

    cli_result r = run_loom(CLI_ARGV("demo", "--list"));
    cli_expect_status(&r, 0);
    cli_expect_contains(r.out, "a demo from LOOM_DEMO_PATH");
    cli_expect_contains(r.out, "matmul of the path");
    cli_expect_contains(r.out, "cast");             /* the built demos are still there */
    cli_expect_contains(r.err, "junk does not describe itself");
    assert_null(strstr(r.out, "core.matmul on every CPU backend"));
    /* in order: hello (1) before needs (2) before matmul (3) before the built ones */
    assert_true(strstr(r.out, "hello") < strstr(r.out, "needs an op"));
    assert_true(strstr(r.out, "needs an op") < strstr(r.out, "matmul of the path"));
    cli_result_free(&r);

    expect_run(0, CLI_ARGV("demo", "hello", "needs", "matmul"), "== a demo from LOOM_DEMO_PATH ==",
               "hello from a script", "skipped: op nosuch.op is not loaded", "the matmul of LOOM_DEMO_PATH",
               "hello  core.add  cpu      cpu:script", NULL);

    expect_run(2, CLI_ARGV("demo", "nosuch"), "no demo 'nosuch'", NULL);
    assert_int_equal(unsetenv("LOOM_DEMO_PATH"), 0);
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
        cmocka_unit_test(cpu_cap_is_one_rule_for_doctor_and_packs),
        cmocka_unit_test(run_matmul_writes_the_product),
        cmocka_unit_test(run_json_reports_outputs_and_backend),
        cmocka_unit_test(run_add_parses_attributes),
        cmocka_unit_test(run_linear_method_uses_weights_file),
        cmocka_unit_test(run_names_are_checked_against_the_schema),
        cmocka_unit_test(unknown_op_fails_naming_it),
        cmocka_unit_test(mistakes_get_one_line_and_a_suggestion),
        cmocka_unit_test(kernels_excluded_or_without_device_are_marked),
        cmocka_unit_test(missing_input_file_is_named),
        cmocka_unit_test(run_in_at_file_reads_raw_bytes),
        cmocka_unit_test(bench_json_has_timing_keys),
        cmocka_unit_test(bench_progress_only_on_a_terminal),
        cmocka_unit_test(completion_comes_from_the_registry),
        cmocka_unit_test(demo_runs_and_says_where_calls_ran),
        cmocka_unit_test(demo_path_adds_programs),
    };
    return cmocka_run_group_tests_name("cli", tests, setup, teardown);
}
