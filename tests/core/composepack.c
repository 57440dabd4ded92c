/* SPDX-License-Identifier: BSD-3-Clause */
/*
** composepack.c - two purpose-made packs for the composition tests of ABI
** 1.1 (test_compose.c), built from this one file:
**   -DCOMPOSE_LOWER  pack "lower": lower.scale (output = input * factor, on
**                    backend cpu and on a fake second backend "fake" that
**                    runs on the CPU too), lower.rowsum (jagged input),
**                    lower.addsame ("same dtype as input 0"), lower.features
**                    (the call's cpu_features), object class lower.files
**                    (named files and callbacks of loom_object_create_ex),
**                    object class lower.weights (the sum and count of its
**                    weight tensor 'w', read by the method lower.weights_sum),
**                    the interface "lower.adder" v1, and in init a
**                    host->load_global of libm (and of a missing library,
**                    which must fail).
**   -DCOMPOSE_UPPER  pack "upper", which depends on "lower": upper.twice
**                    calls lower.scale twice through host->op_call (the
**                    second call writes into upper.twice's own output);
**                    upper.plus1 / upper.plus2 share one run() through the
**                    kernel's user pointer; upper.adder uses lower's
**                    interface; object class upper.model whose method
**                    upper.forward keeps per-device state and a plan of
**                    lower.scale made on first use; object class
**                    upper.holder (ABI 1.3), whose create makes a
**                    lower.weights object from a tensor of its own through
**                    host->object_create, whose method upper.holder_sum
**                    calls lower.weights_sum on it, and whose destroy frees it.
** Counters of prepare/release and of per-device state creation are
** exported through ops so the tests can see them.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LOOM_TARGET_ABI_MINOR 1   /* both packs call ABI 1.1 services */
#include "loom/plugin.h"

static const loom_host_api *host;

typedef struct adder_v1 {
    uint32_t struct_size;
    float (*add)(float a, float b);
} adder_v1;

static const loom_arg_def in_x[] = { { .name = "input", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1 } };
static const loom_arg_def out_y[] = { { .name = "output", .ndim = -1 } };

#if defined(COMPOSE_LOWER)
/* y = x * f into a fresh or supplied output */
static loom_status scale_into(loom_call *call, float f)
{
    const loom_tensor *x = call->inputs[0];
    loom_tensor *y;
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, &y);
    if (st != LOOM_OK)
        return st;
    const float *a = loom_data(x);
    float *b = loom_data(y);
    for (int64_t i = 0, n = loom_numel(x); i < n; i++)
        b[i] = a[i] * f;
    return LOOM_OK;
}

static const char *const modes[] = { "fast", "exact", NULL };
static const loom_attr_def scale_attrs[] = {
    { .name = "factor", .type = LOOM_ATTR_FLOAT, .flags = LOOM_ATTR_FINITE, .dflt = LOOM_DEFAULT_FLOAT(2.0),
      .doc = "finite" },
    { .name = "mode", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_STRING("fast"), .doc = "fast or exact" },
};
static const loom_attr_choices scale_choices[] = { { 1, modes } };
static const loom_op_schema scale_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "lower.scale", .version = 1, .doc = "input * factor",
    .n_inputs = 1, .inputs = in_x, .n_outputs = 1, .outputs = out_y, .n_attrs = 2, .attrs = scale_attrs,
    .n_choices = 1, .choices = scale_choices,
};

static int prepares, releases;

static loom_status run_scale(loom_call *call)
{
    /* a planned call sees what prepare() made */
    if (call->plan_state != NULL && *(const int *)call->plan_state != 42)
        return host->fail(LOOM_EINTERNAL, "plan_state is not what prepare made");
    return scale_into(call, (float)call->attrs[0].u.f);
}

static loom_status prepare_scale(const loom_call *call, void **state)
{
    (void)call;
    int *p = malloc(sizeof *p);
    if (p == NULL)
        return host->fail(LOOM_ENOMEM, "out of memory");
    *p = 42;
    *state = p;
    prepares++;
    return LOOM_OK;
}

static void release_scale(void *state)
{
    free(state);
    releases++;
}

