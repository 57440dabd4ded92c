/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_compose.c - ABI 1.1, on the purpose-made packs lower and upper
** (composepack.c) and on a pack binary built against ABI 1.0:
**  - a kernel's nested op_call is dispatched by LOOM_BACKENDS like a host
**    call (cpu and a fake second backend), writes into supplied outputs,
**    shows indented in loom_last_dispatch, and its errors carry the chain;
**  - prepared calls (host and pack side), with the kernel's prepare/release;
**  - per-device object state; the kernel user pointer; pack interfaces;
**  - enumerated attributes, jagged inputs, "same dtype as input k";
**  - loom_object_create_ex with named files and callbacks;
**  - CPU features capped by LOOM_CPU_MAX_ISA, the same for core and packs;
**  - a 1.0 pack binary loads and runs; an older, smaller loom_call_options.
*/
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "loom/loom.h"
#include "tu_env.h"

static void init_compose(const char *backends, FILE *log)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    loom_shutdown();
    o.plugin_path = getenv("LOOM_TEST_COMPOSE");
    o.no_default_dirs = 1;
    o.backends = backends;
    o.log_stream = log;
    o.verbose = log != NULL ? 2 : -1;
    assert_int_equal(loom_init(&o), LOOM_OK);
    if (loom_op_find("upper.twice") == NULL)
        fail_msg("upper did not load: %s", loom_last_error());
}

static loom_tensor *vec(float *data, int64_t n)
{
    loom_tensor *t = NULL;
    loom_tensor_wrap(&t, data, LOOM_DTYPE_F32, 1, &n, NULL, NULL);
    return t;
}

static loom_status run1(const char *op, loom_tensor *x, loom_attrs *a, loom_tensor **y)
{
    *y = NULL;
    return loom_run(op, (const loom_tensor *const *)&x, 1, a, y, 1, NULL);
}

static void nested_calls_follow_the_backend_policy(void **state)
{
    float x[3] = { 1, 2, 3 };
    loom_tensor *in = vec(x, 3), *y = NULL;
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    (void)state;
    init_compose(NULL, NULL);
    assert_int_equal(run1("upper.twice", in, NULL, &y), LOOM_OK);
    assert_true(((float *)loom_data(y))[2] == 27.0f);   /* 3 * 3 * 3 */
    loom_tensor_free(y);
    y = NULL;
    assert_int_equal(loom_last_dispatch(&info), LOOM_OK);
    assert_string_equal(info.op, "upper.twice");
    assert_non_null(strstr(info.text, "\n  > lower.scale -> cpu (cpu:run_scale)"));

    init_compose("fake,cpu", NULL);
    assert_int_equal(run1("upper.twice", in, NULL, &y), LOOM_OK);
    assert_true(((float *)loom_data(y))[0] == 9.0f);
    loom_tensor_free(y);
    y = NULL;
    assert_int_equal(loom_last_dispatch(&info), LOOM_OK);
    assert_non_null(strstr(info.text, "> lower.scale -> fake (fake:run_scale)"));
    assert_null(strstr(info.text, "> lower.scale -> cpu"));
    /* a per-op rule reaches the nested call too */
    init_compose("fake,cpu;lower.scale=cpu", NULL);
    assert_int_equal(run1("upper.twice", in, NULL, &y), LOOM_OK);
    loom_tensor_free(y);
    y = NULL;
    assert_int_equal(loom_last_dispatch(&info), LOOM_OK);
    assert_non_null(strstr(info.text, "> lower.scale -> cpu"));
    loom_tensor_free(in);
}

