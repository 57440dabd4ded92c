/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dispatch.c - route one operator call to one kernel, and run it.
**
** A call goes to the device of its input tensors (a method of an object
** made for a device goes to the object's device: object_device), then to the
** first kernel in the op's policy order (LOOM_BACKENDS, then kernel priority) that runs
** on that device, accepts every input dtype and whose supports() agrees.
** When a kernel of a preferred backend declined and a later one ran, the
** call "fell back": LOOM_STRICT=1 makes that an error.
**
** Hot-path rules: no locks (the registry snapshot is immutable), no heap
** allocation unless the kernel asks for outputs or scratch, no formatting
** unless LOOM_VERBOSE>=2 or a call fails. The decision is recorded in a
** thread-local record and turned into text only when asked.
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "registry.h"


enum reason {
    R_NOT_TRIED = 0,    /* a better candidate ran first */
    R_CHOSEN,
    R_EXCLUDED,         /* LOOM_BACKENDS leaves this backend out for the op */
    R_FORCED_OUT,       /* loom_call_options.backend named another backend */
    R_DEVICE,           /* runs on another device type */
    R_DTYPE,            /* an input dtype is outside the kernel's mask */
    R_DECLINED,         /* supports() said no; why[] has its reason */
    R_OTHER_PACK        /* method of an object made by another pack */
};

#define MAX_SHAPES 6

typedef struct last_record {
    const struct loom_op *op;            /* valid while epoch is the current one */
    unsigned epoch;
    int32_t chosen;                      /* index into op->kernels, -1 none */
    int32_t fallback;
    int8_t reason[LOOM__MAX_KERNELS];
    char why[LOOM__MAX_KERNELS][96];
    int32_t n_shapes;
    int32_t ndim[MAX_SHAPES];
    loom_dtype dtype[MAX_SHAPES];
    int64_t shape[MAX_SHAPES][LOOM_MAX_NDIM];
    int32_t device_type;
    double flops, bytes;
    char text[2048];
} last_record;

/* The record of this thread's host call (depth 0), and lazily allocated
** records of nested calls (depth 1..LOOM_MAX_NESTING), so a kernel's op_call
** never overwrites its caller's record. nested_text lists the nested calls
** of the current host call, indented by depth, for loom_last_dispatch. */
/* One thread-local block, so a call pays one TLS look-up (libloom's
** thread-locals use the global-dynamic model: each is a __tls_get_addr). */
typedef struct dispatch_tls {
    last_record last;
    last_record *nested_records[LOOM_MAX_NESTING];
    int32_t n_nested;                        /* nested calls of the current host call */
    struct nested_entry {
        const struct loom_op *op;
        int16_t depth, chosen;
        int16_t fallback;
    } nested[64];                            /* formatted only when loom_last_dispatch asks */
    char nested_text[2048];
    char chain[LOOM_MAX_NESTING + 1][256];   /* error context per depth */
    char combined_text[4096];
} dispatch_tls;
static _Thread_local dispatch_tls tls;
#define last (tls.last)
#define nested_records (tls.nested_records)
#define nested_text (tls.nested_text)
#define n_nested (tls.n_nested)
#define nested (tls.nested)
#define chain (tls.chain)
#define combined_text (tls.combined_text)
static pthread_key_t records_key;
static pthread_once_t records_once = PTHREAD_ONCE_INIT;

static void records_destroy(void *p)
{
    last_record **recs = p;
    for (int i = 0; i < LOOM_MAX_NESTING; i++) {
        free(recs[i]);
        recs[i] = NULL;
    }
}

static void records_key_make(void) { pthread_key_create(&records_key, records_destroy); }

/* The record for a call at depth d, or NULL when out of memory. */
static last_record *record_at(int32_t d)
{
    if (d == 0)
        return &last;
    if (nested_records[d - 1] == NULL) {
        pthread_once(&records_once, records_key_make);
        nested_records[d - 1] = calloc(1, sizeof(last_record));
        pthread_setspecific(records_key, nested_records);   /* freed at thread exit */
    }
    return nested_records[d - 1];
}

/* What an output looked like when the kernel got it (supplied by the
** caller, or made by alloc_output): after run() the core checks that the
** kernel left it so, because every caller (the CLI's formatter, a host that
** sizes a copy from the shape) trusts an output's shape to describe its data. */
typedef struct output_record {
    void *data;
    uint64_t byte_offset;
    const int64_t *shape_ptr, *strides_ptr;
    loom_dl_dtype dtype;
    loom_dl_device device;
    int32_t ndim;
    int64_t shape[LOOM_MAX_NDIM];
} output_record;

#define MAX_EXTRA_SCRATCH 16

/* Per-call bookkeeping behind loom_exec_ctx.core. Deliberately not
** zero-initialised as a whole (records are large): run_call sets the
** counters, and a record is written before its bit is set. */
typedef struct call_state {
    uint32_t supplied;                   /* outputs the caller passed in */
    uint32_t allocated;                  /* outputs the core made in this call */
    size_t scratch_mark;
    int n_extra;
    struct { void *ptr; loom_dl_device dev; } extra[MAX_EXTRA_SCRATCH];
    const loom__kernel *kernel;          /* chosen kernel (object_backend_state keys by its pack) */
    const loom_object *object;           /* the object handle of a method call, else NULL */
    output_record rec[LOOM__MAX_ARGS];
} call_state;

static void record_output(output_record *r, const loom_tensor *t)
{
    r->data = t->data;
    r->byte_offset = t->byte_offset;
    r->shape_ptr = t->shape;
    r->strides_ptr = t->strides;
    r->dtype = t->dtype;
    r->device = t->device;
    r->ndim = t->ndim;
    memcpy(r->shape, t->shape, (size_t)t->ndim * sizeof *t->shape);
}

/* True when t is still what r recorded. */
static bool output_intact(const output_record *r, const loom_tensor *t)
{
    if (t->data != r->data || t->byte_offset != r->byte_offset || t->shape != r->shape_ptr
        || t->strides != r->strides_ptr || t->ndim != r->ndim || t->dtype.code != r->dtype.code
        || t->dtype.bits != r->dtype.bits || t->dtype.lanes != r->dtype.lanes
        || t->device.device_type != r->device.device_type || t->device.device_id != r->device.device_id)
        return false;
    return memcmp(t->shape, r->shape, (size_t)r->ndim * sizeof *t->shape) == 0;
}

/* ------------------------------------------------------------- scratch */

/* A thread's scratch arena grows to what its calls needed, up to ARENA_MAX;
** larger requests get their own blocks for the call. */
#define ARENA_MAX ((size_t)1 << 30)
typedef struct arena { char *base; size_t cap, used, want; } arena;
static pthread_key_t arena_key;
static pthread_once_t arena_once = PTHREAD_ONCE_INIT;

/* The thread's arena: a thread-local pointer on the hot path; the pthread
** key only exists to free the arena when the thread exits. */
static _Thread_local arena *my_arena;

static void arena_destroy(void *p)
{
    arena *a = p;
    my_arena = NULL;   /* a later call on this thread (another key's destructor) makes a new one */
    free(a->base);
    free(a);
}

static void arena_key_make(void) { pthread_key_create(&arena_key, arena_destroy); }

static arena *thread_arena(void)
{
    arena *a = my_arena;
    if (a != NULL)
        return a;
    pthread_once(&arena_once, arena_key_make);
    a = pthread_getspecific(arena_key);
    if (a == NULL && (a = calloc(1, sizeof *a)) != NULL)
        pthread_setspecific(arena_key, a);
    my_arena = a;
    return a;
}

void *loom__scratch(loom_exec_ctx *ctx, size_t nbytes)
{
    call_state *cs = ctx != NULL ? ctx->core : NULL;
    arena *a;
    size_t need;
    void *p;

    if (cs == NULL) {
        loom__fail(LOOM_EINVAL, "scratch: no call context");
        return NULL;
    }
    /* A size near SIZE_MAX (a kernel's size arithmetic that wrapped) must
    ** fail, not round down to a small block the kernel then overruns. */
    if (nbytes > SIZE_MAX - 63) {
        loom__fail(LOOM_ENOMEM, "scratch: %zu bytes requested (a size computation overflowed?)", nbytes);
        return NULL;
    }
    need = (nbytes + 63) & ~(size_t)63;
    if (loom__alloc_cap_check(need, "scratch") != LOOM_OK)
        return NULL;
    if (loom__is_host(ctx->device) && (a = thread_arena()) != NULL && need <= a->cap - a->used) {
        p = a->base + a->used;
        a->used += need;
        return p;
    }
    if (cs->n_extra == MAX_EXTRA_SCRATCH) {
        loom__fail(LOOM_ENOMEM, "scratch: more than %d oversize scratch blocks in one call (MAX_EXTRA_SCRATCH)",
                   MAX_EXTRA_SCRATCH);
        return NULL;
    }
    p = loom__dev_alloc(ctx->device, need ? need : 64, 64);
    if (p == NULL)
        return NULL;
    cs->extra[cs->n_extra].ptr = p;
    cs->extra[cs->n_extra].dev = ctx->device;
    cs->n_extra++;
    if (loom__is_host(ctx->device) && (a = thread_arena()) != NULL)
        a->want = need < ARENA_MAX - a->want ? a->want + need : ARENA_MAX;   /* grow it for the next call */
    return p;
}

static void scratch_begin(call_state *cs)
{
    arena *a = thread_arena();
    cs->scratch_mark = a != NULL ? a->used : 0;
}

static void scratch_end(call_state *cs)
{
    arena *a = thread_arena();
    for (int i = 0; i < cs->n_extra; i++)
        loom__dev_free(cs->extra[i].dev, cs->extra[i].ptr);
    if (a == NULL)
        return;
    a->used = cs->scratch_mark;
    if (a->used == 0 && a->want > 0) {
        size_t cap = a->want < ARENA_MAX - a->cap ? a->cap + a->want : ARENA_MAX + 1;
        char *grown;
        a->want = 0;
        if (cap <= ARENA_MAX && posix_memalign((void **)&grown, 64, cap) == 0) {
            free(a->base);
            a->base = grown;
            a->cap = cap;
        }
    }
}

/* --------------------------------------------------------------- outputs */

loom_status loom__alloc_output(loom_call *call, int32_t index, loom_dtype dtype, int32_t ndim,
                             const int64_t *shape, loom_tensor **out)
{
    call_state *cs;
    loom_status st;

    if (out != NULL)
        *out = NULL;
    if (call == NULL || call->ctx == NULL || (cs = call->ctx->core) == NULL || out == NULL)
        return loom__fail(LOOM_EINVAL, "alloc_output: called outside a kernel's run");
    if (index < 0 || index >= call->n_outputs)
        return loom__fail(LOOM_EINVAL, "alloc_output: output %d does not exist (%d outputs)", index,
                          call->n_outputs);
    const char *name = call->schema->outputs[index].name;
    if (cs->supplied & (1u << index)) {
        loom_tensor *t = call->outputs[index];
        bool same = loom_tensor_dtype_of(t) == dtype && t->ndim == ndim && loom_is_contiguous(t)
                 && t->device.device_type == call->ctx->device.device_type
                 && t->device.device_id == call->ctx->device.device_id;
        for (int32_t i = 0; same && i < ndim; i++)
            same = t->shape[i] == shape[i];
        if (!same) {
            char have[160], want[160];
            loom_tensor tmp = { .ndim = ndim, .shape = (int64_t *)shape, .dtype = loom_dtype_to_dl(dtype) };
            return loom__fail(LOOM_EINVAL, "output '%s' was supplied as %s but the op produces %s (compact, "
                              "on the inputs' device)", name, loom__tensor_describe(t, have, sizeof have),
                              loom__tensor_describe(&tmp, want, sizeof want));
        }
        if (loom__box(t) != NULL && loom__box(t)->read_only)
            return loom__fail(LOOM_EINVAL, "output '%s' was supplied read-only", name);
        *out = t;
        return LOOM_OK;
    }
    if (cs->allocated & (1u << index)) {
        /* A second request must ask for what the first one got: silently
        ** returning a tensor of another shape lets the kernel overrun it. */
        const output_record *r = &cs->rec[index];
        bool same = loom_dtype_from_dl(r->dtype) == dtype && r->ndim == ndim
                 && (ndim == 0 || memcmp(r->shape, shape, (size_t)ndim * sizeof *shape) == 0);
        if (!same) {
            char have[160], want[160];
            loom_tensor tmp = { .ndim = ndim, .shape = (int64_t *)shape, .dtype = loom_dtype_to_dl(dtype) };
            return loom__fail(LOOM_EINVAL, "alloc_output: output '%s' was already allocated as %s in this call; "
                              "a second request for %s disagrees", name,
                              loom__tensor_describe(call->outputs[index], have, sizeof have),
                              loom__tensor_describe(&tmp, want, sizeof want));
        }
        *out = call->outputs[index];
        return LOOM_OK;
    }
    if (ndim < 0 || ndim > LOOM_MAX_NDIM || (ndim > 0 && shape == NULL))
        return loom__fail(LOOM_EINVAL, "alloc_output: output '%s': ndim %d not in 0..%d or shape NULL", name, ndim,
                          LOOM_MAX_NDIM);
    {
        loom_tensor tmp = { .ndim = ndim, .shape = (int64_t *)shape, .dtype = loom_dtype_to_dl(dtype) };
        char what[160], desc[128];
        size_t nbytes = loom__tensor_nbytes(&tmp);
        snprintf(what, sizeof what, "output '%s' (%s)", name, loom__tensor_describe(&tmp, desc, sizeof desc));
        if (nbytes > 0 && (st = loom__alloc_cap_check(nbytes, what)) != LOOM_OK)
            return st;
    }
    st = loom__tensor_alloc(&call->outputs[index], dtype, ndim, shape, call->ctx->device, false);
    if (st != LOOM_OK)
        return st;
    record_output(&cs->rec[index], call->outputs[index]);
    cs->allocated |= 1u << index;
    *out = call->outputs[index];
    return LOOM_OK;
}

/* The refusals of adopt_output, before the core takes the buffer: the
** storage must describe a tensor the output's definition allows, lying
** within the bytes the kernel vouched for. */
static loom_status adopt_check(const loom_call *call, int32_t index, const loom_output_storage *s, const char *name)
{
    const loom_arg_def *def = &call->schema->outputs[index];
    const loom_dtype dtype = (loom_dtype)s->dtype;
    const size_t esize = loom_dtype_size(dtype);
    uint64_t end = 0;    /* offset in elements of the last element */
    bool empty = false;

    if (esize == 0)
        return loom__fail(LOOM_EINVAL, "adopt_output: output '%s': invalid dtype %d", name, (int)s->dtype);
    if (def->dtypes != 0 && !(def->dtypes & LOOM_DTYPE_BIT(dtype)))
        return loom__fail(LOOM_EINVAL, "adopt_output: output '%s' cannot be %s (not a dtype its definition allows)",
                          name, loom_dtype_name(dtype));
    if (s->ndim < 0 || s->ndim > LOOM_MAX_NDIM || (s->ndim > 0 && s->shape == NULL))
        return loom__fail(LOOM_EINVAL, "adopt_output: output '%s': ndim %d not in 0..%d or shape NULL", name, s->ndim,
                          LOOM_MAX_NDIM);
    if (def->ndim >= 0 && s->ndim != def->ndim)
        return loom__fail(LOOM_EINVAL, "adopt_output: output '%s' has rank %d by its definition, the storage %d",
                          name, def->ndim, s->ndim);
    for (int32_t i = 0; i < s->ndim; i++) {
        int64_t stride = s->strides != NULL ? s->strides[i] : 0;
        if (s->shape[i] < 0 || stride < 0)
            return loom__fail(LOOM_EINVAL, "adopt_output: output '%s': dim %d has size %lld, stride %lld (negative)",
                              name, i, (long long)s->shape[i], (long long)stride);
        empty |= s->shape[i] == 0;
    }
    if (empty)
        return LOOM_OK;   /* no element is addressed: data may be anything */
    if (s->strides == NULL) {
        uint64_t n = 1;
        for (int32_t i = 0; i < s->ndim; i++)
            if (__builtin_mul_overflow(n, (uint64_t)s->shape[i], &n))
                return loom__fail(LOOM_EINVAL, "adopt_output: output '%s': its shape overflows", name);
        end = n - 1;
    } else {
        for (int32_t i = 0; i < s->ndim; i++) {
            uint64_t step;
            if (__builtin_mul_overflow((uint64_t)(s->shape[i] - 1), (uint64_t)s->strides[i], &step)
                || __builtin_add_overflow(end, step, &end))
                return loom__fail(LOOM_EINVAL, "adopt_output: output '%s': its shape and strides overflow", name);
        }
    }
    uint64_t need;
    if (__builtin_add_overflow(end, 1, &need) || __builtin_mul_overflow(need, (uint64_t)esize, &need)
        || need > (uint64_t)s->nbytes)
        return loom__fail(LOOM_EINVAL, "adopt_output: output '%s': its elements reach past the %zu bytes of the "
                          "buffer", name, s->nbytes);
    if (s->data == NULL)
        return loom__fail(LOOM_EINVAL, "adopt_output: output '%s': data is NULL", name);
    if ((uintptr_t)s->data % LOOM_ADOPT_ALIGNMENT != 0)
        return loom__fail(LOOM_EINVAL, "adopt_output: output '%s': data %p is not %d-byte aligned", name, s->data,
                          LOOM_ADOPT_ALIGNMENT);
    return LOOM_OK;
}

/* The caller supplied this output: copy the storage into it (host memory
** through the storage's strides, device memory when compact). */
static loom_status adopt_into_supplied(loom_call *call, int32_t index, const loom_output_storage *s, const char *name)
{
    loom_tensor *t = call->outputs[index];
    const loom_dl_device dev = call->ctx->device;
    loom_tensor view = { .data = s->data, .device = dev, .ndim = s->ndim, .dtype = loom_dtype_to_dl((loom_dtype)s->dtype),
                         .shape = (int64_t *)s->shape, .strides = (int64_t *)s->strides };
    bool same = loom_tensor_dtype_of(t) == (loom_dtype)s->dtype && t->ndim == s->ndim && loom_is_contiguous(t)
             && t->device.device_type == dev.device_type && t->device.device_id == dev.device_id;
    for (int32_t i = 0; same && i < s->ndim; i++)
        same = t->shape[i] == s->shape[i];
    if (!same) {
        char have[160], want[160];
        return loom__fail(LOOM_EINVAL, "output '%s' was supplied as %s but the op produces %s (compact, "
                          "on the inputs' device)", name, loom__tensor_describe(t, have, sizeof have),
                          loom__tensor_describe(&view, want, sizeof want));
    }
    if (loom__box(t) != NULL && loom__box(t)->read_only)
        return loom__fail(LOOM_EINVAL, "output '%s' was supplied read-only", name);
    size_t nbytes = loom__tensor_nbytes(t);
    if (nbytes == 0)
        return LOOM_OK;
    if (loom_is_contiguous(&view))
        return loom__dev_copy(loom_data(t), dev, s->data, dev, nbytes);
    if (!loom__is_host(dev))
        return loom__fail(LOOM_ENOTSUP, "adopt_output: output '%s' was supplied, and strided storage on a device "
                          "cannot be copied into it", name);
    loom__tensor_gather(loom_data(t), &view, loom_dtype_size((loom_dtype)s->dtype));
    return LOOM_OK;
}

loom_status loom__adopt_output(loom_call *call, int32_t index, const loom_output_storage *s, loom_tensor **out)
{
    call_state *cs;
    loom_status st;

    if (out != NULL)
        *out = NULL;
    if (s == NULL || s->release == NULL)
        return loom__fail(LOOM_EINVAL, "adopt_output: storage or its release is NULL (the buffer stays the kernel's)");
    /* From here the buffer is the core's: every refusal releases it. */
    if (!LOOM_HAS_MEMBER(s, loom_output_storage, user)) {
        st = loom__fail(LOOM_EINVAL, "adopt_output: storage struct_size %u is smaller than loom_output_storage",
                        s->struct_size);
    } else if (call == NULL || call->ctx == NULL || (cs = call->ctx->core) == NULL || out == NULL) {
        st = loom__fail(LOOM_EINVAL, "adopt_output: called outside a kernel's run");
    } else if (index < 0 || index >= call->n_outputs) {
        st = loom__fail(LOOM_EINVAL, "adopt_output: output %d does not exist (%d outputs)", index, call->n_outputs);
    } else {
        const char *name = call->schema->outputs[index].name;
        if (cs->allocated & (1u << index))
            st = loom__fail(LOOM_EINVAL, "adopt_output: output '%s' was already made in this call", name);
        else if ((st = adopt_check(call, index, s, name)) == LOOM_OK && (cs->supplied & (1u << index))) {
            st = adopt_into_supplied(call, index, s, name);
            if (st == LOOM_OK)
                *out = call->outputs[index];
        } else if (st == LOOM_OK) {
            /* loom__tensor_adopt releases the buffer itself if it fails */
            if ((st = loom__tensor_adopt(&call->outputs[index], s, call->ctx->device)) != LOOM_OK)
                return st;
            record_output(&cs->rec[index], call->outputs[index]);
            cs->allocated |= 1u << index;
            *out = call->outputs[index];
            return LOOM_OK;
        }
    }
    s->release(s->user, s->data);
    return st;
}

/* --------------------------------------------------------------- records */

static const char *reason_text(int r)
{
    static const char *const t[] = {
        [R_NOT_TRIED] = "lower in LOOM_BACKENDS", [R_CHOSEN] = "chosen",
        [R_EXCLUDED] = "excluded by LOOM_BACKENDS", [R_FORCED_OUT] = "another backend was forced for this call",
        [R_DEVICE] = "runs on another device type", [R_DTYPE] = "input dtype not supported",
        [R_DECLINED] = "declined", [R_OTHER_PACK] = "the object was made by a pack of another family",
    };
    return t[r];
}

static const char *device_name(int32_t type)
{
    return type == LOOM_DEVICE_CPU ? "cpu" : type == LOOM_DEVICE_CUDA ? "cuda" : "device";
}

static void format_record(last_record *r)
{
    size_t n = 0, size = sizeof r->text;
    const struct loom_op *op = r->op;

#define PUT(...) do { if (n < size) n += (size_t)snprintf(r->text + n, size - n, __VA_ARGS__); } while (0)
    PUT("dispatch %s (", op->schema->name);
    for (int32_t i = 0; i < r->n_shapes; i++) {
        PUT("%s%s[", i ? " " : "", loom_dtype_name(r->dtype[i]));
        for (int32_t d = 0; d < r->ndim[i]; d++)
            PUT(d ? ",%lld" : "%lld", (long long)r->shape[i][d]);
        PUT("]");
    }
    PUT(" on %s) -> ", device_name(r->device_type));
    if (r->chosen >= 0)
        PUT("%s (%s)%s", op->kernels[r->chosen]->k.backend,
            op->kernels[r->chosen]->k.impl ? op->kernels[r->chosen]->k.impl : "",
            r->fallback ? " [fallback]" : "");
    else
        PUT("no kernel");
    for (int32_t k = 0; k < op->n_kernels; k++) {
        if (k == r->chosen)
            continue;
        /* a kernel after the chosen one of the same backend lost on priority,
        ** not on the backend order */
        const char *why = r->reason[k] == R_NOT_TRIED && r->chosen >= 0 && op->rank[k] == op->rank[r->chosen]
                        ? "lower priority than the chosen kernel of its backend" : reason_text(r->reason[k]);
        PUT("; %s: %s%s%s", op->kernels[k]->k.impl ? op->kernels[k]->k.impl : op->kernels[k]->k.backend,
            why, r->why[k][0] ? ": " : "", r->why[k]);
    }
#undef PUT
}

static void format_nested(void);

LOOM_API loom_status loom_last_dispatch(loom_dispatch_info *out)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;

    if (last.op == NULL || last.epoch != atomic_load(&loom__epoch))
        return loom__fail(LOOM_ENOENT, "loom_last_dispatch: no call on this thread since loom_init");
    format_record(&last);
    format_nested();
    snprintf(combined_text, sizeof combined_text, "%s%s", last.text, nested_text);
    info.op = last.op->schema->name;
    if (last.chosen >= 0) {
        info.backend = last.op->kernels[last.chosen]->k.backend;
        info.impl = last.op->kernels[last.chosen]->k.impl;
    }
    info.fallback = last.fallback;
    info.text = combined_text;
    return loom__struct_out(out, &info, sizeof info, "loom_last_dispatch");
}

