/* SPDX-License-Identifier: BSD-3-Clause */
/*
** adoptpack.c - a pack that hands its own buffers back as outputs through
** host->adopt_output (ABI 1.6), for test_adopt_output.c. Every buffer it
** offers is a fresh 64-byte-aligned block of 16 floats 0, 1, ..., 15 whose
** release counts itself; adopt.count returns { buffers made, buffers
** released } so the test sees that each one is released exactly once.
** adopt.make has outputs "output" (f32 only, any rank) and "matrix" (any
** dtype, rank 2) and attribute `mode`:
**   ok           output = [8] compact, matrix = [2, 3] compact
**   strided      output = [4] with stride 2 (0, 2, 4, 6), matrix as in ok
**   empty        output = [0] (data unused), matrix as in ok
**   fail_after   both adopted, then run() fails
**   alloc_after  output adopted, then alloc_output of matrix is refused
**   bad_dtype    output offered as i32 (its definition allows f32 only)
**   bad_rank     matrix offered with rank 1
**   misaligned   output's data 4 bytes into the block
**   too_small    output [8] on a buffer said to hold 7 floats
**   too_far      output [4] stride 5 (element 3 at 15 is in, [5] stride 4 is not)
**   negative     output [4] stride -1
**   twice        output adopted twice
**   after_alloc  output made by alloc_output, then adopted
**   no_release   release NULL: refused, nothing called; the pack frees it
** A refusal must have released the buffer before adopt_output returned:
** run() checks that and fails with "not released at the refusal" if not.
*/
#define LOOM_TARGET_ABI_MINOR 6
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loom/plugin.h"

static const loom_host_api *host;
static atomic_long made, released;

static const loom_arg_def outs[] = {
    { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1 },
    { .name = "matrix", .ndim = 2 },
};
static const loom_attr_def attrs[] = {
    { .name = "mode", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_STRING("ok"), .doc = "what to offer" },
};

static const loom_op_schema make_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "adopt.make", .version = 1,
    .doc = "outputs made of the pack's own buffers", .n_outputs = 2, .outputs = outs, .n_attrs = 1, .attrs = attrs,
};

/* user is the block (data may point into it) */
static void release_block(void *user, void *data)
{
    (void)data;
    free(user);
    atomic_fetch_add(&released, 1);
}

static float *new_block(void)
{
    float *p = aligned_alloc(LOOM_ADOPT_ALIGNMENT, 16 * sizeof(float));
    if (p == NULL)
        return NULL;
    for (int i = 0; i < 16; i++)
        p[i] = (float)i;
    atomic_fetch_add(&made, 1);
    return p;
}

/* Offer a new block as output `index`. */
static loom_status offer(loom_call *call, int32_t index, loom_dtype dtype, int32_t ndim, const int64_t *shape,
                       const int64_t *strides, size_t offset, size_t nbytes, loom_buffer_release release)
{
    float *p = new_block();
    if (p == NULL)
        return host->fail(LOOM_ENOMEM, "out of memory");
    loom_output_storage s = { .struct_size = sizeof s, .dtype = dtype, .ndim = ndim, .shape = shape,
                              .strides = strides, .data = (char *)p + offset, .nbytes = nbytes,
                              .release = release, .user = p };
    loom_tensor *out;
    long before = atomic_load(&released);
    loom_status st = host->adopt_output(call, index, &s, &out);
    if (st != LOOM_OK && release != NULL && atomic_load(&released) != before + 1)
        return host->fail(LOOM_EINTERNAL, "not released at the refusal");
    if (st != LOOM_OK && release == NULL) {
        free(p);   /* refused before the core took it: still the pack's */
        atomic_fetch_add(&released, 1);
    }
    return st;
}

static loom_status matrix_ok(loom_call *call)
{
    static const int64_t shape[2] = { 2, 3 };
    return offer(call, 1, LOOM_DTYPE_F32, 2, shape, NULL, 0, 16 * sizeof(float), release_block);
}

