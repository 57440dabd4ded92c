/* SPDX-License-Identifier: BSD-3-Clause */
/* test_registry.c - the registry's limits and checks: kernel and provider
** limits refuse a pack cleanly (nothing of it stays, its provider is never
** called), every schema field is validated, a clash with an earlier pack
** drops only the clashing registrations, and no table truncates silently
** (plugin path, kernel labels, device lists; LOOM_BACKENDS rules past the
** limit are named). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <cmocka.h>

#include "packs_util.h"


static void expect_scan(const char *file, int32_t result, const char *needle)
{
    loom_scan_entry e = packs_scan(file);
    if (e.result != result || (needle != NULL && strstr(e.reason, needle) == NULL))
        fail_msg("%s: result %d, reason '%s'; expected result %d mentioning '%s'", file, e.result,
                 e.result >= 0 ? e.reason : "(not scanned)", result, needle ? needle : "");
}

/* Init on LOOM_TEST_PACKS plus `more` (a folder variable), log to log. */
static loom_status init_with(const char *more_var, const char *backends, FILE *log)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    static char path[8192];
    loom_shutdown();
    unsetenv("LOOM_PLUGINS_SELECT");
    snprintf(path, sizeof path, "%s%s%s", getenv("LOOM_TEST_PACKS"), more_var ? ":" : "",
             more_var ? getenv(more_var) : "");
    o.plugin_path = path;
    o.no_default_dirs = 1;
    o.backends = backends;
    o.log_stream = log;
    o.verbose = log != NULL ? 1 : -1;
    return loom_init(&o);
}

static float run_binary(const char *op, float a, float b)
{
    float x[2] = { a, a }, y[2] = { b, b };
    loom_tensor *ta = f32_tensor(x, 2), *tb = f32_tensor(y, 2), *out = NULL;
    const loom_tensor *in[2] = { ta, tb };
    float r = -12345.0f;
    if (loom_run(op, in, 2, NULL, &out, 1, NULL) == LOOM_OK)
        r = ((float *)out->data)[1];
    else
        print_error("%s: %s\n", op, loom_last_error());
    loom_tensor_free(out);
    loom_tensor_free(ta);
    loom_tensor_free(tb);
    return r;
}

static float run_double(int64_t n)
{
    float x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    loom_tensor *in = f32_tensor(x, n), *out = NULL;
    float r = -12345.0f;
    if (loom_run("mock.double", (const loom_tensor *const *)&in, 1, NULL, &out, 1, NULL) == LOOM_OK)
        r = ((float *)out->data)[n - 1];
    loom_tensor_free(out);
    loom_tensor_free(in);
    return r;
}

/* ------------------------------------------------------------ item 1 */

static void kernel_limit_refuses_the_pack_and_leaves_no_provider(void **state)
{
    (void)state;
    unsetenv("MOCK_PROVIDER_TOUCHED");
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    expect_scan("mock_many_kernels.so", LOOM_SCAN_REFUSED, "op mock.many would have 17 kernels");
    expect_scan("mock_many_kernels.so", LOOM_SCAN_REFUSED, "the limit is 16 kernels per op (LOOM_MAX_KERNELS)");
    expect_scan("mock_more_kernels.so", LOOM_SCAN_REFUSED,
                "op mock.double would have 17 kernels (15 of this pack, 2 already registered)");
    assert_null(loom_op_find("mock.many"));
    /* Every other pack loaded and works. */
    expect_scan("mock_0good.so", LOOM_SCAN_LOADED, NULL);
    expect_scan("mock_fast.so", LOOM_SCAN_LOADED, NULL);
    assert_int_equal(loom_op_kernel_count(loom_op_find("mock.double")), 2);
    assert_true(run_double(2) == 4.0f);
    assert_true(run_binary("mock.add", 1, 2) == 3.0f);
    /* The refused pack registered a provider for device type 77 before its
    ** kernels: none was added, and none of its functions ever ran. */
    assert_int_equal(loom_device_count(), 1);
    assert_null(getenv("MOCK_PROVIDER_TOUCHED"));
    loom_tensor *t = NULL;
    int64_t n = 4;
    loom_dl_device dev = { 77, 0 };
    assert_int_not_equal(loom_tensor_new(&t, LOOM_DTYPE_F32, 1, &n, &dev), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "no pack provides memory for device type 77"));
    assert_null(getenv("MOCK_PROVIDER_TOUCHED"));
    loom_shutdown();
    assert_null(getenv("MOCK_PROVIDER_TOUCHED"));
}