LOOM_API void loom_last_call_cost(double *flops, double *bytes)
{
    if (flops != NULL)
        *flops = last.flops;
    if (bytes != NULL)
        *bytes = last.bytes;
}

/* ---------------------------------------------------------------- calls */

static loom_status check_inputs(const loom_op_schema *s, const loom_tensor *const *inputs, int32_t n,
                              loom_dl_device *device)
{
    int32_t first = -1;

    if (n > (int32_t)s->n_inputs)
        return loom__fail(LOOM_EINVAL, "%d inputs given, the op takes %u", n, s->n_inputs);
    if (n > 0 && inputs == NULL)
        return loom__fail(LOOM_EINVAL, "inputs is NULL");
    for (int32_t i = 0; i < (int32_t)s->n_inputs; i++) {
        const loom_arg_def *a = &s->inputs[i];
        const loom_tensor *t = i < n ? inputs[i] : NULL;
        loom_dtype dt;
        loom_status st;

        if (t == NULL) {
            if (!(a->flags & LOOM_ARG_OPTIONAL))
                return loom__fail(LOOM_EINVAL, "required input '%s' (#%d) is missing", a->name, i);
            continue;
        }
        if ((st = loom__tensor_check(t, "tensor")) != LOOM_OK)
            return loom__fail(st, "input '%s': %s", a->name, loom_last_error());
        dt = loom_tensor_dtype_of(t);
        if (a->dtypes != 0 && !(a->dtypes & LOOM_DTYPE_BIT(dt))) {
            char allowed[256] = "";
            for (int d = 1; d < LOOM_DTYPE_COUNT; d++)
                if (a->dtypes & LOOM_DTYPE_BIT(d))
                    snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s%s",
                             allowed[0] ? ", " : "", loom_dtype_name((loom_dtype)d));
            return loom__fail(LOOM_EINVAL, "input '%s' has dtype %s; expected one of %s", a->name,
                              loom_dtype_name(dt), allowed);
        }
        if (a->ndim >= 0 && t->ndim != a->ndim)
            return loom__fail(LOOM_EINVAL, "input '%s' has %d dimensions; expected %d", a->name, t->ndim, a->ndim);
        if (first < 0) {
            first = i;
            *device = t->device;
        } else if (t->device.device_type != device->device_type || t->device.device_id != device->device_id) {
            return loom__fail(LOOM_EINVAL, "input '%s' is on %s:%d but input '%s' is on %s:%d", a->name,
                              device_name(t->device.device_type), t->device.device_id, s->inputs[first].name,
                              device_name(device->device_type), device->device_id);
        }
    }
    return LOOM_OK;
}