static void nested_calls_are_logged_indented_under_their_parent(void **state)
{
    float x[2] = { 1, 2 };
    loom_tensor *in = vec(x, 2), *y = NULL;
    FILE *log = tmpfile();
    char buf[8192] = "";
    (void)state;
    init_compose(NULL, log);
    long start = ftell(log);
    assert_int_equal(run1("upper.twice", in, NULL, &y), LOOM_OK);
    loom_tensor_free(y);
    y = NULL;
    fflush(log);
    fseek(log, start, SEEK_SET);
    buf[fread(buf, 1, sizeof buf - 1, log)] = '\0';
    const char *parent = strstr(buf, "dispatch upper.twice");
    const char *child = strstr(buf, "  dispatch lower.scale");
    assert_non_null(parent);
    assert_non_null(child);
    assert_true(parent < child);
    init_compose(NULL, NULL);
    fclose(log);
    loom_tensor_free(in);
}

static void nested_errors_carry_the_chain(void **state)
{
    float x[2] = { 1, 2 };
    loom_tensor *in = vec(x, 2), *y = NULL;
    loom_attrs *a = NULL;
    (void)state;
    init_compose(NULL, NULL);
    loom_attrs_new(&a);
    loom_attrs_set_float(a, "factor", NAN);   /* upper.twice takes it; lower.scale refuses it */
    assert_int_equal(run1("upper.twice", in, a, &y), LOOM_EINVAL);
    assert_null(y);
    assert_non_null(strstr(loom_last_error(), "upper.twice [cpu:run_twice] > lower.scale"));
    assert_non_null(strstr(loom_last_error(), "attribute 'factor' must be finite"));
    loom_attrs_free(a);
    loom_tensor_free(in);
}

static void plans_cache_the_choice_and_check_their_inputs(void **state)
{
    float x[4] = { 1, 2, 3, 4 }, x5[5] = { 0 };
    int64_t four = 4;
    loom_tensor desc = { .data = NULL, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 1,
                         .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = &four };
    const loom_tensor *d = &desc;
    loom_tensor *in = vec(x, 4), *in5 = vec(x5, 5), *y = NULL, *c = NULL;
    loom_attrs *a = NULL;
    loom_plan *plan = NULL;
    (void)state;
    init_compose(NULL, NULL);
    loom_attrs_new(&a);
    loom_attrs_set_float(a, "factor", 0.5);
    assert_int_equal(loom_plan_create(&plan, loom_op_find("lower.scale"), &d, 1, a, NULL), LOOM_OK);
    loom_attrs_free(a);   /* the plan keeps its own copy of the attributes */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(loom_plan_run(plan, (const loom_tensor *const *)&in, 1, &y, 1), LOOM_OK);
        assert_true(((float *)loom_data(y))[3] == 2.0f);
        loom_tensor_free(y);
       y = NULL;
        y = NULL;
    }
    assert_int_equal(loom_plan_run(plan, (const loom_tensor *const *)&in5, 1, &y, 1), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "differs from the plan's description"));
    assert_int_equal(loom_run("lower.counters", NULL, 0, NULL, &c, 1, NULL), LOOM_OK);
    assert_int_equal(((int64_t *)loom_data(c))[0], 1);   /* prepare ran once */
    loom_tensor_free(c);
    c = NULL;
    loom_plan_free(plan);
    assert_int_equal(loom_run("lower.counters", NULL, 0, NULL, &c, 1, NULL), LOOM_OK);
    assert_int_equal(((int64_t *)loom_data(c))[1], 1);   /* and release once */
    loom_tensor_free(c);
    c = NULL;

    /* a plan does not survive loom_shutdown */
    assert_int_equal(loom_plan_create(&plan, loom_op_find("lower.scale"), &d, 1, NULL, NULL), LOOM_OK);
    init_compose(NULL, NULL);
    assert_int_equal(loom_plan_run(plan, (const loom_tensor *const *)&in, 1, &y, 1), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "previous loom_init"));
    loom_plan_free(plan);
    loom_tensor_free(in5);
    loom_tensor_free(in);
}