/* lower.rowsum: per-row sums of a jagged f32 values tensor */
static const loom_arg_def rowsum_in[] = {
    { .name = "values", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .flags = LOOM_ARG_JAGGED, .ndim = 1 },
    { .name = "values_offsets", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .flags = LOOM_ARG_OFFSETS, .ndim = 1 },
};
static const loom_op_schema rowsum_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "lower.rowsum", .version = 1, .doc = "sum of each row",
    .n_inputs = 2, .inputs = rowsum_in, .n_outputs = 1, .outputs = out_y,
};

static loom_status run_rowsum(loom_call *call)
{
    const float *v = loom_data(call->inputs[0]);
    const int64_t *o = loom_data(call->inputs[1]);
    int64_t rows = call->inputs[1]->shape[0] - 1;
    loom_tensor *y;
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_F32, 1, &rows, &y);
    if (st != LOOM_OK)
        return st;
    float *s = loom_data(y);
    for (int64_t b = 0; b < rows; b++) {   /* the core checked 0 = o[0] <= ... <= o[B] <= len(values) */
        s[b] = 0;
        for (int64_t i = o[b]; i < o[b + 1]; i++)
            s[b] += v[i];
    }
    return LOOM_OK;
}

/* lower.addsame: b must have a's dtype, and so has the output */
static const loom_arg_def addsame_in[] = {
    { .name = "a", .dtypes = LOOM_DTYPES_FLOAT, .ndim = 1 },
    { .name = "b", .dtypes = LOOM_DTYPES_FLOAT, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = 1 },
};
static const loom_arg_def addsame_out[] = { { .name = "output", .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = 1 } };
static const loom_attr_def addsame_attrs[] = {
    { .name = "lie", .type = LOOM_ATTR_BOOL, .dflt = LOOM_DEFAULT_BOOL(0), .doc = "produce f64 whatever a is" },
};
static const loom_op_schema addsame_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "lower.addsame", .version = 1, .doc = "a + b (f32)",
    .n_inputs = 2, .inputs = addsame_in, .n_outputs = 1, .outputs = addsame_out, .n_attrs = 1, .attrs = addsame_attrs,
};

static loom_status run_addsame(loom_call *call)
{
    const loom_tensor *a = call->inputs[0];
    loom_tensor *y;
    loom_dtype dt = call->attrs[0].u.b ? LOOM_DTYPE_F64 : loom_tensor_dtype_of(a);
    return host->alloc_output(call, 0, dt, 1, a->shape, &y);   /* values do not matter here */
}

/* lower.features: the call's cpu_features as an i64 scalar */
static const loom_arg_def features_out[] = { { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 0 } };
static const loom_op_schema features_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "lower.features", .version = 1, .doc = "ctx->cpu_features",
    .n_outputs = 1, .outputs = features_out,
};

static loom_status run_features(loom_call *call)
{
    loom_tensor *y;
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_I64, 0, NULL, &y);
    if (st != LOOM_OK)
        return st;
    if (call->ctx->cpu_features != host->cpu_features())
        return host->fail(LOOM_EINTERNAL, "ctx and host disagree on the CPU features");
    *(int64_t *)loom_data(y) = (int64_t)call->ctx->cpu_features;
    return LOOM_OK;
}

/* lower.files: what create saw of loom_object_create_ex's options */
typedef struct files_state { int32_t n_files; char first[64]; int32_t has_callbacks; } files_state;

static loom_status files_create(const loom_object_args *args, void **out)
{
    files_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return host->fail(LOOM_ENOMEM, "out of memory");
    if (LOOM_HAS_MEMBER(args, loom_object_args, callbacks)) {
        s->n_files = args->n_files;
        if (args->n_files > 0)
            strncpy(s->first, args->files[0].name, sizeof s->first - 1);
        s->has_callbacks = args->callbacks != NULL && args->callbacks_name != NULL
                        && strcmp(args->callbacks_name, "test.cb.v1") == 0;
    }
    *out = s;
    return LOOM_OK;
}

static void files_destroy(void *s) { free(s); }

