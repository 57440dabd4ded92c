/*
** dispatch.c - route one operator call to one kernel, and run it.
**
** A call goes to the device of its input tensors, then to the first kernel
** in the op's policy order (LOOM_BACKENDS, then kernel priority) that runs
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

static _Thread_local last_record last;

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

static void arena_destroy(void *p)
{
    arena *a = p;
    free(a->base);
    free(a);
}

static void arena_key_make(void) { pthread_key_create(&arena_key, arena_destroy); }

static arena *thread_arena(void)
{
    arena *a;
    pthread_once(&arena_once, arena_key_make);
    a = pthread_getspecific(arena_key);
    if (a == NULL && (a = calloc(1, sizeof *a)) != NULL)
        pthread_setspecific(arena_key, a);
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

/* --------------------------------------------------------------- records */

static const char *reason_text(int r)
{
    static const char *const t[] = {
        [R_NOT_TRIED] = "not tried (an earlier candidate ran)", [R_CHOSEN] = "chosen",
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
        PUT("; %s: %s%s%s", op->kernels[k]->k.impl ? op->kernels[k]->k.impl : op->kernels[k]->k.backend,
            reason_text(r->reason[k]), r->why[k][0] ? ": " : "", r->why[k]);
    }
#undef PUT
}

LOOM_API loom_status loom_last_dispatch(loom_dispatch_info *out)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;

    if (last.op == NULL || last.epoch != atomic_load(&loom__epoch))
        return loom__fail(LOOM_ENOENT, "loom_last_dispatch: no call on this thread since loom_init");
    format_record(&last);
    info.op = last.op->schema->name;
    if (last.chosen >= 0) {
        info.backend = last.op->kernels[last.chosen]->k.backend;
        info.impl = last.op->kernels[last.chosen]->k.impl;
    }
    info.fallback = last.fallback;
    info.text = last.text;
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

static int same_pack_family(const loom__pack *a, const loom__pack *b)
{
    if (a == b)
        return 1;
    if (a == NULL || b == NULL || a->name == NULL || b->name == NULL)
        return 0;
    return family_prefix(a->name, b->name) || family_prefix(b->name, a->name);
}

