/* SPDX-License-Identifier: BSD-3-Clause */
/*
** schemapack.c - one pack per invalid schema field, built with -DCASE_<NAME>
** (see meson.build here; test_registry.c holds the message each must give).
**
** Every variant first registers a valid op, schema.good, then exactly one
** registration with one bad field: the core must refuse the whole pack,
** naming the op (or class) and the field, and keep nothing of it. Variants
** marked IGNORE in meson.build ignore the status and return LOOM_OK from
** init: the refusal must not depend on the pack propagating it.
*/
#include <stdint.h>
#include <string.h>

#include "loom/plugin.h"

static const loom_host_api *host;

static loom_status run_copy(loom_call *call)
{
    loom_tensor *y;
    const loom_tensor *x = call->inputs[0];
    return host->alloc_output(call, 0, loom_tensor_dtype_of(x), x->ndim, x->shape, &y);
}

static const loom_arg_def one_in[] = { { .name = "input", .ndim = -1 } };
static const loom_arg_def one_out[] = { { .name = "output", .ndim = -1 } };
static const loom_op_schema good = {
    .struct_size = sizeof(loom_op_schema), .name = "schema.good", .version = 1,
    .n_inputs = 1, .inputs = one_in, .n_outputs = 1, .outputs = one_out,
};

static const int64_t three_ints[] = { 1, 2, 3 };
static char long_name[200];

static loom_status create(const loom_object_args *args, void **state)
{
    (void)args;
    *state = NULL;
    return LOOM_OK;
}
static void destroy(void *state) { (void)state; }

static loom_status bad_init(const loom_host_api *h, loom_registrar *reg)
{
    static loom_arg_def in[2] = { { .name = "input", .ndim = -1 }, { .name = "other", .ndim = -1 } };
    static loom_arg_def out[2] = { { .name = "output", .ndim = -1 }, { .name = "extra", .ndim = -1 } };
    static loom_attr_def attrs[65];
    static loom_op_schema s;
    static loom_object_class cls;
    loom_kernel_desc k = {
        .struct_size = sizeof k, .schema = &s, .backend = "cpu", .device_type = LOOM_DEVICE_CPU,
        .impl = "cpu:bad", .run = run_copy,
    };
    loom_status st;
    int use_class = 0;

    host = h;
    k.schema = &good;
    if ((st = h->register_kernel(reg, &k)) != LOOM_OK)
        return st;
    k.schema = &s;
    memset(long_name, 'a', sizeof long_name - 1);
    memcpy(long_name, "bad.", 4);
    s = (loom_op_schema){
        .struct_size = sizeof s, .name = "bad.op", .version = 1,
        .n_inputs = 2, .inputs = in, .n_outputs = 1, .outputs = out, .n_attrs = 1, .attrs = attrs,
    };
    for (int i = 0; i < 65; i++)
        attrs[i] = (loom_attr_def){ .name = "scale", .type = LOOM_ATTR_FLOAT, .dflt = LOOM_DEFAULT_FLOAT(1.0) };
    cls = (loom_object_class){
        .struct_size = sizeof cls, .name = "bad.cls", .n_attrs = 1, .attrs = attrs,
        .create = create, .destroy = destroy,
    };

#if defined(CASE_OP_NAME_NODOT)
    s.name = "nodot";
#elif defined(CASE_OP_NAME_SPACE)
    s.name = "bad. op";
#elif defined(CASE_OP_NAME_EMPTY_PART)
    s.name = "bad..op";
#elif defined(CASE_OP_NAME_CONTROL)
    s.name = "bad.op\x01";
#elif defined(CASE_OP_NAME_GLOB)
    s.name = "bad.op*";
#elif defined(CASE_OP_NAME_LONG)
    s.name = long_name;
#elif defined(CASE_OP_NAME_NULL)
    s.name = NULL;
#elif defined(CASE_STRUCT_SIZE)
    s.struct_size = 16;
#elif defined(CASE_VERSION_0)
    s.version = 0;
#elif defined(CASE_INPUTS_NULL)
    s.inputs = NULL;
#elif defined(CASE_OUTPUTS_NULL)
    s.outputs = NULL;
#elif defined(CASE_ATTRS_NULL)
    s.attrs = NULL;
#elif defined(CASE_TOO_MANY_INPUTS)
    s.n_inputs = 33;
#elif defined(CASE_TOO_MANY_ATTRS)
    s.n_attrs = 65;
#elif defined(CASE_INPUT_NAME_NULL)
    in[1].name = NULL;
#elif defined(CASE_INPUT_NAME_EMPTY)
    in[1].name = "";
#elif defined(CASE_INPUT_NAME_EQUALS)
    in[1].name = "a=b";
#elif defined(CASE_OUTPUT_NAME_SPACE)
    out[0].name = "my output";
#elif defined(CASE_INPUT_DUP)
    in[1].name = "input";
#elif defined(CASE_OUTPUT_DUP)
    s.n_outputs = 2;
    out[1].name = "output";
#elif defined(CASE_ATTR_DUP)
    s.n_attrs = 2;
#elif defined(CASE_INPUT_NDIM_BIG)
    in[0].ndim = LOOM_MAX_NDIM + 1;
#elif defined(CASE_INPUT_NDIM_NEG)
    in[0].ndim = -2;
#elif defined(CASE_INPUT_DTYPES)
    in[0].dtypes = UINT64_C(1) << 60;
#elif defined(CASE_OUTPUT_DTYPES_INVALID)
    out[0].dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_INVALID);
