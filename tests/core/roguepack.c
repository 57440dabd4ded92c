/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roguepack.c - a pack whose one op breaks the kernel contract in a chosen
** way, for the tests of what the core enforces around a kernel's run
** (test_kernel_contract.c). rogue.misbehave takes attribute `mode`:
**   ok            one f32[4] output, well behaved
**   ndim          allocates f32[4], then sets the output's ndim to 50 (beyond LOOM_MAX_NDIM)
**   shape         allocates f32[4], then sets shape[0] to 1 << 40
**   data          allocates f32[4], then points data elsewhere
**   own           stores a tensor of its own in call->outputs[0]
**   twice         alloc_output f32[4], then f32[8] for the same output
**   twice_same    alloc_output f32[4] twice: the same tensor both times
**   scratch_wrap  scratch(SIZE_MAX - 10): must be NULL, never a small block
**   scratch_grow  scratch of 1 MiB (grows the arena for the next call), then
**                 scratch(SIZE_MAX - 10) again
**   big           one f32[n] output, n from attribute `n`
** and attribute `scale` (float, finite and > 0) for the constraint tests.
** Object class rogue.box (a counter) with method rogue.peek, for the handle
** tests.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loom/plugin.h"

static const loom_host_api *host;

static const loom_arg_def out_y[] = { { .name = "output", .ndim = -1 } };
static const loom_attr_def attrs[] = {
    { .name = "mode", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_STRING("ok"), .doc = "how to misbehave" },
    { .name = "n", .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_NONNEG, .dflt = LOOM_DEFAULT_INT(4),
      .doc = "elements of the big output" },
    { .name = "scale", .type = LOOM_ATTR_FLOAT, .flags = LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE,
      .dflt = LOOM_DEFAULT_FLOAT(1.0), .doc = "finite and > 0" },
};
enum { A_MODE, A_N, A_SCALE };

static const loom_op_schema schema = {
    .struct_size = sizeof(loom_op_schema), .name = "rogue.misbehave", .version = 1,
    .doc = "breaks the kernel contract as `mode` says",
    .n_inputs = 0, .inputs = NULL, .n_outputs = 1, .outputs = out_y,
    .n_attrs = sizeof attrs / sizeof attrs[0], .attrs = attrs,
};

static float elsewhere[4];
static int64_t own_shape[1] = { 4 };
static loom_tensor own = { .data = elsewhere, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 1,
                           .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = own_shape };

static loom_status run(loom_call *call)
{
    const char *mode = call->attrs[A_MODE].u.s;
    const int64_t four[1] = { 4 }, eight[1] = { 8 }, big[1] = { call->attrs[A_N].u.i };
    loom_tensor *y = NULL, *again = NULL;
    loom_status st;

    if (strcmp(mode, "own") == 0) {
        call->outputs[0] = &own;
        return LOOM_OK;
    }
    if (strcmp(mode, "scratch_wrap") == 0 || strcmp(mode, "scratch_grow") == 0) {
        if (strcmp(mode, "scratch_grow") == 0 && host->scratch(call->ctx, (size_t)1 << 20) == NULL)
            return LOOM_ENOMEM;
        void *p = host->scratch(call->ctx, SIZE_MAX - 10);
        if (p != NULL)
            return host->fail(LOOM_EINTERNAL, "scratch(SIZE_MAX - 10) returned a block");
        return LOOM_ENOMEM;   /* the core's message stands */
    }
    st = host->alloc_output(call, 0, LOOM_DTYPE_F32, 1, strcmp(mode, "big") == 0 ? big : four, &y);
    if (st != LOOM_OK)
        return st;
    if (strcmp(mode, "twice") == 0)
        return host->alloc_output(call, 0, LOOM_DTYPE_F32, 1, eight, &again);
    if (strcmp(mode, "twice_same") == 0) {
        if ((st = host->alloc_output(call, 0, LOOM_DTYPE_F32, 1, four, &again)) != LOOM_OK)
            return st;
        if (again != y)
            return host->fail(LOOM_EINTERNAL, "second alloc_output gave another tensor");
    }
    if (strcmp(mode, "ndim") == 0)
        y->ndim = 50;
    else if (strcmp(mode, "shape") == 0)
        y->shape[0] = (int64_t)1 << 40;
    else if (strcmp(mode, "data") == 0)
        y->data = elsewhere;
    else if (strcmp(mode, "big") != 0)
        memset(loom_data(y), 0, 4 * sizeof(float));
    return LOOM_OK;
}

static const loom_kernel_desc kernel = {
    .struct_size = sizeof(loom_kernel_desc), .schema = &schema, .backend = "cpu",
    .device_type = LOOM_DEVICE_CPU, .impl = "cpu:rogue", .run = run,
};

/* rogue.box: state is one int64 counter; rogue.peek returns and bumps it. */
static loom_status box_create(const loom_object_args *args, void **state)
{
    (void)args;
    *state = calloc(1, sizeof(int64_t));
    return *state != NULL ? LOOM_OK : host->fail(LOOM_ENOMEM, "out of memory");
}

static void box_destroy(void *state) { free(state); }

static const loom_object_class box_class = {
    .struct_size = sizeof(loom_object_class), .name = "rogue.box", .doc = "a counter",
    .create = box_create, .destroy = box_destroy,
};

static const loom_arg_def out_count[] = { { .name = "count", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1 } };
static const loom_op_schema peek_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "rogue.peek", .version = 1, .doc = "the box's counter, bumped",
    .n_outputs = 1, .outputs = out_count, .object_class = "rogue.box",
};

static loom_status run_peek(loom_call *call)
{
    const int64_t one[1] = { 1 };
    loom_tensor *y;
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, one, &y);
    if (st != LOOM_OK)
        return st;
    *(int64_t *)loom_data(y) = (*(int64_t *)call->object)++;
    return LOOM_OK;
}

static const loom_kernel_desc peek_kernel = {
    .struct_size = sizeof(loom_kernel_desc), .schema = &peek_schema, .backend = "cpu",
    .device_type = LOOM_DEVICE_CPU, .impl = "cpu:peek", .run = run_peek,
};

static loom_status init(const loom_host_api *h, loom_registrar *reg)
{
    loom_status st;
    host = h;
    if ((st = h->register_kernel(reg, &kernel)) != LOOM_OK || (st = h->register_object_class(reg, &box_class)) != LOOM_OK)
        return st;
    return h->register_kernel(reg, &peek_kernel);
}

LOOM_PLUGIN_DEFINE("rogue", "1.0", "breaks the kernel contract on purpose", init, NULL)
