/* SPDX-License-Identifier: BSD-3-Clause */
/*
** conv2d_onednn.c - vision.conv2d through oneDNN's convolution primitive
** (C API, oneDNN 2.x), f32, plain NCHW / (G)OIHW tensors, with the bias and
** the activation fused (an eltwise post-op: relu, gelu_erf; silu is applied
** after the primitive: post_op_act says why), and a residual as a sum post-op
** on dst, copied there first. Built into vision.so when oneDNN is found.
**
** Primitives are created once per geometry (every size, stride, padding,
** dilation, groups, bias, activation) and thread count, and kept in a cache
** of at most CACHE_CAP entries for the pack's lifetime (layers_onednn_fini
** destroys them); a geometry met when the cache is full gets a primitive of
** its own for that call. The cache lock guards only the table: no oneDNN
** work runs under it (two threads that miss at once may both create one; the
** second is kept for its own call and destroyed after it).
**
** Re-entrancy: a primitive made with scratchpad_mode_user may run from
** several threads at once when each execution has its own scratchpad (from
** the call's scratch) and its own stream and memory objects (made per call:
** they only wrap the tensors' pointers).
**
** Thread budget and engine: onednn_runtime.h (the call's ctx->n_threads
** around each primitive's creation and execution).
**
** Layout: an ungrouped conv lets oneDNN choose its layouts (format "any"):
** on plain NCHW it has only im2col + GEMM, while on its blocked layouts
** (nChw8c on AVX2) it runs direct jit kernels, measured here 1.2x (3x3 of
** 256 channels) to 3x (a 1x1 of 64 -> 256 channels, the 7x7 stem of 3
** channels) faster, the reorders included. The call reorders src, weights
** and a residual into the call's scratch and dst back to NCHW: memory-bound
** passes, a few percent of such a conv. Grouped convs keep the plain layout.
**
** nn.Conv2d's non-zero padding modes are not oneDNN's: those calls are
** declined (LOOM_VERBOSE=2 says so) and the cpu kernel runs them.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "depthwise.h"
#include "gemm/gemm.h"
#include "layers.h"
#include "layers/onednn_runtime.h"

#define CACHE_CAP 128           /* a ResNet-152 has ~60 conv geometries per input shape */

enum { ARG_SRC, ARG_WEIGHTS, ARG_BIAS, ARG_DST, ARG_SCRATCH, N_ARGS };

/* Compared bytewise: built from a zeroed struct. */
typedef struct conv_key {
    int64_t n, cin, h, w, cout, groups, kh, kw, sh, sw, ph, pw, dh, dw;
    int32_t bias, act, n_threads, residual;
} conv_key;

typedef struct conv_prim {
    conv_key key;
    dnnl_primitive_t prim;
    dnnl_memory_desc_t md[N_ARGS];  /* the primitive's: blocked src, weights, dst when reordered */
    size_t scratch_bytes;           /* the primitive's scratchpad */
    /* reorders from the plain layout (src, weights) and to it (dst); NULL
    ** where the primitive takes the plain layout itself */
    dnnl_primitive_t reorder[3];
    dnnl_primitive_t residual_in;   /* plain -> dst's layout, for the sum post-op; NULL: none or plain */
    dnnl_memory_desc_t plain_md[3];
    size_t reorder_bytes[3];        /* the blocked copy of src, weights, dst in the call's scratch */
} conv_prim;

enum { RE_SRC, RE_WEIGHTS, RE_DST };
static const int reorder_arg[3] = { ARG_SRC, ARG_WEIGHTS, ARG_DST };

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static conv_prim *cache[CACHE_CAP];  /* under cache_lock */
static int n_cached;

static void prim_destroy(conv_prim *e)
{
    if (e->prim != NULL)
        dnnl_primitive_destroy(e->prim);
    for (int i = 0; i < 3; i++)
        if (e->reorder[i] != NULL)
            dnnl_primitive_destroy(e->reorder[i]);
    if (e->residual_in != NULL)
        dnnl_primitive_destroy(e->residual_in);
    free(e);
}

void layers_onednn_fini(void)
{
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < n_cached; i++)
        prim_destroy(cache[i]);
    n_cached = 0;
    pthread_mutex_unlock(&cache_lock);
    onednn_runtime_fini();
}