static void provider_limits_are_named(void **state)
{
    FILE *log = tmpfile();
    loom_device_info d = LOOM_DEVICE_INFO_INIT;
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    expect_scan("mock_providers5.so", LOOM_SCAN_REFUSED,
                "a pack registers at most 4 device providers (LOOM_MAX_PACK_PROVIDERS)");
    expect_scan("mock_dup_provider.so", LOOM_SCAN_REFUSED, "are both for device type 77");
    assert_int_equal(loom_device_count(), 1);
    assert_null(getenv("MOCK_PROVIDER_TOUCHED"));

    /* Eight providers in all (the core's table), the ninth is refused; so is
    ** a provider with more devices than one may have. */
    assert_int_equal(init_with("LOOM_TEST_EXTRA_PACKS", NULL, log), LOOM_OK);
    expect_scan("extra_prov_0many.so", LOOM_SCAN_REFUSED, "device provider toomany: count() reports 17 devices; a "
                "provider has 0 to 16 (LOOM_MAX_DEVICES_PER_KIND)");
    expect_scan("extra_prov_a.so", LOOM_SCAN_LOADED, NULL);
    expect_scan("extra_prov_b.so", LOOM_SCAN_LOADED, NULL);
    expect_scan("extra_prov_c.so", LOOM_SCAN_REFUSED, "the limit is 8, LOOM_MAX_DEVICE_PROVIDERS");
    assert_int_equal(loom_device_count(), 1 + 16 + 3 + 4);
    assert_int_equal(loom_device_at(16, &d), LOOM_OK);
    assert_string_equal(d.kind, "many");
    assert_string_equal(d.description, "extra device 15");
    assert_int_equal(loom_device_at(17, &d), LOOM_OK);
    assert_string_equal(d.kind, "p71");
    /* The providers work: memory on device type 71. */
    loom_tensor *t = NULL;
    int64_t n = 4;
    loom_dl_device dev = { 71, 0 };
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F32, 1, &n, &dev), LOOM_OK);
    loom_tensor_free(t);
    loom_shutdown();
    fclose(log);
}

/* ------------------------------------------------------------ item 2 */

static void long_plugin_path_keeps_the_default_folders(void **state)
{
    size_t size = 200 * 64 + 4096, len = 0;
    char *path = malloc(size);
    bool build_tree = false;
    (void)state;
    loom_shutdown();
    for (int i = 0; i < 199; i++)
        len += (size_t)snprintf(path + len, size - len, "/nonexistent/loom-test-dir-%03d:", i);
    snprintf(path + len, size - len, "%s", getenv("LOOM_TEST_PACKS"));
    setenv("LOOM_PLUGIN_PATH", path, 1);
    unsetenv("LOOM_PLUGINS_SELECT");
    assert_int_equal(loom_init(NULL), LOOM_OK);
    /* 200 entries, then the defaults (this test runs from the build tree). */
    assert_true(loom_search_dir_count() > 200);
    for (int64_t i = 0; i < loom_search_dir_count(); i++) {
        const char *origin = NULL;
        assert_non_null(loom_search_dir_at(i, &origin));
        if (i < 200)
            assert_string_equal(origin, "LOOM_PLUGIN_PATH");
        build_tree |= strcmp(origin, "build tree") == 0;
        /* a build-tree libloom never searches installed packs on its own */
        assert_string_not_equal(origin, "installed");
        assert_string_not_equal(origin, "next to libloom");
    }
    assert_true(build_tree);
    assert_non_null(loom_op_find("core.add"));
    assert_true(run_binary("core.add", 1, 2) == 3.0f);
    assert_true(run_double(2) == 4.0f);   /* and the 200th entry was searched */
    loom_shutdown();
    unsetenv("LOOM_PLUGIN_PATH");
    free(path);
}

