/* SPDX-License-Identifier: BSD-3-Clause */
/*
** mmt_object.c - the rl.memmap_tensor object class: tensordict's
** MemoryMappedTensor.from_tensor, .empty and .from_filename (mmt_internal.h)
** over the one mapping implementation (memmap_tensor.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmt_internal.h"

PK_ATTR_TABLE(rl_mmt_class, RL_MMT_CLASS_ATTRS);

static const char *const from_values[] = { "from_tensor", "empty", "from_filename", NULL };
static const char *const mode_values[] = { "auto", "shared", "private", "read_only", NULL };
static const loom_attr_choices class_choices[] = {
    { .attr = PK_ATTR(rl_mmt_class, from), .values = from_values },
    { .attr = PK_ATTR(rl_mmt_class, mode), .values = mode_values },
};

loom_dtype rl_mmt_dtype_parse(const char *name)
{
    if (name == NULL || name[0] == '\0')
        return LOOM_DTYPE_INVALID;
    if (strncmp(name, "torch.", 6) == 0)
        return rl_dtype_from_torch_name(name);
    char full[64];
    snprintf(full, sizeof full, "torch.%s", name);
    return rl_dtype_from_torch_name(full);
}

static void mmt_destroy(void *state)
{
    rl_mmt_object *o = state;
    if (o == NULL)
        return;
    rl_buf_release(o->leaf.buf);
    free(o->filename);
    free(o);
}

/* dtype and shape from the attributes (empty, from_filename). */
static loom_status shape_attrs(const loom_attr_value *a, const char *from, rl_leaf *leaf)
{
    const char *dt = a[PK_ATTR(rl_mmt_class, dtype)].u.s;
    leaf->dtype = rl_mmt_dtype_parse(dt);
    if (leaf->dtype == LOOM_DTYPE_INVALID)
        return pk_host->fail(LOOM_EINVAL, "dtype: '%s' is not a dtype MemoryMappedTensor holds (from=%s needs "
                             "one: torch.float32, torch.int64, torch.bool, ...)", dt, from);
    const loom_attr_value *sh = &a[PK_ATTR(rl_mmt_class, shape)];
    if (sh->is_set && sh->count > LOOM_MAX_NDIM)
        return pk_host->fail(LOOM_EINVAL, "shape: %lld dims; at most %d", (long long)sh->count, LOOM_MAX_NDIM);
    leaf->ndim = sh->is_set ? (int32_t)sh->count : 0;
    size_t nbytes = pk_host->dtype_size(leaf->dtype);
    for (int32_t d = 0; d < leaf->ndim; d++) {
        leaf->shape[d] = sh->u.ints[d];
        if (__builtin_mul_overflow(nbytes, (size_t)leaf->shape[d], &nbytes) || nbytes > ((size_t)1 << 48))
            return pk_host->fail(LOOM_EINVAL, "shape: the tensor's size in bytes overflows");
    }
    return LOOM_OK;
}

/* The tensor named input of the object's tensors (loom_object_options.tensors). */
static loom_status input_tensor(const loom_object_args *args, rl_leaf *leaf, const void **data)
{
    const loom_tensor *t = NULL;
    if (args->weights == NULL || pk_host->safetensors_get(args->weights, "input", &t) != LOOM_OK || t == NULL)
        return pk_host->fail(LOOM_EINVAL, "from=from_tensor needs the tensor named input "
                             "(loom_object_options.tensors)");
    if (t->device.device_type != LOOM_DEVICE_CPU)
        return pk_host->fail(LOOM_EINVAL, "input: a MemoryMappedTensor is made from a CPU tensor");
    leaf->dtype = loom_dtype_from_dl(t->dtype);
    if (rl_dtype_torch_name(leaf->dtype) == NULL)
        return pk_host->fail(LOOM_ENOTSUP, "input: %s tensors are not held (MemoryMappedTensor has no such dtype)",
                             pk_host->dtype_name(leaf->dtype));
    if (t->strides != NULL) {
        int64_t want = 1;
        for (int32_t d = t->ndim - 1; d >= 0; d--) {
            if (t->shape[d] != 1 && t->strides[d] != want)
                return pk_host->fail(LOOM_EINVAL, "input: not compact (C order); copy it first");
            want *= t->shape[d];
        }
    }
    leaf->ndim = t->ndim;
    memcpy(leaf->shape, t->shape, (size_t)t->ndim * sizeof *t->shape);
    *data = (const uint8_t *)t->data + t->byte_offset;
    return LOOM_OK;
}

static loom_status mmt_create(const loom_object_args *args, void **state_out)
{
    const loom_attr_value *a = args->attrs;
    const char *from = a[PK_ATTR(rl_mmt_class, from)].u.s;
    const char *filename = a[PK_ATTR(rl_mmt_class, filename)].u.s;
    const char *mode_name = a[PK_ATTR(rl_mmt_class, mode)].u.s;
    if (filename[0] == '\0')
        return pk_host->fail(LOOM_EINVAL, "filename: empty");
    rl_mmt_object *o = calloc(1, sizeof *o);
    if (o == NULL || (o->filename = strdup(filename)) == NULL) {
        free(o);
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    o->struct_size = sizeof *o;
    o->magic = RL_MMT_OBJECT_MAGIC;
    o->mode = RL_MAP_SHARED;
    const void *data = NULL;
    const int open_existing = strcmp(from, "from_filename") == 0;
    loom_status st = strcmp(from, "from_tensor") == 0 ? input_tensor(args, &o->leaf, &data)
                                                      : shape_attrs(a, from, &o->leaf);
    if (st == LOOM_OK && !open_existing && strcmp(mode_name, "auto") != 0 && strcmp(mode_name, "shared") != 0)
        st = pk_host->fail(LOOM_EINVAL, "mode=%s: from=%s makes the file and maps it shared", mode_name, from);
    char msg[512];
    if (st == LOOM_OK && open_existing) {
        /* auto: tensordict maps shared when the file is writable, else private */
        o->mode = strcmp(mode_name, "auto") == 0 ? (access(filename, W_OK) == 0 ? RL_MAP_SHARED : RL_MAP_PRIVATE)
                                                 : (rl_map_mode)rl_map_mode_parse(mode_name);
        st = rl_mmt_open(filename, rl_leaf_nbytes(&o->leaf), o->mode, "the file", "the dtype and shape given",
                         &o->leaf.buf, msg, sizeof msg);
        if (st != LOOM_OK)
            st = pk_host->fail(st, "%s", msg);
    } else if (st == LOOM_OK) {
        st = rl_mmt_create(filename, rl_leaf_nbytes(&o->leaf), a[PK_ATTR(rl_mmt_class, existsok)].u.b, data,
                           &o->leaf.buf, msg, sizeof msg);
        if (st != LOOM_OK)
            st = pk_host->fail(st, "%s", msg);
    }
    if (st != LOOM_OK) {
        mmt_destroy(o);
        return st;
    }
    *state_out = o;
    return LOOM_OK;
}

const loom_object_class rl_mmt_class = {
    .struct_size = sizeof(loom_object_class),
    .name = RL_MMT_CLASS,
    .doc = "tensordict's MemoryMappedTensor: a tensor whose bytes are a file (raw, C order), made from a "
           "tensor, empty, or from an existing file; writes through a shared mapping reach every other one; "
           "methods rl.mmt_*",
    PK_ATTRS(rl_mmt_class_attrs),
    .create = mmt_create,
    .destroy = mmt_destroy,
    PK_CHOICES(class_choices),
};