static loom_status run_make(loom_call *call)
{
    const char *mode = call->attrs[0].u.s;
    static const int64_t eight[1] = { 8 }, four[1] = { 4 }, zero[1] = { 0 }, five[1] = { 5 };
    static const int64_t two[1] = { 2 }, neg[1] = { -1 }, stride5[1] = { 5 };
    const size_t all = 16 * sizeof(float);
    loom_status st;

    if (strcmp(mode, "ok") == 0 || strcmp(mode, "fail_after") == 0) {
        if ((st = offer(call, 0, LOOM_DTYPE_F32, 1, eight, NULL, 0, all, release_block)) != LOOM_OK
            || (st = matrix_ok(call)) != LOOM_OK)
            return st;
        return mode[0] == 'o' ? LOOM_OK : host->fail(LOOM_EINVAL, "fails after adopting");
    }
    if (strcmp(mode, "strided") == 0 || strcmp(mode, "empty") == 0) {
        int strided = mode[0] == 's';
        if ((st = offer(call, 0, LOOM_DTYPE_F32, 1, strided ? four : zero, strided ? two : NULL, 0, all,
                        release_block)) != LOOM_OK)
            return st;
        return matrix_ok(call);
    }
    if (strcmp(mode, "alloc_after") == 0) {
        loom_tensor *m;
        static const int64_t bad[3] = { 1, 1, 1 };
        if ((st = offer(call, 0, LOOM_DTYPE_F32, 1, eight, NULL, 0, all, release_block)) != LOOM_OK)
            return st;
        return host->alloc_output(call, 1, LOOM_DTYPE_F32, -1, bad, &m);
    }
    if (strcmp(mode, "bad_dtype") == 0)
        return offer(call, 0, LOOM_DTYPE_I32, 1, eight, NULL, 0, all, release_block);
    if (strcmp(mode, "bad_rank") == 0)
        return offer(call, 1, LOOM_DTYPE_F32, 1, eight, NULL, 0, all, release_block);
    if (strcmp(mode, "misaligned") == 0)
        return offer(call, 0, LOOM_DTYPE_F32, 1, eight, NULL, 4, all - 4, release_block);
    if (strcmp(mode, "too_small") == 0)
        return offer(call, 0, LOOM_DTYPE_F32, 1, eight, NULL, 0, 7 * sizeof(float), release_block);
    if (strcmp(mode, "too_far") == 0) {
        if ((st = offer(call, 0, LOOM_DTYPE_F32, 1, four, stride5, 0, all, release_block)) != LOOM_OK)
            return st;
        return offer(call, 1, LOOM_DTYPE_F32, 2, (const int64_t[]){ 1, 5 }, (const int64_t[]){ 1, 4 }, 0, all,
                     release_block);
    }
    if (strcmp(mode, "negative") == 0)
        return offer(call, 0, LOOM_DTYPE_F32, 1, four, neg, 0, all, release_block);
    if (strcmp(mode, "twice") == 0) {
        if ((st = offer(call, 0, LOOM_DTYPE_F32, 1, eight, NULL, 0, all, release_block)) != LOOM_OK)
            return st;
        return offer(call, 0, LOOM_DTYPE_F32, 1, eight, NULL, 0, all, release_block);
    }
    if (strcmp(mode, "after_alloc") == 0) {
        loom_tensor *y;
        if ((st = host->alloc_output(call, 0, LOOM_DTYPE_F32, 1, eight, &y)) != LOOM_OK)
            return st;
        return offer(call, 0, LOOM_DTYPE_F32, 1, eight, NULL, 0, all, release_block);
    }
    if (strcmp(mode, "no_release") == 0)
        return offer(call, 0, LOOM_DTYPE_F32, 1, five, NULL, 0, all, NULL);
    return host->fail(LOOM_EINVAL, "unknown mode '%s'", mode);
}

static const loom_arg_def count_out[] = { { .name = "count", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1 } };
static const loom_op_schema count_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "adopt.count", .version = 1,
    .doc = "{ buffers made, buffers released }", .n_outputs = 1, .outputs = count_out,
};

static loom_status run_count(loom_call *call)
{
    static const int64_t two[1] = { 2 };
    loom_tensor *y;
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, two, &y);
    if (st != LOOM_OK)
        return st;
    ((int64_t *)loom_data(y))[0] = atomic_load(&made);
    ((int64_t *)loom_data(y))[1] = atomic_load(&released);
    return LOOM_OK;
}

static const loom_kernel_desc kernels[] = {
    { .struct_size = sizeof(loom_kernel_desc), .schema = &make_schema, .backend = "cpu",
      .device_type = LOOM_DEVICE_CPU, .impl = "cpu:adopt", .run = run_make },
    { .struct_size = sizeof(loom_kernel_desc), .schema = &count_schema, .backend = "cpu",
      .device_type = LOOM_DEVICE_CPU, .impl = "cpu:count", .run = run_count },
};

static loom_status init(const loom_host_api *h, loom_registrar *reg)
{
    loom_status st = LOOM_OK;
    host = h;
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0] && st == LOOM_OK; i++)
        st = h->register_kernel(reg, &kernels[i]);
    return st;
}

LOOM_PLUGIN_DEFINE("adopt", "1.0", "outputs made of the pack's own buffers (ABI 1.6)", init, NULL)