/* ------------------------------------------------------------ item 3 */

typedef struct schema_case { const char *file, *needle; } schema_case;
static const schema_case schema_cases[] = {
    { "schema_op_name_nodot.so", "op name 'nodot' is not of the form domain.name" },
    { "schema_op_name_space.so", "op name 'bad. op' has a character other than" },
    { "schema_op_name_empty_part.so", "op name 'bad..op' has an empty part between dots" },
    { "schema_op_name_control.so", "op name 'bad.op?' has a character other than" },
    { "schema_op_name_glob.so", "op name 'bad.op*' has a character other than" },
    { "schema_op_name_long.so", "is as long as LOOM_MAX_NAME (128 bytes) or longer" },
    { "schema_op_name_null.so", "op name '(null)' is NULL" },
    { "schema_struct_size.so", "op schema bad.op: struct_size 16 is smaller than ABI 1.0's" },
    { "schema_version_0.so", "op bad.op: .version is 0" },
    { "schema_inputs_null.so", "op bad.op: .inputs is NULL with .n_inputs 2" },
    { "schema_outputs_null.so", "op bad.op: .outputs is NULL with .n_outputs 1" },
    { "schema_attrs_null.so", "op bad.op: .attrs is NULL with .n_attrs 1" },
    { "schema_too_many_inputs.so", "op bad.op: .n_inputs 33 is over the limit of 32 (LOOM_MAX_ARGS)" },
    { "schema_too_many_attrs.so", "op bad.op: .n_attrs 65 is over the limit of 64 (LOOM_MAX_ATTRS)" },
    { "schema_input_name_null.so", "op bad.op: inputs[1].name '(null)' is NULL" },
    { "schema_input_name_empty.so", "op bad.op: inputs[1].name '' is empty" },
    { "schema_input_name_equals.so", "op bad.op: inputs[1].name 'a=b' has a character other than" },
    { "schema_output_name_space.so", "op bad.op: outputs[0].name 'my output' has a character other than" },
    { "schema_input_dup.so", "op bad.op: inputs[0] and inputs[1] are both named 'input'" },
    { "schema_output_dup.so", "op bad.op: outputs[0] and outputs[1] are both named 'output'" },
    { "schema_attr_dup.so", "op bad.op: attrs[0] and attrs[1] are both named 'scale'" },
    { "schema_input_ndim_big.so", "op bad.op: inputs[0] 'input': .ndim 13 is outside -1..12 (LOOM_MAX_NDIM)" },
    { "schema_input_ndim_neg.so", "op bad.op: inputs[0] 'input': .ndim -2 is outside -1..12" },
    { "schema_input_dtypes.so", "op bad.op: inputs[0] 'input': .dtypes 0x1000000000000000 has bits outside "
                                "LOOM_DTYPES_ALL" },
    { "schema_output_dtypes_invalid.so", "op bad.op: outputs[0] 'output': .dtypes 0x1 has bits outside" },
    { "schema_input_flags.so", "op bad.op: inputs[0] 'input': .flags 0x10 has bits outside LOOM_ARG_FLAGS_KNOWN" },
    { "schema_attr_name_null.so", "op bad.op: attrs[0].name '(null)' is NULL" },
    { "schema_attr_name_space.so", "op bad.op: attrs[0].name 'my scale' has a character other than" },
    { "schema_attr_type.so", "op bad.op: attribute 'scale' (attrs[0]): .type 99 is not a loom_attr_type" },
    { "schema_attr_flags.so", "op bad.op: attribute 'scale' (attrs[0]): .flags 0x100 has bits outside "
                              "LOOM_ATTR_FLAGS_KNOWN" },
    { "schema_attr_constraint_on_string.so", "op bad.op: attribute 'mode' (attrs[0]): .flags LOOM_ATTR_FINITE" },
    { "schema_default_is_set.so", "op bad.op: attribute 'scale' (attrs[0]): .dflt.is_set is 2" },
    { "schema_default_required.so", "op bad.op: attribute 'scale' (attrs[0]) is LOOM_ATTR_REQUIRED and has a "
                                    "default" },
    { "schema_default_type.so", "op bad.op: attribute 'scale' (attrs[0]): .dflt.type 2 differs from the "
                                "attribute's .type 1" },
    { "schema_default_ints_huge_null.so", "op bad.op: attribute 'sizes' (attrs[0]): .dflt.count 1099511627776 "
                                          "is outside 0..65536 (LOOM_MAX_ATTR_COUNT)" },
    { "schema_default_ints_null.so", "op bad.op: attribute 'sizes' (attrs[0]): .dflt has 3 elements and NULL" },
    { "schema_default_floats_negative.so", "op bad.op: attribute 'weights' (attrs[0]): .dflt.count -1 is "
                                           "outside" },
    { "schema_default_string_null.so", "op bad.op: attribute 'mode' (attrs[0]): string default .dflt.u.s is "
                                       "NULL" },
    { "schema_default_string_count.so", "op bad.op: attribute 'mode' (attrs[0]): .dflt.count 5 is not the "
                                        "length of the string default" },
    { "schema_default_bool.so", "op bad.op: attribute 'flag' (attrs[0]): bool default 2" },
    { "schema_default_scalar_count.so", "op bad.op: attribute 'scale' (attrs[0]): .dflt.count 7 for a scalar" },
    { "schema_default_tensor.so", "op bad.op: attribute 'table' (attrs[0]): a tensor attribute cannot have a "
                                  "default" },
    { "schema_default_constraint.so", "op bad.op: attribute 'scale' must be" },
    { "schema_default_ints_constraint.so", "op bad.op: attribute 'sizes' must be" },
    { "schema_object_class_field.so", "op bad.op: .object_class 'noclassdot' is not of the form domain.name" },
    { "schema_kernel_backend.so", "kernel of op bad.op: .backend 'cpu,fast' has a character other than" },
    { "schema_kernel_impl.so", "kernel of op bad.op (backend cpu): .impl 'cpu bad' has a space" },
    { "schema_kernel_flags.so", "kernel cpu:bad of op bad.op: .flags 0x80 has bits this core does not know" },
    { "schema_kernel_dtypes.so", "kernel cpu:bad of op bad.op: .dtypes 0x1000000000000000 has bits outside" },
    { "schema_class_name.so", "object class name 'counter' is not of the form domain.name" },
    { "schema_class_attrs_null.so", "object class bad.cls: .attrs is NULL with .n_attrs 1" },
    { "schema_class_attr_dup.so", "object class bad.cls: attrs[0] and attrs[1] are both named 'scale'" },
    { "schema_class_default_huge_null.so", "object class bad.cls: attribute 'table' (attrs[0]): .dflt.count "
                                           "1099511627776 is outside" },
    { "schema_class_no_create.so", "object class bad.cls: .create and .destroy are required" },
    { "schema_class_struct_size.so", "object class is NULL or its struct_size is too small" },
    { "schema_jagged_no_offsets.so", "op bad.op: inputs[0] 'input' is LOOM_ARG_JAGGED: the next inputs must be its "
                                     "LOOM_ARG_OFFSETS tensor 'input_offsets'" },
    { "schema_offsets_alone.so", "op bad.op: inputs[1] 'other' is LOOM_ARG_OFFSETS but does not follow a "
                                 "LOOM_ARG_JAGGED" },
    { "schema_offsets_dtype.so", "op bad.op: inputs[1] 'input_offsets': offsets are i64 of rank 1" },
    { "schema_same_dtype_forward.so", "op bad.op: inputs[0] 'input': LOOM_ARG_SAME_DTYPE_AS(1) names no earlier "
                                      "input" },
    { "schema_output_same_dtype.so", "op bad.op: outputs[0] 'output': LOOM_ARG_SAME_DTYPE_AS(5) names no input" },
    { "schema_choices_null.so", "op bad.op: .choices is NULL with .n_choices 1" },
    { "schema_choices_not_string.so", "op bad.op: choices[0] is for attribute 'scale', which is not a string" },
    { "schema_choices_default.so", "op bad.op: attribute 'mode': the default 'max' is not one of its choices" },
    { "schema_choices_bad_index.so", "op bad.op: choices[0].attr 5 is not an attribute index" },
    { "schema_choices_empty.so", "op bad.op: choices[0] (attribute 'mode') has no values" },
    { "schema_class_choices_default.so", "object class bad.cls: attribute 'mode': the default 'max' is not one of "
                                         "its choices" },
};

