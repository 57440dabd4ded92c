/* SPDX-License-Identifier: BSD-3-Clause */
/*
** conformance.c - every registered op, every backend against the cpu, as
** ggml's test-backend-ops does:
**
**   conformance [--mode test|perf|support] [--op GLOB]
**
** For each op (loom_op_count / loom_op_schema_at; --op keeps the names
** fnmatch(3) accepts), its generator in the table of cases.c makes each case
** of each dtype; the case runs on the cpu kernel (the reference) and, with
** the same inputs copied to its device, on the kernels of every other
** backend (onednn, cuda, any other), each forced by loom_call_options.backend;
** every output is compared with the cpu's by the case's tolerance. A
** backend whose device is absent (no CUDA device: loom_device_count) is
** skipped with a message. Kernels of one backend are reached through their
** dtype masks and supports() only (the API forces a backend, not a kernel):
** the harness names the kernels that ran and says which never did.
**
** Modes:
**  test     (default) TAP on stdout, one point per op and dtype for the cpu
**           run and one per other backend; exit 1 on any failure. An op
**           without a generator fails by name; an op the table marks
**           covered_by is skipped, naming the test file and the reason.
**  perf     each case timed on each backend (fastest of several runs,
**           the least noisy figure on a shared machine), side by side
**           with the ratio cpu / backend; exit 0.
**  support  the op x dtype x backend matrix: the kernel that takes each
**           dtype, and the cases the harness has for it; exit 0.
**
** loom loads the packs of LOOM_PLUGIN_PATH only (tests/util/tu_env.h).
*/
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conformance.h"
#include "tu_env.h"

#define MAX_BACKENDS 8
#define MAX_IMPLS 8

/* One backend of an op: its kernels (the dispatcher picks among them), the
** dtypes they take together, the device they run on (found or not). */
typedef struct backend {
    const char *name;
    int32_t device_type;
    uint64_t dtypes;
    int any_dtype;                  /* a kernel whose mask is 0 takes every dtype */
    const char *impls[MAX_IMPLS];
    uint64_t impl_dtypes[MAX_IMPLS];        /* 0: every dtype */
    int ran[MAX_IMPLS];
    int n_impls;
    int has_device;
    loom_dl_device device;
    const char *device_kind;
} backend;

typedef struct op_ctx {
    const loom_op *op;
    const loom_op_schema *schema;
    const cf_gen *gen;
    backend b[MAX_BACKENDS];
    int n_b;
    int cpu;                        /* index of the cpu backend, -1 if none */
} op_ctx;

static int tap_n, failures;

static void tap(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tap(int ok, const char *fmt, ...)
{
    va_list ap;
    printf("%s %d - ", ok ? "ok" : "not ok", ++tap_n);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    failures += !ok;
}

static const char *kind_name(int32_t device_type)
{
    return device_type == LOOM_DEVICE_CPU ? "cpu" : device_type == LOOM_DEVICE_CUDA ? "cuda" : "non-cpu";
}

static void find_device(backend *b)
{
    b->device_kind = kind_name(b->device_type);
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &di) == LOOM_OK && di.device.device_type == b->device_type) {
            b->has_device = 1;
            b->device = di.device;
            b->device_kind = di.kind;
            return;
        }
    }
}

static void load_op(op_ctx *x, const loom_op_schema *s)
{
    memset(x, 0, sizeof *x);
    x->schema = s;
    x->op = loom_op_find(s->name);
    x->gen = cf_find_gen(s->name);
    x->cpu = -1;
    for (int64_t k = 0; x->op != NULL && k < loom_op_kernel_count(x->op); k++) {
        loom_kernel_info ki = LOOM_KERNEL_INFO_INIT;
        if (loom_op_kernel_at(x->op, k, &ki) != LOOM_OK)
            continue;
        int j = 0;
        while (j < x->n_b && strcmp(x->b[j].name, ki.backend) != 0)
            j++;
        if (j == x->n_b) {
            if (x->n_b == MAX_BACKENDS)
                cf_die("%s: more than %d backends", s->name, MAX_BACKENDS);
            x->b[x->n_b++] = (backend){ .name = ki.backend, .device_type = ki.device_type };
            find_device(&x->b[j]);
            if (strcmp(ki.backend, "cpu") == 0)
                x->cpu = j;
        }
        backend *b = &x->b[j];
        b->any_dtype |= ki.dtypes == 0;
        b->dtypes |= ki.dtypes;
        if (b->n_impls < MAX_IMPLS) {
            b->impl_dtypes[b->n_impls] = ki.dtypes;
            b->impls[b->n_impls++] = ki.impl;
        }
    }
}