static loom_status conv2d_onednn_supports(const loom_call *call, char *why, size_t why_size)
{
    if (!onednn_runtime_ready()) {
        snprintf(why, why_size, "oneDNN's CPU runtime offers no thread-count control this kernel can use");
        return LOOM_ENOTSUP;
    }
    if (call->n_attrs > PK_ATTR(conv2d, padding_mode)
        && strcmp(call->attrs[PK_ATTR(conv2d, padding_mode)].u.s, "zeros") != 0) {
        snprintf(why, why_size, "padding_mode %s is left to the cpu kernel (oneDNN pads with zeros)",
                 call->attrs[PK_ATTR(conv2d, padding_mode)].u.s);
        return LOOM_ENOTSUP;
    }
    /* oneDNN runs a sum post-op after an eltwise one only in its reference
    ** implementation (~100x slower than the cpu kernel's GEMM epilogue) */
    if (call->n_inputs > CONV_RESIDUAL && call->inputs[CONV_RESIDUAL] != NULL
        && call->n_attrs > PK_ATTR(conv2d, residual_after_activation)
        && call->attrs[PK_ATTR(conv2d, residual_after_activation)].u.b) {
        snprintf(why, why_size, "residual_after_activation is left to the cpu kernel (oneDNN has only a "
                 "reference implementation of a sum after an eltwise post-op)");
        return LOOM_ENOTSUP;
    }
    /* on plain NCHW tensors oneDNN has no direct depthwise implementation
    ** (its jit one wants blocked layouts); the cpu kernel's direct loop is
    ** several times faster than its im2col + GEMM per group */
    if (conv2d_call_is_depthwise(call)) {
        snprintf(why, why_size, "depthwise convs are left to the cpu kernel's direct depthwise loop");
        return LOOM_ENOTSUP;
    }
    for (int i = 0; i < call->n_inputs; i++)
        if (call->inputs[i] != NULL && loom_numel(call->inputs[i]) == 0) {
            snprintf(why, why_size, "empty tensors are left to the cpu kernel");
            return LOOM_ENOTSUP;
        }
    return LOOM_OK;
}

static loom_status dnnl_fail(dnnl_status_t s, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "oneDNN %s failed with status %d", what, (int)s);
}

static conv_key key_of(const conv2d_geom *g, int n_threads)
{
    conv_key k;
    memset(&k, 0, sizeof k);
    k.n = g->n; k.cin = g->cin; k.h = g->h; k.w = g->w; k.cout = g->cout; k.groups = g->groups;
    k.kh = g->kh; k.kw = g->kw; k.sh = g->sh; k.sw = g->sw; k.ph = g->ph; k.pw = g->pw; k.dh = g->dh; k.dw = g->dw;
    k.bias = g->bias != NULL;
    k.act = g->act;
    k.residual = g->residual != NULL;
    k.n_threads = n_threads;
    return k;
}

/* 1 when the activation is oneDNN's post-op. silu is not: oneDNN's swish
** post-op on plain NCHW tensors is its scalar reference loop (a 1x1 conv
** with it costs 4x the conv alone here), so the kernel applies silu after
** the primitive, with the cpu kernel's vector epilogue. */
static int post_op_act(int act)
{
    return act != PK_GEMM_ACT_NONE && act != PK_GEMM_ACT_SILU;
}

/* 1 when the conv of key may take oneDNN's blocked layouts (the header says which). */
static int blocked_layouts(const conv_key *k)
{
    return k->groups == 1;
}

/* A reorder primitive from one layout to another; no scratchpad of its own
** (plain <-> blocked f32 reorders have none), so it may run from several
** threads at once like the convs. */
static dnnl_status_t reorder_create(const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to,
                                    dnnl_primitive_t *out)
{
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t s = dnnl_primitive_attr_create(&attr);
    if (s == dnnl_success)
        s = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (s == dnnl_success)
        s = dnnl_reorder_primitive_desc_create(&pd, from, onednn_engine(), to, onednn_engine(), attr);
    if (s == dnnl_success) {
        const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
        if (smd != NULL && dnnl_memory_desc_get_size(smd) > 0)
            s = dnnl_unimplemented;     /* never met for f32 layouts; declines rather than share one */
    }
    if (s == dnnl_success)
        s = dnnl_primitive_create(out, pd);
    if (pd != NULL)
        dnnl_primitive_desc_destroy(pd);
    if (attr != NULL)
        dnnl_primitive_attr_destroy(attr);
    return s;
}

