/* SPDX-License-Identifier: BSD-3-Clause */
/*
** onednn_net.c - a CNN forward as one oneDNN plan (onednn_net.h states
** the contract): the steps' primitives, made once per plan; their memory
** objects, bound once to the plan's buffers (the input's and the logits'
** handles are set per call); the weights, reordered once per object.
**
** Everything a plan holds is made under the call's thread budget
** (onednn_runtime.h) and run under it; a plan runs on one stream of its
** own, one forward at a time (the model's lock).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers/onednn_runtime.h"
#include "models.h"
#include "onednn_net.h"

#define MAX_PLANS 4     /* input shapes kept per object; the oldest goes first */
#define MAX_ARGS 6

enum { LOC_BUF, LOC_INPUT, LOC_OUTPUT, LOC_PTR, LOC_SCRATCH };

typedef struct net_arg {
    int id;                     /* DNNL_ARG_* */
    int kind, buf;              /* LOC_*; buf for LOC_BUF */
    void *ptr;                  /* LOC_PTR */
    dnnl_memory_desc_t md;
    dnnl_memory_t mem;
} net_arg;

typedef struct net_step {
    dnnl_primitive_t prim;
    int n_args;
    net_arg args[MAX_ARGS];
} net_step;

struct onednn_net {
    int64_t in_dims[4];
    int n_threads;
    dnnl_format_tag_t tag;      /* the activations' blocked layout */
    int n_bufs;
    size_t buf_bytes[ONEDNN_NET_MAX_BUFS], scratch_bytes;
    int64_t plain_dims[ONEDNN_NET_MAX_BUFS][4];    /* onednn_net_output's maps, plain NCHW */
    void *buf[ONEDNN_NET_MAX_BUFS], *scratch;
    net_step *steps;
    int n_steps, cap_steps;
    dnnl_stream_t stream;
    onednn_nets *owner;
    char desc[64];              /* "[8, 3, 224, 224]" for messages */
};

/* One convolution's weights in the layout a primitive asked for: of a
** model's conv (conv, whose plain weight may be released) or borrowed (src). */
typedef struct net_weights {
    model_conv *conv;
    const float *src;
    int ndims;
    dnnl_dims_t dims;
    dnnl_format_tag_t tag;
    dnnl_memory_desc_t plain, md;
    void *data;
    int keep;                   /* a Winograd conv's: its plain weight stays (weights_get) */
} net_weights;

struct onednn_nets {
    const char *cls;
    onednn_net *plans[MAX_PLANS];
    int n_plans;
    net_weights *w;
    int n_w, cap_w;
    int keep_plain;             /* the cpu kernel has run: the plain weights stay */
    int winograd;               /* the model's conv_algorithm=winograd (model_base) */
};

static loom_status dnnl_fail(const onednn_net *net, dnnl_status_t s, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: oneDNN %s failed with status %d (input %s)", net->owner->cls, what,
                         (int)s, net->desc);
}

static void net_free(onednn_net *net)
{
    if (net == NULL)
        return;
    for (int i = 0; i < net->n_steps; i++) {
        net_step *st = &net->steps[i];
        for (int a = 0; a < st->n_args; a++)
            if (st->args[a].mem != NULL)
                dnnl_memory_destroy(st->args[a].mem);
        if (st->prim != NULL)
            dnnl_primitive_destroy(st->prim);
    }
    free(net->steps);
    for (int i = 0; i < ONEDNN_NET_MAX_BUFS; i++)
        free(net->buf[i]);
    free(net->scratch);
    if (net->stream != NULL)
        dnnl_stream_destroy(net->stream);
    free(net);
}

void onednn_net_abandon(onednn_net *net)
{
    net_free(net);
}

onednn_nets *onednn_nets_new(const char *cls)
{
    onednn_nets *s = calloc(1, sizeof *s);
    if (s != NULL)
        s->cls = cls;
    return s;
}

void onednn_nets_free(void *nets)
{
    onednn_nets *s = nets;
    if (s == NULL)
        return;
    for (int i = 0; i < s->n_plans; i++)
        net_free(s->plans[i]);
    for (int i = 0; i < s->n_w; i++)
        free(s->w[i].data);
    free(s->w);
    free(s);
}