static int takes(const backend *b, loom_dtype dt)
{
    return dt == LOOM_DTYPE_INVALID || b->any_dtype || (b->dtypes & LOOM_DTYPE_BIT(dt)) != 0;
}

static const char *dtype_label(loom_dtype dt)
{
    return dt == LOOM_DTYPE_INVALID ? "-" : loom_dtype_name(dt);
}

/* The dtypes the generator makes, in dtype order; INVALID alone for an op
** without a dtype axis. Returns the count. */
static int gen_dtypes(const cf_gen *g, loom_dtype *out)
{
    int n = 0;
    if (g->dtypes == 0)
        out[n++] = LOOM_DTYPE_INVALID;
    for (int d = 1; d < LOOM_DTYPE_COUNT; d++)
        if (g->dtypes & LOOM_DTYPE_BIT(d))
            out[n++] = (loom_dtype)d;
    return n;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
    return h;
}

/* Case `index` of dtype dt made afresh; 0 when the op has no such case. */
static int make_case(const op_ctx *x, loom_dtype dt, int index, cf_case *c)
{
    memset(c, 0, sizeof *c);
    c->op = x->schema->name;
    c->dtype = dt;
    c->index = index;
    c->seed = fnv1a(c->op) ^ ((uint64_t)dt << 40) ^ ((uint64_t)index << 48);
    c->n_out = (int32_t)x->schema->n_outputs;
    if (!x->gen->make(c)) {
        cf_case_free(c);
        return 0;
    }
    if (c->what[0] == '\0')
        cf_what(c, "case %d", index);
    return 1;
}

static void free_all(loom_tensor **t, int n)
{
    for (int i = 0; i < n; i++) {
        loom_tensor_free(t[i]);
        t[i] = NULL;
    }
}

/* Inputs of c on b's device (copies; the host ones when b runs on the cpu). */
static int inputs_to(const backend *b, const cf_case *c, const loom_tensor **in, loom_tensor **copies, char *err,
                     size_t size)
{
    int on_device = b->device_type != LOOM_DEVICE_CPU;
    for (int32_t i = 0; i < c->n_in; i++) {
        copies[i] = NULL;
        in[i] = c->in[i];
        if (on_device && c->in[i] != NULL) {
            if (loom_tensor_copy_to(&copies[i], c->in[i], &b->device) != LOOM_OK) {
                snprintf(err, size, "input %d to the %s device: %s", (int)i, b->device_kind, loom_last_error());
                free_all(copies, i);
                return 0;
            }
            in[i] = copies[i];
        }
    }
    return 1;
}

/* One call of the case on backend b; the outputs are left where b put them.
** Checks that the dispatcher ran b, and records which of its kernels. */
/* Whether a refused forced call was the forced backend's own choice: the
** dispatch trace names one of its kernels ("onednn:conv: declined: ...").
** A kernel may leave cases to another backend (supports()); the case is
** then not run there, rather than failed. */
static int declined_by(const char *err, const char *backend_name)
{
    char needle[64];
    snprintf(needle, sizeof needle, "; %s:", backend_name);
    for (const char *p = strstr(err, needle); p != NULL; p = strstr(p + 1, needle)) {
        const char *end = strchr(p + 2, ';');
        const char *d = strstr(p, ": declined:");
        if (d != NULL && (end == NULL || d < end))
            return 1;
    }
    return 0;
}

/* 1: ran on b; 0: failed (err says why); -1: b's kernels declined the case. */
static int call(const op_ctx *x, backend *b, const cf_case *c, const loom_tensor **in, loom_tensor **out,
                char *err, size_t size)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = b->name;
    opt.object = c->object;
    for (int32_t i = 0; i < c->n_out; i++)
        out[i] = NULL;
    if (loom_op_run(x->op, in, c->n_in, c->attrs, out, c->n_out, &opt) != LOOM_OK) {
        snprintf(err, size, "%s", loom_last_error());
        return declined_by(err, b->name) ? -1 : 0;
    }
    loom_dispatch_info di = LOOM_DISPATCH_INFO_INIT;
    if (loom_last_dispatch(&di) != LOOM_OK || di.backend == NULL || strcmp(di.backend, b->name) != 0) {
        snprintf(err, size, "forced to %s, ran on %s", b->name, di.backend ? di.backend : "nothing");
        free_all(out, c->n_out);
        return 0;
    }
    for (int i = 0; i < b->n_impls; i++)
        if (di.impl != NULL && strcmp(di.impl, b->impls[i]) == 0)
            b->ran[i] = 1;
    return 1;
}