/* A primitive for key (not yet in the cache), under the key's thread count. */
static loom_status prim_create(const conv_key *k, const conv2d_geom *g, conv_prim **out)
{
    conv_prim *e = calloc(1, sizeof *e);
    if (e == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    e->key = *k;
    const dnnl_dims_t src = { k->n, k->cin, k->h, k->w }, dst = { k->n, k->cout, g->ho, g->wo };
    const dnnl_dims_t wts = { k->cout, k->cin, k->kh, k->kw };
    const dnnl_dims_t gwts = { k->groups, k->cout / k->groups, k->cin / k->groups, k->kh, k->kw };
    const dnnl_dims_t bias = { k->cout };
    const dnnl_dims_t strides = { k->sh, k->sw }, dil = { k->dh - 1, k->dw - 1 }, pl = { k->ph, k->pw };
    /* right padding that makes oneDNN's output size torch's floor division
    ** (negative when the last rows are not reached) */
    const dnnl_dims_t pr = { (g->ho - 1) * k->sh + (k->kh - 1) * k->dh + 1 - k->h - k->ph,
                             (g->wo - 1) * k->sw + (k->kw - 1) * k->dw + 1 - k->w - k->pw };
    const char *what = "memory descriptor";
    const int any = blocked_layouts(k);
    dnnl_status_t s = dnnl_memory_desc_init_by_tag(&e->plain_md[RE_SRC], 4, src, dnnl_f32, dnnl_nchw);
    if (s == dnnl_success)
        s = dnnl_memory_desc_init_by_tag(&e->plain_md[RE_DST], 4, dst, dnnl_f32, dnnl_nchw);
    if (s == dnnl_success)
        s = k->groups == 1 ? dnnl_memory_desc_init_by_tag(&e->plain_md[RE_WEIGHTS], 4, wts, dnnl_f32, dnnl_oihw)
                           : dnnl_memory_desc_init_by_tag(&e->plain_md[RE_WEIGHTS], 5, gwts, dnnl_f32, dnnl_goihw);
    for (int i = 0; i < 3 && s == dnnl_success; i++) {
        e->md[reorder_arg[i]] = e->plain_md[i];
        if (any)
            s = dnnl_memory_desc_init_by_tag(&e->md[reorder_arg[i]], 4, /* any: groups 1, so 4-D weights too */
                                             i == RE_SRC ? src : i == RE_DST ? dst : wts, dnnl_f32,
                                             dnnl_format_tag_any);
    }
    if (s == dnnl_success && k->bias)
        s = dnnl_memory_desc_init_by_tag(&e->md[ARG_BIAS], 1, bias, dnnl_f32, dnnl_x);
    dnnl_convolution_desc_t desc;
    if (s == dnnl_success) {
        what = "convolution descriptor";
        s = dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct,
                                                       &e->md[ARG_SRC], &e->md[ARG_WEIGHTS],
                                                       k->bias ? &e->md[ARG_BIAS] : NULL, &e->md[ARG_DST], strides,
                                                       dil, pl, pr);
    }
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    if (s == dnnl_success) {
        what = "primitive attributes";
        s = dnnl_primitive_attr_create(&attr);
        if (s == dnnl_success)
            s = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
        if (s == dnnl_success && (post_op_act(k->act) || k->residual)) {
            s = dnnl_post_ops_create(&po);
            /* the residual is in dst already: sum adds it before the activation */
            if (s == dnnl_success && k->residual)
                s = dnnl_post_ops_append_sum(po, 1.0f);
            if (s == dnnl_success && post_op_act(k->act)) {
                dnnl_alg_kind_t alg = k->act == PK_GEMM_ACT_RELU ? dnnl_eltwise_relu
                                    : k->act == PK_GEMM_ACT_SILU ? dnnl_eltwise_swish : dnnl_eltwise_gelu_erf;
                s = dnnl_post_ops_append_eltwise(po, 1.0f, alg, k->act == PK_GEMM_ACT_SILU ? 1.0f : 0.0f, 0.0f);
            }
            if (s == dnnl_success)
                s = dnnl_primitive_attr_set_post_ops(attr, po);
        }
    }
    dnnl_primitive_desc_t pd = NULL;
    int saved = onednn_budget_enter(k->n_threads);
    if (s == dnnl_success) {
        what = "convolution primitive descriptor";
        s = dnnl_primitive_desc_create(&pd, &desc, attr, onednn_engine(), NULL);
    }
    if (s == dnnl_success) {
        const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
        e->scratch_bytes = smd != NULL ? dnnl_memory_desc_get_size(smd) : 0;
        if (e->scratch_bytes > 0) {
            const dnnl_dims_t sd = { (dnnl_dim_t)e->scratch_bytes };
            what = "scratchpad memory descriptor";
            s = dnnl_memory_desc_init_by_tag(&e->md[ARG_SCRATCH], 1, sd, dnnl_u8, dnnl_x);
        }
    }
    if (s == dnnl_success && any) {
        const dnnl_query_t q[3] = { dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md };
        for (int i = 0; i < 3 && s == dnnl_success; i++)
            e->md[reorder_arg[i]] = *dnnl_primitive_desc_query_md(pd, q[i], 0);
        what = "layout reorder";
        for (int i = 0; i < 3 && s == dnnl_success; i++)
            if (!dnnl_memory_desc_equal(&e->md[reorder_arg[i]], &e->plain_md[i])) {
                s = reorder_create(i == RE_DST ? &e->md[ARG_DST] : &e->plain_md[i],
                                   i == RE_DST ? &e->plain_md[i] : &e->md[reorder_arg[i]], &e->reorder[i]);
                e->reorder_bytes[i] = dnnl_memory_desc_get_size(&e->md[reorder_arg[i]]);
            }
        if (s == dnnl_success && k->residual && e->reorder[RE_DST] != NULL)
            s = reorder_create(&e->plain_md[RE_DST], &e->md[ARG_DST], &e->residual_in);
    }
    if (s == dnnl_success) {
        what = "convolution primitive";
        s = dnnl_primitive_create(&e->prim, pd);
    }
    onednn_budget_leave(k->n_threads, saved);
    if (pd != NULL)
        dnnl_primitive_desc_destroy(pd);
    if (po != NULL)
        dnnl_post_ops_destroy(po);
    if (attr != NULL)
        dnnl_primitive_attr_destroy(attr);
    if (s != dnnl_success) {
        prim_destroy(e);
        return dnnl_fail(s, what);
    }
    *out = e;
    return LOOM_OK;
}

