/* SPDX-License-Identifier: BSD-3-Clause */
/*
** familypack.c - purpose-made packs for the object family rule.
**
** An object's state reaches only kernels of the pack that made the object or
** of a pack of its family (P and P-<suffix>). One source, built three times:
**   FAMILY_BASE     pack "objfam": class objfam.box and a cpu kernel of
**                   objfam.shift
**   FAMILY_EXTRA    pack "objfam-extra" (same family): a "fast" kernel of
**                   objfam.shift
**   FAMILY_STRANGER pack "objfamx" (a longer name, no dash: another family):
**                   an "other" kernel of objfam.shift
** objfam.shift returns input + the box's offset; every kernel first checks
** the box's magic, so a kernel handed foreign state fails loudly instead of
** reading garbage. Each kernel's impl names its pack, so a test can tell
** which one ran.
*/
#include <stdint.h>

#include "loom/plugin.h"

#define BOX_MAGIC 0x6f626a66u   /* "objf" */

static const loom_host_api *host;

/* The state every pack of the family agrees on. */
typedef struct box { uint32_t magic; double offset; } box;

static const loom_arg_def shift_in[] = {
    { .name = "input", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1, .doc = "values" },
};
static const loom_arg_def shift_out[] = { { .name = "output", .ndim = -1 } };
static const loom_op_schema shift_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "objfam.shift", .version = 1,
    .doc = "output = input + the box's offset (f32)",
    .n_inputs = 1, .inputs = shift_in, .n_outputs = 1, .outputs = shift_out, .n_attrs = 0,
    .object_class = "objfam.box",
};

static loom_status run_shift(loom_call *call)
{
    const box *b = call->object;
    const loom_tensor *x = call->inputs[0];
    loom_tensor *y;
    loom_status st;

    if (b == NULL || b->magic != BOX_MAGIC)
        return host->fail(LOOM_EINVAL, "objfam.shift: the object state is not an objfam.box");
    if ((st = host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, &y)) != LOOM_OK)
        return st;
    const float *a = loom_data(x);
    float *c = loom_data(y);
    for (int64_t i = 0, n = loom_numel(x); i < n; i++)
        c[i] = a[i] + (float)b->offset;
    return LOOM_OK;
}

#if defined(FAMILY_BASE)
#  include <stdlib.h>

static const loom_attr_def box_attrs[] = {
    { .name = "offset", .type = LOOM_ATTR_FLOAT, .dflt = LOOM_DEFAULT_FLOAT(0.0), .doc = "added by shift" },
};

static loom_status box_create(const loom_object_args *args, void **state)
{
    box *b = malloc(sizeof *b);
    if (b == NULL)
        return host->fail(LOOM_ENOMEM, "objfam.box: out of memory");
    b->magic = BOX_MAGIC;
    b->offset = args->attrs[0].u.f;
    *state = b;
    return LOOM_OK;
}

static void box_destroy(void *state) { free(state); }

static const loom_object_class box_class = {
    .struct_size = sizeof(loom_object_class), .name = "objfam.box", .doc = "an offset",
    .n_attrs = 1, .attrs = box_attrs, .create = box_create, .destroy = box_destroy,
};
#  define PACK_NAME "objfam"
#  define BACKEND "cpu"
#elif defined(FAMILY_EXTRA)
#  define PACK_NAME "objfam-extra"
#  define BACKEND "fast"
#elif defined(FAMILY_STRANGER)
#  define PACK_NAME "objfamx"
#  define BACKEND "other"
#else
#  error "build with one of -DFAMILY_BASE, -DFAMILY_EXTRA, -DFAMILY_STRANGER"
#endif

static loom_status family_init(const loom_host_api *h, loom_registrar *reg)
{
    const loom_kernel_desc k = {
        .struct_size = sizeof k, .schema = &shift_schema, .backend = BACKEND, .device_type = LOOM_DEVICE_CPU,
        .impl = BACKEND ":" PACK_NAME, .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .run = run_shift,
    };
    loom_status st;

    host = h;
#if defined(FAMILY_BASE)
    if ((st = h->register_object_class(reg, &box_class)) != LOOM_OK)
        return st;
#endif
    if ((st = h->register_kernel(reg, &k)) != LOOM_OK)
        return st;
    return LOOM_OK;
}

LOOM_PLUGIN_DEFINE(PACK_NAME, "1.0", "object family rule test pack", family_init, NULL)