/* Runs the case on b and brings the outputs to the host in out[]. */
static int run_case(const op_ctx *x, backend *b, const cf_case *c, loom_tensor **out, char *err, size_t size)
{
    const loom_tensor *in[CF_MAX_IN];
    loom_tensor *copies[CF_MAX_IN], *dev_out[CF_MAX_OUT];
    if (!inputs_to(b, c, in, copies, err, size))
        return 0;
    int ok = call(x, b, c, in, dev_out, err, size);
    free_all(copies, c->n_in);
    if (ok != 1)
        return ok;
    for (int32_t i = 0; i < c->n_out; i++) {
        out[i] = dev_out[i];
        if (b->device_type != LOOM_DEVICE_CPU) {
            out[i] = NULL;
            if (loom_tensor_copy_to(&out[i], dev_out[i], NULL) != LOOM_OK) {
                snprintf(err, size, "output %d to the host: %s", (int)i, loom_last_error());
                ok = 0;
            }
            loom_tensor_free(dev_out[i]);
        }
    }
    if (!ok)
        free_all(out, c->n_out);
    return ok;
}

/* ------------------------------------------------------------------ test */

typedef struct verdict {
    int cases;
    int declined;                   /* cases the backend left to another */
    int failed;
    char why[1024];
} verdict;

static void test_dtype(op_ctx *x, loom_dtype dt)
{
    const char *name = x->schema->name, *dn = dtype_label(dt);
    backend *cpu = &x->b[x->cpu];
    verdict ref_v = { 0 }, v[MAX_BACKENDS];
    memset(v, 0, sizeof v);
    if (!takes(cpu, dt)) {
        tap(0, "%s %s: the generator makes %s, which no cpu kernel takes", name, dn, dn);
        return;
    }
    for (int index = 0; index < x->gen->n_cases && !ref_v.failed; index++) {
        cf_case c;
        loom_tensor *ref[CF_MAX_OUT];
        char err[512];
        if (!make_case(x, dt, index, &c))
            continue;
        if (run_case(x, cpu, &c, ref, err, sizeof err) != 1) {
            ref_v.failed = 1;
            snprintf(ref_v.why, sizeof ref_v.why, "case %d (%.160s): %.512s", index, c.what, err);
            cf_case_free(&c);
            break;
        }
        ref_v.cases++;
        for (int j = 0; j < x->n_b; j++) {
            backend *b = &x->b[j];
            if (j == x->cpu || !takes(b, dt) || !b->has_device || v[j].failed)
                continue;
            cf_case bc;
            loom_tensor *got[CF_MAX_OUT];
            make_case(x, dt, index, &bc);
            const int ran = run_case(x, b, &bc, got, err, sizeof err);
            if (ran < 0) {
                v[j].declined++;
            } else if (!ran) {
                v[j].failed = 1;
                snprintf(v[j].why, sizeof v[j].why, "case %d (%.160s): %.512s", index, bc.what, err);
            } else {
                for (int32_t o = 0; o < bc.n_out && !v[j].failed; o++)
                    if (!cf_compare(&bc, o, got[o], ref[o], err, sizeof err)) {
                        v[j].failed = 1;
                        snprintf(v[j].why, sizeof v[j].why, "case %d (%.160s): output %d (%.40s): %.512s", index,
                                 bc.what, (int)o, x->schema->outputs[o].name, err);
                    }
                free_all(got, bc.n_out);
                v[j].cases++;
            }
            cf_case_free(&bc);
        }
        free_all(ref, c.n_out);
        cf_case_free(&c);
    }
    if (ref_v.failed)
        tap(0, "%s %s: cpu: %s", name, dn, ref_v.why);
    else
        tap(ref_v.cases > 0, "%s %s: cpu ran %d case%s", name, dn, ref_v.cases, ref_v.cases == 1 ? "" : "s");
    for (int j = 0; j < x->n_b; j++) {
        backend *b = &x->b[j];
        if (j == x->cpu || !takes(b, dt))
            continue;
        if (!b->has_device)
            printf("ok %d - %s %s: %s # SKIP no %s device: the %s kernels are not run\n", ++tap_n, name, dn,
                   b->name, b->device_kind, b->name);
        else if (v[j].failed)
            tap(0, "%s %s: %s differs from cpu: %s", name, dn, b->name, v[j].why);
        else if (v[j].declined > 0)
            tap(1, "%s %s: %s agrees with cpu on %d case%s (%d declined by its kernels)", name, dn, b->name,
                v[j].cases, v[j].cases == 1 ? "" : "s", v[j].declined);
        else
            tap(1, "%s %s: %s agrees with cpu on %d case%s", name, dn, b->name, v[j].cases,
                v[j].cases == 1 ? "" : "s");
    }
}