static void objects_keep_per_device_state_and_plans(void **state)
{
    float x[2] = { 1, 2 };
    loom_tensor *in = vec(x, 2), *y = NULL, *c = NULL;
    loom_object *m = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    (void)state;
    init_compose(NULL, NULL);
    assert_int_equal(loom_object_create(&m, "upper.model", NULL, NULL), LOOM_OK);
    opt.object = m;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(loom_run("upper.forward", (const loom_tensor *const *)&in, 1, NULL, &y, 1, &opt), LOOM_OK);
        assert_true(((float *)loom_data(y))[1] == 10.0f);
        loom_tensor_free(y);
       y = NULL;
        y = NULL;
    }
    assert_int_equal(loom_run("upper.states", NULL, 0, NULL, &c, 1, NULL), LOOM_OK);
    assert_int_equal(((int64_t *)loom_data(c))[0], 1);   /* made once for the CPU */
    assert_int_equal(((int64_t *)loom_data(c))[1], 0);
    loom_tensor_free(c);
    c = NULL;
    loom_object_free(m);
    assert_int_equal(loom_run("upper.states", NULL, 0, NULL, &c, 1, NULL), LOOM_OK);
    assert_int_equal(((int64_t *)loom_data(c))[1], 1);   /* destroyed with the object */
    loom_tensor_free(c);
    c = NULL;
    loom_tensor_free(in);
}

static void kernel_user_pointer_and_interfaces(void **state)
{
    float x[2] = { 1, 2 };
    loom_tensor *in = vec(x, 2), *y = NULL;
    (void)state;
    init_compose(NULL, NULL);
    assert_int_equal(run1("upper.plus1", in, NULL, &y), LOOM_OK);
    assert_true(((float *)loom_data(y))[1] == 3.0f);
    loom_tensor_free(y);
    y = NULL;
    assert_int_equal(run1("upper.plus2", in, NULL, &y), LOOM_OK);
    assert_true(((float *)loom_data(y))[1] == 4.0f);   /* through lower's adder interface */
    loom_tensor_free(y);
    y = NULL;
    loom_tensor_free(in);
}

static void enumerated_attributes_name_their_choices(void **state)
{
    float x[2] = { 1, 2 };
    loom_tensor *in = vec(x, 2), *y = NULL;
    loom_attrs *a = NULL;
    (void)state;
    init_compose(NULL, NULL);
    loom_attrs_new(&a);
    loom_attrs_set_string(a, "mode", "exact");
    assert_int_equal(run1("lower.scale", in, a, &y), LOOM_OK);
    loom_tensor_free(y);
    y = NULL;
    loom_attrs_set_string(a, "mode", "sloppy");
    assert_int_equal(run1("lower.scale", in, a, &y), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "attribute 'mode' is 'sloppy'; expected one of fast, exact"));
    loom_attrs_free(a);
    loom_tensor_free(in);
}

static void jagged_inputs_are_checked_by_the_core(void **state)
{
    float v[5] = { 1, 2, 3, 4, 5 };
    int64_t off[4] = { 0, 2, 2, 5 }, five = 5, four = 4;
    loom_tensor *tv = NULL, *to = NULL, *y = NULL;
    (void)state;
    init_compose(NULL, NULL);
    loom_tensor_wrap(&tv, v, LOOM_DTYPE_F32, 1, &five, NULL, NULL);
    loom_tensor_wrap(&to, off, LOOM_DTYPE_I64, 1, &four, NULL, NULL);
    const loom_tensor *in[2] = { tv, to };
    assert_int_equal(loom_run("lower.rowsum", in, 2, NULL, &y, 1, NULL), LOOM_OK);
    assert_true(((float *)loom_data(y))[0] == 3.0f && ((float *)loom_data(y))[1] == 0.0f
                && ((float *)loom_data(y))[2] == 12.0f);
    loom_tensor_free(y);
   y = NULL;
    y = NULL;
    static const int64_t bad[][4] = { { 1, 2, 2, 5 }, { 0, 3, 2, 5 }, { 0, 2, 2, 6 }, { 0, -1, 2, 5 } };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memcpy(off, bad[i], sizeof off);
        assert_int_equal(loom_run("lower.rowsum", in, 2, NULL, &y, 1, NULL), LOOM_EINVAL);
        assert_null(y);
        assert_non_null(strstr(loom_last_error(), "offsets 'values_offsets'"));
    }
    loom_tensor_free(to);
    loom_tensor_free(tv);
}