/* The cached primitive of key, or a new one; *owned is 1 when the caller
** must destroy it after the call (the cache was full). */
static loom_status prim_get(const conv_key *k, const conv2d_geom *g, conv_prim **out, int *owned)
{
    *owned = 0;
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < n_cached; i++)
        if (memcmp(&cache[i]->key, k, sizeof *k) == 0) {
            *out = cache[i];
            pthread_mutex_unlock(&cache_lock);
            return LOOM_OK;
        }
    pthread_mutex_unlock(&cache_lock);
    conv_prim *e;
    loom_status st = prim_create(k, g, &e);
    if (st != LOOM_OK)
        return st;
    pthread_mutex_lock(&cache_lock);
    int dup = 0;
    for (int i = 0; i < n_cached && !dup; i++)
        dup = memcmp(&cache[i]->key, k, sizeof *k) == 0;
    if (!dup && n_cached < CACHE_CAP)
        cache[n_cached++] = e;
    else
        *owned = 1;
    pthread_mutex_unlock(&cache_lock);
    *out = e;
    return LOOM_OK;
}

/* Runs prim on memories of the given descriptors and pointers (NULL
** pointers are left out), waiting for it: the memories only wrap the
** pointers and are destroyed here. */
static dnnl_status_t execute(dnnl_primitive_t prim, dnnl_stream_t stream, int n, const int *arg_ids,
                             const dnnl_memory_desc_t *const *mds, void *const *handles)
{
    dnnl_memory_t mem[N_ARGS] = { 0 };
    dnnl_exec_arg_t args[N_ARGS];
    int n_args = 0;
    dnnl_status_t s = dnnl_success;
    for (int i = 0; i < n && s == dnnl_success; i++) {
        if (handles[i] == NULL)
            continue;
        s = dnnl_memory_create(&mem[n_args], mds[i], onednn_engine(), handles[i]);
        args[n_args].arg = arg_ids[i];
        args[n_args].memory = mem[n_args];
        n_args++;
    }
    if (s == dnnl_success)
        s = dnnl_primitive_execute(prim, stream, n_args, args);
    if (s == dnnl_success)
        s = dnnl_stream_wait(stream);
    for (int i = 0; i < n_args; i++)
        if (mem[i] != NULL)
            dnnl_memory_destroy(mem[i]);
    return s;
}

/* a's bytes rounded up to the scratch's 64-byte alignment */
static size_t aligned64(size_t a)
{
    return (a + 63) & ~(size_t)63;
}