static void every_invalid_schema_field_is_refused_naming_it(void **state)
{
    int64_t n_schema = 0;
    (void)state;
    assert_int_equal(init_with("LOOM_TEST_SCHEMA_PACKS", NULL, NULL), LOOM_OK);
    for (size_t i = 0; i < sizeof schema_cases / sizeof schema_cases[0]; i++)
        expect_scan(schema_cases[i].file, LOOM_SCAN_REFUSED, schema_cases[i].needle);
    /* One case per pack in the folder, none forgotten. */
    for (int64_t i = 0; i < loom_scan_count(); i++) {
        loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
        loom_scan_at(i, &e);
        n_schema += strstr(e.path, "/schema_") != NULL;
    }
    assert_int_equal(n_schema, (int64_t)(sizeof schema_cases / sizeof schema_cases[0]));
    /* Nothing of a refused pack stays: each registered schema.good first. */
    assert_null(loom_op_find("schema.good"));
    assert_null(loom_op_find("bad.op"));
    for (int64_t i = 0; i < loom_object_class_count(); i++)
        assert_string_not_equal(loom_object_class_at(i)->name, "bad.cls");
    /* The rest still loads and works. */
    expect_scan("mock_0good.so", LOOM_SCAN_LOADED, NULL);
    assert_true(run_double(2) == 4.0f);
    loom_shutdown();
}