static const loom_object_class files_class = {
    .struct_size = sizeof(loom_object_class), .name = "lower.files", .doc = "records its options",
    .create = files_create, .destroy = files_destroy,
};
static const loom_arg_def files_out[] = { { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1 } };
static const loom_op_schema files_info_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "lower.files_info", .version = 1,
    .doc = "[n_files, first name's length, has callbacks]", .n_outputs = 1, .outputs = files_out,
    .object_class = "lower.files",
};

static loom_status run_files_info(loom_call *call)
{
    const files_state *s = call->object;
    const int64_t three = 3;
    loom_tensor *y;
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &three, &y);
    if (st != LOOM_OK)
        return st;
    int64_t *v = loom_data(y);
    v[0] = s->n_files;
    v[1] = (int64_t)strlen(s->first);
    v[2] = s->has_callbacks;
    return LOOM_OK;
}

/* lower.weights: the sum and count of the f32 weight tensor 'w' */
typedef struct weights_state { float sum; int64_t n; } weights_state;

static loom_status weights_create(const loom_object_args *args, void **out)
{
    const loom_tensor *w;
    loom_status st;
    if (args->weights == NULL)
        return host->fail(LOOM_EINVAL, "lower.weights needs a weight tensor 'w'");
    if ((st = host->safetensors_get(args->weights, "w", &w)) != LOOM_OK)
        return st;
    if (loom_tensor_dtype_of(w) != LOOM_DTYPE_F32 || w->ndim != 1 || w->strides != NULL)
        return host->fail(LOOM_EINVAL, "'w' must be a compact f32 vector");
    weights_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return host->fail(LOOM_ENOMEM, "out of memory");
    s->n = w->shape[0];
    for (int64_t i = 0; i < s->n; i++)
        s->sum += ((const float *)loom_data(w))[i];
    *out = s;
    return LOOM_OK;
}

static const loom_object_class weights_class = {
    .struct_size = sizeof(loom_object_class), .name = "lower.weights", .doc = "sums its weight tensor",
    .create = weights_create, .destroy = files_destroy,
};
static const loom_arg_def weights_out[] = { { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 1 } };
static const loom_op_schema weights_sum_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "lower.weights_sum", .version = 1, .doc = "[sum of w, len(w)]",
    .n_outputs = 1, .outputs = weights_out, .object_class = "lower.weights",
};

static loom_status run_weights_sum(loom_call *call)
{
    const weights_state *s = call->object;
    const int64_t two = 2;
    loom_tensor *y;
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_F32, 1, &two, &y);
    if (st != LOOM_OK)
        return st;
    ((float *)loom_data(y))[0] = s->sum;
    ((float *)loom_data(y))[1] = (float)s->n;
    return LOOM_OK;
}

/* lower.counters: [prepares, releases] */
static const loom_op_schema counters_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "lower.counters", .version = 1, .doc = "[prepares, releases]",
    .n_outputs = 1, .outputs = files_out,
};

static loom_status run_counters(loom_call *call)
{
    const int64_t two = 2;
    loom_tensor *y;
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &two, &y);
    if (st != LOOM_OK)
        return st;
    ((int64_t *)loom_data(y))[0] = prepares;
    ((int64_t *)loom_data(y))[1] = releases;
    return LOOM_OK;
}

static float adder_add(float a, float b) { return a + b; }
static const adder_v1 adder = { sizeof(adder_v1), adder_add };

