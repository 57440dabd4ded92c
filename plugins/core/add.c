/* SPDX-License-Identifier: BSD-3-Clause */
/*
** add.c - core.add on the CPU: output = input + alpha * other (torch.add).
**
** One generic path for every dtype through the dtype table (dtypes.c):
** integers and bool are added exactly in int64 (modulo 2^64, then stored
** modulo the dtype's width), f64/c128 in double and the other float dtypes
** in float, as torch's opmath does; alpha * other + input is one fused
** multiply-add like ATen's vectorised path. Inputs may be strided and
** broadcast; the output is whatever alloc_output returns (compact unless
** the caller supplied a strided one).
*/
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "core_pack.h"
#include "kernels.h"

/* What every row of one call needs; the data pointers travel apart (add_rows_arg),
** so a plan's job is used in place, never copied. */
typedef struct add_job {
    core_nd_iter it;
    const core_dtype_row *row;
    double alpha;
    int64_t alpha_i;
} add_job;

typedef struct add_rows_arg {
    const add_job *job;
    const char *a, *b;
    char *c;
} add_rows_arg;

static core_value add_values(const core_dtype_row *row, core_value a, core_value b,
                             double alpha, int64_t alpha_i)
{
    core_value r = a;
    r.from = row->wide ? LOOM_DTYPE_F64 : LOOM_DTYPE_F32;   /* computed like torch's vectorised opmath */
    switch (row->kind) {
    case CORE_KIND_INT:
        r.i = (int64_t)((uint64_t)a.i + (uint64_t)alpha_i * (uint64_t)b.i);
        break;
    case CORE_KIND_FLOAT:
        r.re = row->wide ? fma(alpha, b.re, a.re)
                         : (double)fmaf((float)alpha, (float)b.re, (float)a.re);
        break;
    default:
        r.re = row->wide ? fma(alpha, b.re, a.re)
                         : (double)fmaf((float)alpha, (float)b.re, (float)a.re);
        r.im = row->wide ? fma(alpha, b.im, a.im)
                         : (double)fmaf((float)alpha, (float)b.im, (float)a.im);
        break;
    }
    return r;
}

static void add_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const add_rows_arg *arg = user;
    const add_job *j = arg->job;
    const int64_t len = core_nd_row_len(&j->it), es = (int64_t)j->row->size;
    const int64_t sa = j->it.strides[0][j->it.ndim - 1], sb = j->it.strides[1][j->it.ndim - 1];
    const int64_t sc = j->it.strides[2][j->it.ndim - 1];
    (void)thread_index;
    for (int64_t r = begin; r < end; r++) {
        int64_t off[3];
        core_nd_row_offsets(&j->it, r, off);
        for (int64_t x = 0; x < len; x++) {
            core_value va = j->row->load(arg->a + (off[0] + x * sa) * es);
            core_value vb = j->row->load(arg->b + (off[1] + x * sb) * es);
            j->row->store(arg->c + (off[2] + x * sc) * es, add_values(j->row, va, vb, j->alpha, j->alpha_i));
        }
    }
}

/* What a plan of core.add fixes once (ABI 1.1 prepare): the checks, the
** broadcast shape and, when the described inputs are compact, the whole
** iteration; a planned run then only checks that the tensors it gets are
** compact as described and goes straight to the rows. */
typedef struct add_plan {
    add_job job;                 /* everything but the data pointers */
    int32_t ndim;
    int64_t shape[LOOM_MAX_NDIM];
    int compact;                 /* the iteration assumes compact input, other and output */
} add_plan;

static loom_status add_run_job(loom_call *call, const add_job *j, const loom_tensor *out)
{
    int64_t len = core_nd_row_len(&j->it);
    add_rows_arg arg = { j, loom_data(call->inputs[0]), loom_data(call->inputs[1]), loom_data(out) };
    return pk_host->parallel_for(call->ctx, core_nd_rows(&j->it), len >= 16384 ? 1 : 16384 / len, add_rows, &arg);
}

loom_status core_add_prepare(const loom_call *call, void **state)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    add_plan *p = calloc(1, sizeof *p);
    loom_status st;

    if (p == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    p->job.row = core_dtype(loom_tensor_dtype_of(a));
    st = core_add_check(call, &p->job.alpha, &p->job.alpha_i);
    if (st == LOOM_OK)
        st = core_broadcast_shape(a, b, &p->ndim, p->shape);
    if (st == LOOM_OK && loom_is_contiguous(a) && loom_is_contiguous(b)) {
        /* the output the core allocates is compact too: describe it so */
        loom_tensor out = { .dtype = a->dtype, .device = a->device, .ndim = p->ndim, .shape = p->shape };
        st = core_iter_setup(&p->job.it, p->ndim, p->shape, (const loom_tensor *[]){ a, b, &out },
                             (const char *[]){ "input", "other", "output" }, 3);
        p->compact = st == LOOM_OK;
    }
    if (st != LOOM_OK) {
        free(p);
        return st;
    }
    *state = p;
    return LOOM_OK;
}

void core_add_release(void *state) { free(state); }

loom_status core_add_cpu(loom_call *call)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    const add_plan *plan = call->struct_size >= offsetof(loom_call, plan_state) + sizeof(void *)
                         ? call->plan_state : NULL;
    if (plan != NULL) {
        loom_tensor *out;
        loom_status st = pk_host->alloc_output(call, 0, loom_tensor_dtype_of(a), plan->ndim, plan->shape, &out);
        if (st != LOOM_OK || loom_numel(out) == 0)
            return st;
        if (plan->compact && loom_is_contiguous(a) && loom_is_contiguous(b) && loom_is_contiguous(out))
            return add_run_job(call, &plan->job, out);
        /* other strides than described: the general path below */
    }
    add_job j = { .row = core_dtype(loom_tensor_dtype_of(a)) };
    int32_t ndim;
    int64_t shape[LOOM_MAX_NDIM];
    loom_tensor *out;
    loom_status st = core_add_check(call, &j.alpha, &j.alpha_i);
    if (st == LOOM_OK)
        st = core_broadcast_shape(a, b, &ndim, shape);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 0, loom_tensor_dtype_of(a), ndim, shape, &out);
    if (st != LOOM_OK)
        return st;
    if (loom_numel(out) == 0)
        return LOOM_OK;
    st = core_iter_setup(&j.it, ndim, shape, (const loom_tensor *[]){ a, b, out },
                         (const char *[]){ "input", "other", "output" }, 3);
    if (st != LOOM_OK)
        return st;
    return add_run_job(call, &j, out);
}
