/* SPDX-License-Identifier: BSD-3-Clause */
/*
** abi_headers.c - one translation unit that includes the public headers and
** uses every macro and inline helper they define. check_headers.sh compiles
** this very file as C11 and as C++11, C++17 and C++20 (-x c++), with
** -Wall -Wextra -Werror -pedantic, twice per standard: once with
** LOOM_PLUGIN_DEFINE and once (-DABI_TEST_DEPS=1) with LOOM_PLUGIN_DEFINE_DEPS.
** It is compiled, never run: the host-side half only has to type-check.
**
** The code is the common subset of C11 and C++11: positional aggregate
** initialisers (C++ has designated ones only from C++20, tested below), casts
** from void *, no compound literals.
*/
#include <loom/loom.h>
#include <loom/plugin.h>   /* a second time: the include guards hold */
#include <loom/rl_env.h>   /* the environment interface packs offer each other */
#include <loom/ctc_lm.h>   /* the CTC decoder's LM interface (a pack's vtable) */

#ifndef ABI_TEST_DEPS
#define ABI_TEST_DEPS 0
#endif

#define F32 LOOM_DTYPE_BIT(LOOM_DTYPE_F32)
#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)
#define U8  LOOM_DTYPE_BIT(LOOM_DTYPE_U8)
#define COUNT(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

/* an LM interface with every member left empty: it type-checks positionally */
static const loom_ctc_lm_v1 abi_ctc_lm = { (uint32_t)sizeof(loom_ctc_lm_v1), NULL, NULL, NULL, NULL, NULL };
const loom_ctc_lm_v1 *abi_ctc_lm_vtable(void);
const loom_ctc_lm_v1 *abi_ctc_lm_vtable(void) { return LOOM_CTC_LM_VERSION == 1u ? &abi_ctc_lm : NULL; }

/* ------------------------------------------------- constants and asserts */

LOOM_STATIC_ASSERT(LOOM_ABI_MAJOR == 1, "ABI major 1");
LOOM_STATIC_ASSERT(LOOM_RL_ENV_VERSION == 1u && sizeof(loom_rl_env_api) > sizeof(uint32_t), "rl.env v1");
LOOM_STATIC_ASSERT(LOOM_ABI_MINOR >= 1, "ABI 1.1 headers");
LOOM_STATIC_ASSERT(LOOM_TARGET_ABI_MINOR <= LOOM_ABI_MINOR, "target minor");
LOOM_STATIC_ASSERT(LOOM_PLUGIN_MAGIC == 0x4D4F4F4Cu, "magic");
LOOM_STATIC_ASSERT((LOOM_DTYPES_FLOAT & F32) != 0, "f32 is a float dtype");
LOOM_STATIC_ASSERT((LOOM_DTYPES_ALL & LOOM_DTYPE_BIT(LOOM_DTYPE_INVALID)) == 0, "invalid is no dtype");
LOOM_STATIC_ASSERT(LOOM_ARG_SAME_DTYPE_INDEX(LOOM_ARG_SAME_DTYPE_AS(3)) == 3, "same-dtype index");
LOOM_STATIC_ASSERT(LOOM_ARG_SAME_DTYPE_INDEX(0u) == -1, "no same-dtype index");
LOOM_STATIC_ASSERT((LOOM_ARG_FLAGS_KNOWN & (LOOM_ARG_OPTIONAL | LOOM_ARG_JAGGED | LOOM_ARG_OFFSETS)) != 0,
                   "arg flags");
LOOM_STATIC_ASSERT((LOOM_ATTR_FLAGS_KNOWN & (LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE
                                             | LOOM_ATTR_NONNEG)) == 0xFu, "attr flags");
LOOM_STATIC_ASSERT((LOOM_CPU_LEVEL_AMX & LOOM_CPU_LEVEL_AVX512 & LOOM_CPU_LEVEL_AVX2 & LOOM_CPU_LEVEL_SSE4)
                   == LOOM_CPU_SSE42, "ISA levels nest");
LOOM_STATIC_ASSERT(LOOM_CPU_LEVEL_SCALAR == 0, "scalar level");
LOOM_STATIC_ASSERT((LOOM_DLPACK_FLAG_READ_ONLY | LOOM_DLPACK_FLAG_IS_COPIED) == 3, "dlpack flags");
LOOM_STATIC_ASSERT(LOOM_STATUS_MIN == LOOM_EINTERNAL, "status range");
LOOM_STATIC_ASSERT(LOOM_MAX_NDIM > 0 && LOOM_MAX_ARGS > 0 && LOOM_MAX_ATTRS > 0 && LOOM_MAX_KERNELS > 0
                   && LOOM_MAX_NAME > 0 && LOOM_MAX_ATTR_COUNT > 0 && LOOM_MAX_PACK_PROVIDERS > 0
                   && LOOM_MAX_DEVICE_PROVIDERS > 0 && LOOM_MAX_DEVICES_PER_KIND > 0
                   && LOOM_MAX_SCRATCH_BLOCKS > 0 && LOOM_MAX_SCRATCH_ARENA > 0 && LOOM_MAX_NESTING > 0
                   && LOOM_MAX_BACKEND_RULES > 0, "limits");