#define K(SCHEMA, BACKEND, RUN, ...) /* the ... starts with .run = RUN */ \
    { .struct_size = sizeof(loom_kernel_desc), .schema = &SCHEMA, .backend = BACKEND, \
      .device_type = LOOM_DEVICE_CPU, .impl = BACKEND ":" #RUN, __VA_ARGS__ }
static const loom_kernel_desc kernels[] = {
    K(scale_schema, "cpu", run_scale, .run = run_scale, .prepare = prepare_scale, .release = release_scale),
    K(scale_schema, "fake", run_scale, .run = run_scale),
    K(rowsum_schema, "cpu", run_rowsum, .run = run_rowsum),
    K(addsame_schema, "cpu", run_addsame, .run = run_addsame),
    K(features_schema, "cpu", run_features, .run = run_features),
    K(files_info_schema, "cpu", run_files_info, .run = run_files_info),
    K(counters_schema, "cpu", run_counters, .run = run_counters),
    K(weights_sum_schema, "cpu", run_weights_sum, .run = run_weights_sum),
};

static loom_status init(const loom_host_api *h, loom_registrar *reg)
{
    loom_status st;
    host = h;
    if (!LOOM_HAS_MEMBER(h, loom_host_api, load_global))
        return h->fail(LOOM_EABI, "lower needs ABI 1.1");
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if ((st = h->register_kernel(reg, &kernels[i])) != LOOM_OK)
            return st;
    if ((st = h->register_object_class(reg, &files_class)) != LOOM_OK
        || (st = h->register_object_class(reg, &weights_class)) != LOOM_OK)
        return st;
    /* a library the pack links, made global (as an MPI pack does for libmpi) */
    if ((st = h->load_global("libm.so.6")) != LOOM_OK)
        return st;
    if (h->load_global("libloom-no-such-library.so.0") != LOOM_ENOENT)
        return h->fail(LOOM_EINTERNAL, "load_global of a missing library did not fail with LOOM_ENOENT");
    return h->register_interface(reg, "lower.adder", 1, &adder);
}

LOOM_PLUGIN_DEFINE("lower", "1.0", "the lower pack of the composition tests", init, NULL)

#elif defined(COMPOSE_UPPER)
static const loom_op *scale_op;      /* found at init: lower is a dependency */
static const adder_v1 *lower_adder;

static const loom_attr_def twice_attrs[] = {
    { .name = "factor", .type = LOOM_ATTR_FLOAT, .dflt = LOOM_DEFAULT_FLOAT(3.0), .doc = "each step's factor" },
};
static const loom_op_schema twice_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "upper.twice", .version = 1,
    .doc = "lower.scale applied twice (input * factor^2)",
    .n_inputs = 1, .inputs = in_x, .n_outputs = 1, .outputs = out_y, .n_attrs = 1, .attrs = twice_attrs,
};

static loom_status run_twice(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    loom_tensor *mid = NULL, *y;
    loom_named_attr a = { "factor", { .type = LOOM_ATTR_FLOAT, .is_set = 1, .count = 1, .u = { .f = call->attrs[0].u.f } } };
    loom_op_call c = { .struct_size = sizeof c, .op = scale_op, .n_inputs = 1, .inputs = &x, .n_outputs = 1,
                       .outputs = &mid, .n_attrs = 1, .attrs = &a };
    loom_status st = host->op_call(call->ctx, &c);   /* mid: allocated by the core */
    if (st != LOOM_OK)
        return st;
    /* the second step writes straight into this op's own output */
    if ((st = host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, &y)) == LOOM_OK) {
        const loom_tensor *m = mid;
        c.inputs = &m;
        c.outputs = &y;
        st = host->op_call(call->ctx, &c);
    }
    host->tensor_free(mid);
    return st;
}

/* upper.plus1 / upper.plus2: one run(), told apart by the kernel's user pointer */
static const loom_op_schema plus1_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "upper.plus1", .version = 1, .doc = "input + 1",
    .n_inputs = 1, .inputs = in_x, .n_outputs = 1, .outputs = out_y,
};
static const loom_op_schema plus2_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "upper.plus2", .version = 1, .doc = "input + 2",
    .n_inputs = 1, .inputs = in_x, .n_outputs = 1, .outputs = out_y,
};
static const float one = 1.0f, two = 2.0f;

static loom_status run_plus(loom_call *call)
{
    const float add = *(const float *)call->kernel->user;
    const loom_tensor *x = call->inputs[0];
    loom_tensor *y;
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, &y);
    if (st != LOOM_OK)
        return st;
    for (int64_t i = 0, n = loom_numel(x); i < n; i++)
        ((float *)loom_data(y))[i] = lower_adder->add(((const float *)loom_data(x))[i], add);
    return LOOM_OK;
}

/* upper.model: per-device state (a plan of lower.scale by the model's factor) */
static int states_made, states_freed;

static loom_status model_create(const loom_object_args *args, void **out)
{
    float *f = malloc(sizeof *f);
    if (f == NULL)
        return host->fail(LOOM_ENOMEM, "out of memory");
    *f = args->attrs[0].is_set ? (float)args->attrs[0].u.f : 5.0f;
    *out = f;
    return LOOM_OK;
}

