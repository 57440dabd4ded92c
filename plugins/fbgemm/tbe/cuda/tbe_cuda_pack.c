/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_cuda_pack.c - the cuda kernel of fbgemm.tbe (fbgemm-cuda.so): the
** shared front end (tbe_plan.c) checks the call, the tables are mirrored
** on the device once per object, and tbe_cuda_kernels.cu runs the bounds
** repair and the forward on the call's stream.
**
** Device copies (fbg_tbe_state.device_state, made on the first cuda call
** of an object under a lock, freed with the object): every table is
** re-laid with rows on 16-byte boundaries (tbe_cuda.h).
**   cache_load_factor == 1: device memory (cudaMalloc), the DEVICE
**     placement of fbgemm.
**   cache_load_factor  < 1: managed memory (cudaMallocManaged) advised
**     read-mostly with its preferred location on the host: the rows stay
**     in host memory and the GPU pulls the pages it touches, which plays
**     fbgemm's UVM slow tier. The GPU's hardware page migration stands in
**     for the set-associative software cache of the cpu backend (cache/),
**     so fbgemm.tbe_cache_stats stays at zero for cuda calls.
** One device per object: a call on another device is refused.
**
** Synchronisation: FATAL and WARNING read the bounds flags back after the
** kernel (a stream synchronisation); IGNORE and NONE stay asynchronous.
**
** The file ends with the tbe module of fbgemm-cuda.so: the ops
** (FBG_TBE_OPS) and this kernel.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "tbe/cuda/tbe_cuda.h"
#include "tbe/tbe_internal.h"
#include "pack.h"

static const char *OP = "fbgemm.tbe";

typedef struct tbe_cuda_state {
    int32_t device;
    int managed;                /* tables in managed memory */
    int32_t n_tables;
    void **table_mem;           /* [n_tables] */
    fbg_cuda_feature *features; /* device [n_features] */
    pthread_mutex_t lock;
    int warned;                 /* WARNING mode logged already */
} tbe_cuda_state;

static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;

static loom_status cuda_fail(cudaError_t e, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: %s: %s (%s)", OP, what, cudaGetErrorString(e), cudaGetErrorName(e));
}

static void state_free(void *p)
{
    tbe_cuda_state *ds = p;
    if (ds == NULL)
        return;
    if (cudaSetDevice(ds->device) == cudaSuccess) {
        for (int32_t t = 0; ds->table_mem != NULL && t < ds->n_tables; t++)
            if (ds->table_mem[t] != NULL)
                cudaFree(ds->table_mem[t]);
        if (ds->features != NULL)
            cudaFree(ds->features);
    }
    free(ds->table_mem);
    pthread_mutex_destroy(&ds->lock);
    free(ds);
}

static int64_t device_stride(const fbg_tbe_table *t)
{
    return (t->row_stride + 15) / 16 * 16;
}

/* One table into fresh device or managed memory, rows 16-byte aligned. */
static loom_status upload_table(const fbg_tbe_table *t, int managed, int32_t device, void **out)
{
    const int64_t stride = device_stride(t);
    const size_t bytes = (size_t)(t->rows > 0 ? t->rows : 1) * (size_t)stride;
    cudaError_t e;
    *out = NULL;
    if (managed) {
        e = cudaMallocManaged(out, bytes, cudaMemAttachGlobal);
        if (e != cudaSuccess)
            return cuda_fail(e, "cudaMallocManaged for a table");
        uint8_t *m = *out;
        memset(m, 0, bytes);
        for (int64_t r = 0; r < t->rows; r++)
            memcpy(m + r * stride, t->base + r * t->row_stride, (size_t)t->row_stride);
        struct cudaMemLocation host = { .type = cudaMemLocationTypeHost, .id = 0 };
        struct cudaMemLocation dev = { .type = cudaMemLocationTypeDevice, .id = device };
        /* advice is a hint: a device without it still works */
        (void)cudaMemAdvise(m, bytes, cudaMemAdviseSetReadMostly, dev);
        (void)cudaMemAdvise(m, bytes, cudaMemAdviseSetPreferredLocation, host);
        (void)cudaGetLastError();
        return LOOM_OK;
    }
    e = cudaMalloc(out, bytes);
    if (e == cudaSuccess)
        e = cudaMemset(*out, 0, bytes);
    if (e == cudaSuccess && t->rows > 0)
        e = cudaMemcpy2D(*out, (size_t)stride, t->base, (size_t)t->row_stride, (size_t)t->row_stride,
                         (size_t)t->rows, cudaMemcpyHostToDevice);
    return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "uploading a table");
}