static loom_status conv2d_run_onednn(loom_call *call)
{
    conv2d_geom g;
    loom_tensor *out;
    loom_status st = conv2d_check(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    int threads = onednn_call_threads(call);
    conv_key key = key_of(&g, threads);
    conv_prim *e;
    int owned;
    if ((st = prim_get(&key, &g, &e, &owned)) != LOOM_OK)
        return st;
    if (g.residual != NULL && g.residual != g.y && e->residual_in == NULL)
        memcpy(g.y, g.residual, (size_t)(g.n * g.cout * g.ho * g.wo) * sizeof(float));
    /* the call's scratch: the primitive's scratchpad, then the blocked copies */
    size_t bytes = aligned64(e->scratch_bytes);
    for (int i = 0; i < 3; i++)
        bytes += e->reorder[i] != NULL ? aligned64(e->reorder_bytes[i]) : 0;
    char *scratch = NULL;
    if (bytes > 0 && (scratch = pk_host->scratch(call->ctx, bytes)) == NULL) {
        st = pk_host->fail(LOOM_ENOMEM, "conv2d: no scratch for oneDNN's %zu bytes (scratchpad and layouts)", bytes);
        goto done;
    }
    void *plain[3] = { (void *)g.x, (void *)g.wt, g.y }, *used[3];
    size_t at = aligned64(e->scratch_bytes);
    for (int i = 0; i < 3; i++) {
        used[i] = e->reorder[i] != NULL ? scratch + at : plain[i];
        at += e->reorder[i] != NULL ? aligned64(e->reorder_bytes[i]) : 0;
    }
    static const int arg_ids[N_ARGS] = { DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST,
                                         DNNL_ARG_SCRATCHPAD };
    static const int from_to[2] = { DNNL_ARG_FROM, DNNL_ARG_TO };
    void *handles[N_ARGS] = { used[RE_SRC], used[RE_WEIGHTS], (void *)g.bias, used[RE_DST],
                              e->scratch_bytes > 0 ? scratch : NULL };
    const dnnl_memory_desc_t *mds[N_ARGS];
    for (int i = 0; i < N_ARGS; i++)
        mds[i] = &e->md[i];
    dnnl_stream_t stream = NULL;
    dnnl_status_t s = dnnl_stream_create(&stream, onednn_engine(), dnnl_stream_default_flags);
    if (s == dnnl_success) {
        int saved = onednn_budget_enter(key.n_threads);
        for (int i = RE_SRC; i <= RE_WEIGHTS && s == dnnl_success; i++)
            if (e->reorder[i] != NULL) {
                const dnnl_memory_desc_t *rm[2] = { &e->plain_md[i], &e->md[reorder_arg[i]] };
                void *rh[2] = { plain[i], used[i] };
                s = execute(e->reorder[i], stream, 2, from_to, rm, rh);
            }
        if (s == dnnl_success && e->residual_in != NULL) {     /* the sum post-op reads it from dst */
            const dnnl_memory_desc_t *rm[2] = { &e->plain_md[RE_DST], &e->md[ARG_DST] };
            void *rh[2] = { (void *)g.residual, used[RE_DST] };
            s = execute(e->residual_in, stream, 2, from_to, rm, rh);
        }
        if (s == dnnl_success)
            s = execute(e->prim, stream, N_ARGS, arg_ids, mds, handles);
        if (s == dnnl_success && e->reorder[RE_DST] != NULL) {
            const dnnl_memory_desc_t *rm[2] = { &e->md[ARG_DST], &e->plain_md[RE_DST] };
            void *rh[2] = { used[RE_DST], plain[RE_DST] };
            s = execute(e->reorder[RE_DST], stream, 2, from_to, rm, rh);
        }
        onednn_budget_leave(key.n_threads, saved);
    }
    if (stream != NULL)
        dnnl_stream_destroy(stream);
    if (s != dnnl_success)
        st = dnnl_fail(s, "convolution execution");
    else if (g.act == PK_GEMM_ACT_SILU)     /* of conv + bias (+ the residual, summed by the primitive) */
        st = layers_activation_inplace(call->ctx, g.y, g.n * g.cout * g.ho * g.wo, g.act);
done:
    if (owned)
        prim_destroy(e);
    return st;
}

const loom_kernel_desc layers_conv2d_onednn_kernel =
    PK_KERNEL(vision_conv2d_schema, "onednn", LOOM_DEVICE_CPU, "onednn:conv", LAYERS_DTYPES, conv2d_run_onednn,
              .supports = conv2d_onednn_supports);