/* C linkage in both languages: check_headers.sh looks for this name
** unmangled in the C++ object. */
LOOM_EXTERN_C int abi_test_c_linkage(int x);
LOOM_EXTERN_C int abi_test_c_linkage(int x) { return x + 1; }

/* --------------------------------------------------------------- the pack */

static const loom_host_api *host;

static const loom_arg_def op_inputs[] = {
    { "input", F32, 0, -1, "any shape" },
    { "other", 0, LOOM_ARG_OPTIONAL | LOOM_ARG_SAME_DTYPE_AS(0), -1, "optional, same dtype as input" },
    { "values", U8, LOOM_ARG_JAGGED, 1, "jagged strings" },
    { "values_offsets", I64, LOOM_ARG_OFFSETS, 1, "[B+1]" },
};
static const loom_arg_def op_outputs[] = {
    { "output", F32, LOOM_ARG_SAME_DTYPE_AS(0), -1, "same shape as input" },
};
static const loom_attr_def op_attrs[] = {
    { "count", LOOM_ATTR_INT, LOOM_ATTR_NONNEG, LOOM_DEFAULT_INT(3), "an int" },
    { "alpha", LOOM_ATTR_FLOAT, LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE, LOOM_DEFAULT_FLOAT(0.5), "a float" },
    { "flag", LOOM_ATTR_BOOL, 0, LOOM_DEFAULT_BOOL(1), "a bool" },
    { "mode", LOOM_ATTR_STRING, 0, LOOM_DEFAULT_STRING("fast"), "an enumerated string" },
    { "sizes", LOOM_ATTR_INTS, 0, LOOM_DEFAULT_NONE, "optional list" },
    { "beta", LOOM_ATTR_FLOAT, LOOM_ATTR_REQUIRED, LOOM_DEFAULT_NONE, "required" },
};
static const char *const mode_values[] = { "fast", "exact", NULL };
static const loom_attr_choices op_choices[] = {
    { 3, mode_values },
};

static void op_cost(const loom_call *call, double *flops, double *bytes)
{
    double n = (double)loom_numel(call->inputs[0]);
    *flops = n;
    *bytes = 8.0 * n;
}

static const loom_op_schema op_schema = {
    (uint32_t)sizeof(loom_op_schema), "abitest.op", 1, "header compile test",
    COUNT(op_inputs), op_inputs, COUNT(op_outputs), op_outputs, COUNT(op_attrs), op_attrs,
    NULL, op_cost, COUNT(op_choices), op_choices,
};

typedef struct job { const float *in; float *out; float alpha; } job;

static void op_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const job *j = (const job *)user;
    (void)thread_index;
    for (int64_t i = begin; i < end; i++)
        j->out[i] = j->in[i] * j->alpha;
}

static loom_status op_supports(const loom_call *call, char *why, size_t why_size)
{
    if (!loom_is_contiguous(call->inputs[0])) {
        if (why_size > 0)
            why[0] = '\0';
        return LOOM_ENOTSUP;
    }
    return LOOM_OK;
}

static loom_status op_run(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    loom_tensor *y = NULL;
    job j;
    loom_status st;

    if (loom_tensor_dtype_of(x) != LOOM_DTYPE_F32 || loom_dtype_from_dl(x->dtype) == LOOM_DTYPE_INVALID)
        return host->fail(LOOM_EINVAL, "%s: dtype %d", call->schema->name, (int)x->dtype.code);
    if (LOOM_HAS_MEMBER(call, loom_call, plan_state) && call->plan_state != NULL)
        host->log(LOOM_LOG_DEBUG, "planned call");
    if (LOOM_HAS_MEMBER(call->ctx, loom_exec_ctx, cpu_features)
        && (call->ctx->cpu_features & LOOM_CPU_LEVEL_AVX2) == LOOM_CPU_LEVEL_AVX2)
        host->log(LOOM_LOG_INFO, "avx2 level %d", call->ctx->depth);
    st = host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, &y);
    if (st != LOOM_OK)
        return st;
    j.in = (const float *)loom_data(x);
    j.out = (float *)loom_data(y);
    j.alpha = (float)call->attrs[1].u.f;
    return host->parallel_for(call->ctx, loom_numel(x), 4096, op_range, &j);
}

static loom_status op_prepare(const loom_call *call, void **plan_state)
{
    (void)call;
    *plan_state = NULL;
    return LOOM_OK;
}

static void op_release(void *plan_state) { (void)plan_state; }

static const loom_kernel_desc op_kernel = {
    (uint32_t)sizeof(loom_kernel_desc), &op_schema, "cpu", LOOM_DEVICE_CPU, 0, "cpu:abitest",
    F32, op_supports, op_run, NULL, op_prepare, op_release, 0,
};