static void same_dtype_as_input_is_checked(void **state)
{
    float f[2] = { 1, 2 };
    double g[2] = { 1, 2 };
    int64_t two = 2;
    loom_tensor *a = NULL, *b = NULL, *y = NULL;
    loom_attrs *at = NULL;
    (void)state;
    init_compose(NULL, NULL);
    loom_tensor_wrap(&a, f, LOOM_DTYPE_F32, 1, &two, NULL, NULL);
    loom_tensor_wrap(&b, g, LOOM_DTYPE_F64, 1, &two, NULL, NULL);
    const loom_tensor *in[2] = { a, b };
    assert_int_equal(loom_run("lower.addsame", in, 2, NULL, &y, 1, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "input 'b' is f64 but must have the dtype of input 'a' (f32)"));
    const loom_tensor *same[2] = { a, a };
    assert_int_equal(loom_run("lower.addsame", same, 2, NULL, &y, 1, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_dtype_of(y), LOOM_DTYPE_F32);
    loom_tensor_free(y);
   y = NULL;
    y = NULL;
    loom_attrs_new(&at);
    loom_attrs_set_bool(at, "lie", 1);   /* the kernel produces f64 against its schema */
    assert_int_equal(loom_run("lower.addsame", same, 2, at, &y, 1, NULL), LOOM_EINTERNAL);
    assert_null(y);
    assert_non_null(strstr(loom_last_error(), "output 'output' is f64 but the schema says"));
    loom_attrs_free(at);
    loom_tensor_free(b);
    loom_tensor_free(a);
}

static void objects_get_named_files_and_callbacks(void **state)
{
    static const int callbacks_table[2] = { 8, 0 };
    loom_named_file files[2] = { { "vocab", "/tmp/vocab.txt" }, { "lm", "/tmp/lm.arpa" } };
    loom_object_options o = LOOM_OBJECT_OPTIONS_INIT;
    loom_object *obj = NULL;
    loom_tensor *y = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    (void)state;
    init_compose(NULL, NULL);
    o.n_files = 2;
    o.files = files;
    o.callbacks_name = "test.cb.v1";
    o.callbacks = callbacks_table;
    assert_int_equal(loom_object_create_ex(&obj, "lower.files", NULL, &o), LOOM_OK);
    opt.object = obj;
    assert_int_equal(loom_run("lower.files_info", NULL, 0, NULL, &y, 1, &opt), LOOM_OK);
    assert_int_equal(((int64_t *)loom_data(y))[0], 2);
    assert_int_equal(((int64_t *)loom_data(y))[1], 5);   /* "vocab" */
    assert_int_equal(((int64_t *)loom_data(y))[2], 1);
    loom_tensor_free(y);
    y = NULL;
    loom_object_free(obj);
    o.n_files = 1;
    o.files = NULL;
    assert_int_equal(loom_object_create_ex(&obj, "lower.files", NULL, &o), LOOM_EINVAL);
}

/* ABI 1.3: objects from in-memory tensors, made by a host
** (loom_object_options.tensors) and by a pack's create (host->object_create) */
static float weights_sum(loom_object *obj, int64_t *n)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    loom_tensor *y = NULL;
    opt.object = obj;
    assert_int_equal(loom_run("lower.weights_sum", NULL, 0, NULL, &y, 1, &opt), LOOM_OK);
    float sum = ((float *)loom_data(y))[0];
    *n = (int64_t)((float *)loom_data(y))[1];
    loom_tensor_free(y);
    return sum;
}