static void test_op(op_ctx *x)
{
    const char *name = x->schema->name;
    if (x->gen == NULL) {
        tap(0, "%s: no case generator; add one to tests/conformance/%s (or a covered_by entry naming the test "
               "that checks it and why no generic case can)", name, cf_domain_file(name));
        return;
    }
    if (x->gen->covered_by != NULL) {
        printf("ok %d - %s # SKIP covered by %s\n", ++tap_n, name, x->gen->covered_by);
        return;
    }
    if (x->cpu < 0) {
        tap(0, "%s: no cpu kernel to compare the other backends with", name);
        return;
    }
    loom_dtype dts[LOOM_DTYPE_COUNT];
    int n = gen_dtypes(x->gen, dts);
    for (int d = 0; d < n; d++)
        test_dtype(x, dts[d]);
    for (int j = 0; j < x->n_b; j++)
        for (int i = 0; j != x->cpu && x->b[j].has_device && i < x->b[j].n_impls; i++)
            if (!x->b[j].ran[i])
                printf("# %s: kernel %s of %s took no case (another kernel of the backend took them all)\n", name,
                       x->b[j].impls[i], x->b[j].name);
}

/* ------------------------------------------------------------------ perf */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Fastest of several calls (at least 3, until 0.2 s or 1000 calls), in
** seconds, with the inputs already on b's device and device work waited
** for; < 0 with err on failure. */
static double time_case(const op_ctx *x, backend *b, const cf_case *c, char *err, size_t size)
{
    const loom_tensor *in[CF_MAX_IN];
    loom_tensor *copies[CF_MAX_IN], *out[CF_MAX_OUT];
    double best = -1, spent = 0;
    if (!inputs_to(b, c, in, copies, err, size))
        return -1;
    for (int rep = 0; rep < 1001 && (rep < 4 || spent < 0.2); rep++) {
        double t0 = now();
        if (call(x, b, c, in, out, err, size) != 1) {
            best = -1;
            break;
        }
        for (int32_t i = 0; i < c->n_out; i++)
            loom_tensor_sync(out[i]);
        double t = now() - t0;
        free_all(out, c->n_out);
        if (rep == 0)
            continue;                           /* the first call warms caches and plans */
        spent += t;
        best = best < 0 || t < best ? t : best;
    }
    free_all(copies, c->n_in);
    return best;
}

static void print_time(double s)
{
    if (s < 0)
        printf(" %10s", "failed");
    else if (s < 1e-3)
        printf(" %8.1f us", s * 1e6);
    else
        printf(" %8.3f ms", s * 1e3);
}

static void perf_op(op_ctx *x)
{
    if (x->gen == NULL || x->gen->covered_by != NULL || x->cpu < 0)
        return;
    loom_dtype dts[LOOM_DTYPE_COUNT];
    int n = gen_dtypes(x->gen, dts);
    for (int d = 0; d < n; d++)
        for (int index = 0; index < x->gen->n_cases; index++) {
            cf_case c;
            char err[512];
            if (!make_case(x, dts[d], index, &c))
                continue;
            printf("%-44s %-5s %-48.48s cpu", x->schema->name, dtype_label(dts[d]), c.what);
            double t_cpu = time_case(x, &x->b[x->cpu], &c, err, sizeof err);
            print_time(t_cpu);
            cf_case_free(&c);
            for (int j = 0; j < x->n_b; j++) {
                backend *b = &x->b[j];
                if (j == x->cpu || !takes(b, dts[d]))
                    continue;
                printf(" | %s", b->name);
                if (!b->has_device) {
                    printf(" (no %s device)", b->device_kind);
                    continue;
                }
                make_case(x, dts[d], index, &c);
                double t = time_case(x, b, &c, err, sizeof err);
                print_time(t);
                if (t > 0 && t_cpu > 0)
                    printf(" x%.2f", t_cpu / t);
                cf_case_free(&c);
            }
            printf("\n");
            fflush(stdout);
        }
}