/* An object's state is private to the pack that made it and to that pack's
** family: packs named P and P-<suffix> (fbgemm and fbgemm-cuda), built from
** one source tree and so agreeing on the state's layout. */
static int family_prefix(const char *p, const char *q)
{
    size_t n = strlen(p);
    return n > 0 && strncmp(p, q, n) == 0 && q[n] == '-';
}

/* The dtypes of ABI 1.0 to 1.3: u16 and u32 came in 1.4. */
#define DTYPES_BEFORE_1_4 ((LOOM_DTYPE_BIT(LOOM_DTYPE_U16) - 1) & ~LOOM_DTYPE_BIT(LOOM_DTYPE_INVALID))

/* The dtypes a kernel takes, 0 for any. A pack built before 1.4 cannot know
** the dtypes appended since (its loom_dtype_from_dl maps them to INVALID),
** so its "any" and its masks are cut to the dtypes of its own ABI. */
static uint64_t kernel_dtype_mask(const loom__kernel *kern)
{
    if (kern->pack == NULL || kern->pack->abi_minor_built >= 4)
        return kern->k.dtypes;
    return (kern->k.dtypes != 0 ? kern->k.dtypes : LOOM_DTYPES_ALL) & DTYPES_BEFORE_1_4;
}

static int same_pack_family(const loom__pack *a, const loom__pack *b)
{
    if (a == b)
        return 1;
    if (a == NULL || b == NULL || a->name == NULL || b->name == NULL)
        return 0;
    return family_prefix(a->name, b->name) || family_prefix(b->name, a->name);
}

/* An object method's device (ABI 1.5). An object made for a device whose
** memory is not the host's (loom_object_options.device = cuda:N) takes its
** methods there when the op has a kernel for that device type: a method
** without tensor inputs (a reader's pop_chunk) then runs on the object's
** device. An op whose kernels are all elsewhere (metadata, control: the
** CPU) is routed by its inputs as before. An input on another device than
** the object's is refused, naming both, as a PyTorch module on cuda refuses
** a CPU tensor: the core never moves data behind a call's back. An object
** made on the CPU (the default) leaves every call to its inputs: its state
** is host memory that every backend may read (host->object_backend_state
** keeps what a device needs of it). */
static loom_status object_device(const struct loom_op *op, const loom_tensor *const *in, loom_dl_device obj,
                                 loom_dl_device *device)
{
    const loom_op_schema *s = op->schema;
    if (loom__is_host(obj))
        return LOOM_OK;
    for (int32_t i = 0; i < (int32_t)s->n_inputs; i++)
        if (in[i] != NULL && (in[i]->device.device_type != obj.device_type
                              || in[i]->device.device_id != obj.device_id))
            return loom__fail(LOOM_EINVAL, "input '%s' is on %s:%d but the %s object is on %s:%d (it was made "
                              "there); give it inputs on %s:%d", s->inputs[i].name,
                              device_name(in[i]->device.device_type), in[i]->device.device_id, s->object_class,
                              device_name(obj.device_type), obj.device_id, device_name(obj.device_type),
                              obj.device_id);
    for (int32_t k = 0; k < op->n_kernels && k < LOOM__MAX_KERNELS; k++)
        if (op->kernels[k]->k.device_type == obj.device_type) {
            *device = obj;
            break;
        }
    return LOOM_OK;
}

/* Pick a kernel into r->chosen; fills r->reason[]. backend: forced, or NULL. */
static void select_kernel(last_record *r, const struct loom_op *op, loom_call *call, const char *backend,
                          const void *object_pack)
{
    int32_t best_rank_declined = -1;
    int32_t device_type = call->ctx->device.device_type == LOOM_DEVICE_CUDA_HOST
                       || call->ctx->device.device_type == LOOM_DEVICE_CUDA_MANAGED
                           ? LOOM_DEVICE_CPU : call->ctx->device.device_type;

    r->chosen = -1;
    r->fallback = 0;
    /* the registry caps n_kernels at LOOM__MAX_KERNELS; the bound says so to the compiler */
    for (int32_t k = 0; k < op->n_kernels && k < LOOM__MAX_KERNELS; k++) {
        const loom__kernel *kern = op->kernels[k];
        r->why[k][0] = '\0';
        r->reason[k] = R_NOT_TRIED;
        if (r->chosen >= 0) {
            /* after the choice: named for what it is (excluded, another
            ** backend forced) or else lower in the order */
            if (backend != NULL ? strcmp(backend, kern->k.backend) != 0 : op->rank[k] < 0)
                r->reason[k] = backend != NULL ? R_FORCED_OUT : R_EXCLUDED;
            continue;
        }
        if (backend != NULL) {
            if (strcmp(backend, kern->k.backend) != 0) {
                r->reason[k] = R_FORCED_OUT;
                continue;
            }
        } else if (op->rank[k] < 0) {
            r->reason[k] = R_EXCLUDED;
            continue;
        }
        if (kern->k.device_type != device_type) {
            r->reason[k] = R_DEVICE;
            continue;
        }
        if (object_pack != NULL && !same_pack_family(kern->pack, object_pack)) {
            r->reason[k] = R_OTHER_PACK;
            continue;
        }
        const uint64_t kernel_dtypes = kernel_dtype_mask(kern);
        if (kernel_dtypes != 0) {
            int32_t bad = -1;
            for (int32_t i = 0; i < call->n_inputs && bad < 0; i++)
                if (call->inputs[i] != NULL
                    && !(kernel_dtypes & LOOM_DTYPE_BIT(loom_tensor_dtype_of(call->inputs[i]))))
                    bad = i;
            if (bad >= 0) {
                const loom_dtype bad_dt = loom_tensor_dtype_of(call->inputs[bad]);
                r->reason[k] = R_DTYPE;
                snprintf(r->why[k], sizeof r->why[k], "%s of '%s'%s", loom_dtype_name(bad_dt),
                         op->schema->inputs[bad].name,
                         (DTYPES_BEFORE_1_4 & LOOM_DTYPE_BIT(bad_dt)) == 0 && kern->pack != NULL
                                 && kern->pack->abi_minor_built < 4
                             ? " (its pack was built for an ABI before 1.4, which has no such dtype)" : "");
                if (best_rank_declined < 0)
                    best_rank_declined = op->rank[k];
                continue;
            }
        }
        if (kern->k.supports != NULL && kern->k.supports(call, r->why[k], sizeof r->why[k]) != LOOM_OK) {
            r->reason[k] = R_DECLINED;
            if (best_rank_declined < 0)
                best_rank_declined = op->rank[k];
            continue;
        }
        r->chosen = k;
        r->reason[k] = R_CHOSEN;
        r->fallback = best_rank_declined >= 0 && best_rank_declined < op->rank[k];
    }
}