static void objects_are_made_from_tensors_by_hosts_and_packs(void **state)
{
    float data[4] = { 1, 2, 3, 4 };
    int64_t n4 = 4, n2 = 2, stride2 = 2, n;
    loom_tensor *t = NULL, *odd = NULL;
    loom_object_options o = LOOM_OBJECT_OPTIONS_INIT;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    loom_object *obj = NULL, *holder = NULL;
    loom_tensor *y = NULL;
    (void)state;
    init_compose(NULL, NULL);
    assert_int_equal(loom_tensor_wrap(&t, data, LOOM_DTYPE_F32, 1, &n4, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&odd, data, LOOM_DTYPE_F32, 1, &n2, &stride2, NULL), LOOM_OK);

    /* a host's tensors, borrowed; a strided one is gathered ([1, 3]) */
    loom_named_tensor w = { "w", t };
    o.n_tensors = 1;
    o.tensors = &w;
    assert_int_equal(loom_object_create_ex(&obj, "lower.weights", NULL, &o), LOOM_OK);
    assert_true(weights_sum(obj, &n) == 10.0f && n == 4);
    loom_object_free(obj);
    w.tensor = odd;
    assert_int_equal(loom_object_create_ex(&obj, "lower.weights", NULL, &o), LOOM_OK);
    assert_true(weights_sum(obj, &n) == 4.0f && n == 2);
    loom_object_free(obj);

    /* wrong requests name what is wrong */
    loom_named_tensor twice[2] = { { "w", t }, { "w", odd } };
    o.n_tensors = 2;
    o.tensors = twice;
    assert_int_equal(loom_object_create_ex(&obj, "lower.weights", NULL, &o), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "two tensors are named 'w'"));
    twice[1].tensor = NULL;
    assert_int_equal(loom_object_create_ex(&obj, "lower.weights", NULL, &o), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "tensor 1 has no name or no tensor"));
    o.n_tensors = 1;
    o.tensors = &w;
    o.weights_path = "/nonexistent.safetensors";
    assert_int_equal(loom_object_create_ex(&obj, "lower.weights", NULL, &o), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "both a weights file and 1 weight tensors"));
    o.weights_path = NULL;
    o.n_tensors = 0;
    assert_int_equal(loom_object_create_ex(&obj, "lower.weights", NULL, &o), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "needs a weight tensor 'w'"));

    /* a pack's object owning another pack's object */
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    loom_attrs_set_float(a, "value", 2.5);
    assert_int_equal(loom_object_create(&holder, "upper.holder", a, NULL), LOOM_OK);
    opt.object = holder;
    assert_int_equal(loom_run("upper.holder_sum", NULL, 0, NULL, &y, 1, &opt), LOOM_OK);
    const float destroyed = ((float *)loom_data(y))[2];
    assert_true(((float *)loom_data(y))[0] == 7.5f && ((float *)loom_data(y))[1] == 3.0f);
    loom_tensor_free(y);
    y = NULL;
    loom_object_free(holder);
    assert_int_equal(loom_object_create(&holder, "upper.holder", a, NULL), LOOM_OK);
    assert_int_equal(loom_run("upper.holder_sum", NULL, 0, NULL, &y, 1, &opt), LOOM_EINVAL);  /* stale handle */
    opt.object = holder;
    assert_int_equal(loom_run("upper.holder_sum", NULL, 0, NULL, &y, 1, &opt), LOOM_OK);
    assert_true(((float *)loom_data(y))[2] == destroyed + 1);
    loom_tensor_free(y);
    y = NULL;
    loom_attrs_set_bool(a, "bad", 1);
    loom_object *bad = NULL;
    assert_int_equal(loom_object_create(&bad, "upper.holder", a, NULL), LOOM_ENOENT);
    assert_non_null(strstr(loom_last_error(), "lower.nosuch"));
    assert_null(bad);
    loom_attrs_free(a);

    /* a holder the host forgets: shutdown destroys it, and it frees its child */
    FILE *log = tmpfile();
    assert_non_null(log);
    init_compose(NULL, log);
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_object_create(&holder, "upper.holder", a, NULL), LOOM_OK);
    loom_attrs_free(a);
    loom_shutdown();
    char text[4096] = { 0 };
    rewind(log);
    size_t got = fread(text, 1, sizeof text - 1, log);
    text[got] = 0;
    fclose(log);
    assert_non_null(strstr(text, "destroying a upper.holder object the host did not free"));
    if (strstr(text, "lower.weights object") != NULL)
        fail_msg("the child was reported: %s", text);
    assert_null(strstr(text, "already freed"));
    loom_tensor_free(t);
    loom_tensor_free(odd);
}