static void a_pack_that_contradicts_itself_is_refused(void **state)
{
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    expect_scan("mock_self_clash.so", LOOM_SCAN_REFUSED, "schema clash for mock.self");
    expect_scan("mock_self_clash.so", LOOM_SCAN_REFUSED, "defines it twice, differently (1 attributes vs 0");
    assert_null(loom_op_find("mock.self"));
    loom_shutdown();
}

/* ------------------------------------------------------------ item 4 */

static void a_later_class_or_kernel_is_dropped_and_the_rest_loads(void **state)
{
    loom_scan_entry e;
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    expect_scan("mock_class_dup.so", LOOM_SCAN_LOADED, "loaded with 1 registration refused: object class "
                "mock.counter: refused the registration of ");
    expect_scan("mock_class_dup.so", LOOM_SCAN_LOADED, "mock_class_dup.so: ");
    expect_scan("mock_class_dup.so", LOOM_SCAN_LOADED, "mock_0good.so already registers it (it was loaded first: "
                "found earlier in the search order, in ");
    e = packs_scan("mock_class_dup.so");
    assert_int_equal(e.n_ops, 1);
    assert_int_equal(e.n_kernels, 1);
    assert_int_equal(e.n_classes, 0);
    assert_non_null(loom_op_find("mock.classdup"));
    /* mock.counter is registered once, by mock_0good.so ("a running count"). */
    int n_counters = 0;
    for (int64_t i = 0; i < loom_object_class_count(); i++)
        if (strcmp(loom_object_class_at(i)->name, "mock.counter") == 0) {
            n_counters++;
            assert_string_equal(loom_object_class_at(i)->doc, "a running count");
        }
    assert_int_equal(n_counters, 1);
    loom_shutdown();
}