static void model_destroy(void *s) { free(s); }

static const loom_attr_def model_attrs[] = {
    { .name = "factor", .type = LOOM_ATTR_FLOAT, .dflt = LOOM_DEFAULT_FLOAT(5.0), .doc = "the model's factor" },
};
static const loom_object_class model_class = {
    .struct_size = sizeof(loom_object_class), .name = "upper.model", .doc = "a one-layer model",
    .n_attrs = 1, .attrs = model_attrs, .create = model_create, .destroy = model_destroy,
};

typedef struct model_dev { loom_plan *plan; const loom_tensor *desc_shape_owner; int64_t n; } model_dev;

static loom_status model_dev_create(const loom_call *call, void *base, void **out)
{
    const float factor = *(const float *)base;
    model_dev *d = calloc(1, sizeof *d);
    loom_named_attr a = { "factor", { .type = LOOM_ATTR_FLOAT, .is_set = 1, .count = 1, .u = { .f = factor } } };
    const loom_tensor *x = call->inputs[0];
    loom_op_call proto = { .struct_size = sizeof proto, .op = scale_op, .n_inputs = 1, .inputs = &x,
                           .n_attrs = 1, .attrs = &a };
    loom_status st;
    if (d == NULL)
        return host->fail(LOOM_ENOMEM, "out of memory");
    if ((st = host->plan_create(call->ctx, &proto, &d->plan)) != LOOM_OK) {
        free(d);
        return st;
    }
    d->n = loom_numel(x);
    states_made++;
    *out = d;
    return LOOM_OK;
}

static void model_dev_destroy(void *p)
{
    model_dev *d = p;
    host->plan_free(d->plan);
    free(d);
    states_freed++;
}

static const loom_op_schema forward_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "upper.forward", .version = 1, .doc = "input * the model's factor",
    .n_inputs = 1, .inputs = in_x, .n_outputs = 1, .outputs = out_y, .object_class = "upper.model",
};

static loom_status run_forward(loom_call *call)
{
    model_dev *d = host->object_backend_state(call, model_dev_create, model_dev_destroy);
    const loom_tensor *x = call->inputs[0];
    loom_tensor *y;
    loom_status st;
    if (d == NULL)
        return LOOM_ENOMEM;   /* the core's message stands */
    if ((st = host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, &y)) != LOOM_OK)
        return st;
    return host->plan_run(call->ctx, d->plan, &x, 1, &y, 1);
}

/* upper.states: [per-device states made, freed] */
static const loom_arg_def states_out[] = { { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1 } };
static const loom_op_schema states_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "upper.states", .version = 1, .doc = "[made, freed]",
    .n_outputs = 1, .outputs = states_out,
};

static loom_status run_states(loom_call *call)
{
    const int64_t n = 2;
    loom_tensor *y;
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &n, &y);
    if (st != LOOM_OK)
        return st;
    ((int64_t *)loom_data(y))[0] = states_made;
    ((int64_t *)loom_data(y))[1] = states_freed;
    return LOOM_OK;
}

/* upper.holder (ABI 1.3): owns a lower.weights object made from its own
** tensor w = [value] * 3 (borrowed by the child: it lives in this state) */
static int holders_destroyed;
typedef struct holder_state {
    float w[3];
    int64_t shape[1];
    loom_tensor t;
    loom_object *child;
} holder_state;

static void holder_destroy(void *p)
{
    holder_state *s = p;
    host->object_free(s->child);
    free(s);
    holders_destroyed++;
}

static loom_status holder_create(const loom_object_args *args, void **out)
{
    if (!LOOM_HAS_MEMBER(host, loom_host_api, object_free))
        return host->fail(LOOM_EABI, "upper.holder needs ABI 1.3 (host->object_create)");
    holder_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return host->fail(LOOM_ENOMEM, "out of memory");
    for (int i = 0; i < 3; i++)
        s->w[i] = (float)args->attrs[0].u.f;
    s->shape[0] = 3;
    s->t = (loom_tensor){ .data = s->w, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 1,
                          .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = s->shape };
    const loom_named_tensor w = { "w", &s->t };
    const loom_object_request req = { .struct_size = sizeof req,
                                      .class_name = args->attrs[1].u.b ? "lower.nosuch" : "lower.weights",
                                      .n_tensors = 1, .tensors = &w };
    if ((s->child = host->object_create(args->ctx, &req)) == NULL) {
        free(s);
        return LOOM_ENOENT;   /* the core's message stands */
    }
    *out = s;
    return LOOM_OK;
}