/* select_kernel, then the verdict: LOOM_ENOTSUP when no kernel can run the
** call (or plan: `what`), LOOM_ESTRICT for a fallback LOOM_STRICT forbids. */
static loom_status choose_kernel(last_record *r, const struct loom_op *op, loom_call *call, const char *backend,
                               const void *object_pack, const char *what)
{
    loom_status st;
    select_kernel(r, op, call, backend, object_pack);
    if (r->chosen >= 0 && !(r->fallback && loom__cfg.strict))
        return LOOM_OK;
    const char *have[LOOM__MAX_KERNELS];
    int64_t n_have = backend != NULL && r->chosen < 0 ? loom__op_backends(op, have, 0, LOOM__MAX_KERNELS) : 0;
    int64_t j = 0;
    while (j < n_have && strcmp(have[j], backend) != 0)
        j++;
    if (backend != NULL && r->chosen < 0 && j == n_have) {
        /* a forced backend the op has no kernel of: name the ones it has */
        char list[256] = "no kernels";
        for (int64_t b = 0, len = 0; b < n_have && len < (int64_t)sizeof list; b++)
            len += snprintf(list + len, sizeof list - (size_t)len, "%s%s", b > 0 ? ", " : "", have[b]);
        const char *near = loom__closest(backend, have, n_have);
        if (near != NULL)
            return loom__fail(LOOM_ENOTSUP, "'%s' is not a backend of %s (it has: %s); did you mean '%s'?", backend,
                              op->schema->name, list, near);
        return loom__fail(LOOM_ENOTSUP, "'%s' is not a backend of %s (it has: %s)", backend, op->schema->name, list);
    }
    format_record(r);
    if (r->chosen < 0)
        st = loom__fail(LOOM_ENOTSUP, "no kernel can run this %s: %s", what, r->text);
    else
        st = loom__fail(LOOM_ESTRICT, "LOOM_STRICT=1 forbids the fallback: %s", r->text);
    r->chosen = -1;
    return st;
}

/* After a successful run: every output exists, came from the caller or
** from alloc_output, and still has the dtype, shape, data and device it had
** then. A kernel that broke this is a bug in its pack; the call fails (and
** its outputs are freed) rather than hand a lying tensor to the caller. */
static loom_status check_outputs(const loom__kernel *kern, const loom_op_schema *s, loom_tensor *const *out,
                               const call_state *cs)
{
    for (int32_t i = 0; i < (int32_t)s->n_outputs; i++) {
        uint32_t bit = 1u << i;
        if (out[i] == NULL)
            return loom__fail(LOOM_EINTERNAL, "kernel %s returned without output '%s'", kern->label,
                              s->outputs[i].name);
        if (!((cs->supplied | cs->allocated) & bit))
            return loom__fail(LOOM_EINTERNAL, "kernel %s set output '%s' itself instead of through "
                              "host->alloc_output", kern->label, s->outputs[i].name);
        if (!output_intact(&cs->rec[i], out[i])) {
            char was[160], now[160];
            loom_tensor rec = { .ndim = cs->rec[i].ndim, .shape = (int64_t *)cs->rec[i].shape,
                                .dtype = cs->rec[i].dtype };
            loom_tensor *t = out[i];
            if (t->ndim < 0 || t->ndim > LOOM_MAX_NDIM || (t->ndim > 0 && t->shape == NULL))
                snprintf(now, sizeof now, "ndim %d", t->ndim);
            else
                loom__tensor_describe(t, now, sizeof now);
            loom__tensor_describe(&rec, was, sizeof was);
            if (cs->allocated & bit) {
                /* put the core's own tensor back together so it can be freed */
                t->data = cs->rec[i].data;
                t->byte_offset = cs->rec[i].byte_offset;
                t->shape = (int64_t *)cs->rec[i].shape_ptr;
                t->strides = (int64_t *)cs->rec[i].strides_ptr;
                t->ndim = cs->rec[i].ndim;
                t->dtype = cs->rec[i].dtype;
                t->device = cs->rec[i].device;
                memcpy(t->shape, cs->rec[i].shape, (size_t)t->ndim * sizeof *t->shape);
            }
            return loom__fail(LOOM_EINTERNAL, "kernel %s changed output '%s' after it was allocated as %s "
                              "(now %s): the call fails, as the output no longer describes its data",
                              kern->label, s->outputs[i].name, was, now);
        }
    }
    return LOOM_OK;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One call: from a host (parent NULL), from a kernel or object method
** through host->op_call (parent: the caller's context, which the call
** inherits), or from a plan (kernel and attributes chosen at plan_create). */
typedef struct call_req {
    const struct loom_op *op;
    const loom_tensor *const *inputs;
    int32_t n_inputs;
    const loom_attrs *attrs;                /* a host's bag, or NULL */
    const loom_named_attr *named;           /* a nested call's attributes */
    int32_t n_named;
    loom_tensor **outputs;
    int32_t n_outputs;
    const loom_object *object;
    const char *backend;                    /* forced backend, or NULL */
    void *stream;
    int32_t num_threads;                    /* 0: the pool's (or the caller's) budget */
    const loom_exec_ctx *parent;
    const struct loom_plan *plan;
} call_req;

/* A prepared call. Immutable once made, so several threads may run it. */
struct loom_plan {
    uint32_t magic;
    unsigned epoch;                         /* the loom_init it belongs to */
    const struct loom_op *op;
    int32_t chosen, fallback;
    void *plan_state;                       /* the kernel's prepare() */
    uint32_t n_values;
    loom_attr_value values[LOOM_MAX_ATTRS];
    char *owned;                            /* strings and lists the values point into */
    loom_dl_device device;
    int32_t n_inputs;
    struct plan_input {
        int32_t present, ndim;
        loom_dl_dtype dtype;
        int64_t shape[LOOM_MAX_NDIM];
    } in[LOOM_MAX_ARGS];
    const loom_object *object;
    void *stream;
    int32_t num_threads;
    struct loom_plan *prev, *next;          /* live plans, for shutdown (plans_lock) */
    /* the op's cost() for these shapes and attributes, kept by the first
    ** successful run: 0 unknown, 1 being stored, 2 known (runs may race) */
    _Atomic int cost_known;
    double flops, bytes;
};

/* Inputs of a planned call must be what the plan was made for. */
static loom_status check_plan_inputs(const struct loom_plan *p, const loom_op_schema *s,
                                   const loom_tensor *const *inputs, int32_t n, loom_dl_device *device)
{
    if (n > (int32_t)s->n_inputs || (n > 0 && inputs == NULL))
        return loom__fail(LOOM_EINVAL, "%d inputs given, the op takes %u", n, s->n_inputs);
    *device = p->device;
    for (int32_t i = 0; i < (int32_t)s->n_inputs; i++) {
        const loom_tensor *t = i < n ? inputs[i] : NULL;
        const struct plan_input *w = &p->in[i];
        if ((t != NULL) != (w->present != 0))
            return loom__fail(LOOM_EINVAL, "input '%s' is %s but the plan was made %s it", s->inputs[i].name,
                              t ? "given" : "absent", w->present ? "with" : "without");
        if (t == NULL)
            continue;
        if (t->ndim != w->ndim || t->dtype.code != w->dtype.code || t->dtype.bits != w->dtype.bits
            || t->dtype.lanes != w->dtype.lanes || t->device.device_type != p->device.device_type
            || t->device.device_id != p->device.device_id
            || (t->ndim > 0 && (t->shape == NULL || memcmp(t->shape, w->shape, (size_t)t->ndim * sizeof *t->shape))))
            return loom__fail(LOOM_EINVAL, "input '%s' differs from the plan's description (dtype, shape or "
                              "device); make a plan for it", s->inputs[i].name);
        if (t->data == NULL && loom_numel(t) > 0)
            return loom__fail(LOOM_EINVAL, "input '%s' has NULL data", s->inputs[i].name);
    }
    return LOOM_OK;
}

/* Checks the 1.1 argument flags add to each call's inputs: jagged offsets
** are i64 [B+1], start at 0 and stay within their values (read on the host
** only), and "same dtype as input k". */
static loom_status check_arg_flags(const loom_op_schema *s, const loom_tensor *const *in)
{
    for (int32_t i = 0; i < (int32_t)s->n_inputs; i++) {
        const loom_arg_def *a = &s->inputs[i];
        int32_t k = LOOM_ARG_SAME_DTYPE_INDEX(a->flags);
        if (in[i] == NULL)
            continue;
        if (k >= 0 && k < i && in[k] != NULL && loom_tensor_dtype_of(in[k]) != loom_tensor_dtype_of(in[i]))
            return loom__fail(LOOM_EINVAL, "input '%s' is %s but must have the dtype of input '%s' (%s)", a->name,
                              loom_dtype_name(loom_tensor_dtype_of(in[i])), s->inputs[k].name,
                              loom_dtype_name(loom_tensor_dtype_of(in[k])));
        if ((a->flags & LOOM_ARG_JAGGED) && i + 1 < (int32_t)s->n_inputs) {
            const loom_tensor *off = in[i + 1];
            const char *oname = s->inputs[i + 1].name;
            if (off == NULL)
                return loom__fail(LOOM_EINVAL, "jagged input '%s' needs its offsets '%s'", a->name, oname);
            if (loom_tensor_dtype_of(off) != LOOM_DTYPE_I64 || off->ndim != 1 || off->shape[0] < 1)
                return loom__fail(LOOM_EINVAL, "offsets '%s' must be i64 [B+1]", oname);
            if (loom__is_host(off->device) && loom_is_contiguous(off) && in[i]->ndim >= 1) {
                const int64_t *o = loom_data(off);
                int64_t rows = in[i]->shape[0];
                if (o[0] != 0)
                    return loom__fail(LOOM_EINVAL, "offsets '%s' must start at 0, not %lld", oname, (long long)o[0]);
                for (int64_t b = 1; b < off->shape[0]; b++)
                    if (o[b] < o[b - 1] || o[b] > rows)
                        return loom__fail(LOOM_EINVAL, "offsets '%s'[%lld] = %lld is not in [%lld, %lld] (values "
                                          "'%s' has %lld rows)", oname, (long long)b, (long long)o[b],
                                          (long long)o[b - 1], (long long)rows, a->name, (long long)rows);
            }
        }
    }
    return LOOM_OK;
}

/* Outputs flagged LOOM_ARG_SAME_DTYPE_AS(k) have input k's dtype. */
static loom_status check_output_dtypes(const loom_op_schema *s, const loom_tensor *const *in, loom_tensor *const *out)
{
    for (int32_t i = 0; i < (int32_t)s->n_outputs; i++) {
        int32_t k = LOOM_ARG_SAME_DTYPE_INDEX(s->outputs[i].flags);
        if (k >= 0 && k < (int32_t)s->n_inputs && in[k] != NULL && out[i] != NULL
            && loom_tensor_dtype_of(out[i]) != loom_tensor_dtype_of(in[k]))
            return loom__fail(LOOM_EINTERNAL, "output '%s' is %s but the schema says it has the dtype of input "
                              "'%s' (%s)", s->outputs[i].name, loom_dtype_name(loom_tensor_dtype_of(out[i])),
                              s->inputs[k].name, loom_dtype_name(loom_tensor_dtype_of(in[k])));
    }
    return LOOM_OK;
}

/* The enumerated-attribute table of a schema, read only when the pack's
** struct is new enough to have it. */
static const loom_attr_choices *schema_choices(const loom_op_schema *s, uint32_t *n)
{
    if (!LOOM_HAS_MEMBER(s, loom_op_schema, choices) || s->choices == NULL) {
        *n = 0;
        return NULL;
    }
    *n = s->n_choices;
    return s->choices;
}

/* The error context of a call. A host's call (depth 0) points at the op's
** name, then at its kernel's label, as before (no formatting on the hot
** path). A nested call builds chain[depth] = caller's context + " > " +
** its op, then appends its kernel's "[impl]", so a nested failure reads
** "vision.resnet50 [cpu:x] > core.matmul [cpu:y]: ...". */
/* dst = a + b + c, cut to fit dst[size] (size > 0); no formatting: this runs
** on every nested call. */
static void join3(char *dst, size_t size, const char *a, const char *b, const char *c)
{
    size_t used = 0;
    const char *parts[3] = { a, b, c };
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(parts[i]);
        if (n > size - 1 - used)
            n = size - 1 - used;
        memcpy(dst + used, parts[i], n);
        used += n;
    }
    dst[used] = '\0';
}