/* object_backend_state's create: the object's (empty) set of plans. */
static loom_status nets_create(const loom_call *call, void *base_state, void **state_out)
{
    (void)call;
    const model_base *b = base_state;
    onednn_nets *s = onednn_nets_new(b->cls);
    if (s == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", b->cls);
    s->winograd = b->conv_winograd;
    *state_out = s;
    return LOOM_OK;
}

onednn_nets *onednn_nets_of(loom_call *call)
{
    return pk_host->object_backend_state(call, nets_create, onednn_nets_free);
}

loom_status onednn_keep_plain_weights(loom_call *call)
{
    onednn_nets *s = onednn_nets_of(call);
    return s != NULL ? onednn_nets_keep_plain(s) : LOOM_ENOMEM;        /* the error is set */
}

onednn_net *onednn_nets_find(onednn_nets *s, const int64_t *in_dims, int n_threads)
{
    for (int i = 0; i < s->n_plans; i++)
        if (memcmp(s->plans[i]->in_dims, in_dims, sizeof s->plans[i]->in_dims) == 0
            && s->plans[i]->n_threads == n_threads)
            return s->plans[i];
    return NULL;
}

loom_status onednn_net_begin(onednn_nets *s, const int64_t *in_dims, int n_threads, int n_bufs, onednn_net **out)
{
    *out = NULL;
    onednn_net *net = calloc(1, sizeof *net);
    if (net == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for a oneDNN plan", s->cls);
    memcpy(net->in_dims, in_dims, sizeof net->in_dims);
    net->n_threads = n_threads;
    net->n_bufs = n_bufs < ONEDNN_NET_MAX_BUFS ? n_bufs : ONEDNN_NET_MAX_BUFS;
    net->owner = s;
    /* the layout of oneDNN's jit convolutions on this CPU: 16 channels a
    ** block with AVX-512, 8 with AVX2 (and SSE4.1) */
    net->tag = (pk_host->cpu_features() & LOOM_CPU_AVX512F) != 0 ? dnnl_nChw16c : dnnl_nChw8c;
    snprintf(net->desc, sizeof net->desc, "[%lld, %lld, %lld, %lld]", (long long)in_dims[0], (long long)in_dims[1],
             (long long)in_dims[2], (long long)in_dims[3]);
    dnnl_status_t st = dnnl_stream_create(&net->stream, onednn_engine(), dnnl_stream_default_flags);
    if (st != dnnl_success) {
        loom_status r = dnnl_fail(net, st, "stream creation");
        net_free(net);
        return r;
    }
    *out = net;
    return LOOM_OK;
}

onednn_value onednn_net_input(const onednn_net *net)
{
    onednn_value v = { ONEDNN_NET_INPUT, { net->in_dims[0], net->in_dims[1], net->in_dims[2], net->in_dims[3] } };
    return v;
}

/* The memory descriptor of a value: plain NCHW for the input, the plan's
** blocked layout for the buffers. */
static dnnl_status_t value_md(const onednn_net *net, const onednn_value *v, dnnl_memory_desc_t *md)
{
    const dnnl_dims_t dims = { v->dims[0], v->dims[1], v->dims[2], v->dims[3] };
    return dnnl_memory_desc_init_by_tag(md, 4, dims, dnnl_f32, v->buf == ONEDNN_NET_INPUT ? dnnl_nchw : net->tag);
}

static net_step *step_new(onednn_net *net)
{
    if (net->n_steps == net->cap_steps) {
        int cap = net->cap_steps ? 2 * net->cap_steps : 64;
        net_step *s = realloc(net->steps, (size_t)cap * sizeof *s);
        if (s == NULL)
            return NULL;
        net->steps = s;
        net->cap_steps = cap;
    }
    net_step *st = &net->steps[net->n_steps];
    memset(st, 0, sizeof *st);
    return st;
}

static void arg_add(net_step *st, int id, int kind, int buf, void *ptr, const dnnl_memory_desc_t *md)
{
    net_arg *a = &st->args[st->n_args++];
    a->id = id;
    a->kind = kind;
    a->buf = buf;
    a->ptr = ptr;
    a->md = *md;
}

static void arg_value(onednn_net *net, net_step *st, int id, const onednn_value *v, const dnnl_memory_desc_t *md)
{
    arg_add(st, id, v->buf == ONEDNN_NET_INPUT ? LOC_INPUT : LOC_BUF, v->buf, NULL, md);
    if (v->buf >= 0) {
        size_t bytes = dnnl_memory_desc_get_size(md);
        if (bytes > net->buf_bytes[v->buf])
            net->buf_bytes[v->buf] = bytes;
    }
}

/* The scratchpad of pd (user mode: one buffer per plan, the largest). */
static dnnl_status_t arg_scratch(onednn_net *net, net_step *st, const_dnnl_primitive_desc_t pd)
{
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    size_t bytes = smd != NULL ? dnnl_memory_desc_get_size(smd) : 0;
    if (bytes == 0)
        return dnnl_success;
    if (bytes > net->scratch_bytes)
        net->scratch_bytes = bytes;
    arg_add(st, DNNL_ARG_SCRATCHPAD, LOC_SCRATCH, 0, NULL, smd);
    return dnnl_success;
}

/* The primitive of pd as the plan's next step (its args are added after);
** logs the implementation oneDNN chose. */
static dnnl_status_t step_prim(onednn_net *net, net_step *st, const_dnnl_primitive_desc_t pd, const char *what)
{
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl != NULL)
        pk_host->log(2, "onednn plan %s: %s on %s", net->desc, what, impl);
    return dnnl_primitive_create(&st->prim, pd);
}

/* dst (to_md) = src (from_md) through a reorder primitive, on net's stream. */
static dnnl_status_t reorder(dnnl_stream_t stream, const dnnl_memory_desc_t *from_md, const void *src,
                             const dnnl_memory_desc_t *to_md, void *dst)
{
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t prim = NULL;
    dnnl_memory_t from = NULL, to = NULL;
    dnnl_engine_t eng = onednn_engine();
    dnnl_status_t st = dnnl_reorder_primitive_desc_create(&pd, from_md, eng, to_md, eng, NULL);
    if (st == dnnl_success)
        st = dnnl_primitive_create(&prim, pd);
    if (st == dnnl_success)
        st = dnnl_memory_create(&from, from_md, eng, (void *)src);
    if (st == dnnl_success)
        st = dnnl_memory_create(&to, to_md, eng, dst);
    if (st == dnnl_success) {
        dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, from }, { DNNL_ARG_TO, to } };
        st = dnnl_primitive_execute(prim, stream, 2, args);
        if (st == dnnl_success)
            st = dnnl_stream_wait(stream);
    }
    if (from != NULL)
        dnnl_memory_destroy(from);
    if (to != NULL)
        dnnl_memory_destroy(to);
    if (prim != NULL)
        dnnl_primitive_destroy(prim);
    if (pd != NULL)
        dnnl_primitive_desc_destroy(pd);
    return st;
}