static const loom_attr_def holder_attrs[] = {
    { .name = "value", .type = LOOM_ATTR_FLOAT, .dflt = LOOM_DEFAULT_FLOAT(1.5), .doc = "each weight" },
    { .name = "bad", .type = LOOM_ATTR_BOOL, .dflt = LOOM_DEFAULT_BOOL(0), .doc = "ask for a class that is not there" },
};
static const loom_object_class holder_class = {
    .struct_size = sizeof(loom_object_class), .name = "upper.holder", .doc = "owns a lower.weights object",
    .n_attrs = 2, .attrs = holder_attrs, .create = holder_create, .destroy = holder_destroy,
};
static const loom_op_schema holder_sum_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "upper.holder_sum", .version = 1,
    .doc = "lower.weights_sum of the child, and [holders destroyed] after it",
    .n_outputs = 1, .outputs = out_y, .object_class = "upper.holder",
};
static const loom_op *weights_sum_op;

static loom_status run_holder_sum(loom_call *call)
{
    const holder_state *s = call->object;
    loom_tensor *mid = NULL, *y;
    loom_op_call c = { .struct_size = sizeof c, .op = weights_sum_op, .n_outputs = 1, .outputs = &mid,
                       .object = s->child };
    loom_status st = host->op_call(call->ctx, &c);
    if (st != LOOM_OK)
        return st;
    const int64_t three = 3;
    if ((st = host->alloc_output(call, 0, LOOM_DTYPE_F32, 1, &three, &y)) == LOOM_OK) {
        ((float *)loom_data(y))[0] = ((const float *)loom_data(mid))[0];
        ((float *)loom_data(y))[1] = ((const float *)loom_data(mid))[1];
        ((float *)loom_data(y))[2] = (float)holders_destroyed;
    }
    host->tensor_free(mid);
    return st;
}

#define K(SCHEMA, RUN, ...) \
    { .struct_size = sizeof(loom_kernel_desc), .schema = &SCHEMA, .backend = "cpu", \
      .device_type = LOOM_DEVICE_CPU, .impl = "cpu:" #RUN, __VA_ARGS__ }
static const loom_kernel_desc kernels[] = {
    K(twice_schema, run_twice, .run = run_twice),
    K(plus1_schema, run_plus, .run = run_plus, .user = &one),
    K(plus2_schema, run_plus, .run = run_plus, .user = &two),
    K(forward_schema, run_forward, .run = run_forward),
    K(states_schema, run_states, .run = run_states),
    K(holder_sum_schema, run_holder_sum, .run = run_holder_sum),
};

static loom_status init(const loom_host_api *h, loom_registrar *reg)
{
    loom_status st;
    host = h;
    if (!LOOM_HAS_MEMBER(h, loom_host_api, load_global))
        return h->fail(LOOM_EABI, "upper needs ABI 1.1");
    if ((scale_op = h->op_find("lower.scale")) == NULL)
        return LOOM_ENOENT;
    if ((lower_adder = h->get_extension("lower.adder", 1)) == NULL)
        return h->fail(LOOM_ENOENT, "interface lower.adder v1 is not offered");
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if ((st = h->register_kernel(reg, &kernels[i])) != LOOM_OK)
            return st;
    if ((weights_sum_op = h->op_find("lower.weights_sum")) == NULL)
        return LOOM_ENOENT;
    if ((st = h->register_object_class(reg, &model_class)) != LOOM_OK)
        return st;
    return h->register_object_class(reg, &holder_class);
}

static const char *const upper_depends[] = { "lower", NULL };
LOOM_PLUGIN_DEFINE_DEPS("upper", "1.0", "the upper pack of the composition tests", init, NULL, upper_depends)
#endif