static int64_t features_seen(void)
{
    loom_tensor *y = NULL;
    int64_t f = -1;
    if (loom_run("lower.features", NULL, 0, NULL, &y, 1, NULL) == LOOM_OK)
        f = *(int64_t *)loom_data(y);
    loom_tensor_free(y);
    y = NULL;
    return f;
}

static void cpu_features_are_capped_for_core_and_packs(void **state)
{
    uint64_t native;
    char text[256];
    (void)state;
    unsetenv("LOOM_CPU_MAX_ISA");
    init_compose(NULL, NULL);
    native = loom_cpu_features();
    assert_int_equal(features_seen(), (int64_t)native);
    setenv("LOOM_CPU_MAX_ISA", "scalar", 1);
    init_compose(NULL, NULL);
    assert_int_equal(loom_cpu_features(), 0);
    assert_int_equal(features_seen(), 0);
    assert_string_equal(loom_cpu_features_text(0, text, sizeof text), "scalar");
    setenv("LOOM_CPU_MAX_ISA", "AVX2", 1);
    init_compose(NULL, NULL);
    assert_int_equal(loom_cpu_features() & ~(uint64_t)LOOM_CPU_LEVEL_AVX2, 0);
    assert_int_equal(loom_cpu_features(), native & LOOM_CPU_LEVEL_AVX2);
    for (int64_t i = 0; i < loom_config_count(); i++)
        if (strncmp(loom_config_at(i), "LOOM_CPU_MAX_ISA=", 17) == 0)
            assert_string_equal(loom_config_at(i), "LOOM_CPU_MAX_ISA=avx2 (environment)");
    unsetenv("LOOM_CPU_MAX_ISA");
    init_compose(NULL, NULL);
}

static void abi_1_0_pack_binary_still_loads(void **state)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    float x[3] = { 1, 2, 3 };
    loom_tensor *in = vec(x, 3), *y = NULL;
    loom_object *obj = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    char dir[4096];
    (void)state;
    loom_shutdown();
    snprintf(dir, sizeof dir, "%s", tu_data_path("abi-1.0"));
    o.plugin_path = dir;
    o.no_default_dirs = 1;
    o.verbose = -1;
    assert_int_equal(loom_init(&o), LOOM_OK);
    assert_non_null(loom_op_find("mock.double"));
    assert_int_equal(run1("mock.double", in, NULL, &y), LOOM_OK);
    assert_true(((float *)loom_data(y))[2] == 6.0f);
    loom_tensor_free(y);
    y = NULL;
    assert_int_equal(loom_object_create(&obj, "mock.counter", NULL, NULL), LOOM_OK);
    opt.object = obj;
    assert_int_equal(loom_run("mock.count", (const loom_tensor *const *)&in, 1, NULL, &y, 1, &opt), LOOM_OK);
    assert_int_equal(*(int64_t *)loom_data(y), 3);
    loom_tensor_free(y);
    y = NULL;
    /* mock.count takes any dtype, but a 1.0 pack cannot know the u16 of 1.4:
    ** the core keeps it from the kernel and says why */
    const int64_t n3[1] = { 3 };
    loom_tensor *wide = NULL;
    assert_int_equal(loom_tensor_new(&wide, LOOM_DTYPE_U16, 1, n3, NULL), LOOM_OK);
    memset(loom_data(wide), 0, 6);
    assert_int_not_equal(loom_run("mock.count", (const loom_tensor *const *)&wide, 1, NULL, &y, 1, &opt), LOOM_OK);
    if (strstr(loom_last_error(), "u16 of 'input' (its pack was built for an ABI before 1.4") == NULL)
        fail_msg("unexpected message: %s", loom_last_error());
    assert_null(y);
    loom_tensor_free(wide);
    loom_object_free(obj);
    /* a host built when loom_call_options had only its first members */
    opt.struct_size = (uint32_t)offsetof(loom_call_options, backend);
    opt.object = NULL;
    assert_int_equal(loom_run("mock.double", (const loom_tensor *const *)&in, 1, NULL, &y, 1, &opt), LOOM_OK);
    loom_tensor_free(y);
    y = NULL;
    opt.struct_size = 0;
    assert_int_equal(loom_run("mock.double", (const loom_tensor *const *)&in, 1, NULL, &y, 1, &opt), LOOM_EINVAL);
    loom_tensor_free(in);
    loom_shutdown();
}