static void a_path_pack_redefining_core_add_takes_only_core_add(void **state)
{
    loom_kernel_info k = LOOM_KERNEL_INFO_INIT;
    loom_scan_entry core;
    (void)state;
    loom_shutdown();
    setenv("LOOM_PLUGIN_PATH", getenv("LOOM_TEST_CLASH_PACKS"), 1);
    unsetenv("LOOM_PLUGINS_SELECT");
    assert_int_equal(loom_init(NULL), LOOM_OK);
    expect_scan("addclash.so", LOOM_SCAN_LOADED, "loaded");
    /* core.so loads, without its core.add; the reason names both files,
    ** which one is in force and why, and the first difference. */
    expect_scan("/core.so", LOOM_SCAN_LOADED, "loaded with 1 registration refused: core.add: refused the "
                "definition and its ");
    expect_scan("/core.so", LOOM_SCAN_LOADED, "/core.so: it differs from the definition in force, that of ");
    expect_scan("/core.so", LOOM_SCAN_LOADED, "/addclash.so (it was loaded first: found earlier in the search "
                "order, in ");
    expect_scan("/core.so", LOOM_SCAN_LOADED, "(LOOM_PLUGIN_PATH)); first difference: 1 attributes vs 0 (this "
                "pack vs the one in force)");
    core = packs_scan("/core.so");
    assert_true(core.n_ops >= 2);   /* core.matmul, core.cast, ... less core.add */
    /* The rest of core works; core.add runs the first definition's kernel. */
    float a[4] = { 1, 2, 3, 4 }, b[4] = { 1, 0, 0, 1 };
    int64_t shape[2] = { 2, 2 };
    loom_tensor *ta = NULL, *tb = NULL, *out = NULL;
    assert_int_equal(loom_tensor_wrap(&ta, a, LOOM_DTYPE_F32, 2, shape, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&tb, b, LOOM_DTYPE_F32, 2, shape, NULL, NULL), LOOM_OK);
    const loom_tensor *in[2] = { ta, tb };
    assert_int_equal(loom_run("core.matmul", in, 2, NULL, &out, 1, NULL), LOOM_OK);
    assert_true(((float *)out->data)[1] == 2.0f && ((float *)out->data)[3] == 4.0f);
    loom_tensor_free(out);
    loom_tensor_free(ta);
    loom_tensor_free(tb);
    assert_non_null(loom_op_find("core.cast"));
    assert_true(run_binary("core.add", 5, 2) == 3.0f);
    assert_int_equal(loom_op_schema_of(loom_op_find("core.add"))->n_attrs, 0);
    assert_int_equal(loom_op_kernel_count(loom_op_find("core.add")), 1);
    assert_int_equal(loom_op_kernel_at(loom_op_find("core.add"), 0, &k), LOOM_OK);
    assert_string_equal(k.pack, "addclash");
    loom_shutdown();
    unsetenv("LOOM_PLUGIN_PATH");
}

/* ---------------------------------------------------- the other tables */

static void backend_rules_past_the_limit_are_named(void **state)
{
    char rules[4096], buf[4096];
    size_t len = 0, got;
    FILE *log = tmpfile();
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    (void)state;
    len += (size_t)snprintf(rules, sizeof rules, "cpu");
    for (int i = 0; i < LOOM_MAX_BACKEND_RULES - 1; i++)
        len += (size_t)snprintf(rules + len, sizeof rules - len, ";nomatch%d.*=cpu", i);
    /* Rule LOOM_MAX_BACKEND_RULES is kept, the one after it is not, loudly. */
    snprintf(rules + len, sizeof rules - len, ";mock.double=fast,cpu;mock.add=fast");
    assert_int_equal(init_with(NULL, rules, log), LOOM_OK);
    assert_true(run_double(2) == 4.0f);
    loom_last_dispatch(&info);
    assert_string_equal(info.backend, "fast");
    assert_true(run_binary("mock.add", 1, 2) == 3.0f);
    fflush(log);
    rewind(log);
    got = fread(buf, 1, sizeof buf - 1, log);
    buf[got] = '\0';
    assert_non_null(strstr(buf, "LOOM_BACKENDS: more than 32 per-op rules (LOOM_MAX_BACKEND_RULES); 'mock.add=fast' "
                                "ignored"));
    loom_shutdown();
    fclose(log);
}