static loom_status state_create(const fbg_tbe_state *s, int32_t device, tbe_cuda_state **out)
{
    tbe_cuda_state *ds = calloc(1, sizeof *ds);
    fbg_cuda_feature *host_f = calloc((size_t)s->n_features, sizeof *host_f);
    loom_status st = LOOM_OK;
    cudaError_t e;
    if (ds == NULL || host_f == NULL || (ds->table_mem = calloc((size_t)s->n_tables, sizeof(void *))) == NULL) {
        free(host_f);
        if (ds != NULL)
            free(ds->table_mem);
        free(ds);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", OP);
    }
    pthread_mutex_init(&ds->lock, NULL);
    ds->device = device;
    ds->managed = s->cache_load_factor < 1.0;
    ds->n_tables = s->n_tables;
    if ((e = cudaSetDevice(device)) != cudaSuccess)
        st = cuda_fail(e, "cudaSetDevice");
    for (int32_t t = 0; st == LOOM_OK && t < s->n_tables; t++)
        st = upload_table(&s->tables[t], ds->managed, device, &ds->table_mem[t]);
    for (int32_t f = 0; st == LOOM_OK && f < s->n_features; f++) {
        const int32_t t = s->feature_table_map[f];
        host_f[f] = (fbg_cuda_feature){ .rows = ds->table_mem[t], .n_rows = s->tables[t].rows,
                                        .stride = device_stride(&s->tables[t]), .d_offset = s->D_offsets[f],
                                        .dim = s->tables[t].dim, .wtype = s->tables[t].wtype };
    }
    if (st == LOOM_OK) {
        const size_t fb = (size_t)s->n_features * sizeof *host_f;
        e = cudaMalloc((void **)&ds->features, fb > 0 ? fb : 1);
        if (e == cudaSuccess)
            e = cudaMemcpy(ds->features, host_f, fb, cudaMemcpyHostToDevice);
        if (e != cudaSuccess)
            st = cuda_fail(e, "uploading the feature table");
    }
    free(host_f);
    if (st != LOOM_OK) {
        state_free(ds);
        return st;
    }
    *out = ds;
    return LOOM_OK;
}

/* The object's device mirror, made on first use. */
static loom_status state_get(const fbg_tbe_state *s, int32_t device, tbe_cuda_state **out)
{
    loom_status st = LOOM_OK;
    pthread_mutex_lock(&setup_lock);
    tbe_cuda_state *ds = s->device_state;
    if (ds == NULL) {
        st = state_create(s, device, &ds);
        if (st == LOOM_OK) {
            fbg_tbe_state *w = (fbg_tbe_state *)(uintptr_t)s;  /* the backend-owned members */
            w->device_state = ds;
            w->device_state_free = state_free;
        }
    } else if (s->device_state_free != state_free) {
        st = pk_host->fail(LOOM_ENOTSUP, "%s: this object already holds another backend's device state", OP);
    }
    pthread_mutex_unlock(&setup_lock);
    if (st == LOOM_OK && ds->device != device)
        st = pk_host->fail(LOOM_ENOTSUP, "%s: the object's tables live on cuda:%d; this call is on cuda:%d", OP,
                           (int)ds->device, (int)device);
    *out = ds;
    return st;
}

/* Device copy of n int64 host values in call scratch. */
static loom_status to_device(loom_call *call, const int64_t *src, size_t n, void *stream, const int64_t **out)
{
    void *d = pk_host->scratch(call->ctx, n * sizeof *src);
    if (d == NULL)
        return LOOM_ENOMEM;
    cudaError_t e = cudaMemcpyAsync(d, src, n * sizeof *src, cudaMemcpyHostToDevice, stream);
    if (e != cudaSuccess)
        return cuda_fail(e, "copying VBE metadata");
    *out = d;
    return LOOM_OK;
}