/* Weights in layout want, reordered once per object: of the model's conv
** owner (its plain weight, or once that is released, the first layout made
** of it), or, with owner NULL, of src (borrowed from the mapping). keep:
** the plain weight is never released (a Winograd layout: oneDNN reorders
** into it from plain layouts only, so later layouts come from the plain
** copy). */
static loom_status weights_get(onednn_net *net, model_conv *owner, const float *src, int ndims,
                               const dnnl_dims_t dims, dnnl_format_tag_t tag, const dnnl_memory_desc_t *want,
                               int keep, void **out)
{
    onednn_nets *s = net->owner;
    const net_weights *first = NULL;
    for (int i = 0; i < s->n_w; i++) {
        const net_weights *w = &s->w[i];
        if (owner != NULL ? w->conv != owner : w->src != src)
            continue;
        if (dnnl_memory_desc_equal(&w->md, want)) {
            *out = w->data;
            return LOOM_OK;
        }
        if (first == NULL)
            first = w;
    }
    if (s->n_w == s->cap_w) {
        int cap = s->cap_w ? 2 * s->cap_w : 64;
        net_weights *w = realloc(s->w, (size_t)cap * sizeof *w);
        if (w == NULL)
            return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for reordered weights", s->cls);
        s->w = w;
        s->cap_w = cap;
        if (first != NULL)
            first = NULL;       /* moved: found again below */
    }
    for (int i = 0; i < s->n_w && first == NULL && owner != NULL; i++)
        if (s->w[i].conv == owner)
            first = &s->w[i];
    size_t bytes = dnnl_memory_desc_get_size(want);
    void *data = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (data == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for reordered weights", s->cls);
    net_weights *w = &s->w[s->n_w];
    memset(w, 0, sizeof *w);
    w->conv = owner;
    w->src = src;
    w->ndims = ndims;
    memcpy(w->dims, dims, sizeof w->dims);
    w->tag = tag;
    dnnl_status_t st = dnnl_memory_desc_init_by_tag(&w->plain, ndims, dims, dnnl_f32, tag);
    if (st == dnnl_success)
        st = owner != NULL && owner->weight == NULL && first != NULL
                 ? reorder(net->stream, &first->md, first->data, want, data)
                 : reorder(net->stream, &w->plain, owner != NULL ? owner->weight : src, want, data);
    if (st != dnnl_success) {
        free(data);
        return dnnl_fail(net, st, "weights reorder");
    }
    w->md = *want;
    w->data = data;
    w->keep = keep;
    s->n_w++;
    /* The plain weight is not needed once one layout of it exists: freed
    ** now rather than when the plan is complete, so that the plain and the
    ** reordered copies of the whole model are never resident together (the
    ** peak of planning is the weights once plus one layer's). */
    if (owner != NULL && owner->weight != NULL && !s->keep_plain && !keep) {
        free(owner->weight);
        owner->weight = NULL;
    }
    *out = data;
    return LOOM_OK;
}

/* Hands back the plain weights of the model's convs the plans have
** reordered (the cpu kernel gets them again from onednn_nets_keep_plain),
** unless the cpu kernel has run on the object. weights_get frees each one
** as soon as its first layout is made; this catches any left. */
static void release_plain(onednn_nets *s)
{
    if (s->keep_plain)
        return;
    for (int i = 0; i < s->n_w; i++)
        if (s->w[i].conv != NULL && s->w[i].conv->weight != NULL && !s->w[i].keep) {
            free(s->w[i].conv->weight);
            s->w[i].conv->weight = NULL;
        }
}

loom_status onednn_nets_keep_plain(onednn_nets *s)
{
    s->keep_plain = 1;
    dnnl_stream_t stream = NULL;
    loom_status r = LOOM_OK;
    for (int i = 0; i < s->n_w && r == LOOM_OK; i++) {
        net_weights *w = &s->w[i];
        if (w->conv == NULL || w->conv->weight != NULL)
            continue;
        size_t bytes = dnnl_memory_desc_get_size(&w->plain);
        float *plain = malloc(bytes);
        dnnl_status_t st = plain == NULL ? dnnl_out_of_memory : dnnl_success;
        if (st == dnnl_success && stream == NULL)
            st = dnnl_stream_create(&stream, onednn_engine(), dnnl_stream_default_flags);
        if (st == dnnl_success)
            st = reorder(stream, &w->md, w->data, &w->plain, plain);
        if (st != dnnl_success) {
            free(plain);
            r = pk_host->fail(LOOM_ENOMEM, "%s: the plain weights could not be made again (oneDNN status %d)",
                              s->cls, (int)st);
        } else {
            w->conv->weight = plain;
        }
    }
    if (stream != NULL)
        dnnl_stream_destroy(stream);
    return r;
}

/* The attributes of every step: user scratchpad, and post-ops sum (the
** residual in dst), then the activation, then a binary add of a tensor of
** md add_md (NULL: none), as asked. */
static dnnl_status_t attr_make(int sum, onednn_act act, const dnnl_memory_desc_t *add_md,
                               dnnl_primitive_attr_t *attr)
{
    dnnl_post_ops_t po = NULL;
    dnnl_status_t s = dnnl_primitive_attr_create(attr);
    if (s == dnnl_success)
        s = dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user);
    if (s == dnnl_success && (sum || act != ONEDNN_ACT_NONE || add_md != NULL)) {
        s = dnnl_post_ops_create(&po);
        if (s == dnnl_success && sum)
            s = dnnl_post_ops_append_sum(po, 1.0f);
        /* silu is swish with alpha 1: x * sigmoid(x) */
        dnnl_alg_kind_t alg = act == ONEDNN_ACT_RELU ? dnnl_eltwise_relu
                            : act == ONEDNN_ACT_SILU ? dnnl_eltwise_swish : dnnl_eltwise_logistic;
        if (s == dnnl_success && act != ONEDNN_ACT_NONE)
            s = dnnl_post_ops_append_eltwise(po, 1.0f, alg, act == ONEDNN_ACT_SILU ? 1.0f : 0.0f, 0.0f);
        if (s == dnnl_success && add_md != NULL)
            s = dnnl_post_ops_append_binary(po, dnnl_binary_add, add_md);
        if (s == dnnl_success)
            s = dnnl_primitive_attr_set_post_ops(*attr, po);
    }
    if (po != NULL)
        dnnl_post_ops_destroy(po);
    return s;
}