static char *read_log(FILE *log, char *buf, size_t size)
{
    fflush(log);
    rewind(log);
    size_t got = fread(buf, 1, size - 1, log);
    buf[got] = '\0';
    return buf;
}

/* LOOM_BACKENDS mistakes are named with the closest match; under
** LOOM_STRICT=1 they fail loom_init, which leaves nothing loaded. */
static void backend_mistakes_are_named_and_strict_refuses_them(void **state)
{
    static char buf[1 << 17];               /* the whole verbose log of a scan */
    FILE *log = tmpfile();
    (void)state;
    assert_int_equal(init_with(NULL, "fsat,cpu;mock.dubble=cpu", log), LOOM_OK);
    read_log(log, buf, sizeof buf);
    assert_non_null(strstr(buf, "LOOM_BACKENDS: 'fsat' in the default list is not a backend of any loaded pack; "
                                "did you mean 'fast'?"));
    assert_non_null(strstr(buf, "LOOM_BACKENDS: rule 'mock.dubble' matches no loaded op; did you mean 'mock.double'?"));
    /* the call still runs, on the backends that exist */
    assert_true(run_double(2) == 4.0f);
    /* a valid policy says nothing */
    fclose(log);
    log = tmpfile();
    assert_int_equal(init_with(NULL, "fast,cpu;mock.*=cpu", log), LOOM_OK);
    assert_null(strstr(read_log(log, buf, sizeof buf), "LOOM_BACKENDS"));
    loom_shutdown();
    setenv("LOOM_STRICT", "1", 1);
    assert_int_equal(init_with(NULL, "cpu;mock.dubble=cpu", NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "rule 'mock.dubble' matches no loaded op; did you mean 'mock.double'? "
                                              "(LOOM_STRICT=1)"));
    assert_null(loom_op_find("mock.double"));       /* nothing stayed loaded */
    assert_int_equal(init_with(NULL, "cdua,cpu", NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'cdua' in the default list is not a backend of any loaded pack"));
    unsetenv("LOOM_STRICT");
    assert_int_equal(init_with(NULL, "cpu", NULL), LOOM_OK);
    assert_non_null(loom_op_find("mock.double"));
    loom_shutdown();
    fclose(log);
}

/* ABI 1.2: a kernel without LOOM_KERNEL_STRIDED (every mock kernel) sees a
** strided view as its compact copy; LOOM_VERBOSE=2 says so and
** LOOM_STRICT=1 refuses the copy instead. */
static void strided_inputs_reach_compact_only_kernels_as_copies(void **state)
{
    static char buf[1 << 17];
    float xs[4] = { 1, 99, 2, 99 }, y[2] = { 10, 20 };
    const int64_t n2 = 2, stride2 = 2;
    loom_tensor *view, *ty = NULL, *out = NULL;
    FILE *log = tmpfile();
    (void)state;
    loom_shutdown();
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    o.plugin_path = getenv("LOOM_TEST_PACKS");
    o.no_default_dirs = 1;
    o.log_stream = log;
    o.verbose = 2;
    assert_int_equal(loom_init(&o), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&view, xs, LOOM_DTYPE_F32, 1, &n2, &stride2, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&ty, y, LOOM_DTYPE_F32, 1, &n2, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_run("mock.add", (const loom_tensor *[]){ view, ty }, 2, NULL, &out, 1, NULL), LOOM_OK);
    assert_true(((float *)out->data)[0] == 11.0f && ((float *)out->data)[1] == 22.0f);
    loom_tensor_free(out);
    out = NULL;
    read_log(log, buf, sizeof buf);
    if (strstr(buf, "(strided) copied to a compact tensor for kernel") == NULL)
        fail_msg("no compact-copy line in the LOOM_VERBOSE=2 log:\n%.4000s", buf + (strlen(buf) > 4000 ? strlen(buf) - 4000 : 0));
    loom_shutdown();
    setenv("LOOM_STRICT", "1", 1);
    assert_int_equal(init_with(NULL, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_run("mock.add", (const loom_tensor *[]){ view, ty }, 2, NULL, &out, 1, NULL), LOOM_ESTRICT);
    assert_non_null(strstr(loom_last_error(), "LOOM_STRICT=1 forbids the compact copy"));
    assert_null(out);
    unsetenv("LOOM_STRICT");
    loom_shutdown();
    loom_tensor_free(view);
    loom_tensor_free(ty);
    fclose(log);
}

/* A mistyped op or class name in a call is answered with the closest one. */
static void a_mistyped_op_name_gets_a_suggestion(void **state)
{
    loom_object *obj = NULL;
    (void)state;
    assert_int_equal(init_with(NULL, NULL, NULL), LOOM_OK);
    assert_null(loom_op_find("mock.dobule"));
    assert_string_equal(loom_last_error(), "no operator named 'mock.dobule'; did you mean 'mock.double'?");
    assert_null(loom_op_find("zzz.qqq"));
    assert_non_null(strstr(loom_last_error(), "no operator named 'zzz.qqq' (is its pack loaded?"));
    assert_int_equal(loom_object_create(&obj, "mock.nothing_like_it", NULL, NULL), LOOM_ENOENT);
    assert_non_null(strstr(loom_last_error(), "no object class named 'mock.nothing_like_it'"));
    loom_shutdown();
}

static void a_long_kernel_label_is_kept_whole(void **state)
{
    float x[2] = { 1, 2 };
    loom_tensor *in, *out = NULL;
    (void)state;
    assert_int_equal(init_with("LOOM_TEST_EXTRA_PACKS", NULL, NULL), LOOM_OK);
    in = f32_tensor(x, 2);
    assert_int_equal(loom_run("extra.longlabel", (const loom_tensor *const *)&in, 1, NULL, &out, 1, NULL),
                     LOOM_EINVAL);
    /* The same 120-byte name as extrapack.c's. */
    assert_non_null(strstr(loom_last_error(), "extra.longlabel [cpu:abcdefghijklmnopqrstuvwxyz0123456789"
                                              "abcdefghijklmnopqrstuvwxyz0123456789"
                                              "abcdefghijklmnopqrstuvwxyz0123456789abcdefgh]: label check"));
    loom_tensor_free(in);
    /* A valid jagged pair, same-dtype output and choices pass the checks. */
    assert_non_null(loom_op_find("extra.jagged"));
    loom_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernel_limit_refuses_the_pack_and_leaves_no_provider),
        cmocka_unit_test(provider_limits_are_named),
        cmocka_unit_test(long_plugin_path_keeps_the_default_folders),
        cmocka_unit_test(every_invalid_schema_field_is_refused_naming_it),
        cmocka_unit_test(a_pack_that_contradicts_itself_is_refused),
        cmocka_unit_test(a_later_class_or_kernel_is_dropped_and_the_rest_loads),
        cmocka_unit_test(a_path_pack_redefining_core_add_takes_only_core_add),
        cmocka_unit_test(backend_rules_past_the_limit_are_named),
        cmocka_unit_test(a_long_kernel_label_is_kept_whole),
        cmocka_unit_test(backend_mistakes_are_named_and_strict_refuses_them),
        cmocka_unit_test(a_mistyped_op_name_gets_a_suggestion),
        cmocka_unit_test(strided_inputs_reach_compact_only_kernels_as_copies),
    };
    int rc = cmocka_run_group_tests_name("registry", tests, NULL, NULL);
    loom_shutdown();
    return rc;
}