/* --------------------------------------------------------------- support */

/* The rows of an op's matrix: the dtypes of its first input (all of them
** when the schema leaves it open) and those the generator makes; 0 for an
** op without inputs (one row, "-"). */
static uint64_t support_dtypes(const op_ctx *x)
{
    uint64_t m = x->gen != NULL && x->gen->covered_by == NULL ? x->gen->dtypes : 0;
    if (x->schema->n_inputs > 0)
        m |= x->schema->inputs[0].dtypes != 0 ? x->schema->inputs[0].dtypes : LOOM_DTYPES_ALL;
    return m;
}

/* The cell of backend `col` for dt: the kernel that takes it ("+N" when
** N more of the backend do too), "." when none. */
static void support_cell(const op_ctx *x, const char *col, loom_dtype dt, char *buf, size_t size)
{
    const char *first = NULL;
    int n = 0;
    for (int j = 0; j < x->n_b; j++)
        for (int i = 0; strcmp(x->b[j].name, col) == 0 && i < x->b[j].n_impls; i++) {
            uint64_t m = x->b[j].impl_dtypes[i];
            if (dt == LOOM_DTYPE_INVALID || m == 0 || (m & LOOM_DTYPE_BIT(dt))) {
                first = n++ == 0 ? x->b[j].impls[i] : first;
            }
        }
    if (n == 0)
        snprintf(buf, size, ".");
    else if (n == 1)
        snprintf(buf, size, "%s", first);
    else
        snprintf(buf, size, "%s+%d", first, n - 1);
}

/* The cases the generator makes for dt (each made and released), or why none. */
static void support_cases(const op_ctx *x, loom_dtype dt, char *buf, size_t size)
{
    if (x->gen == NULL) {
        snprintf(buf, size, "NO GENERATOR");
        return;
    }
    if (x->gen->covered_by != NULL) {
        snprintf(buf, size, "covered by %.*s", (int)strcspn(x->gen->covered_by, ":"), x->gen->covered_by);
        return;
    }
    if (dt != LOOM_DTYPE_INVALID && !(x->gen->dtypes & LOOM_DTYPE_BIT(dt))) {
        snprintf(buf, size, "-");
        return;
    }
    int n = 0;
    for (int index = 0; index < x->gen->n_cases; index++) {
        cf_case c;
        if (make_case(x, dt, index, &c)) {
            n++;
            cf_case_free(&c);
        }
    }
    snprintf(buf, size, "%d", n);
}

typedef struct support_cols {
    const char *name[MAX_BACKENDS];
    int width[MAX_BACKENDS];
    int n;
    int op_width;
} support_cols;

/* Widens the columns for op x (a first pass over every op). */
static void support_measure(const op_ctx *x, support_cols *cols)
{
    uint64_t m = support_dtypes(x);
    int w = (int)strlen(x->schema->name);
    cols->op_width = w > cols->op_width ? w : cols->op_width;
    for (int j = 0; j < x->n_b; j++) {
        int k = 0;
        while (k < cols->n && strcmp(cols->name[k], x->b[j].name) != 0)
            k++;
        if (k == cols->n) {
            if (cols->n == MAX_BACKENDS)
                continue;
            cols->name[cols->n] = x->b[j].name;
            cols->width[cols->n++] = (int)strlen(x->b[j].name);
        }
        for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
            char cell[128];
            if (d == 0 ? m != 0 : !(m & LOOM_DTYPE_BIT(d)))
                continue;
            support_cell(x, cols->name[k], (loom_dtype)d, cell, sizeof cell);
            w = (int)strlen(cell);
            cols->width[k] = w > cols->width[k] ? w : cols->width[k];
        }
    }
}