/* 1 when pd runs oneDNN's reference (scalar) implementation. */
static int is_reference(const_dnnl_primitive_desc_t pd)
{
    const char *impl = NULL;
    return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl != NULL
           && strncmp(impl, "ref", 3) == 0;
}

/* A binary step: dst = src0 alg src1 (src1 broadcast where its dims are 1). */
static loom_status binary_step(onednn_net *net, dnnl_alg_kind_t alg, const onednn_value *src0,
                               const onednn_value *src1, const onednn_value *dst, const char *name)
{
    dnnl_memory_desc_t md0, md1, mdd;
    dnnl_binary_desc_t desc;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    const char *what = "binary descriptor";
    dnnl_status_t s = value_md(net, src0, &md0);
    if (s == dnnl_success)
        s = value_md(net, src1, &md1);
    if (s == dnnl_success)
        s = value_md(net, dst, &mdd);
    if (s == dnnl_success)
        s = dnnl_binary_desc_init(&desc, alg, &md0, &md1, &mdd);
    if (s == dnnl_success)
        s = attr_make(0, ONEDNN_ACT_NONE, NULL, &attr);
    int saved = onednn_budget_enter(net->n_threads);
    if (s == dnnl_success) {
        what = "binary primitive descriptor";
        s = dnnl_primitive_desc_create(&pd, &desc, attr, onednn_engine(), NULL);
    }
    net_step *st = s == dnnl_success ? step_new(net) : NULL;
    loom_status r = s == dnnl_success && st == NULL
                        ? pk_host->fail(LOOM_ENOMEM, "%s: out of memory for a oneDNN plan", net->owner->cls) : LOOM_OK;
    if (st != NULL) {
        what = "binary primitive";
        s = step_prim(net, st, pd, name);
        if (s == dnnl_success) {
            arg_value(net, st, DNNL_ARG_SRC_0, src0, &md0);
            arg_value(net, st, DNNL_ARG_SRC_1, src1, &md1);
            arg_value(net, st, DNNL_ARG_DST, dst, &mdd);
            s = arg_scratch(net, st, pd);
            net->n_steps++;
        }
    }
    onednn_budget_leave(net->n_threads, saved);
    if (pd != NULL)
        dnnl_primitive_desc_destroy(pd);
    if (attr != NULL)
        dnnl_primitive_attr_destroy(attr);
    return r != LOOM_OK ? r : s != dnnl_success ? dnnl_fail(net, s, what) : LOOM_OK;
}

loom_status onednn_net_scale(onednn_net *net, const onednn_value *x, const onednn_value *scale)
{
    return binary_step(net, dnnl_binary_mul, x, scale, x, "squeeze-excitation scale");
}