static loom_status abitest_init(const loom_host_api *h, loom_registrar *reg)
{
    loom_status st;

    host = h;
    st = h->define_op(reg, &op_schema);
    if (st == LOOM_OK)
        st = h->register_kernel(reg, &op_kernel);
    if (st == LOOM_OK && LOOM_HAS_MEMBER(h, loom_host_api, op_find) && h->op_find("core.add") == NULL)
        h->log(LOOM_LOG_WARN, "no %s", "core.add");
    if (st == LOOM_OK && !LOOM_HAS_MEMBER(h, loom_host_api, load_global))
        st = h->fail(LOOM_EABI, "core %u.%u is older than 1.1", (unsigned)h->abi_major, (unsigned)h->abi_minor);
    return st;
}

#if ABI_TEST_DEPS
static void abitest_fini(void) { host = NULL; }
static const char *const abitest_deps[] = { "core", "vision.nms", NULL };
LOOM_PLUGIN_DEFINE_DEPS("abitest", "1.0.0", "header compile test, with dependencies",
                        abitest_init, abitest_fini, abitest_deps)
#else
LOOM_PLUGIN_DEFINE("abitest", "1.0.0", "header compile test", abitest_init, NULL)
#endif

/* C++20 has designated initialisers: there the C forms read the same, and the
** LOOM_DEFAULT_* values are the inline functions' results. */
#if defined(__cplusplus) && __cplusplus >= 202002L
static const loom_attr_def cxx20_attrs[] = {
    { .name = "k", .type = LOOM_ATTR_INT, .flags = 0, .dflt = LOOM_DEFAULT_INT(1), .doc = "designated" },
    { .name = "s", .type = LOOM_ATTR_STRING, .flags = 0, .dflt = LOOM_DEFAULT_STRING("x"), .doc = "designated" },
};
#endif

/* --------------------------------------------------------------- the host */

int abi_test_host(const char *path);
int abi_test_host(const char *path)
{
    loom_init_options io = LOOM_INIT_OPTIONS_INIT;
    loom_call_options co = LOOM_CALL_OPTIONS_INIT;
    loom_object_options oo = LOOM_OBJECT_OPTIONS_INIT;
    loom_dispatch_info di = LOOM_DISPATCH_INFO_INIT;
    loom_kernel_info ki = LOOM_KERNEL_INFO_INIT;
    loom_scan_entry se = LOOM_SCAN_ENTRY_INIT;
    loom_device_info dv = LOOM_DEVICE_INFO_INIT;
    loom_call_options co2 = LOOM_STRUCT_INIT(loom_call_options);
    const int64_t shape[2] = { 2, 3 };
    loom_tensor *a = NULL, *b = NULL, *out[1] = { NULL };
    loom_attrs *attrs = NULL;
    loom_object *obj = NULL;
    const loom_op *op;
    int rc = 1;

    io.plugin_path = path;
    if (LOOM_HAS_MEMBER(&io, loom_init_options, probe_packs))
        io.probe_packs = -1;
    if (loom_init(&io) != LOOM_OK)
        return 1;
    if (loom_tensor_new(&a, LOOM_DTYPE_F32, 2, shape, NULL) == LOOM_OK
        && loom_tensor_new(&b, LOOM_DTYPE_F32, 2, shape, NULL) == LOOM_OK
        && loom_attrs_new(&attrs) == LOOM_OK
        && loom_attrs_set_float(attrs, "alpha", 0.5) == LOOM_OK) {
        const loom_tensor *inputs[2] = { a, b };
        co.num_threads = 1;
        if (loom_run("core.add", inputs, 2, attrs, out, 1, &co) == LOOM_OK
            && loom_last_dispatch(&di) == LOOM_OK && loom_is_contiguous(out[0])) {
            const float *c = (const float *)loom_data(out[0]);
            rc = c[0] == 0.0f && loom_numel(out[0]) == 6 && di.backend != NULL ? 0 : 1;
        }
    }
    op = loom_op_find("core.add");
    if (op != NULL && loom_op_kernel_count(op) > 0 && loom_op_kernel_at(op, 0, &ki) == LOOM_OK)
        rc |= ki.backend == NULL;
    if (loom_scan_count() > 0 && loom_scan_at(0, &se) == LOOM_OK && LOOM_HAS_MEMBER(&se, loom_scan_entry, live_objects))
        rc |= se.live_objects < 0;
    if (loom_device_count() > 0 && loom_device_at(0, &dv) == LOOM_OK)
        rc |= dv.device.device_type != LOOM_DEVICE_CPU;
    oo.weights_path = NULL;
    if (loom_object_create_ex(&obj, "core.linear", attrs, &oo) == LOOM_OK)
        loom_object_free(obj);
    rc |= co2.struct_size != (uint32_t)sizeof(loom_call_options);
#ifdef __cplusplus
    co2 = LOOM_CALL_OPTIONS_INIT;   /* in C++ an _INIT macro is also a value */
    rc |= co2.num_threads != 0;
#endif
#if defined(__cplusplus) && __cplusplus >= 202002L
    rc |= cxx20_attrs[0].dflt.u.i != 1 || cxx20_attrs[1].dflt.count != 1;
#endif
    loom_attrs_free(attrs);
    loom_tensor_free(out[0]);
    loom_tensor_free(b);
    loom_tensor_free(a);
    loom_shutdown();
    return rc;
}