static void context_enter(int32_t depth, const char *parent, const char *name)
{
    if (depth == 0) {
        loom__error_context(name);
        return;
    }
    join3(chain[depth], sizeof chain[depth], parent != NULL ? parent : "?", " > ", name);
    loom__error_context(chain[depth]);
}

static void context_kernel(int32_t depth, const loom__kernel *kern)
{
    const char *label = kern->label, *name = kern->k.schema->name;
    size_t n = strlen(name), used;
    if (depth == 0) {
        loom__error_context(label);
        return;
    }
    used = strlen(chain[depth]);
    if (strncmp(label, name, n) == 0)
        join3(chain[depth] + used, sizeof chain[depth] - used, label + n, "", "");
    loom__error_context(chain[depth]);
}

/* Remember a nested call of the current host call, for loom_last_dispatch
** (formatting waits until it is asked for: a kernel's nested calls are hot). */
static void append_nested(int32_t depth, const last_record *r)
{
    if (n_nested < (int32_t)(sizeof nested / sizeof nested[0]))
        nested[n_nested++] = (struct nested_entry){ r->op, (int16_t)depth, (int16_t)r->chosen, (int16_t)r->fallback };
}

/* nested_text: one indented line per remembered nested call. */
static void format_nested(void)
{
    size_t used = 0;
    nested_text[0] = '\0';
    for (int32_t i = 0; i < n_nested && used + 1 < sizeof nested_text; i++) {
        const struct loom_op *op = nested[i].op;
        const loom__kernel *k = nested[i].chosen >= 0 ? op->kernels[nested[i].chosen] : NULL;
        int n = snprintf(nested_text + used, sizeof nested_text - used, "\n%*s> %s -> %s (%s)%s",
                         2 * nested[i].depth, "", op->schema->name, k ? k->k.backend : "no kernel",
                         k && k->k.impl ? k->k.impl : "", nested[i].fallback ? " [fallback]" : "");
        if (n < 0)
            break;
        used = used + (size_t)n < sizeof nested_text ? used + (size_t)n : sizeof nested_text - 1;
    }
}

/* The blank context, bookkeeping and call of one call (or plan), every
** member set one by one: this runs on every call, and a designated
** initialiser would zero them with a slow `rep stos` first. */
static void call_begin(loom_exec_ctx *ctx, call_state *cs, loom_call *call, const loom_op_schema *s,
                       const loom_attr_value *values, int32_t depth, const loom_object *object)
{
    ctx->struct_size = sizeof *ctx;
    ctx->device = loom__cpu();
    ctx->stream = NULL;
    ctx->n_threads = 0;
    ctx->reserved = 0;
    ctx->host = &loom__host_api;
    ctx->core = NULL;
    ctx->cpu_features = 0;
    ctx->depth = depth;
    ctx->reserved2 = 0;
    call->struct_size = sizeof *call;
    call->schema = s;
    call->n_inputs = 0;
    call->inputs = NULL;
    call->n_outputs = 0;
    call->outputs = NULL;
    call->n_attrs = 0;
    call->attrs = values;
    call->object = NULL;
    call->ctx = ctx;
    call->kernel = NULL;
    call->plan_state = NULL;
    cs->supplied = cs->allocated = 0;
    cs->scratch_mark = 0;
    cs->n_extra = 0;
    cs->kernel = NULL;
    cs->object = object;
}

/* For a kernel without LOOM_KERNEL_STRIDED: every strided host input is
** copied into a compact block (host cache memory, freed by release_compact
** after the run) described by compact[i], which replaces it in in[]; a
** strided device input is refused (the core cannot gather device memory).
** LOOM_STRICT=1 refuses a copy instead of making it. */
static loom_status compact_inputs(const loom__kernel *kern, const loom_op_schema *s, const loom_tensor **in,
                                  loom_tensor *compact, void **copies, uint32_t *copied)
{
    for (int32_t i = 0; i < (int32_t)s->n_inputs; i++) {
        const loom_tensor *t = in[i];
        char desc[128];
        if (t == NULL || loom_is_contiguous(t))
            continue;
        loom__tensor_describe(t, desc, sizeof desc);
        if (!loom__is_host(t->device))
            return loom__fail(LOOM_ENOTSUP, "input '%s' %s is strided on a device; kernel %s reads compact inputs "
                              "only (make it compact on the device first)", s->inputs[i].name, desc,
                              kern->k.impl ? kern->k.impl : kern->k.backend);
        if (loom__cfg.strict)
            return loom__fail(LOOM_ESTRICT, "input '%s' %s is strided and kernel %s reads compact inputs only: "
                              "LOOM_STRICT=1 forbids the compact copy (pass a compact tensor)", s->inputs[i].name,
                              desc, kern->k.impl ? kern->k.impl : kern->k.backend);
        size_t esize = loom_dtype_size(loom_tensor_dtype_of(t)), nbytes = loom__tensor_nbytes(t);
        loom_status st = loom__alloc_cap_check(nbytes, "the compact copy of a strided input");
        if (st != LOOM_OK)
            return st;
        if ((copies[i] = loom__host_alloc(nbytes > 0 ? nbytes : 1, 64)) == NULL)
            return loom__fail(LOOM_ENOMEM, "out of memory for the compact copy of input '%s' %s (%zu bytes)",
                              s->inputs[i].name, desc, nbytes);
        *copied |= 1u << i;
        loom__tensor_gather(copies[i], t, esize);
        compact[i] = *t;
        compact[i].data = copies[i];
        compact[i].byte_offset = 0;
        compact[i].strides = NULL;
        in[i] = &compact[i];
        loom__log(2, "%s: input '%s' %s copied to a compact tensor for kernel %s", s->name, s->inputs[i].name,
                  desc, kern->k.impl ? kern->k.impl : kern->k.backend);
    }
    return LOOM_OK;
}

_Static_assert(LOOM_MAX_ARGS <= 32, "one bit per input in a uint32_t");

/* copies[i] is set only where bit i of copied is: the array is never
** cleared on the call path (most calls copy nothing). */
static void release_compact(void **copies, uint32_t copied)
{
    for (int32_t i = 0; copied != 0; i++, copied >>= 1)
        if (copied & 1u)
            loom__host_free(copies[i]);
}