/* The convolution step: out = act(conv c of in + bias (+ dst when sum))
** (c: owner, the model's, or a borrowed one when owner is NULL)
** (+ add, after the activation, when add is not NULL). With add, *declined
** is set and nothing is added when oneDNN has only its reference kernel
** for that post-op chain. */
static loom_status conv_step(onednn_net *net, model_conv *owner, const model_conv *c, const onednn_value *in,
                             int buf, onednn_act act, int sum, const onednn_value *add, onednn_value *out,
                             int *declined)
{
    out->buf = buf;
    out->dims[0] = in->dims[0];
    out->dims[1] = c->cout;
    out->dims[2] = model_out_size(in->dims[2], c->k, c->stride, c->pad);
    out->dims[3] = model_out_size(in->dims[3], c->k, c->stride, c->pad);
    const int64_t g = c->groups, k = c->k, h = in->dims[2], w = in->dims[3];
    const dnnl_dims_t wts = { c->cout, c->cin, k, k };
    const dnnl_dims_t gwts = { g, c->cout / g, c->cin / g, k, k };
    const dnnl_dims_t bias = { c->cout };
    const dnnl_dims_t strides = { c->stride, c->stride }, dil = { 0, 0 }, pl = { c->pad, c->pad };
    /* right padding that makes oneDNN's output size torch's floor division */
    const dnnl_dims_t pr = { (out->dims[2] - 1) * c->stride + k - h - c->pad,
                             (out->dims[3] - 1) * c->stride + k - w - c->pad };
    dnnl_memory_desc_t src_md, dst_md, wts_md, bias_md, add_md;
    dnnl_convolution_desc_t desc;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    const char *what = "convolution descriptor";
    dnnl_status_t s = value_md(net, in, &src_md);
    if (s == dnnl_success)
        s = value_md(net, out, &dst_md);
    if (s == dnnl_success && add != NULL)
        s = value_md(net, add, &add_md);
    if (s == dnnl_success)
        s = g == 1 ? dnnl_memory_desc_init_by_tag(&wts_md, 4, wts, dnnl_f32, dnnl_format_tag_any)
                   : dnnl_memory_desc_init_by_tag(&wts_md, 5, gwts, dnnl_f32, dnnl_format_tag_any);
    if (s == dnnl_success)
        s = dnnl_memory_desc_init_by_tag(&bias_md, 1, bias, dnnl_f32, dnnl_x);
    /* conv_algorithm=winograd (model_common.h): a 3x3 stride-1 ungrouped
    ** conv of the model asks for oneDNN's Winograd kernel first, and takes
    ** the direct one where oneDNN has none (its post-ops, its ISA) */
    const int winograd = net->owner->winograd && owner != NULL && k == 3 && c->stride == 1 && g == 1;
    if (s == dnnl_success)
        s = dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference,
                                                       winograd ? dnnl_convolution_winograd : dnnl_convolution_direct,
                                                       &src_md, &wts_md, &bias_md, &dst_md, strides, dil, pl, pr);
    if (s == dnnl_success) {
        what = "convolution attributes";
        s = attr_make(sum, act, add != NULL ? &add_md : NULL, &attr);
    }
    int saved = onednn_budget_enter(net->n_threads);
    if (s == dnnl_success) {
        what = "convolution primitive descriptor";
        s = dnnl_primitive_desc_create(&pd, &desc, attr, onednn_engine(), NULL);
        if (s == dnnl_unimplemented && winograd) {
            s = dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct,
                                                           &src_md, &wts_md, &bias_md, &dst_md, strides, dil, pl,
                                                           pr);
            if (s == dnnl_success)
                s = dnnl_primitive_desc_create(&pd, &desc, attr, onednn_engine(), NULL);
        }
    }
    loom_status r = LOOM_OK;
    if (add != NULL && s == dnnl_success && is_reference(pd)) {
        *declined = 1;
        onednn_budget_leave(net->n_threads, saved);
        dnnl_primitive_desc_destroy(pd);
        dnnl_primitive_attr_destroy(attr);
        return LOOM_OK;
    }
    net_step *st = s == dnnl_success ? step_new(net) : NULL;
    if (s == dnnl_success && st == NULL)
        r = pk_host->fail(LOOM_ENOMEM, "%s: out of memory for a oneDNN plan", net->owner->cls);
    if (st != NULL) {
        const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
        void *wdata = NULL;
        r = g == 1 ? weights_get(net, owner, c->weight, 4, wts, dnnl_oihw, want, winograd, &wdata)
                   : weights_get(net, owner, c->weight, 5, gwts, dnnl_goihw, want, 0, &wdata);
        if (r == LOOM_OK) {
            char name[96];
            snprintf(name, sizeof name, "conv %lldx%lldx%lldx%lld/%lld g%lld", (long long)c->cout,
                     (long long)(c->cin / g), (long long)k, (long long)k, (long long)c->stride, (long long)g);
            what = "convolution primitive";
            s = step_prim(net, st, pd, name);
        }
        if (r == LOOM_OK && s == dnnl_success) {
            arg_value(net, st, DNNL_ARG_SRC, in, &src_md);
            arg_add(st, DNNL_ARG_WEIGHTS, LOC_PTR, 0, wdata, want);
            arg_add(st, DNNL_ARG_BIAS, LOC_PTR, 0, c->bias, &bias_md);
            arg_value(net, st, DNNL_ARG_DST, out, &dst_md);
            if (add != NULL) {
                /* the binary post-op is the chain's last: index (sum) + (act) */
                const int idx = (sum ? 1 : 0) + (act != ONEDNN_ACT_NONE ? 1 : 0);
                arg_value(net, st, DNNL_ARG_ATTR_MULTIPLE_POST_OP(idx) | DNNL_ARG_SRC_1, add, &add_md);
            }
            s = arg_scratch(net, st, pd);
            net->n_steps++;
        }
    }
    onednn_budget_leave(net->n_threads, saved);
    if (pd != NULL)
        dnnl_primitive_desc_destroy(pd);
    if (attr != NULL)
        dnnl_primitive_attr_destroy(attr);
    return r != LOOM_OK ? r : s != dnnl_success ? dnnl_fail(net, s, what) : LOOM_OK;
}

loom_status onednn_net_conv(onednn_net *net, model_conv *c, const onednn_value *in, int buf, onednn_act act,
                            int sum, onednn_value *out)
{
    return conv_step(net, c, c, in, buf, act, sum, NULL, out, NULL);
}

loom_status onednn_net_conv_borrowed(onednn_net *net, const model_conv *c, const onednn_value *in, int buf,
                                     onednn_act act, onednn_value *out)
{
    return conv_step(net, NULL, c, in, buf, act, 0, NULL, out, NULL);
}

loom_status onednn_net_conv_add(onednn_net *net, model_conv *c, const onednn_value *in, int buf,
                                onednn_act act, const onednn_value *residual, onednn_value *out)
{
    int declined = 0;
    loom_status r = conv_step(net, c, c, in, buf, act, 0, residual, out, &declined);
    if (r != LOOM_OK || !declined)
        return r;
    if ((r = conv_step(net, c, c, in, buf, act, 0, NULL, out, NULL)) != LOOM_OK)
        return r;
    return binary_step(net, dnnl_binary_add, out, residual, out, "residual add");
}