/* 4 host threads: nested calls, one shared object (its per-device state is
** made once under contention) and one shared plan. Run under TSan too. */
typedef struct worker { loom_object *model; loom_plan *plan; int failures; } worker;

static void *work(void *p)
{
    worker *w = p;
    float x[3] = { 1, 2, 3 };
    loom_tensor *in = vec(x, 3), *y = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = w->model;
    for (int i = 0; i < 200; i++) {
        if (run1("upper.twice", in, NULL, &y) != LOOM_OK || ((float *)loom_data(y))[2] != 27.0f)
            w->failures++;
        loom_tensor_free(y);
        y = NULL;
        if (loom_run("upper.forward", (const loom_tensor *const *)&in, 1, NULL, &y, 1, &opt) != LOOM_OK
            || ((float *)loom_data(y))[0] != 5.0f)
            w->failures++;
        loom_tensor_free(y);
        y = NULL;
        if (loom_plan_run(w->plan, (const loom_tensor *const *)&in, 1, &y, 1) != LOOM_OK
            || ((float *)loom_data(y))[1] != 4.0f)
            w->failures++;
        loom_tensor_free(y);
        y = NULL;
    }
    loom_tensor_free(in);
    return NULL;
}

static void nested_calls_objects_and_plans_from_many_threads(void **state)
{
    int64_t three = 3;
    loom_tensor desc = { .data = NULL, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 1,
                         .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = &three };
    const loom_tensor *d = &desc;
    worker w[4];
    pthread_t t[4];
    loom_object *model = NULL;
    loom_plan *plan = NULL;
    loom_tensor *c = NULL;
    (void)state;
    init_compose(NULL, NULL);
    assert_int_equal(loom_object_create(&model, "upper.model", NULL, NULL), LOOM_OK);
    assert_int_equal(loom_plan_create(&plan, loom_op_find("lower.scale"), &d, 1, NULL, NULL), LOOM_OK);
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){ model, plan, 0 };
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].failures, 0);
    }
    assert_int_equal(loom_run("upper.states", NULL, 0, NULL, &c, 1, NULL), LOOM_OK);
    assert_int_equal(((int64_t *)loom_data(c))[0] - ((int64_t *)loom_data(c))[1], 1);   /* one live state */
    loom_tensor_free(c);
    loom_plan_free(plan);
    loom_object_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nested_calls_follow_the_backend_policy),
        cmocka_unit_test(nested_calls_are_logged_indented_under_their_parent),
        cmocka_unit_test(nested_errors_carry_the_chain),
        cmocka_unit_test(plans_cache_the_choice_and_check_their_inputs),
        cmocka_unit_test(objects_keep_per_device_state_and_plans),
        cmocka_unit_test(kernel_user_pointer_and_interfaces),
        cmocka_unit_test(enumerated_attributes_name_their_choices),
        cmocka_unit_test(jagged_inputs_are_checked_by_the_core),
        cmocka_unit_test(same_dtype_as_input_is_checked),
        cmocka_unit_test(objects_get_named_files_and_callbacks),
        cmocka_unit_test(objects_are_made_from_tensors_by_hosts_and_packs),
        cmocka_unit_test(cpu_features_are_capped_for_core_and_packs),
        cmocka_unit_test(nested_calls_objects_and_plans_from_many_threads),
        cmocka_unit_test(abi_1_0_pack_binary_still_loads),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    loom_shutdown();
    return rc;
}