static int64_t read_index(const void *dev, int32_t dtype, int64_t i)
{
    int64_t v = 0;
    int32_t v32 = 0;
    if (dtype == LOOM_DTYPE_I64)
        cudaMemcpy(&v, (const int64_t *)dev + i, 8, cudaMemcpyDeviceToHost);
    else if (cudaMemcpy(&v32, (const int32_t *)dev + i, 4, cudaMemcpyDeviceToHost) == cudaSuccess)
        v = v32;
    return v;
}

/* FATAL: fail naming the first problem; WARNING: log once per object. */
static loom_status report_bounds(const fbg_cuda_flags *fl, const fbg_tbe_plan *p, int32_t mode,
                               tbe_cuda_state *ds)
{
    if (fl->bits == 0)
        return LOOM_OK;
    if (mode == FBG_BOUNDS_WARNING) {
        pthread_mutex_lock(&ds->lock);
        int first = !ds->warned;
        ds->warned = 1;
        pthread_mutex_unlock(&ds->lock);
        if (first)
            pk_host->log(LOOM_LOG_WARN, "%s: bounds check (warning): out-of-range offsets or indices were "
                         "repaired (offsets clamped, bad indices read row 0); logged once per object", OP);
        return LOOM_OK;
    }
    const int32_t dt = p->index_dtype;
    if (fl->bits & FBG_CUDA_BAD_LAST_OFFSET)
        return pk_host->fail(LOOM_EINVAL, "%s: bounds check (fatal): the last offset, offsets[%lld] = %lld, must "
                             "equal the number of indices %lld", OP, (long long)p->n_bags,
                             (long long)read_index(p->offsets, dt, p->n_bags), (long long)p->n_indices);
    if (fl->bits & FBG_CUDA_BAD_BAG) {
        const int64_t k = (int64_t)fl->first_bag;
        return pk_host->fail(LOOM_EINVAL, "%s: bounds check (fatal): bag %lld has offsets [%lld, %lld), outside "
                             "[0, %lld] or decreasing", OP, (long long)k, (long long)read_index(p->offsets, dt, k),
                             (long long)read_index(p->offsets, dt, k + 1), (long long)p->n_indices);
    }
    const int64_t i = (int64_t)fl->first_index;
    return pk_host->fail(LOOM_EINVAL, "%s: bounds check (fatal): indices[%lld] = %lld is outside its table", OP,
                         (long long)i, (long long)read_index(p->indices, dt, i));
}