/* A pooling step of alg over in (kernel, stride, padding per side) into
** out (dims set, in dst_md's layout). */
static loom_status pool_step(onednn_net *net, dnnl_alg_kind_t alg, const onednn_value *in,
                             const dnnl_memory_desc_t *dst_md, const onednn_value *out, const dnnl_dims_t kernel,
                             const dnnl_dims_t strides, const dnnl_dims_t pl, const char *name)
{
    const dnnl_dims_t pr = { (out->dims[2] - 1) * strides[0] + kernel[0] - in->dims[2] - pl[0],
                             (out->dims[3] - 1) * strides[1] + kernel[1] - in->dims[3] - pl[1] };
    dnnl_memory_desc_t src_md;
    dnnl_pooling_desc_t desc;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    const char *what = "pooling descriptor";
    dnnl_status_t s = value_md(net, in, &src_md);
    if (s == dnnl_success)
        s = dnnl_pooling_forward_desc_init(&desc, dnnl_forward_inference, alg, &src_md, dst_md, strides, kernel, pl,
                                           pr);
    if (s == dnnl_success)
        s = attr_make(0, ONEDNN_ACT_NONE, NULL, &attr);
    int saved = onednn_budget_enter(net->n_threads);
    if (s == dnnl_success) {
        what = "pooling primitive descriptor";
        s = dnnl_primitive_desc_create(&pd, &desc, attr, onednn_engine(), NULL);
    }
    net_step *st = s == dnnl_success ? step_new(net) : NULL;
    loom_status r = s == dnnl_success && st == NULL
                        ? pk_host->fail(LOOM_ENOMEM, "%s: out of memory for a oneDNN plan", net->owner->cls) : LOOM_OK;
    if (st != NULL) {
        what = "pooling primitive";
        s = step_prim(net, st, pd, name);
        if (s == dnnl_success) {
            arg_value(net, st, DNNL_ARG_SRC, in, &src_md);
            arg_value(net, st, DNNL_ARG_DST, out, dst_md);
            s = arg_scratch(net, st, pd);
            net->n_steps++;
        }
    }
    onednn_budget_leave(net->n_threads, saved);
    if (pd != NULL)
        dnnl_primitive_desc_destroy(pd);
    if (attr != NULL)
        dnnl_primitive_attr_destroy(attr);
    return r != LOOM_OK ? r : s != dnnl_success ? dnnl_fail(net, s, what) : LOOM_OK;
}

loom_status onednn_net_max_pool(onednn_net *net, int64_t k, int64_t stride, int64_t pad, const onednn_value *in,
                                int buf, onednn_value *out)
{
    out->buf = buf;
    out->dims[0] = in->dims[0];
    out->dims[1] = in->dims[1];
    out->dims[2] = model_out_size(in->dims[2], k, stride, pad);
    out->dims[3] = model_out_size(in->dims[3], k, stride, pad);
    dnnl_memory_desc_t dst_md;
    dnnl_status_t s = value_md(net, out, &dst_md);
    if (s != dnnl_success)
        return dnnl_fail(net, s, "memory descriptor");
    const dnnl_dims_t kernel = { k, k }, strides = { stride, stride }, pl = { pad, pad };
    return pool_step(net, dnnl_pooling_max, in, &dst_md, out, kernel, strides, pl, "max_pool2d");
}

loom_status onednn_net_global_avg_pool(onednn_net *net, const onednn_value *in, int buf, onednn_value *out)
{
    out->buf = buf;
    out->dims[0] = in->dims[0];
    out->dims[1] = in->dims[1];
    out->dims[2] = 1;
    out->dims[3] = 1;
    dnnl_memory_desc_t dst_md;
    dnnl_status_t s = value_md(net, out, &dst_md);
    if (s != dnnl_success)
        return dnnl_fail(net, s, "memory descriptor");
    const dnnl_dims_t kernel = { in->dims[2], in->dims[3] }, strides = { 1, 1 }, pl = { 0, 0 };
    return pool_step(net, dnnl_pooling_avg_exclude_padding, in, &dst_md, out, kernel, strides, pl,
                     "squeeze-excitation pool");
}

/* pd's primitive (made under the plan's thread budget, which the caller
** holds) as the plan's next step, reading src and writing dst; pd is
** destroyed. s: the status of making pd, what: the step for messages. */
static loom_status unary_step(onednn_net *net, dnnl_primitive_desc_t pd, dnnl_status_t s, const char *what,
                              const char *name, int src_id, const onednn_value *src, const dnnl_memory_desc_t *src_md,
                              int dst_id, const onednn_value *dst, const dnnl_memory_desc_t *dst_md)
{
    net_step *st = s == dnnl_success ? step_new(net) : NULL;
    loom_status r = s == dnnl_success && st == NULL
                        ? pk_host->fail(LOOM_ENOMEM, "%s: out of memory for a oneDNN plan", net->owner->cls) : LOOM_OK;
    if (st != NULL) {
        s = step_prim(net, st, pd, name);
        if (s == dnnl_success) {
            arg_value(net, st, src_id, src, src_md);
            arg_value(net, st, dst_id, dst, dst_md);
            s = arg_scratch(net, st, pd);
            net->n_steps++;
        }
    }
    if (pd != NULL)
        dnnl_primitive_desc_destroy(pd);
    return r != LOOM_OK ? r : s != dnnl_success ? dnnl_fail(net, s, what) : LOOM_OK;
}

loom_status onednn_net_output(onednn_net *net, const onednn_value *in, int buf)
{
    onednn_value out = *in;
    out.buf = buf;
    memcpy(net->plain_dims[buf], in->dims, sizeof net->plain_dims[buf]);
    dnnl_memory_desc_t from, to;
    const dnnl_dims_t dims = { in->dims[0], in->dims[1], in->dims[2], in->dims[3] };
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t s = value_md(net, in, &from);
    if (s == dnnl_success)
        s = dnnl_memory_desc_init_by_tag(&to, 4, dims, dnnl_f32, dnnl_nchw);
    int saved = onednn_budget_enter(net->n_threads);
    if (s == dnnl_success)
        s = dnnl_reorder_primitive_desc_create(&pd, &from, onednn_engine(), &to, onednn_engine(), NULL);
    loom_status r = unary_step(net, pd, s, "output reorder", "map to NCHW", DNNL_ARG_FROM, in, &from, DNNL_ARG_TO,
                               &out, &to);
    onednn_budget_leave(net->n_threads, saved);
    return r;
}

