/* SPDX-License-Identifier: BSD-3-Clause */
/*
** onednn_net.h - a whole CNN forward as one oneDNN plan (built only when
** oneDNN is found): the onednn kernels of the model classes build it once
** per (object, input shape, thread budget) and run it on every later call.
**
** The activations stay in oneDNN's blocked layout between layers (nChw8c,
** nChw16c where AVX-512 is present: the layout its jit convolutions work
** in), in a fixed number of buffers the model's walk assigns (buffer roles
** as in the cpu forward, so the same bound on live feature maps holds):
**   - the input is read in plain NCHW by the first convolution, whose
**     output is blocked (no separate reorder);
**   - convolutions carry their bias (the folded batchnorm), the residual
**     (a sum post-op: the walk makes the output buffer hold the residual
**     already; or, after the activation, a binary-add post-op) and relu,
**     silu or sigmoid as post-ops;
**   - max pooling, a squeeze-excitation's global average pool and its
**     broadcast multiply run on the blocked layout; the head's global average
**     pool writes plain [N, C], the inner product reads it and writes the
**     logits.
** Each convolution's weights are reordered once into the layout its
** primitive asks for and kept per object (onednn_nets), shared by the plans
** of every input shape whose primitive asks for the same layout.
**
** Weights are resident once: while a plan is made, each of the model's
** plain (folded) conv weights is freed (model_conv.weight = NULL) as soon
** as its first reordered copy exists, so the two copies of the model are
** never held together, and a later layout (another input shape's plan) is
** reordered from the first one; the cpu
** kernel of the class calls onednn_nets_keep_plain before its forward,
** which makes them again and keeps them from then on. Both run under the
** model's lock.
*/
#ifndef LOOM_VISION_ONEDNN_NET_H
#define LOOM_VISION_ONEDNN_NET_H

#include "model_common.h"

#define ONEDNN_NET_MAX_BUFS 32

/* A feature map of a plan: the buffer holding it (ONEDNN_NET_INPUT: the
** call's input, plain NCHW) and its dims [n, c, h, w]. */
#define ONEDNN_NET_INPUT (-1)
typedef struct onednn_value {
    int buf;
    int64_t dims[4];
} onednn_value;

typedef struct onednn_net onednn_net;       /* one plan */
typedef struct onednn_nets onednn_nets;     /* an object's plans and reordered weights */

/* An object's (empty) set of plans; NULL when out of memory. */
onednn_nets *onednn_nets_new(const char *cls);
void onednn_nets_free(void *nets);

/* The object's plans (host->object_backend_state of the call, made empty
** at the first call on either backend); NULL with the error set. The
** object's state starts with its model_base. */
onednn_nets *onednn_nets_of(loom_call *call);

/* The cpu kernel is about to run: the plain weights the plans released are
** made again from their reordered copies, and kept from now on. */
loom_status onednn_nets_keep_plain(onednn_nets *s);
/* The same for the object of the call (under the model's lock). */
loom_status onednn_keep_plain_weights(loom_call *call);

/* The plan of input dims (n, c, h, w) and thread count, or NULL: then
** build one with onednn_net_begin ... onednn_net_end. */
onednn_net *onednn_nets_find(onednn_nets *s, const int64_t *in_dims, int n_threads);

/* A new plan of s for that input, n_bufs activation buffers. */
loom_status onednn_net_begin(onednn_nets *s, const int64_t *in_dims, int n_threads, int n_bufs, onednn_net **out);

/* The value of the call's input. */
onednn_value onednn_net_input(const onednn_net *net);

/* The activations a step fuses (oneDNN eltwise post-ops). */
typedef enum onednn_act { ONEDNN_ACT_NONE, ONEDNN_ACT_RELU, ONEDNN_ACT_SILU, ONEDNN_ACT_SIGMOID } onednn_act;

/* Steps. *out gets buffer `buf` and its dims. sum: the output buffer
** already holds the residual (of out's dims and layout), which the
** convolution adds before the activation. */
loom_status onednn_net_conv(onednn_net *net, model_conv *c, const onednn_value *in, int buf, onednn_act act,
                            int sum, onednn_value *out);