/* Pick a kernel into last.chosen; fills last.reason[]. */
static void select_kernel(const struct loom_op *op, loom_call *call, const loom_call_options *opt,
                          const void *object_pack)
{
    int32_t best_rank_declined = -1;
    int32_t device_type = call->ctx->device.device_type == LOOM_DEVICE_CUDA_HOST
                       || call->ctx->device.device_type == LOOM_DEVICE_CUDA_MANAGED
                           ? LOOM_DEVICE_CPU : call->ctx->device.device_type;

    last.chosen = -1;
    last.fallback = 0;
    /* the registry caps n_kernels at LOOM__MAX_KERNELS; the bound says so to the compiler */
    for (int32_t k = 0; k < op->n_kernels && k < LOOM__MAX_KERNELS; k++) {
        const loom__kernel *kern = op->kernels[k];
        last.why[k][0] = '\0';
        last.reason[k] = R_NOT_TRIED;
        if (last.chosen >= 0)
            continue;
        if (opt != NULL && opt->backend != NULL) {
            if (strcmp(opt->backend, kern->k.backend) != 0) {
                last.reason[k] = R_FORCED_OUT;
                continue;
            }
        } else if (op->rank[k] < 0) {
            last.reason[k] = R_EXCLUDED;
            continue;
        }
        if (kern->k.device_type != device_type) {
            last.reason[k] = R_DEVICE;
            continue;
        }
        if (object_pack != NULL && !same_pack_family(kern->pack, object_pack)) {
            last.reason[k] = R_OTHER_PACK;
            continue;
        }
        if (kern->k.dtypes != 0) {
            int32_t bad = -1;
            for (int32_t i = 0; i < call->n_inputs && bad < 0; i++)
                if (call->inputs[i] != NULL
                    && !(kern->k.dtypes & LOOM_DTYPE_BIT(loom_tensor_dtype_of(call->inputs[i]))))
                    bad = i;
            if (bad >= 0) {
                last.reason[k] = R_DTYPE;
                snprintf(last.why[k], sizeof last.why[k], "%s of '%s'",
                         loom_dtype_name(loom_tensor_dtype_of(call->inputs[bad])), op->schema->inputs[bad].name);
                if (best_rank_declined < 0)
                    best_rank_declined = op->rank[k];
                continue;
            }
        }
        if (kern->k.supports != NULL && kern->k.supports(call, last.why[k], sizeof last.why[k]) != LOOM_OK) {
            last.reason[k] = R_DECLINED;
            if (best_rank_declined < 0)
                best_rank_declined = op->rank[k];
            continue;
        }
        last.chosen = k;
        last.reason[k] = R_CHOSEN;
        last.fallback = best_rank_declined >= 0 && best_rank_declined < op->rank[k];
    }
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

static loom_status run_call(const struct loom_op *op, const loom_tensor *const *inputs, int32_t n_inputs,
                          const loom_attrs *attrs, loom_tensor **outputs, int32_t n_outputs,
                          const loom_call_options *opt)
{
    const loom_op_schema *s = op->schema;
    loom_attr_value values[LOOM__MAX_ATTRS];
    const loom_tensor *in[LOOM__MAX_ARGS];
    loom_tensor *out[LOOM__MAX_ARGS];
    loom_exec_ctx ctx = { .struct_size = sizeof ctx, .host = &loom__host_api };
    call_state cs;
    loom_call call = { .struct_size = sizeof call, .schema = s, .attrs = values, .ctx = &ctx };
    const void *object_pack = NULL;
    loom_status st;
    double t0 = 0;

    cs.supplied = cs.allocated = 0;
    cs.scratch_mark = 0;
    cs.n_extra = 0;
    loom__error_context(s->name);
    last.op = op;
    last.epoch = atomic_load_explicit(&loom__epoch, memory_order_relaxed);
    last.chosen = -1;
    last.flops = last.bytes = 0;
    if (n_outputs < 0 || n_outputs > (int32_t)s->n_outputs || (n_outputs > 0 && outputs == NULL)) {
        st = loom__fail(LOOM_EINVAL, "%d outputs requested, the op has %u", n_outputs, s->n_outputs);
        goto done;
    }
    ctx.device = loom__cpu();
    if ((st = check_inputs(s, inputs, n_inputs, &ctx.device)) != LOOM_OK)
        goto done;
    for (int32_t i = 0; i < (int32_t)s->n_inputs; i++)
        in[i] = i < n_inputs ? inputs[i] : NULL;
    last.n_shapes = (int32_t)s->n_inputs < MAX_SHAPES ? (int32_t)s->n_inputs : MAX_SHAPES;
    for (int32_t i = 0; i < last.n_shapes; i++) {
        last.ndim[i] = in[i] ? in[i]->ndim : 0;
        last.dtype[i] = in[i] ? loom_tensor_dtype_of(in[i]) : LOOM_DTYPE_INVALID;
        if (in[i] != NULL)
            memcpy(last.shape[i], in[i]->shape, (size_t)in[i]->ndim * sizeof(int64_t));
    }
    last.device_type = ctx.device.device_type;
    for (int32_t i = 0; i < (int32_t)s->n_outputs; i++) {
        out[i] = i < n_outputs ? outputs[i] : NULL;
        if (out[i] != NULL) {
            if ((st = loom__tensor_check(out[i], "tensor")) != LOOM_OK) {
                st = loom__fail(st, "output '%s': %s", s->outputs[i].name, loom_last_error());
                goto done;
            }
            record_output(&cs.rec[i], out[i]);
            cs.supplied |= 1u << i;
        }
    }
    if ((st = loom__attrs_resolve(attrs, s->attrs, s->n_attrs, s->name, values)) != LOOM_OK)
        goto done;
    if (s->object_class != NULL) {
        if ((st = loom__object_state(opt ? opt->object : NULL, s->object_class, &call.object, &object_pack))
            != LOOM_OK)
            goto done;
    }
    call.n_inputs = (int32_t)s->n_inputs;
    call.inputs = in;
    call.n_outputs = (int32_t)s->n_outputs;
    call.outputs = out;
    call.n_attrs = (int32_t)s->n_attrs;
    ctx.core = &cs;
    ctx.stream = opt ? opt->stream : NULL;
    ctx.n_threads = loom__pool_size();
    if (opt != NULL && opt->num_threads > 0 && opt->num_threads < ctx.n_threads)
        ctx.n_threads = opt->num_threads;

    select_kernel(op, &call, opt, object_pack);
    if (last.chosen < 0 || (last.fallback && loom__cfg.strict)) {
        format_record(&last);
        st = loom__fail(last.chosen < 0 ? LOOM_ENOTSUP : LOOM_ESTRICT, "%s%s",
                        last.chosen < 0 ? "no kernel can run this call: " : "LOOM_STRICT=1 forbids the fallback: ",
                        last.text);
        last.chosen = -1;
        goto done;
    }
    const loom__kernel *kern = op->kernels[last.chosen];
    loom__error_context(kern->label);
    if (loom__cfg.verbose >= 3)
        t0 = now_s();
    scratch_begin(&cs);
    st = kern->k.run(&call);
    scratch_end(&cs);
    if (st == LOOM_OK)
        st = check_outputs(kern, s, out, &cs);
    else if (loom_last_status() != st) {
        loom__fail(st, "kernel failed with %s and no message", loom_status_name(st));
    }
    if (loom__cfg.verbose >= 2) {
        format_record(&last);
        if (loom__cfg.verbose >= 3)
            loom__log(2, "%s; %.1f us", last.text, (now_s() - t0) * 1e6);
        else
            loom__log(2, "%s", last.text);
    }
    if (st == LOOM_OK && s->cost != NULL)
        s->cost(&call, &last.flops, &last.bytes);

done:
    for (int32_t i = 0; i < (int32_t)s->n_outputs && i < LOOM__MAX_ARGS; i++) {
        if (!(cs.allocated & (1u << i)))
            continue;
        if (st == LOOM_OK && i < n_outputs) {
            outputs[i] = out[i];
        } else {
            loom_tensor_free(out[i]);   /* failed call, or an output the caller did not ask for */
        }
    }
    loom__error_context(NULL);
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
    if (op == NULL)
        loom__fail(LOOM_ENOENT, "no operator named '%s' (is its pack loaded? see `loom doctor`)", name);
    return op;
}

LOOM_API const loom_op *loom_op_find(const char *name)
{
    const struct loom_op *op = op_lookup_initialised(name, "loom_op_find");
    return op != NULL ? op_intern(op) : NULL;
}

static loom_status check_options(const loom_call_options *opt)
{
    /* Every member exists since ABI 1.0, so a smaller size means unset. */
    if (opt != NULL && opt->struct_size < sizeof(loom_call_options))
        return loom__fail(LOOM_EINVAL, "loom_call_options.struct_size is not set (use LOOM_CALL_OPTIONS_INIT)");
    return LOOM_OK;
}

LOOM_API loom_status loom_op_run(const loom_op *op, const loom_tensor *const *inputs, int32_t n_inputs,
                                const loom_attrs *attrs, loom_tensor **outputs, int32_t n_outputs,
                                const loom_call_options *options)
{
    const struct loom_op *rec = loom__op_resolve(op, "loom_op_run");
    loom_status st;

    if (rec == NULL)
        return loom_last_status();
    if ((st = check_options(options)) != LOOM_OK)
        return st;
    return run_call(rec, inputs, n_inputs, attrs, outputs, n_outputs, options);
}

LOOM_API loom_status loom_run(const char *name, const loom_tensor *const *inputs, int32_t n_inputs,
                             const loom_attrs *attrs, loom_tensor **outputs, int32_t n_outputs,
                             const loom_call_options *options)
{
    const struct loom_op *op = op_lookup_initialised(name, "loom_run");
    loom_status st;

    if (op == NULL)
        return loom_last_status();
    if ((st = check_options(options)) != LOOM_OK)
        return st;
    return run_call(op, inputs, n_inputs, attrs, outputs, n_outputs, options);
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
    return loom__struct_out(out, &info, sizeof info, "loom_op_kernel_at");
}