/* The step of op descriptor desc (made from in's and out's memory
** descriptors) from in to out, without post-ops. */
static loom_status desc_step(onednn_net *net, const void *desc, dnnl_status_t s, const char *name,
                             const onednn_value *in, const dnnl_memory_desc_t *src_md, const onednn_value *out,
                             const dnnl_memory_desc_t *dst_md)
{
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    if (s == dnnl_success)
        s = attr_make(0, ONEDNN_ACT_NONE, NULL, &attr);
    int saved = onednn_budget_enter(net->n_threads);
    if (s == dnnl_success)
        s = dnnl_primitive_desc_create(&pd, desc, attr, onednn_engine(), NULL);
    loom_status r = unary_step(net, pd, s, name, name, DNNL_ARG_SRC, in, src_md, DNNL_ARG_DST, out, dst_md);
    onednn_budget_leave(net->n_threads, saved);
    if (attr != NULL)
        dnnl_primitive_attr_destroy(attr);
    return r;
}

loom_status onednn_net_relu(onednn_net *net, const onednn_value *in, int buf, onednn_value *out)
{
    *out = *in;
    out->buf = buf;
    dnnl_memory_desc_t src_md, dst_md;
    dnnl_eltwise_desc_t desc;
    dnnl_status_t s = value_md(net, in, &src_md);
    if (s == dnnl_success)
        s = value_md(net, out, &dst_md);
    if (s == dnnl_success)
        s = dnnl_eltwise_forward_desc_init(&desc, dnnl_forward_inference, dnnl_eltwise_relu, &src_md, 0.0f, 0.0f);
    return desc_step(net, &desc, s, "relu", in, &src_md, out, &dst_md);
}

loom_status onednn_net_upsample2x(onednn_net *net, const onednn_value *in, int buf, onednn_value *out)
{
    *out = *in;
    out->buf = buf;
    out->dims[2] = 2 * in->dims[2];
    out->dims[3] = 2 * in->dims[3];
    dnnl_memory_desc_t src_md, dst_md;
    dnnl_resampling_desc_t desc;
    dnnl_status_t s = value_md(net, in, &src_md);
    if (s == dnnl_success)
        s = value_md(net, out, &dst_md);
    if (s == dnnl_success)
        s = dnnl_resampling_forward_desc_init(&desc, dnnl_forward_inference, dnnl_resampling_nearest, NULL, &src_md,
                                              &dst_md);
    return desc_step(net, &desc, s, "upsample 2x (nearest)", in, &src_md, out, &dst_md);
}

loom_status onednn_net_head(onednn_net *net, const onednn_value *in, int pooled_buf, const float *weight,
                            const float *bias, int64_t classes)
{
    const int64_t n = in->dims[0], c = in->dims[1];
    onednn_value pooled = { pooled_buf, { n, c, 1, 1 } };
    const dnnl_dims_t pdims = { n, c, 1, 1 };
    dnnl_memory_desc_t pooled_md;
    /* adaptive_avg_pool2d(1): the mean over the whole map, into [n, c]. When
    ** the channels are a whole number of blocks, the activations' blocked
    ** layout of [n, c, 1, 1] is those very bytes, and oneDNN's jit pooling
    ** takes it (it has none from a blocked source into a plain one: the
    ** reference kernel's 1.1 ms at batch 1 was 3% of resnet50). */
    dnnl_status_t s = dnnl_memory_desc_init_by_tag(&pooled_md, 4, pdims, dnnl_f32, net->tag);
    if (s != dnnl_success || dnnl_memory_desc_get_size(&pooled_md) != (size_t)(n * c) * sizeof(float))
        s = dnnl_memory_desc_init_by_tag(&pooled_md, 4, pdims, dnnl_f32, dnnl_nchw);
    if (s != dnnl_success)
        return dnnl_fail(net, s, "memory descriptor");
    const dnnl_dims_t kernel = { in->dims[2], in->dims[3] }, strides = { 1, 1 }, pl = { 0, 0 };
    loom_status r = pool_step(net, dnnl_pooling_avg_exclude_padding, in, &pooled_md, &pooled, kernel, strides, pl,
                              "adaptive_avg_pool2d");
    if (r != LOOM_OK)
        return r;
    const dnnl_dims_t src = { n, c }, wts = { classes, c }, bd = { classes }, dst = { n, classes };
    dnnl_memory_desc_t src_md, wts_md, bias_md, dst_md;
    dnnl_inner_product_desc_t desc;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    const char *what = "inner product descriptor";
    s = dnnl_memory_desc_init_by_tag(&src_md, 2, src, dnnl_f32, dnnl_nc);
    if (s == dnnl_success)
        s = dnnl_memory_desc_init_by_tag(&wts_md, 2, wts, dnnl_f32, dnnl_oi);
    if (s == dnnl_success)
        s = dnnl_memory_desc_init_by_tag(&bias_md, 1, bd, dnnl_f32, dnnl_x);
    if (s == dnnl_success)
        s = dnnl_memory_desc_init_by_tag(&dst_md, 2, dst, dnnl_f32, dnnl_nc);
    if (s == dnnl_success)
        s = dnnl_inner_product_forward_desc_init(&desc, dnnl_forward_inference, &src_md, &wts_md, &bias_md, &dst_md);
    if (s == dnnl_success)
        s = attr_make(0, ONEDNN_ACT_NONE, NULL, &attr);
    int saved = onednn_budget_enter(net->n_threads);
    if (s == dnnl_success) {
        what = "inner product primitive descriptor";
        s = dnnl_primitive_desc_create(&pd, &desc, attr, onednn_engine(), NULL);
    }
    net_step *st = s == dnnl_success ? step_new(net) : NULL;
    if (s == dnnl_success && st == NULL)
        r = pk_host->fail(LOOM_ENOMEM, "%s: out of memory for a oneDNN plan", net->owner->cls);
    if (st != NULL) {
        what = "inner product primitive";
        s = step_prim(net, st, pd, "linear");
        if (s == dnnl_success) {
            arg_add(st, DNNL_ARG_SRC, LOC_BUF, pooled_buf, NULL, &src_md);
            arg_add(st, DNNL_ARG_WEIGHTS, LOC_PTR, 0, (void *)weight, &wts_md);
            arg_add(st, DNNL_ARG_BIAS, LOC_PTR, 0, (void *)bias, &bias_md);
            arg_add(st, DNNL_ARG_DST, LOC_OUTPUT, 0, NULL, &dst_md);
            s = arg_scratch(net, st, pd);
            net->n_steps++;
        }
    }
    onednn_budget_leave(net->n_threads, saved);
    if (pd != NULL)
        dnnl_primitive_desc_destroy(pd);
    if (attr != NULL)
        dnnl_primitive_attr_destroy(attr);
    return r != LOOM_OK ? r : s != dnnl_success ? dnnl_fail(net, s, what) : LOOM_OK;
}