static loom_status dispatch_call(const call_req *q)
{
    const struct loom_op *op = q->op;
    const loom_op_schema *s = op->schema;
    const int32_t depth = q->parent != NULL ? q->parent->depth + 1 : 0;
    loom_attr_value values[LOOM_MAX_ATTRS];
    const loom_tensor *in[LOOM_MAX_ARGS];
    loom_tensor *out[LOOM_MAX_ARGS];
    loom_tensor compact[LOOM_MAX_ARGS];
    void *copies[LOOM_MAX_ARGS];
    uint32_t copied = 0;            /* bit i: copies[i] holds input i's compact copy */
    loom_exec_ctx ctx;
    call_state cs;
    loom_call call;
    const void *object_pack = NULL;
    const char *saved_context = loom__error_context_get();
    const loom__kernel *kern;
    last_record *r;
    loom_status st;
    double t0 = 0;

    call_begin(&ctx, &cs, &call, s, values, depth, q->object);
    if (depth > LOOM_MAX_NESTING)
        return loom__fail(LOOM_EINVAL, "op_call of %s: calls nest deeper than LOOM_MAX_NESTING (%d)", s->name,
                          LOOM_MAX_NESTING);
    if ((r = record_at(depth)) == NULL)
        return loom__fail(LOOM_ENOMEM, "out of memory for the dispatch record of a nested call");
    context_enter(depth, saved_context, s->name);
    if (depth == 0)
        n_nested = 0;
    r->op = op;
    r->epoch = atomic_load_explicit(&loom__epoch, memory_order_relaxed);
    r->chosen = -1;
    r->fallback = 0;
    r->flops = r->bytes = 0;
    r->n_shapes = 0;
    if (q->n_outputs < 0 || q->n_outputs > (int32_t)s->n_outputs || (q->n_outputs > 0 && q->outputs == NULL)) {
        st = loom__fail(LOOM_EINVAL, "%d outputs requested, the op has %u", q->n_outputs, s->n_outputs);
        goto done;
    }
    ctx.device = loom__cpu();
    st = q->plan != NULL ? check_plan_inputs(q->plan, s, q->inputs, q->n_inputs, &ctx.device)
                         : check_inputs(s, q->inputs, q->n_inputs, &ctx.device);
    if (st != LOOM_OK)
        goto done;
    for (int32_t i = 0; i < (int32_t)s->n_inputs; i++)
        in[i] = i < q->n_inputs ? q->inputs[i] : NULL;
    if (q->plan == NULL && (st = check_arg_flags(s, in)) != LOOM_OK)
        goto done;
    /* a plan's shapes are fixed: the record keeps them only when it is shown */
    r->n_shapes = q->plan != NULL && loom__cfg.verbose < 2 ? 0
                : (int32_t)s->n_inputs < MAX_SHAPES ? (int32_t)s->n_inputs : MAX_SHAPES;
    for (int32_t i = 0; i < r->n_shapes; i++) {
        r->ndim[i] = in[i] ? in[i]->ndim : 0;
        r->dtype[i] = in[i] ? loom_tensor_dtype_of(in[i]) : LOOM_DTYPE_INVALID;
        if (in[i] != NULL)
            memcpy(r->shape[i], in[i]->shape, (size_t)in[i]->ndim * sizeof(int64_t));
    }
    r->device_type = ctx.device.device_type;
    for (int32_t i = 0; i < (int32_t)s->n_outputs; i++) {
        out[i] = i < q->n_outputs ? q->outputs[i] : NULL;
        if (out[i] != NULL) {
            if ((st = loom__tensor_check(out[i], "tensor")) != LOOM_OK) {
                st = loom__fail(st, "output '%s': %s", s->outputs[i].name, loom_last_error());
                goto done;
            }
            record_output(&cs.rec[i], out[i]);
            cs.supplied |= 1u << i;
        }
    }
    if (q->plan != NULL) {
        memcpy(values, q->plan->values, (size_t)s->n_attrs * sizeof *values);
    } else {
        uint32_t n_choices;
        const loom_attr_choices *choices = schema_choices(s, &n_choices);
        st = q->named != NULL || q->n_named > 0
           ? loom__attrs_resolve_named(q->named, q->n_named, s->attrs, s->n_attrs, s->name, values)
           : loom__attrs_resolve(q->attrs, s->attrs, s->n_attrs, s->name, values);
        if (st == LOOM_OK)
            st = loom__attrs_check_choices(values, s->attrs, s->n_attrs, choices, n_choices, s->name);
        if (st != LOOM_OK)
            goto done;
    }
    if (s->object_class != NULL) {
        loom_dl_device obj_device;
        if ((st = loom__object_state(q->object, s->object_class, &call.object, &object_pack, &obj_device)) != LOOM_OK
            || (q->plan == NULL && (st = object_device(op, in, obj_device, &ctx.device)) != LOOM_OK))
            goto done;
        r->device_type = ctx.device.device_type;
    }
    call.n_inputs = (int32_t)s->n_inputs;
    call.inputs = in;
    call.n_outputs = (int32_t)s->n_outputs;
    call.outputs = out;
    call.n_attrs = (int32_t)s->n_attrs;
    ctx.core = &cs;
    ctx.stream = q->stream != NULL ? q->stream : q->parent != NULL ? q->parent->stream : NULL;
    ctx.n_threads = q->parent != NULL ? q->parent->n_threads : loom__pool_size();
    if (q->num_threads > 0 && q->num_threads < ctx.n_threads)
        ctx.n_threads = q->num_threads;
    ctx.cpu_features = loom__cpu_features();

    if (q->plan != NULL) {
        for (int32_t k = 0; k < op->n_kernels && k < LOOM_MAX_KERNELS; k++) {
            r->reason[k] = R_NOT_TRIED;
            r->why[k][0] = '\0';
        }
        r->chosen = q->plan->chosen;
        r->fallback = q->plan->fallback;
        r->reason[r->chosen] = R_CHOSEN;
        call.plan_state = q->plan->plan_state;
    } else {
        if ((st = choose_kernel(r, op, &call, q->backend, object_pack, "call")) != LOOM_OK)
            goto done;
    }
    kern = op->kernels[r->chosen];
    cs.kernel = kern;
    call.kernel = &kern->k;
    if (!(kern->k.flags & LOOM_KERNEL_STRIDED) && (st = compact_inputs(kern, s, in, compact, copies, &copied)) != LOOM_OK)
        goto done;
    context_kernel(depth, kern);
    if (depth > 0)
        append_nested(depth, r);
    if (loom__cfg.verbose >= 2) {
        /* before the run, so the lines of nested calls follow, indented */
        format_record(r);
        loom__log(2, "%*s%s", 2 * depth, "", r->text);
        if (loom__cfg.verbose >= 3)
            t0 = now_s();
    }
    scratch_begin(&cs);
    st = kern->k.run(&call);
    scratch_end(&cs);
    if (st == LOOM_OK)
        st = check_outputs(kern, s, out, &cs);
    else if (loom_last_status() != st)
        loom__fail(st, "kernel failed with %s and no message", loom_status_name(st));
    if (st == LOOM_OK)
        st = check_output_dtypes(s, in, out);
    if (loom__cfg.verbose >= 3)
        loom__log(3, "%*s%s: %.1f us", 2 * depth, "", s->name, (now_s() - t0) * 1e6);
    if (st == LOOM_OK && s->cost != NULL) {
        struct loom_plan *p = (struct loom_plan *)q->plan;
        int expected = 0;
        if (p != NULL && atomic_load_explicit(&p->cost_known, memory_order_acquire) == 2) {
            r->flops = p->flops;
            r->bytes = p->bytes;
        } else {
            s->cost(&call, &r->flops, &r->bytes);
            /* one run wins the right to publish (0 -> 1 -> 2); the others just computed it */
            if (p != NULL && atomic_compare_exchange_strong(&p->cost_known, &expected, 1)) {
                p->flops = r->flops;
                p->bytes = r->bytes;
                atomic_store_explicit(&p->cost_known, 2, memory_order_release);
            }
        }
    }

done:
    release_compact(copies, copied);
    for (int32_t i = 0; i < (int32_t)s->n_outputs && i < LOOM_MAX_ARGS; i++) {
        if (!(cs.allocated & (1u << i)))
            continue;
        if (st == LOOM_OK && i < q->n_outputs)
            q->outputs[i] = out[i];
        else
            loom_tensor_free(out[i]);   /* failed call, or an output the caller did not ask for */
    }
    loom__error_context(depth > 0 ? saved_context : NULL);
    return st;
}

/* ------------------------------------------------------------ op handles
**
** A loom_op * given to the host is not the address of the registry's
** record (records belong to snapshots, which loom_shutdown frees): it
** encodes the loom_init epoch and an index into a table of handle entries
** whose memory is never freed. So a handle kept across loom_shutdown fails
** with LOOM_EINVAL instead of reading freed memory, and a handle always
** runs the newest registration of its op (a pack loaded after
** loom_op_find adds its kernels to the handle's op). Entries are created
** by loom_op_find (under handle_lock) and read without a lock. */

#define OP_HANDLE_TAG   (UINT64_C(1) << 61)
#define OP_INDEX_BITS   24
#define OP_EPOCH_BITS   16
#define OP_CHUNK        1024
#define OP_MAX_CHUNKS   ((1u << OP_INDEX_BITS) / OP_CHUNK)

typedef struct op_entry {
    const char *name;                        /* the schema's name (pack memory, never unmapped) */
    _Atomic(const loom__snapshot *) snap;    /* the snapshot op was looked up in */
    _Atomic(const struct loom_op *) op;
} op_entry;

static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(op_entry *) op_chunks[OP_MAX_CHUNKS];   /* never freed */
static uint32_t n_op_entries;                          /* in this epoch, under handle_lock */

static op_entry *op_entry_at(uint32_t index)
{
    op_entry *c = atomic_load_explicit(&op_chunks[index / OP_CHUNK], memory_order_acquire);
    return c != NULL ? &c[index % OP_CHUNK] : NULL;
}

static const loom_op *op_handle(uint32_t index)
{
    uint64_t epoch = (uint64_t)atomic_load(&loom__epoch) & ((1u << OP_EPOCH_BITS) - 1);
    return (const loom_op *)(uintptr_t)(OP_HANDLE_TAG | epoch << OP_INDEX_BITS | (uint64_t)(index + 1));
}

void loom__op_handles_reset(void)
{
    pthread_mutex_lock(&handle_lock);
    n_op_entries = 0;   /* the epoch changed too: no old handle reaches an entry again */
    pthread_mutex_unlock(&handle_lock);
}

/* The handle of op (interned by name in this epoch), or NULL with the error set. */
static const loom_op *op_intern(const struct loom_op *op)
{
    const loom_op *h = NULL;
    uint32_t i;

    pthread_mutex_lock(&handle_lock);
    /* a linear scan: loom_op_find is a set-up call, and a host finds each op once */
    for (i = 0; i < n_op_entries; i++)
        if (strcmp(op_entry_at(i)->name, op->schema->name) == 0)
            break;
    if (i == n_op_entries) {
        if (i == (1u << OP_INDEX_BITS)) {
            loom__fail(LOOM_ENOMEM, "more than %u op handles", 1u << OP_INDEX_BITS);
            goto out;
        }
        if (atomic_load(&op_chunks[i / OP_CHUNK]) == NULL) {
            op_entry *c = calloc(OP_CHUNK, sizeof *c);
            if (c == NULL) {
                loom__fail(LOOM_ENOMEM, "out of memory");
                goto out;
            }
            atomic_store_explicit(&op_chunks[i / OP_CHUNK], c, memory_order_release);
        }
        op_entry *e = op_entry_at(i);
        e->name = op->schema->name;
        atomic_store(&e->op, op);
        atomic_store(&e->snap, loom__snapshot_get());
        n_op_entries++;
    }
    h = op_handle(i);
out:
    pthread_mutex_unlock(&handle_lock);
    return h;
}