/* The same for a conv whose weights are borrowed (a squeeze-excitation's
** fc, from the mapping): kept, never released; no sum. */
loom_status onednn_net_conv_borrowed(onednn_net *net, const model_conv *c, const onednn_value *in, int buf,
                                     onednn_act act, onednn_value *out);
/* out = act(conv c of in) + residual (the residual after the activation,
** in a buffer other than buf): a binary-add post-op where oneDNN has a jit
** kernel for it, else a binary primitive after the convolution. */
loom_status onednn_net_conv_add(onednn_net *net, model_conv *c, const onednn_value *in, int buf,
                                onednn_act act, const onednn_value *residual, onednn_value *out);
/* x *= scale in place, scale [n, c, 1, 1] broadcast over x's map (a
** squeeze-excitation's last step). */
loom_status onednn_net_scale(onednn_net *net, const onednn_value *x, const onednn_value *scale);
/* out = the mean of in over its map, [n, c, 1, 1] in the blocked layout. */
loom_status onednn_net_global_avg_pool(onednn_net *net, const onednn_value *in, int buf, onednn_value *out);
loom_status onednn_net_max_pool(onednn_net *net, int64_t k, int64_t stride, int64_t pad, const onednn_value *in,
                                int buf, onednn_value *out);
/* The head: global average pool into buffer pooled_buf (plain [N, C]),
** then logits [N, classes] = pooled . weight^T + bias into the call's
** output. */
loom_status onednn_net_head(onednn_net *net, const onednn_value *in, int pooled_buf, const float *weight,
                            const float *bias, int64_t classes);

/* out = relu(in) into buffer buf. */
loom_status onednn_net_relu(onednn_net *net, const onednn_value *in, int buf, onednn_value *out);
/* out = in upsampled 2x by nearest neighbour into buffer buf: F.interpolate
** (mode="nearest") to twice the size (source pixel floor(i / 2), which
** oneDNN's nearest gives at that exact factor). */
loom_status onednn_net_upsample2x(onednn_net *net, const onednn_value *in, int buf, onednn_value *out);
/* Buffer buf = in in plain NCHW (a map the plan gives: onednn_net_map). */
loom_status onednn_net_output(onednn_net *net, const onednn_value *in, int buf);
/* After a run: the plain map onednn_net_output wrote into buf, its dims. */
const float *onednn_net_map(const onednn_net *net, int buf, int64_t *dims);

/* The ResNet body of m (stem, max pool, layer1..layer4) as steps: stage s's
** blocks take their maps from the buffer triple stage_pool[s] .. + 2 (a
** stage in a pool of its own leaves the previous stage's output as it is);
** stage_out[s] = layer<s+1>'s output (resnet_onednn.c). */
struct resnet_model;
loom_status resnet_onednn_body(struct resnet_model *m, onednn_net *net, const int *stage_pool,
                               onednn_value *stage_out);

/* Allocates the buffers and binds the steps' memories; the plan joins s.
** On failure the plan is freed. */
loom_status onednn_net_end(onednn_nets *s, onednn_net *net);
/* Frees a plan onednn_net_end has not taken. */
void onednn_net_abandon(onednn_net *net);

/* Runs the plan on x (its input dims) into logits (the head's output, NULL
** for a plan without one). */
loom_status onednn_net_run(onednn_net *net, const float *x, float *logits);

/* The onednn kernel of a classifier class run as one plan (call->object is
** the model, whose first member is its model_base): the input is checked
** (model_check_input), then under the model's lock the plan of this input
** shape and thread budget is found, or begun with n_bufs buffer roles,
** filled by build(model, net) and ended; then it runs. */
struct model_base;
typedef loom_status (*onednn_net_build_fn)(void *model, onednn_net *net);
loom_status onednn_model_run(loom_call *call, struct model_base *base, int n_bufs, onednn_net_build_fn build);
/* The supports() of those kernels: declines when oneDNN's runtime offers no
** thread-count control (onednn_runtime_ready). */
loom_status onednn_model_supports(const loom_call *call, char *why, size_t why_size);

#endif /* LOOM_VISION_ONEDNN_NET_H */