static loom_status launch(loom_call *call, const fbg_tbe_state *s, fbg_tbe_plan *p, tbe_cuda_state *ds, int32_t mode)
{
    void *stream = call->ctx->stream;
    fbg_tbe_cuda_args a;
    memset(&a, 0, sizeof a);
    a.features = ds->features;
    a.n_features = p->n_features;
    a.index_is_i64 = p->index_dtype == LOOM_DTYPE_I64;
    a.indices = p->indices;
    a.offsets = p->offsets;
    a.n_indices = p->n_indices;
    a.n_bags = p->n_bags;
    a.per_sample_weights = p->per_sample_weights;
    a.pooling = p->pooling;
    a.output_kind = p->output_dtype == LOOM_DTYPE_F16 ? 1 : p->output_dtype == LOOM_DTYPE_BF16 ? 2 : 0;
    a.output = p->output;
    a.B = p->B;
    a.total_D = s->total_D;
    a.vbe = p->vbe;
    a.vbe_ranks = p->vbe_ranks;
    a.fp8_ebits = s->fp8_exponent_bits;
    a.fp8_bias = s->fp8_exponent_bias;
    a.fixed_offsets = pk_host->scratch(call->ctx, (size_t)p->n_offsets * sizeof(int64_t));
    a.flags = pk_host->scratch(call->ctx, sizeof(fbg_cuda_flags));
    if (a.fixed_offsets == NULL || a.flags == NULL)
        return LOOM_ENOMEM;
    loom_status st = LOOM_OK;
    if (p->vbe) {
        const int64_t T = p->n_features, R = p->vbe_ranks;
        st = to_device(call, p->vbe_B_offsets, (size_t)(T + 1), stream, &a.vbe_B_offsets);
        if (st == LOOM_OK)
            st = to_device(call, p->vbe_B_offsets_rank_per_feature, (size_t)(T * (R + 1)), stream,
                           &a.vbe_B_offsets_rank);
        if (st == LOOM_OK)
            st = to_device(call, p->vbe_output_offsets, (size_t)(R * T + 1), stream, &a.vbe_output_offsets);
        if (st != LOOM_OK)
            return st;
    }
    int e = fbg_tbe_cuda_forward(&a, stream);
    if (e != 0)
        return pk_host->fail(LOOM_EDEVICE, "%s: kernel launch: %s", OP, fbg_tbe_cuda_error_string(e));
    if (mode != FBG_BOUNDS_FATAL && mode != FBG_BOUNDS_WARNING)
        return LOOM_OK;
    fbg_cuda_flags fl;
    cudaError_t ce = cudaMemcpyAsync(&fl, a.flags, sizeof fl, cudaMemcpyDeviceToHost, stream);
    if (ce == cudaSuccess)
        ce = cudaStreamSynchronize(stream);
    if (ce != cudaSuccess)
        return cuda_fail(ce, "reading the bounds-check flags");
    return report_bounds(&fl, p, mode, ds);
}

static loom_status tbe_cuda_run(loom_call *call)
{
    const fbg_tbe_state *s = call->object;
    if (s == NULL || s->struct_size < sizeof(fbg_tbe_state))
        return pk_host->fail(LOOM_EINVAL, "%s: not an fbgemm.tbe object", OP);
    const int32_t device = call->ctx->device.device_id;
    cudaError_t ce = cudaSetDevice(device);
    if (ce != cudaSuccess)
        return cuda_fail(ce, "cudaSetDevice");

    /* the VBE batch sizes are read on the host by the front end */
    const loom_tensor *vbe = call->inputs[TBE_IN_VBE];
    int64_t *bsz = NULL;
    if (vbe != NULL) {
        const int64_t n = loom_numel(vbe);
        bsz = malloc((size_t)(n > 0 ? n : 1) * sizeof *bsz);
        if (bsz == NULL)
            return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", OP);
        ce = cudaMemcpy(bsz, loom_data(vbe), (size_t)n * sizeof *bsz, cudaMemcpyDeviceToHost);
        if (ce != cudaSuccess) {
            free(bsz);
            return cuda_fail(ce, "reading batch_size_per_feature_per_rank");
        }
    }
    fbg_tbe_plan p;
    fbg_plan_store store;
    loom_status st = fbg_tbe_plan_build(call, s, bsz, OP, &p, &store);
    free(bsz);
    tbe_cuda_state *ds = NULL;
    if (st == LOOM_OK)
        st = state_get(s, device, &ds);
    loom_tensor *out = NULL;
    if (st == LOOM_OK) {
        int64_t shape[2];
        int32_t ndim = fbg_tbe_output_shape(&p, shape);
        st = pk_host->alloc_output(call, 0, (loom_dtype)p.output_dtype, ndim, shape, &out);
    }
    if (st == LOOM_OK) {
        p.output = loom_data(out);
        st = launch(call, s, &p, ds, fbg_tbe_call_bounds_mode(call, s));
    }
    fbg_plan_store_free(&store);
    return st;
}

/* ------------------------------------------------------------ the module */


static const loom_kernel_desc tbe_cuda_kernels[] = {
    PK_KERNEL_CUDA(fbg_tbe_schema, "cuda:warp-per-bag", 0, tbe_cuda_run),
};

const pk_module fbgemm_tbe_cuda = PK_MODULE("tbe", fbgemm_tbe_ops, tbe_cuda_kernels, NULL);
