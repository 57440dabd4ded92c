/* SPDX-License-Identifier: BSD-3-Clause */
/*
** demo_util.c - the tensor, timing and error helpers of the demos (demo.h),
** written with the public API only.
*/
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "demo.h"

int demo_fail(void)
{
    const char *msg = loom_last_error();
    fprintf(stderr, "demo: %s\n", msg != NULL && msg[0] != '\0' ? msg : "unknown error");
    return DEMO_FAIL;
}

int demo_has_backend(const char *op_name, const char *backend)
{
    const loom_op *op = loom_op_find(op_name);
    int64_t n = op != NULL ? loom_op_kernel_count(op) : 0;
    for (int64_t i = 0; i < n; i++) {
        loom_kernel_info k = LOOM_KERNEL_INFO_INIT;
        if (loom_op_kernel_at(op, i, &k) == LOOM_OK && k.backend != NULL && strcmp(k.backend, backend) == 0)
            return 1;
    }
    return 0;
}

loom_tensor *demo_tensor(loom_dtype dtype, int32_t ndim, const int64_t *shape)
{
    loom_tensor *t = NULL;
    if (loom_tensor_new(&t, dtype, ndim, shape, NULL) != LOOM_OK) {
        demo_fail();
        return NULL;
    }
    return t;
}

loom_tensor *demo_f32(int32_t ndim, const int64_t *shape, const float *values)
{
    loom_tensor *t = demo_tensor(LOOM_DTYPE_F32, ndim, shape);
    if (t != NULL && values != NULL)
        memcpy(loom_data(t), values, loom_tensor_nbytes(t));
    return t;
}

float demo_random(void)
{
    /* xorshift32: the same numbers on every run and machine. */
    static uint32_t x = 2463534242u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return (float)((double)x / 2147483648.0 - 1.0);
}

/* Element i of a compact CPU tensor as a double; 0 on success, -1 for a
** dtype this printer does not read. */
static int value_at(const loom_tensor *t, int64_t i, double *out)
{
    const char *p = (const char *)loom_data(t);
    switch (loom_tensor_dtype_of(t)) {
    case LOOM_DTYPE_F32: { float v; memcpy(&v, p + 4 * i, 4); *out = v; return 0; }
    case LOOM_DTYPE_F64: { double v; memcpy(&v, p + 8 * i, 8); *out = v; return 0; }
    case LOOM_DTYPE_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); *out = v; return 0; }
    case LOOM_DTYPE_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); *out = (double)v; return 0; }
    default: return -1;
    }
}

void demo_show(const char *label, const loom_tensor *t)
{
    const int64_t n = loom_numel(t), max = 12;
    printf("  %-8s %s[", label, loom_dtype_name(loom_tensor_dtype_of(t)));
    for (int32_t d = 0; d < t->ndim; d++)
        printf("%s%lld", d > 0 ? "," : "", (long long)t->shape[d]);
    printf("] = [");
    for (int64_t i = 0; i < n && i < max; i++) {
        double v;
        if (!loom_is_contiguous(t) || value_at(t, i, &v) != 0) {
            printf("(%s values not shown)", loom_dtype_name(loom_tensor_dtype_of(t)));
            break;
        }
        printf("%s%.7g", i > 0 ? ", " : "", v);
    }
    if (n > max)
        printf(", ... (%lld values)", (long long)n);
    printf("]\n");
}

double demo_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
