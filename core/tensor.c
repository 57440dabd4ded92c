/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tensor.c - tensors made by loom: allocation, wrapping, copies, DLPack.
**
** Invariant: every loom_tensor the core hands out is the first member of a
** loom__tensor box whose shape/strides arrays it points into, so the core
** can tell its own tensors (loom__box) from a caller's plain DLTensor.
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A caller's tensor may be a bare loom_tensor (on its stack, say), so
** nothing past it is read until its shape pointer says that it is a box:
** a box's shape points into the box itself, at a fixed offset from t. */
loom__tensor *loom__box(const loom_tensor *t)
{
    if (t == NULL)
        return NULL;
    uintptr_t own_shape = (uintptr_t)t + offsetof(loom__tensor, shape);
    if ((uintptr_t)t->shape != own_shape)
        return NULL;
    loom__tensor *b = (loom__tensor *)(void *)t;   /* t is the first member */
    return b->magic == LOOM__TENSOR_MAGIC ? b : NULL;
}

static bool mul_overflows(size_t a, size_t b, size_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

/* Elements of shape[ndim], or -1 on a negative dim or overflow. A zero dim
** makes 0 whatever the other dims, as loom_numel says. */
static int64_t count_elements(int32_t ndim, const int64_t *shape)
{
    int64_t n = 1;
    bool empty = false;
    for (int32_t i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return -1;
        empty |= shape[i] == 0;
    }
    if (empty)
        return 0;
    for (int32_t i = 0; i < ndim; i++)
        if (__builtin_mul_overflow(n, shape[i], &n))
            return -1;
    return n;
}

static loom_status new_box(loom__tensor **out, loom_dtype dtype, int32_t ndim, const int64_t *shape,
                         loom_dl_device device)
{
    const loom__dtype_info *info = loom__dtype(dtype);
    loom__tensor *b;

    *out = NULL;
    if (info == NULL)
        return loom__fail(LOOM_EINVAL, "tensor: invalid dtype %d", (int)dtype);
    if (ndim < 0 || ndim > LOOM_MAX_NDIM)
        return loom__fail(LOOM_EINVAL, "tensor: ndim %d not in 0..%d", ndim, LOOM_MAX_NDIM);
    if (ndim > 0 && shape == NULL)
        return loom__fail(LOOM_EINVAL, "tensor: shape is NULL for ndim %d", ndim);
    if (count_elements(ndim, shape) < 0)
        return loom__fail(LOOM_EINVAL, "tensor: negative or overflowing shape");
    b = calloc(1, sizeof *b);
    if (b == NULL)
        return loom__fail(LOOM_ENOMEM, "tensor: out of memory");
    b->magic = LOOM__TENSOR_MAGIC;
    b->t.device = device;
    b->t.ndim = ndim;
    b->t.dtype = info->dl;
    b->t.shape = b->shape;
    b->t.strides = b->strides;
    /* Compact strides, with a zero dim counted as 1 as torch does. Only a
    ** tensor with no elements can have dims whose product overflows (say
    ** (0, 2^62, 4)); its strides are never used to address anything, so they
    ** saturate at INT64_MAX instead of overflowing. */
    int64_t stride = 1;
    for (int32_t i = ndim - 1; i >= 0; i--) {
        b->shape[i] = shape[i];
        b->strides[i] = stride;
        if (__builtin_mul_overflow(stride, shape[i] > 0 ? shape[i] : 1, &stride))
            stride = INT64_MAX;
    }
    *out = b;
    return LOOM_OK;
}

loom_status loom__tensor_alloc(loom_tensor **out, loom_dtype dtype, int32_t ndim, const int64_t *shape,
                             loom_dl_device device, bool zero)
{
    loom__tensor *b;
    size_t nbytes;
    loom_status st = new_box(&b, dtype, ndim, shape, device);

    *out = NULL;
    if (st != LOOM_OK)
        return st;
    if (mul_overflows((size_t)count_elements(ndim, shape), loom__dtype(dtype)->size, &nbytes)) {
        free(b);
        return loom__fail(LOOM_EINVAL, "tensor: size overflows");
    }
    b->t.data = loom__dev_alloc(device, nbytes ? nbytes : 1, 64);
    if (b->t.data == NULL) {
        free(b);
        return LOOM_ENOMEM;   /* message set by loom__dev_alloc */
    }
    b->owns_data = 1;
    if (zero && loom__is_host(device))
        memset(b->t.data, 0, nbytes);
    *out = &b->t;
    return LOOM_OK;
}

LOOM_API loom_status loom_tensor_new(loom_tensor **out, loom_dtype dtype, int32_t ndim,
                                   const int64_t *shape, const loom_dl_device *device)
{
    if (out == NULL)
        return loom__fail(LOOM_EINVAL, "loom_tensor_new: out is NULL");
    return loom__tensor_alloc(out, dtype, ndim, shape, device ? *device : loom__cpu(), true);
}

LOOM_API loom_status loom_tensor_wrap(loom_tensor **out, void *data, loom_dtype dtype, int32_t ndim,
                                    const int64_t *shape, const int64_t *strides,
                                    const loom_dl_device *device)
{
    loom__tensor *b;
    loom_status st;

    if (out == NULL)
        return loom__fail(LOOM_EINVAL, "loom_tensor_wrap: out is NULL");
    st = new_box(&b, dtype, ndim, shape, device ? *device : loom__cpu());
    *out = NULL;
    if (st != LOOM_OK)
        return st;
    if (data == NULL && count_elements(ndim, shape) > 0) {
        free(b);
        return loom__fail(LOOM_EINVAL, "loom_tensor_wrap: data is NULL");
    }
    if (strides != NULL)
        memcpy(b->strides, strides, (size_t)ndim * sizeof *strides);
    b->t.data = data;
    *out = &b->t;
    return LOOM_OK;
}

loom_status loom__tensor_adopt(loom_tensor **out, const loom_output_storage *s, loom_dl_device device)
{
    loom__tensor *b;
    loom_status st = new_box(&b, (loom_dtype)s->dtype, s->ndim, s->shape, device);

    *out = NULL;
    if (st != LOOM_OK) {
        s->release(s->user, s->data);
        return st;
    }
    if (s->strides != NULL)
        memcpy(b->strides, s->strides, (size_t)s->ndim * sizeof *s->strides);
    b->t.data = s->data;
    b->release = s->release;
    b->release_user = s->user;
    b->release_data = s->data;
    *out = &b->t;
    return LOOM_OK;
}

LOOM_API void loom_tensor_free(loom_tensor *t)
{
    loom__tensor *b = loom__box(t);

    if (b == NULL)
        return;   /* NULL, or not ours: never free what loom did not make */
    if (b->owns_data)
        loom__dev_free(t->device, t->data);
    if (b->managed != NULL && b->managed->deleter != NULL)
        b->managed->deleter(b->managed);
    if (b->legacy != NULL && b->legacy->deleter != NULL)
        b->legacy->deleter(b->legacy);
    if (b->release != NULL)
        b->release(b->release_user, b->release_data);
    b->magic = 0;
    free(b);
}

size_t loom__tensor_nbytes(const loom_tensor *t)
{
    const loom__dtype_info *info = loom__dtype(loom_tensor_dtype_of(t));
    int64_t n = count_elements(t->ndim, t->shape);
    size_t nbytes;

    if (info == NULL || n < 0 || mul_overflows((size_t)n, info->size, &nbytes))
        return 0;
    return nbytes;
}

LOOM_API size_t loom_tensor_nbytes(const loom_tensor *t)
{
    return t != NULL ? loom__tensor_nbytes(t) : 0;
}

loom_status loom__tensor_check(const loom_tensor *t, const char *what)
{
    int64_t n;

    if (t == NULL)
        return loom__fail(LOOM_EINVAL, "%s is NULL", what);
    if (loom_tensor_dtype_of(t) == LOOM_DTYPE_INVALID)
        return loom__fail(LOOM_EINVAL, "%s has an unsupported dtype (DLPack code %u, %u bits, %u lanes)",
                          what, t->dtype.code, t->dtype.bits, t->dtype.lanes);
    if (t->ndim < 0 || t->ndim > LOOM_MAX_NDIM)
        return loom__fail(LOOM_EINVAL, "%s has ndim %d, not in 0..%d", what, t->ndim, LOOM_MAX_NDIM);
    if (t->ndim > 0 && t->shape == NULL)
        return loom__fail(LOOM_EINVAL, "%s has a NULL shape", what);
    n = count_elements(t->ndim, t->shape);
    if (n < 0)
        return loom__fail(LOOM_EINVAL, "%s has a negative or overflowing shape", what);
    if (n > 0 && t->data == NULL)
        return loom__fail(LOOM_EINVAL, "%s has NULL data", what);
    return LOOM_OK;
}

char *loom__tensor_describe(const loom_tensor *t, char *buf, size_t size)
{
    size_t used;

    if (t == NULL) {
        snprintf(buf, size, "none");
        return buf;
    }
    used = (size_t)snprintf(buf, size, "%s[", loom_dtype_name(loom_tensor_dtype_of(t)));
    for (int32_t i = 0; i < t->ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, i ? ",%lld" : "%lld", (long long)t->shape[i]);
    if (used < size)
        snprintf(buf + used, size - used, "]%s", loom_is_contiguous(t) ? "" : "(strided)");
    return buf;
}

/* Gather a strided host tensor into compact dst, element size esize: row by
** row over the last dimension (one memcpy per row when it is unit-strided,
** a strided element loop otherwise), the outer index advanced like an
** odometer. */
void loom__tensor_gather(void *dst, const loom_tensor *t, size_t esize)
{
    int64_t idx[LOOM_MAX_NDIM] = { 0 };
    const int32_t nd = t->ndim;
    const int64_t n = loom_numel(t);
    const char *base = loom_data(t);
    char *out = dst;

    if (n == 0)
        return;
    if (nd == 0) {
        memcpy(out, base, esize);
        return;
    }
    const int64_t row = t->shape[nd - 1], step = t->strides[nd - 1] * (int64_t)esize;
    const size_t row_bytes = (size_t)row * esize;
    for (int64_t done = 0; done < n; done += row) {
        int64_t off = 0;
        for (int32_t d = 0; d < nd - 1; d++)
            off += idx[d] * t->strides[d];
        const char *src = base + off * (int64_t)esize;
        if (step == (int64_t)esize) {
            memcpy(out, src, row_bytes);
        } else {
            for (int64_t j = 0; j < row; j++)
                memcpy(out + (size_t)j * esize, src + j * step, esize);
        }
        out += row_bytes;
        for (int32_t d = nd - 2; d >= 0; d--) {
            if (++idx[d] < t->shape[d])
                break;
            idx[d] = 0;
        }
    }
}

LOOM_API loom_status loom_tensor_copy_to(loom_tensor **out, const loom_tensor *t, const loom_dl_device *device)
{
    loom_dl_device dst_dev = device ? *device : loom__cpu();
    loom_status st;
    size_t nbytes;

    if (out == NULL)
        return loom__fail(LOOM_EINVAL, "loom_tensor_copy_to: out is NULL");
    *out = NULL;
    if ((st = loom__tensor_check(t, "loom_tensor_copy_to: source")) != LOOM_OK)
        return st;
    st = loom__tensor_alloc(out, loom_tensor_dtype_of(t), t->ndim, t->shape, dst_dev, false);
    if (st != LOOM_OK)
        return st;
    nbytes = loom__tensor_nbytes(t);
    if (nbytes == 0)
        return LOOM_OK;
    if (loom_is_contiguous(t)) {
        st = loom__dev_copy((*out)->data, dst_dev, loom_data(t), t->device, nbytes);
    } else if (loom__is_host(t->device) && loom__is_host(dst_dev)) {
        loom__tensor_gather((*out)->data, t, loom__dtype(loom_tensor_dtype_of(t))->size);
    } else {
        st = loom__fail(LOOM_ENOTSUP, "loom_tensor_copy_to: strided tensors on device type %d "
                        "cannot be copied; make them compact on that device first", t->device.device_type);
    }
    if (st != LOOM_OK) {
        loom_tensor_free(*out);
        *out = NULL;
    }
    return st;
}

LOOM_API loom_status loom_tensor_sync(const loom_tensor *t)
{
    if (t == NULL)
        return loom__fail(LOOM_EINVAL, "loom_tensor_sync: tensor is NULL");
    if (loom__is_host(t->device) && t->device.device_type == LOOM_DEVICE_CPU)
        return LOOM_OK;
    return loom__dev_sync(t->device, NULL);
}

/* A box viewing a producer's DLTensor (either DLPack form). */
static loom_status import_dl(loom__tensor **out, const loom_tensor *dl, const char *what)
{
    loom__tensor *b;
    loom_status st;
    if ((st = loom__tensor_check(dl, what)) != LOOM_OK)
        return st;
    if ((st = new_box(&b, loom_tensor_dtype_of(dl), dl->ndim, dl->shape, dl->device)) != LOOM_OK)
        return st;
    if (dl->strides != NULL)
        memcpy(b->strides, dl->strides, (size_t)dl->ndim * sizeof(int64_t));
    b->t.data = dl->data;
    b->t.byte_offset = dl->byte_offset;
    *out = b;
    return LOOM_OK;
}

LOOM_API loom_status loom_tensor_from_dlpack(loom_tensor **out, loom_dlpack_managed *m)
{
    loom__tensor *b;
    loom_status st;

    if (out == NULL || m == NULL)
        return loom__fail(LOOM_EINVAL, "loom_tensor_from_dlpack: NULL argument");
    *out = NULL;
    if (m->version.major != LOOM_DLPACK_MAJOR)
        return loom__fail(LOOM_EABI, "loom_tensor_from_dlpack: DLPack major %u, loom reads %u (an unversioned "
                          "0.x tensor goes through loom_tensor_from_dlpack_legacy)", m->version.major,
                          LOOM_DLPACK_MAJOR);
    if ((st = import_dl(&b, &m->dl_tensor, "DLPack tensor")) != LOOM_OK)
        return st;
    b->managed = m;
    b->read_only = (m->flags & LOOM_DLPACK_FLAG_READ_ONLY) != 0;
    *out = &b->t;
    return LOOM_OK;
}

LOOM_API loom_status loom_tensor_from_dlpack_legacy(loom_tensor **out, loom_dlpack_legacy *m)
{
    loom__tensor *b;
    loom_status st;

    if (out == NULL || m == NULL)
        return loom__fail(LOOM_EINVAL, "loom_tensor_from_dlpack_legacy: NULL argument");
    *out = NULL;
    if ((st = import_dl(&b, &m->dl_tensor, "DLPack 0.x tensor")) != LOOM_OK)
        return st;
    b->legacy = m;
    *out = &b->t;
    return LOOM_OK;
}

/* The managed tensor's manager_ctx is the loom box it came from. */
static void dlpack_deleter(loom_dlpack_managed *self)
{
    loom_tensor_free(self->manager_ctx);
    free(self);
}

LOOM_API loom_status loom_tensor_to_dlpack(loom_dlpack_managed **out, loom_tensor *t)
{
    loom__tensor *b = loom__box(t);
    loom_dlpack_managed *m;

    if (out == NULL)
        return loom__fail(LOOM_EINVAL, "loom_tensor_to_dlpack: out is NULL");
    *out = NULL;
    if (b == NULL)
        return loom__fail(LOOM_EINVAL, "loom_tensor_to_dlpack: tensor was not made by loom");
    m = calloc(1, sizeof *m);
    if (m == NULL)
        return loom__fail(LOOM_ENOMEM, "loom_tensor_to_dlpack: out of memory");
    m->version = (loom_dlpack_version){ LOOM_DLPACK_MAJOR, LOOM_DLPACK_MINOR };
    m->manager_ctx = t;
    m->deleter = dlpack_deleter;
    m->flags = b->read_only ? LOOM_DLPACK_FLAG_READ_ONLY : 0;
    m->dl_tensor = *t;
    *out = m;
    return LOOM_OK;
}