const struct loom_op *loom__op_resolve(const loom_op *handle, const char *what)
{
    uint64_t v = (uint64_t)(uintptr_t)handle;
    uint64_t index1 = v & ((1u << OP_INDEX_BITS) - 1);
    uint64_t epoch = (v >> OP_INDEX_BITS) & ((1u << OP_EPOCH_BITS) - 1);
    const loom__snapshot *s;
    const struct loom_op *op;
    op_entry *e;

    if (handle == NULL) {
        loom__fail(LOOM_EINVAL, "%s: op is NULL", what);
        return NULL;
    }
    if ((v & ~((UINT64_C(1) << (OP_INDEX_BITS + OP_EPOCH_BITS)) - 1)) != OP_HANDLE_TAG || index1 == 0
        || index1 - 1 >= OP_MAX_CHUNKS * (uint64_t)OP_CHUNK) {
        loom__fail(LOOM_EINVAL, "%s: op is not a handle from loom_op_find", what);
        return NULL;
    }
    if (!atomic_load_explicit(&loom__initialized, memory_order_acquire)
        || epoch != ((uint64_t)atomic_load(&loom__epoch) & ((1u << OP_EPOCH_BITS) - 1))) {
        loom__fail(LOOM_EINVAL, "%s: op handle from a previous loom_init (loom_shutdown invalidated it; "
                   "find the op again)", what);
        return NULL;
    }
    if ((e = op_entry_at((uint32_t)(index1 - 1))) == NULL || e->name == NULL) {
        loom__fail(LOOM_EINVAL, "%s: op is not a handle from loom_op_find", what);
        return NULL;
    }
    s = loom__snapshot_get();
    op = atomic_load_explicit(&e->op, memory_order_acquire);
    if (atomic_load_explicit(&e->snap, memory_order_acquire) != s) {
        /* a pack was loaded since: follow the op into the new snapshot */
        const struct loom_op *now = loom__op_lookup(s, e->name);
        if (now != NULL) {
            atomic_store_explicit(&e->op, now, memory_order_release);
            atomic_store_explicit(&e->snap, s, memory_order_release);
            op = now;
        }
    }
    return op;
}

static const struct loom_op *op_lookup_initialised(const char *name, const char *what)
{
    const struct loom_op *op;

    if (!atomic_load_explicit(&loom__initialized, memory_order_acquire) && loom_init(NULL) != LOOM_OK)
        return NULL;
    if (name == NULL) {
        loom__fail(LOOM_EINVAL, "%s: name is NULL", what);
        return NULL;
    }
    op = loom__op_lookup(loom__snapshot_get(), name);
    if (op == NULL) {
        const char *near = loom__closest_op(name);
        if (near != NULL)
            loom__fail(LOOM_ENOENT, "no operator named '%s'; did you mean '%s'?", name, near);
        else
            loom__fail(LOOM_ENOENT, "no operator named '%s' (is its pack loaded? see `loom doctor`)", name);
    }
    return op;
}

LOOM_API const loom_op *loom_op_find(const char *name)
{
    const struct loom_op *op = op_lookup_initialised(name, "loom_op_find");
    return op != NULL ? op_intern(op) : NULL;
}

/* A host's loom_call_options, read up to the size it was built with: a host
** built against an older, smaller layout gets defaults for the rest. */
static loom_status read_options(const loom_call_options *opt, loom_call_options *into)
{
    memset(into, 0, sizeof *into);
    into->struct_size = sizeof *into;
    if (opt == NULL)
        return LOOM_OK;
    if (opt->struct_size < sizeof(uint32_t))
        return loom__fail(LOOM_EINVAL, "loom_call_options.struct_size is not set (use LOOM_CALL_OPTIONS_INIT)");
    memcpy(into, opt, opt->struct_size < sizeof *into ? opt->struct_size : sizeof *into);
    into->struct_size = sizeof *into;
    return LOOM_OK;
}

static loom_status host_call(const struct loom_op *op, const loom_tensor *const *inputs, int32_t n_inputs,
                           const loom_attrs *attrs, loom_tensor **outputs, int32_t n_outputs,
                           const loom_call_options *options)
{
    loom_call_options o;
    loom_status st = read_options(options, &o);
    if (st != LOOM_OK)
        return st;
    call_req q = { .op = op, .inputs = inputs, .n_inputs = n_inputs, .attrs = attrs, .outputs = outputs,
                   .n_outputs = n_outputs, .object = o.object, .backend = o.backend, .stream = o.stream,
                   .num_threads = o.num_threads };
    return dispatch_call(&q);
}

LOOM_API loom_status loom_op_run(const loom_op *op, const loom_tensor *const *inputs, int32_t n_inputs,
                                const loom_attrs *attrs, loom_tensor **outputs, int32_t n_outputs,
                                const loom_call_options *options)
{
    const struct loom_op *rec = loom__op_resolve(op, "loom_op_run");
    if (rec == NULL)
        return loom_last_status();
    return host_call(rec, inputs, n_inputs, attrs, outputs, n_outputs, options);
}

LOOM_API loom_status loom_run(const char *name, const loom_tensor *const *inputs, int32_t n_inputs,
                             const loom_attrs *attrs, loom_tensor **outputs, int32_t n_outputs,
                             const loom_call_options *options)
{
    const struct loom_op *op = op_lookup_initialised(name, "loom_run");
    if (op == NULL)
        return loom_last_status();
    return host_call(op, inputs, n_inputs, attrs, outputs, n_outputs, options);
}

/* ----------------------------------------------------- composition (1.1) */

/* host->op_find: a handle, without initialising (packs call it during their
** own init, under the loader's lock, or from kernels). */
const loom_op *loom__host_op_find(const char *name)
{
    const struct loom_op *op;
    if (name == NULL) {
        loom__fail(LOOM_EINVAL, "op_find: name is NULL");
        return NULL;
    }
    op = loom__op_lookup(loom__snapshot_get(), name);
    if (op == NULL) {
        loom__fail(LOOM_ENOENT, "op_find: no operator named '%s' (a pack that calls it lists its pack in depends)",
                   name);
        return NULL;
    }
    return op_intern(op);
}

/* A pack's loom_op_call, read up to its size. */
static loom_status read_op_call(const loom_op_call *c, loom_op_call *into, const char *what)
{
    if (c == NULL || c->struct_size < offsetof(loom_op_call, backend))
        return loom__fail(LOOM_EABI, "%s: the call is NULL or its struct_size is too small", what);
    memset(into, 0, sizeof *into);
    memcpy(into, c, c->struct_size < sizeof *into ? c->struct_size : sizeof *into);
    return LOOM_OK;
}

loom_status loom__host_op_call(loom_exec_ctx *ctx, const loom_op_call *c)
{
    loom_op_call a;
    const struct loom_op *op;
    loom_status st;

    if (ctx == NULL || ctx->core == NULL)
        return loom__fail(LOOM_EINVAL, "op_call: no caller context (call it from a kernel or object method)");
    if ((st = read_op_call(c, &a, "op_call")) != LOOM_OK)
        return st;
    if ((op = loom__op_resolve(a.op, "op_call")) == NULL)
        return loom_last_status();
    call_req q = { .op = op, .inputs = a.inputs, .n_inputs = a.n_inputs, .named = a.attrs, .n_named = a.n_attrs,
                   .outputs = a.outputs, .n_outputs = a.n_outputs, .object = a.object, .backend = a.backend,
                   .parent = ctx };
    return dispatch_call(&q);
}

void loom__host_tensor_free(loom_tensor *t) { loom_tensor_free(t); }

/* ------------------------------------------------------------------ plans */

#define PLAN_MAGIC 0x4E4C504Cu

/* Live plans: loom_shutdown releases their kernel state (pack code must run
** before the packs' fini), and the host frees the plans themselves later. */
static pthread_mutex_t plans_lock = PTHREAD_MUTEX_INITIALIZER;
static struct loom_plan *live_plans;

static void plan_link(struct loom_plan *p)
{
    pthread_mutex_lock(&plans_lock);
    p->next = live_plans;
    if (live_plans != NULL)
        live_plans->prev = p;
    live_plans = p;
    pthread_mutex_unlock(&plans_lock);
}

/* Unlink p and take its kernel state, so exactly one party releases it. */
static void *plan_unlink(struct loom_plan *p, void (**release)(void *))
{
    void *state;
    pthread_mutex_lock(&plans_lock);
    if (p->prev != NULL)
        p->prev->next = p->next;
    else if (live_plans == p)
        live_plans = p->next;
    if (p->next != NULL)
        p->next->prev = p->prev;
    p->prev = p->next = NULL;
    state = p->plan_state;
    *release = state != NULL ? p->op->kernels[p->chosen]->k.release : NULL;
    p->plan_state = NULL;
    pthread_mutex_unlock(&plans_lock);
    return state;
}

void loom__plans_release_all(void)
{
    pthread_mutex_lock(&plans_lock);
    while (live_plans != NULL) {
        struct loom_plan *p = live_plans;
        live_plans = p->next;
        p->prev = p->next = NULL;
        if (p->plan_state != NULL && p->op->kernels[p->chosen]->k.release != NULL)
            p->op->kernels[p->chosen]->k.release(p->plan_state);
        p->plan_state = NULL;
    }
    pthread_mutex_unlock(&plans_lock);
}

/* Copy the strings and lists the plan's values point into one owned block:
** the caller's attribute bag may be freed once the plan exists. */
static loom_status own_values(struct loom_plan *p, const loom_op_schema *s)
{
    size_t need = 0, at = 0;
    for (uint32_t k = 0; k < s->n_attrs; k++) {
        const loom_attr_value *v = &p->values[k];
        if (!v->is_set)
            continue;
        if (v->type == LOOM_ATTR_STRING)
            need += (size_t)v->count + 1;
        else if (v->type == LOOM_ATTR_INTS || v->type == LOOM_ATTR_FLOATS)
            need += (size_t)v->count * 8;
    }
    if (need == 0)
        return LOOM_OK;
    if ((p->owned = malloc(need)) == NULL)
        return loom__fail(LOOM_ENOMEM, "plan: out of memory");
    for (uint32_t k = 0; k < s->n_attrs; k++) {
        loom_attr_value *v = &p->values[k];
        if (!v->is_set)
            continue;
        if (v->type == LOOM_ATTR_STRING) {
            memcpy(p->owned + at, v->u.s, (size_t)v->count + 1);
            v->u.s = p->owned + at;
            at += (size_t)v->count + 1;
        } else if ((v->type == LOOM_ATTR_INTS || v->type == LOOM_ATTR_FLOATS) && v->count > 0) {
            memcpy(p->owned + at, v->u.ints, (size_t)v->count * 8);
            v->u.ints = (const int64_t *)(void *)(p->owned + at);
            at += (size_t)v->count * 8;
        }
    }
    return LOOM_OK;
}