loom_status onednn_net_end(onednn_nets *s, onednn_net *net)
{
    for (int i = 0; i < net->n_bufs; i++)
        if (net->buf_bytes[i] > 0 && (net->buf[i] = aligned_alloc(64, (net->buf_bytes[i] + 63) / 64 * 64)) == NULL)
            goto oom;
    if (net->scratch_bytes > 0 && (net->scratch = aligned_alloc(64, (net->scratch_bytes + 63) / 64 * 64)) == NULL)
        goto oom;
    for (int i = 0; i < net->n_steps; i++) {
        net_step *st = &net->steps[i];
        for (int a = 0; a < st->n_args; a++) {
            net_arg *g = &st->args[a];
            /* the input's and the output's handles are set by each run */
            void *h = g->kind == LOC_BUF ? net->buf[g->buf] : g->kind == LOC_PTR ? g->ptr
                    : g->kind == LOC_SCRATCH ? net->scratch : DNNL_MEMORY_NONE;
            dnnl_status_t ds = dnnl_memory_create(&g->mem, &g->md, onednn_engine(), h);
            if (ds != dnnl_success) {
                loom_status r = dnnl_fail(net, ds, "memory object");
                net_free(net);
                return r;
            }
        }
    }
    if (s->n_plans == MAX_PLANS) {
        net_free(s->plans[0]);
        memmove(s->plans, s->plans + 1, (MAX_PLANS - 1) * sizeof s->plans[0]);
        s->n_plans--;
    }
    s->plans[s->n_plans++] = net;
    release_plain(s);
    return LOOM_OK;
oom:;
    loom_status r = pk_host->fail(LOOM_ENOMEM, "%s: out of memory for the activations of input %s", s->cls,
                                  net->desc);
    net_free(net);
    return r;
}

const float *onednn_net_map(const onednn_net *net, int buf, int64_t *dims)
{
    memcpy(dims, net->plain_dims[buf], sizeof net->plain_dims[buf]);
    return net->buf[buf];
}

loom_status onednn_net_run(onednn_net *net, const float *x, float *logits)
{
    dnnl_status_t s = dnnl_success;
    for (int i = 0; i < net->n_steps && s == dnnl_success; i++)
        for (int a = 0; a < net->steps[i].n_args && s == dnnl_success; a++) {
            net_arg *g = &net->steps[i].args[a];
            if (g->kind == LOC_INPUT)
                s = dnnl_memory_set_data_handle(g->mem, (void *)x);
            else if (g->kind == LOC_OUTPUT)
                s = dnnl_memory_set_data_handle(g->mem, logits);
        }
    if (s != dnnl_success)
        return dnnl_fail(net, s, "binding the input and output");
    int saved = onednn_budget_enter(net->n_threads);
    for (int i = 0; i < net->n_steps && s == dnnl_success; i++) {
        net_step *st = &net->steps[i];
        dnnl_exec_arg_t args[MAX_ARGS];
        for (int a = 0; a < st->n_args; a++) {
            args[a].arg = st->args[a].id;
            args[a].memory = st->args[a].mem;
        }
        s = dnnl_primitive_execute(st->prim, net->stream, st->n_args, args);
    }
    if (s == dnnl_success)
        s = dnnl_stream_wait(net->stream);
    onednn_budget_leave(net->n_threads, saved);
    return s != dnnl_success ? dnnl_fail(net, s, "execution") : LOOM_OK;
}

loom_status onednn_model_supports(const loom_call *call, char *why, size_t why_size)
{
    (void)call;
    if (!onednn_runtime_ready()) {
        snprintf(why, why_size, "oneDNN's CPU runtime offers no thread-count control this kernel can use");
        return LOOM_ENOTSUP;
    }
    return LOOM_OK;
}

loom_status onednn_model_run(loom_call *call, struct model_base *base, int n_bufs, onednn_net_build_fn build)
{
    const loom_tensor *x = call->inputs[0];
    loom_tensor *out;
    loom_status st = model_check_input(call, base->classes, &out);
    if (st != LOOM_OK)
        return st;
    onednn_nets *nets = onednn_nets_of(call);
    if (nets == NULL)
        return LOOM_ENOMEM;            /* the error is set */
    const int threads = onednn_call_threads(call);
    pthread_mutex_lock(&base->lock);
    onednn_net *net = onednn_nets_find(nets, x->shape, threads);
    if (net == NULL) {
        st = onednn_net_begin(nets, x->shape, threads, n_bufs, &net);
        if (st == LOOM_OK && (st = build(call->object, net)) != LOOM_OK)
            onednn_net_abandon(net);
        if (st == LOOM_OK)
            st = onednn_net_end(nets, net);
    }
    if (st == LOOM_OK)
        st = onednn_net_run(net, loom_data(x), loom_data(out));
    pthread_mutex_unlock(&base->lock);
    return st;
}