#elif defined(CASE_INPUT_FLAGS)
    in[0].flags = 0x10;
#elif defined(CASE_ATTR_NAME_NULL)
    attrs[0].name = NULL;
#elif defined(CASE_ATTR_NAME_SPACE)
    attrs[0].name = "my scale";
#elif defined(CASE_ATTR_TYPE)
    attrs[0].type = 99;
#elif defined(CASE_ATTR_FLAGS)
    attrs[0].flags = 0x100;
#elif defined(CASE_ATTR_CONSTRAINT_ON_STRING)
    attrs[0] = (loom_attr_def){ .name = "mode", .type = LOOM_ATTR_STRING, .flags = LOOM_ATTR_FINITE,
                                .dflt = LOOM_DEFAULT_STRING("x") };
#elif defined(CASE_DEFAULT_IS_SET)
    attrs[0].dflt.is_set = 2;
#elif defined(CASE_DEFAULT_REQUIRED)
    attrs[0].flags = LOOM_ATTR_REQUIRED;
#elif defined(CASE_DEFAULT_TYPE)
    attrs[0].type = LOOM_ATTR_INT;
#elif defined(CASE_DEFAULT_INTS_HUGE_NULL)
    /* The attack: a huge count and no data (hashed, it read NULL). */
    attrs[0] = (loom_attr_def){ .name = "sizes", .type = LOOM_ATTR_INTS,
                                .dflt = { .type = LOOM_ATTR_INTS, .is_set = 1, .count = INT64_C(1) << 40 } };
#elif defined(CASE_DEFAULT_INTS_NULL)
    attrs[0] = (loom_attr_def){ .name = "sizes", .type = LOOM_ATTR_INTS,
                                .dflt = { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 3 } };
#elif defined(CASE_DEFAULT_FLOATS_NEGATIVE)
    attrs[0] = (loom_attr_def){ .name = "weights", .type = LOOM_ATTR_FLOATS,
                                .dflt = { .type = LOOM_ATTR_FLOATS, .is_set = 1, .count = -1 } };
#elif defined(CASE_DEFAULT_STRING_NULL)
    attrs[0] = (loom_attr_def){ .name = "mode", .type = LOOM_ATTR_STRING,
                                .dflt = { .type = LOOM_ATTR_STRING, .is_set = 1, .count = 3 } };
#elif defined(CASE_DEFAULT_STRING_COUNT)
    attrs[0] = (loom_attr_def){ .name = "mode", .type = LOOM_ATTR_STRING,
                                .dflt = { .type = LOOM_ATTR_STRING, .is_set = 1, .count = 5, .u.s = "abc" } };
#elif defined(CASE_DEFAULT_BOOL)
    attrs[0] = (loom_attr_def){ .name = "flag", .type = LOOM_ATTR_BOOL, .dflt = LOOM_DEFAULT_BOOL(2) };
#elif defined(CASE_DEFAULT_SCALAR_COUNT)
    attrs[0].dflt.count = 7;
#elif defined(CASE_DEFAULT_TENSOR)
    attrs[0] = (loom_attr_def){ .name = "table", .type = LOOM_ATTR_TENSOR,
                                .dflt = { .type = LOOM_ATTR_TENSOR, .is_set = 1 } };
#elif defined(CASE_DEFAULT_CONSTRAINT)
    attrs[0].flags = LOOM_ATTR_POSITIVE;
    attrs[0].dflt.u.f = -1.0;
#elif defined(CASE_DEFAULT_INTS_CONSTRAINT)
    attrs[0] = (loom_attr_def){ .name = "sizes", .type = LOOM_ATTR_INTS, .flags = LOOM_ATTR_NONNEG,
                                .dflt = { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 3, .u.ints = three_ints } };
    static const int64_t negative[] = { 1, -2, 3 };
    attrs[0].dflt.u.ints = negative;