static loom_status plan_make(loom_plan **out, const struct loom_op *op, const loom_tensor *const *inputs,
                           int32_t n_inputs, const loom_attrs *attrs, const loom_named_attr *named, int32_t n_named,
                           const loom_object *object, const char *backend, void *stream, int32_t num_threads)
{
    const loom_op_schema *s = op->schema;
    struct loom_plan *p;
    const loom_tensor *in[LOOM_MAX_ARGS];
    loom_exec_ctx ctx;
    call_state cs;
    loom_call call;
    const void *object_pack = NULL;
    last_record *r = &last;
    uint32_t n_choices;
    const loom_attr_choices *choices = schema_choices(s, &n_choices);
    loom_status st;

    *out = NULL;
    if ((p = calloc(1, sizeof *p)) == NULL)
        return loom__fail(LOOM_ENOMEM, "plan: out of memory");
    call_begin(&ctx, &cs, &call, s, p->values, 0, object);
    loom__error_context(s->name);
    p->device = loom__cpu();
    /* descriptions: tensors whose data may be NULL */
    if (n_inputs > (int32_t)s->n_inputs || (n_inputs > 0 && inputs == NULL)) {
        st = loom__fail(LOOM_EINVAL, "%d inputs given, the op takes %u", n_inputs, s->n_inputs);
        goto fail;
    }
    for (int32_t i = 0; i < (int32_t)s->n_inputs; i++) {
        const loom_tensor *t = i < n_inputs ? inputs[i] : NULL;
        in[i] = t;
        if (t == NULL) {
            if (!(s->inputs[i].flags & LOOM_ARG_OPTIONAL)) {
                st = loom__fail(LOOM_EINVAL, "required input '%s' (#%d) is missing", s->inputs[i].name, i);
                goto fail;
            }
            continue;
        }
        if (loom_tensor_dtype_of(t) == LOOM_DTYPE_INVALID || t->ndim < 0 || t->ndim > LOOM_MAX_NDIM
            || (t->ndim > 0 && t->shape == NULL)) {
            st = loom__fail(LOOM_EINVAL, "input '%s': not a valid tensor description", s->inputs[i].name);
            goto fail;
        }
        for (int32_t d = 0; d < t->ndim; d++)
            if (t->shape[d] < 0) {
                st = loom__fail(LOOM_EINVAL, "input '%s': negative dimension", s->inputs[i].name);
                goto fail;
            }
        p->in[i].present = 1;
        p->in[i].ndim = t->ndim;
        p->in[i].dtype = t->dtype;
        memcpy(p->in[i].shape, t->shape, (size_t)t->ndim * sizeof *t->shape);
        p->device = t->device;
    }
    p->n_inputs = (int32_t)s->n_inputs;
    st = named != NULL || n_named > 0
       ? loom__attrs_resolve_named(named, n_named, s->attrs, s->n_attrs, s->name, p->values)
       : loom__attrs_resolve(attrs, s->attrs, s->n_attrs, s->name, p->values);
    if (st == LOOM_OK)
        st = loom__attrs_check_choices(p->values, s->attrs, s->n_attrs, choices, n_choices, s->name);
    if (st == LOOM_OK)
        st = own_values(p, s);
    if (st != LOOM_OK)
        goto fail;
    p->n_values = s->n_attrs;
    if (s->object_class != NULL) {
        loom_dl_device obj_device;
        if ((st = loom__object_state(object, s->object_class, &call.object, &object_pack, &obj_device)) != LOOM_OK
            || (st = object_device(op, in, obj_device, &p->device)) != LOOM_OK)
            goto fail;
    }
    /* choose the kernel as a call would: supports() sees the descriptions */
    call.n_inputs = (int32_t)s->n_inputs;
    call.inputs = in;
    call.n_attrs = (int32_t)s->n_attrs;
    ctx.device = p->device;
    ctx.core = &cs;
    ctx.stream = stream;
    /* prepare() sees the budget the plan's runs will have, so what it builds
    ** for a thread count (a oneDNN primitive) is what they use */
    ctx.n_threads = loom__pool_size();
    if (num_threads > 0 && num_threads < ctx.n_threads)
        ctx.n_threads = num_threads;
    ctx.cpu_features = loom__cpu_features();
    r->op = op;
    r->epoch = atomic_load(&loom__epoch);
    r->n_shapes = 0;
    r->device_type = p->device.device_type;
    if ((st = choose_kernel(r, op, &call, backend, object_pack, "plan")) != LOOM_OK)
        goto fail;
    p->chosen = r->chosen;
    p->fallback = r->fallback;
    if (op->kernels[p->chosen]->k.prepare != NULL) {
        call.kernel = &op->kernels[p->chosen]->k;
        if ((st = op->kernels[p->chosen]->k.prepare(&call, &p->plan_state)) != LOOM_OK) {
            if (loom_last_status() != st)
                loom__fail(st, "prepare failed with %s and no message", loom_status_name(st));
            goto fail;
        }
    }
    p->magic = PLAN_MAGIC;
    p->epoch = atomic_load(&loom__epoch);
    p->op = op;
    p->object = object;
    p->stream = stream;
    p->num_threads = num_threads;
    plan_link(p);
    loom__error_context(NULL);
    *out = p;
    return LOOM_OK;
fail:
    free(p->owned);
    free(p);
    loom__error_context(NULL);
    return st;
}

static const struct loom_plan *plan_check(const loom_plan *p, const char *what)
{
    if (p == NULL || p->magic != PLAN_MAGIC) {
        loom__fail(LOOM_EINVAL, "%s: not a plan", what);
        return NULL;
    }
    if (p->epoch != atomic_load(&loom__epoch)) {
        loom__fail(LOOM_EINVAL, "%s: plan from a previous loom_init (make it again)", what);
        return NULL;
    }
    return p;
}

LOOM_API loom_status loom_plan_create(loom_plan **out, const loom_op *handle, const loom_tensor *const *inputs,
                                    int32_t n_inputs, const loom_attrs *attrs, const loom_call_options *options)
{
    const struct loom_op *op;
    loom_call_options o;
    loom_status st;

    if (out == NULL)
        return loom__fail(LOOM_EINVAL, "loom_plan_create: out is NULL");
    *out = NULL;
    if ((op = loom__op_resolve(handle, "loom_plan_create")) == NULL)
        return loom_last_status();
    if ((st = read_options(options, &o)) != LOOM_OK)
        return st;
    return plan_make(out, op, inputs, n_inputs, attrs, NULL, 0, o.object, o.backend, o.stream, o.num_threads);
}

LOOM_API loom_status loom_plan_run(loom_plan *plan, const loom_tensor *const *inputs, int32_t n_inputs,
                                 loom_tensor **outputs, int32_t n_outputs)
{
    const struct loom_plan *p = plan_check(plan, "loom_plan_run");
    if (p == NULL)
        return loom_last_status();
    call_req q = { .op = p->op, .inputs = inputs, .n_inputs = n_inputs, .outputs = outputs, .n_outputs = n_outputs,
                   .object = p->object, .stream = p->stream, .num_threads = p->num_threads, .plan = p };
    return dispatch_call(&q);
}

LOOM_API void loom_plan_free(loom_plan *plan)
{
    void (*release)(void *);
    void *state;

    if (plan == NULL || plan->magic != PLAN_MAGIC)
        return;
    /* a plan of a previous init had its state released by loom_shutdown */
    state = plan_unlink(plan, &release);
    if (state != NULL && release != NULL)
        release(state);
    plan->magic = 0;
    free(plan->owned);
    free(plan);
}

loom_status loom__host_plan_create(loom_exec_ctx *ctx, const loom_op_call *c, loom_plan **out)
{
    loom_op_call a;
    const struct loom_op *op;
    loom_status st;

    if (out == NULL)
        return loom__fail(LOOM_EINVAL, "plan_create: out is NULL");
    *out = NULL;
    if ((st = read_op_call(c, &a, "plan_create")) != LOOM_OK)
        return st;
    if ((op = loom__op_resolve(a.op, "plan_create")) == NULL)
        return loom_last_status();
    return plan_make(out, op, a.inputs, a.n_inputs, NULL, a.attrs, a.n_attrs, a.object, a.backend,
                     ctx != NULL ? ctx->stream : NULL, 0);
}

loom_status loom__host_plan_run(loom_exec_ctx *ctx, loom_plan *plan, const loom_tensor *const *inputs,
                              int32_t n_inputs, loom_tensor **outputs, int32_t n_outputs)
{
    const struct loom_plan *p = plan_check(plan, "plan_run");
    if (p == NULL)
        return loom_last_status();
    if (ctx == NULL || ctx->core == NULL)
        return loom__fail(LOOM_EINVAL, "plan_run: no caller context (call it from a kernel or object method)");
    call_req q = { .op = p->op, .inputs = inputs, .n_inputs = n_inputs, .outputs = outputs, .n_outputs = n_outputs,
                   .object = p->object, .parent = ctx, .plan = p };
    return dispatch_call(&q);
}

/* ------------------------------------------------ per-device object state */

void *loom__host_object_backend_state(loom_call *call, loom_backend_state_create create,
                                      loom_backend_state_destroy destroy)
{
    call_state *cs = call != NULL && call->ctx != NULL ? call->ctx->core : NULL;
    if (cs == NULL || cs->object == NULL || cs->kernel == NULL || create == NULL) {
        loom__fail(LOOM_EINVAL, "object_backend_state: only inside a method call, with a create function");
        return NULL;
    }
    return loom__object_backend_state(cs->object, cs->kernel->pack, call, create, destroy);
}

LOOM_API const loom_op_schema *loom_op_schema_of(const loom_op *handle)
{
    const struct loom_op *op = handle != NULL ? loom__op_resolve(handle, "loom_op_schema_of") : NULL;
    return op != NULL ? op->schema : NULL;
}

LOOM_API int64_t loom_op_kernel_count(const loom_op *handle)
{
    const struct loom_op *op = handle != NULL ? loom__op_resolve(handle, "loom_op_kernel_count") : NULL;
    return op != NULL ? op->n_kernels : 0;
}

LOOM_API loom_status loom_op_kernel_at(const loom_op *handle, int64_t index, loom_kernel_info *out)
{
    loom_kernel_info info = LOOM_KERNEL_INFO_INIT;
    const struct loom_op *op = loom__op_resolve(handle, "loom_op_kernel_at");
    const loom__kernel *k;

    if (op == NULL)
        return loom_last_status();
    if (index < 0 || index >= op->n_kernels)
        return loom__fail(LOOM_ENOENT, "loom_op_kernel_at: no kernel %lld", (long long)index);
    k = op->kernels[index];
    info.backend = k->k.backend;
    info.impl = k->k.impl ? k->k.impl : k->k.backend;
    info.pack = k->pack->name;
    info.device_type = k->k.device_type;
    info.dtypes = k->k.dtypes;
    info.excluded = op->rank[index] < 0;
    info.device_present = loom__device_type_present(k->k.device_type);
    return loom__struct_out(out, &info, sizeof info, "loom_op_kernel_at");
}