static void support_op(const op_ctx *x, const support_cols *cols)
{
    uint64_t m = support_dtypes(x);
    int rows = 0;
    for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
        loom_dtype dt = (loom_dtype)d;
        char cell[128];
        if (d == 0 ? m != 0 : !(m & LOOM_DTYPE_BIT(d)))
            continue;
        printf("%-*s  %-6s", cols->op_width, rows++ == 0 ? x->schema->name : "", dtype_label(dt));
        for (int k = 0; k < cols->n; k++) {
            support_cell(x, cols->name[k], dt, cell, sizeof cell);
            printf("  %-*s", cols->width[k], cell);
        }
        support_cases(x, dt, cell, sizeof cell);
        printf("  %s\n", cell);
    }
}

/* ------------------------------------------------------------------ main */

enum { MODE_TEST, MODE_PERF, MODE_SUPPORT };

static int usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [--mode test|perf|support] [--op GLOB]\n", argv0);
    return 2;
}

static int selected(const char *name, const char *glob)
{
    return glob == NULL || fnmatch(glob, name, 0) == 0;
}

int main(int argc, char **argv)
{
    int mode = MODE_TEST;
    const char *glob = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strncmp(a, "--mode=", 7) == 0 || strncmp(a, "--op=", 5) == 0)
            v = strchr(a, '=') + 1;
        else if ((strcmp(a, "--mode") == 0 || strcmp(a, "--op") == 0) && i + 1 < argc)
            v = argv[++i];
        else
            return usage(argv[0]);
        if (strncmp(a, "--mode", 6) == 0) {
            if (strcmp(v, "test") == 0)
                mode = MODE_TEST;
            else if (strcmp(v, "perf") == 0)
                mode = MODE_PERF;
            else if (strcmp(v, "support") == 0)
                mode = MODE_SUPPORT;
            else
                return usage(argv[0]);
        } else {
            glob = v;
        }
    }

    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    o.plugin_path = tu_plugin_path();
    o.no_default_dirs = 1;
    if (loom_init(&o) != LOOM_OK)
        cf_die("loom_init: %s", loom_last_error());
    if (mode == MODE_TEST)
        printf("TAP version 13\n");
    for (int64_t i = 0; i < loom_scan_count(); i++) {
        loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
        if (loom_scan_at(i, &e) != LOOM_OK)
            continue;
        if (e.result == LOOM_SCAN_REFUSED)
            cf_die("pack %s refused: %s", e.path, e.reason);
        if (e.result == LOOM_SCAN_NO_DEVICE)
            printf("# %s: %s\n", e.pack ? e.pack : e.path, e.reason);
    }
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &di) == LOOM_OK)
            printf("# device %lld: %s (%s)\n", (long long)i, di.kind, di.description);
    }

    /* the support matrix's columns: cpu first, then every other backend in order of appearance */
    support_cols cols = { .name = { "cpu" }, .width = { 3 }, .n = 1, .op_width = 2 };
    op_ctx x;
    for (int64_t i = 0; mode == MODE_SUPPORT && i < loom_op_count(); i++) {
        if (!selected(loom_op_schema_at(i)->name, glob))
            continue;
        load_op(&x, loom_op_schema_at(i));
        support_measure(&x, &cols);
    }
    if (mode == MODE_SUPPORT) {
        printf("%-*s  %-6s", cols.op_width, "op", "dtype");
        for (int k = 0; k < cols.n; k++)
            printf("  %-*s", cols.width[k], cols.name[k]);
        printf("  cases\n");
    }
    if (mode == MODE_PERF)
        printf("# fastest of several loom_op_run calls per backend (dispatch included); xR = cpu time / backend "
               "time (R > 1: faster than cpu)\n");

    int matched = 0;
    for (int64_t i = 0; i < loom_op_count(); i++) {
        const loom_op_schema *s = loom_op_schema_at(i);
        if (!selected(s->name, glob))
            continue;
        matched++;
        load_op(&x, s);
        if (mode == MODE_TEST)
            test_op(&x);
        else if (mode == MODE_PERF)
            perf_op(&x);
        else
            support_op(&x, &cols);
    }
    if (matched == 0)
        cf_die("no registered op matches %s", glob ? glob : "*");
    loom_shutdown();
    if (mode != MODE_TEST)
        return 0;
    printf("1..%d\n", tap_n);
    return failures > 0;
}