#elif defined(CASE_JAGGED_NO_OFFSETS) || defined(CASE_OFFSETS_ALONE) || defined(CASE_OFFSETS_DTYPE) \
    || defined(CASE_SAME_DTYPE_FORWARD) || defined(CASE_OUTPUT_SAME_DTYPE) || defined(CASE_CHOICES_NULL) \
    || defined(CASE_CHOICES_NOT_STRING) || defined(CASE_CHOICES_DEFAULT) || defined(CASE_CHOICES_BAD_INDEX) \
    || defined(CASE_CHOICES_EMPTY) || defined(CASE_CLASS_CHOICES_DEFAULT)
    /* ABI 1.1 members */
    static const char *const sum_mean[] = { "sum", "mean", NULL };
    static const char *const none[] = { NULL };
    static loom_attr_choices choices[1];
    loom_attr_def mode = { .name = "mode", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_STRING("sum") };
    choices[0] = (loom_attr_choices){ .attr = 0, .values = sum_mean };
    s.n_choices = 1;
    s.choices = choices;
#  if defined(CASE_JAGGED_NO_OFFSETS)
    s.n_choices = 0;
    in[0].flags = LOOM_ARG_JAGGED;
#  elif defined(CASE_OFFSETS_ALONE)
    s.n_choices = 0;
    in[1].flags = LOOM_ARG_OFFSETS;
#  elif defined(CASE_OFFSETS_DTYPE)
    s.n_choices = 0;
    in[0].flags = LOOM_ARG_JAGGED;
    in[1] = (loom_arg_def){ .name = "input_offsets", .flags = LOOM_ARG_OFFSETS, .ndim = 1,
                            .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32) };
#  elif defined(CASE_SAME_DTYPE_FORWARD)
    s.n_choices = 0;
    in[0].flags = LOOM_ARG_SAME_DTYPE_AS(1);
#  elif defined(CASE_OUTPUT_SAME_DTYPE)
    s.n_choices = 0;
    out[0].flags = LOOM_ARG_SAME_DTYPE_AS(5);
#  elif defined(CASE_CHOICES_NULL)
    s.choices = NULL;
#  elif defined(CASE_CHOICES_NOT_STRING)
    /* attrs[0] is the float 'scale' */
#  elif defined(CASE_CHOICES_DEFAULT)
    attrs[0] = mode;
    attrs[0].dflt.u.s = "max";
#  elif defined(CASE_CHOICES_BAD_INDEX)
    attrs[0] = mode;
    choices[0].attr = 5;
#  elif defined(CASE_CHOICES_EMPTY)
    attrs[0] = mode;
    choices[0].values = none;
#  elif defined(CASE_CLASS_CHOICES_DEFAULT)
    use_class = 1;
    attrs[0] = mode;
    attrs[0].dflt.u.s = "max";
    cls.n_choices = 1;
    cls.choices = choices;
#  endif
    (void)none;
    (void)mode;
#elif defined(CASE_OBJECT_CLASS_FIELD)
    s.object_class = "noclassdot";
#elif defined(CASE_KERNEL_BACKEND)
    k.backend = "cpu,fast";
#elif defined(CASE_KERNEL_IMPL)
    k.impl = "cpu bad";
#elif defined(CASE_KERNEL_FLAGS)
    k.impl = "cpu:bad";
    k.flags = 0x80u;       /* ABI 1.2: a bit no core knows */
#elif defined(CASE_KERNEL_DTYPES)
    k.dtypes = UINT64_C(1) << 60;
#elif defined(CASE_CLASS_NAME)
    use_class = 1;
    cls.name = "counter";
#elif defined(CASE_CLASS_ATTRS_NULL)
    use_class = 1;
    cls.attrs = NULL;
#elif defined(CASE_CLASS_ATTR_DUP)
    use_class = 1;
    cls.n_attrs = 2;
#elif defined(CASE_CLASS_DEFAULT_HUGE_NULL)
    use_class = 1;
    attrs[0] = (loom_attr_def){ .name = "table", .type = LOOM_ATTR_FLOATS,
                                .dflt = { .type = LOOM_ATTR_FLOATS, .is_set = 1, .count = INT64_C(1) << 40 } };
#elif defined(CASE_CLASS_NO_CREATE)
    use_class = 1;
    cls.create = NULL;
#elif defined(CASE_CLASS_STRUCT_SIZE)
    use_class = 1;
    cls.struct_size = 8;
#else
#  error "no CASE_ given"
#endif
    (void)three_ints;
    st = use_class ? h->register_object_class(reg, &cls) : h->register_kernel(reg, &k);
#if defined(IGNORE)
    (void)st;
    return LOOM_OK;
#else
    return st;
#endif
}

LOOM_PLUGIN_DEFINE(PACK_NAME, "1.0", "one invalid schema field", bad_init, NULL)
