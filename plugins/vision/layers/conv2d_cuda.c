/* SPDX-License-Identifier: BSD-3-Clause */
/*
** conv2d_cuda.c - vision.conv2d on the cuda backend through cuDNN, f32,
** NCHW / (G)OIHW, grouped and depthwise through the group count, dilation,
** stride and zero padding as cuDNN's; nn.Conv2d's other padding modes
** (reflect, replicate, circular) are a padding copy into the call's scratch
** first (elementwise_cuda_kernels.cu), then a convolution without padding.
**
** Plans: the descriptors (input, filter, convolution, output, bias, the
** activations) and the algorithm are made once per geometry and device and
** kept in a cache of at most CACHE_CAP entries for the pack's lifetime
** (layers_conv2d_cuda_fini destroys them); a geometry met when the cache is
** full gets a plan of its own for that call. The algorithm is the first of
** cudnnGetConvolutionForwardAlgorithm_v7's ranking that runs in
** CUDNN_FMA_MATH (f32 products and sums, never TF32: CUDNN_DEFAULT_MATH
** permits TF32 on sm_80 and later), is not an FFT (whose rounding error
** grows with the map, and whose workspace is the largest) and needs at most
** WORKSPACE_CAP bytes of workspace, which comes from the call's scratch.
**
** Epilogue, by activation:
**   relu (residual before it, or none): cudnnConvolutionBiasActivationForward,
**     y = relu(conv + residual + bias) in one launch (a zero bias when the
**     call has none; the residual, copied into y first, is its z);
**   none with a bias: the same call with the identity activation when the
**     chosen algorithm is IMPLICIT_PRECOMP_GEMM (the only one cuDNN fuses the
**     identity with); else as below;
**   (either fusion refused with CUDNN_STATUS_NOT_SUPPORTED: as below)
**   otherwise: cudnnConvolutionForward (beta = 1 onto the residual copied
**     into y, for act(conv + bias + residual)), then one element-wise launch
**     for the bias, the activation (silu, gelu) and a residual after it.
** Every launch is on the call's stream; cuDNN's errors become LOOM_EDEVICE
** naming the call that failed.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gemm/gemm.h"
#include "layers_cuda.h"

#define CACHE_CAP 128                       /* a ResNet-152 has ~60 conv geometries per input shape */
#define WORKSPACE_CAP ((size_t)512 << 20)

/* Compared bytewise: built from a zeroed struct. h, w and the padding are
** what cuDNN sees (after a padding copy, the padded map and 0). */
typedef struct conv_key {
    int64_t n, cin, h, w, cout, groups, kh, kw, sh, sw, ph, pw, dh, dw;
    int32_t device;
} conv_key;

typedef struct conv_plan {
    conv_key key;
    cudnnTensorDescriptor_t x, y, bias;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnActivationDescriptor_t relu, identity;
    cudnnConvolutionFwdAlgo_t algo;
    size_t workspace;
} conv_plan;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static conv_plan *cache[CACHE_CAP];
static int n_cached;

static void plan_destroy(conv_plan *p)
{
    if (p == NULL)
        return;
    if (p->x != NULL)
        cudnnDestroyTensorDescriptor(p->x);
    if (p->y != NULL)
        cudnnDestroyTensorDescriptor(p->y);
    if (p->bias != NULL)
        cudnnDestroyTensorDescriptor(p->bias);
    if (p->w != NULL)
        cudnnDestroyFilterDescriptor(p->w);
    if (p->conv != NULL)
        cudnnDestroyConvolutionDescriptor(p->conv);
    if (p->relu != NULL)
        cudnnDestroyActivationDescriptor(p->relu);
    if (p->identity != NULL)
        cudnnDestroyActivationDescriptor(p->identity);
    free(p);
}

void layers_conv2d_cuda_fini(void)
{
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < n_cached; i++)
        plan_destroy(cache[i]);
    n_cached = 0;
    pthread_mutex_unlock(&cache_lock);
}

/* The descriptor's math type (FMA) is what runs; an entry ranked for a
** tensor-op math type would not run as ranked. */
static int algo_acceptable(const cudnnConvolutionFwdAlgoPerf_t *r)
{
    return r->status == CUDNN_STATUS_SUCCESS && (r->mathType == CUDNN_FMA_MATH || r->mathType == CUDNN_DEFAULT_MATH)
        && r->algo != CUDNN_CONVOLUTION_FWD_ALGO_FFT && r->algo != CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING
        && r->memory <= WORKSPACE_CAP;
}

/* The algorithm of p's geometry (see the header comment); the implicit
** GEMM, which needs no workspace, when the ranking offers none. */
static cudnnStatus_t choose_algo(cudnnHandle_t h, conv_plan *p)
{
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    cudnnStatus_t s = cudnnGetConvolutionForwardAlgorithm_v7(h, p->x, p->w, p->conv, p->y,
                                                             CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf);
    if (s != CUDNN_STATUS_SUCCESS)
        return s;
    for (int i = 0; i < returned; i++)
        if (algo_acceptable(&perf[i])) {
            p->algo = perf[i].algo;
            p->workspace = perf[i].memory;
            return CUDNN_STATUS_SUCCESS;
        }
    p->algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    return cudnnGetConvolutionForwardWorkspaceSize(h, p->x, p->w, p->conv, p->y, p->algo, &p->workspace);
}

#define TRY(call, what)                                                                            \
    do {                                                                                           \
        if ((s = (call)) != CUDNN_STATUS_SUCCESS) {                                                \
            *failed = (what);                                                                      \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

static cudnnStatus_t plan_create(cudnnHandle_t h, const conv_key *k, int64_t ho, int64_t wo, conv_plan **out,
                                 const char **failed)
{
    cudnnStatus_t s = CUDNN_STATUS_ALLOC_FAILED;
    conv_plan *p = calloc(1, sizeof *p);
    *failed = "allocating a plan";
    if (p == NULL)
        return s;
    p->key = *k;
    TRY(cudnnCreateTensorDescriptor(&p->x), "cudnnCreateTensorDescriptor");
    TRY(cudnnCreateTensorDescriptor(&p->y), "cudnnCreateTensorDescriptor");
    TRY(cudnnCreateTensorDescriptor(&p->bias), "cudnnCreateTensorDescriptor");
    TRY(cudnnCreateFilterDescriptor(&p->w), "cudnnCreateFilterDescriptor");
    TRY(cudnnCreateConvolutionDescriptor(&p->conv), "cudnnCreateConvolutionDescriptor");
    TRY(cudnnCreateActivationDescriptor(&p->relu), "cudnnCreateActivationDescriptor");
    TRY(cudnnCreateActivationDescriptor(&p->identity), "cudnnCreateActivationDescriptor");
    TRY(cudnnSetTensor4dDescriptor(p->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)k->n, (int)k->cin, (int)k->h,
                                   (int)k->w), "cudnnSetTensor4dDescriptor (input)");
    TRY(cudnnSetTensor4dDescriptor(p->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)k->n, (int)k->cout, (int)ho,
                                   (int)wo), "cudnnSetTensor4dDescriptor (output)");
    TRY(cudnnSetTensor4dDescriptor(p->bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, (int)k->cout, 1, 1),
        "cudnnSetTensor4dDescriptor (bias)");
    TRY(cudnnSetFilter4dDescriptor(p->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, (int)k->cout, (int)(k->cin / k->groups),
                                   (int)k->kh, (int)k->kw), "cudnnSetFilter4dDescriptor");
    /* torch's conv2d is a cross-correlation */
    TRY(cudnnSetConvolution2dDescriptor(p->conv, (int)k->ph, (int)k->pw, (int)k->sh, (int)k->sw, (int)k->dh,
                                        (int)k->dw, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        "cudnnSetConvolution2dDescriptor");
    TRY(cudnnSetConvolutionGroupCount(p->conv, (int)k->groups), "cudnnSetConvolutionGroupCount");
    TRY(cudnnSetConvolutionMathType(p->conv, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType");
    TRY(cudnnSetActivationDescriptor(p->relu, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0),
        "cudnnSetActivationDescriptor (relu)");
    TRY(cudnnSetActivationDescriptor(p->identity, CUDNN_ACTIVATION_IDENTITY, CUDNN_PROPAGATE_NAN, 0.0),
        "cudnnSetActivationDescriptor (identity)");
    TRY(choose_algo(h, p), "choosing the convolution algorithm");
    *out = p;
    return CUDNN_STATUS_SUCCESS;
fail:
    plan_destroy(p);
    return s;
}

/* The cached plan of k, or a new one (cached when there is room; else
** *own is set and the caller destroys it after its call). Under the
** cuDNN handle's lock. */
static loom_status plan_get(cudnnHandle_t h, const conv_key *k, int64_t ho, int64_t wo, conv_plan **out, int *own)
{
    *own = 0;
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < n_cached; i++)
        if (memcmp(&cache[i]->key, k, sizeof *k) == 0) {
            *out = cache[i];
            pthread_mutex_unlock(&cache_lock);
            return LOOM_OK;
        }
    const char *failed;
    cudnnStatus_t s = plan_create(h, k, ho, wo, out, &failed);
    if (s == CUDNN_STATUS_SUCCESS) {
        if (n_cached < CACHE_CAP)
            cache[n_cached++] = *out;
        else
            *own = 1;
    }
    pthread_mutex_unlock(&cache_lock);
    if (s != CUDNN_STATUS_SUCCESS)
        return layers_cudnn_fail(s, failed);
    return LOOM_OK;
}

static int lcu_act_of(int gemm_act)
{
    switch (gemm_act) {
    case PK_GEMM_ACT_RELU: return LCU_ACT_RELU;
    case PK_GEMM_ACT_SILU: return LCU_ACT_SILU;
    case PK_GEMM_ACT_GELU_ERF: return LCU_ACT_GELU_ERF;
    case PK_GEMM_ACT_GELU_TANH: return LCU_ACT_GELU_TANH;
    default: return LCU_ACT_NONE;
    }
}

/* The convolution and its epilogue on plan p (the handle's lock held). */
static loom_status conv_launch(loom_call *call, cudnnHandle_t h, const conv_plan *p, const conv2d_geom *g,
                               const float *x, void *ws, cudaStream_t stream)
{
    const float one = 1.0f, zero = 0.0f;
    const int residual_before = g->residual != NULL && !g->residual_after;
    const size_t out_bytes = (size_t)(g->n * g->cout * g->ho * g->wo) * sizeof(float);
    cudaError_t e;
    cudnnStatus_t s;
    if (residual_before && g->residual != g->y
        && (e = cudaMemcpyAsync(g->y, g->residual, out_bytes, cudaMemcpyDeviceToDevice, stream)) != cudaSuccess)
        return layers_cuda_fail(e, "copying the residual into the output");
    const int fuse_relu = g->act == PK_GEMM_ACT_RELU && !g->residual_after;
    const int fuse_identity = g->act == PK_GEMM_ACT_NONE && g->bias != NULL && !g->residual_after
                           && p->algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    if (fuse_relu || fuse_identity) {
        const float *bias = g->bias;
        if (bias == NULL) {
            float *zeros = pk_host->scratch(call->ctx, (size_t)g->cout * sizeof(float));
            if (zeros == NULL)
                return pk_host->fail(LOOM_ENOMEM, "conv2d: no device scratch for a zero bias of %lld channels",
                                     (long long)g->cout);
            if ((e = cudaMemsetAsync(zeros, 0, (size_t)g->cout * sizeof(float), stream)) != cudaSuccess)
                return layers_cuda_fail(e, "cudaMemsetAsync (zero bias)");
            bias = zeros;
        }
        s = cudnnConvolutionBiasActivationForward(h, &one, p->x, x, p->w, g->wt, p->conv, p->algo, ws, p->workspace,
                                                  residual_before ? &one : &zero, p->y, g->y, p->bias, bias,
                                                  fuse_relu ? p->relu : p->identity, p->y, g->y);
        /* a fusion cuDNN has no engine for here: the unfused path below */
        if (s != CUDNN_STATUS_NOT_SUPPORTED)
            return s == CUDNN_STATUS_SUCCESS ? LOOM_OK : layers_cudnn_fail(s, "cudnnConvolutionBiasActivationForward");
    }
    s = cudnnConvolutionForward(h, &one, p->x, x, p->w, g->wt, p->conv, p->algo, ws, p->workspace,
                                residual_before ? &one : &zero, p->y, g->y);
    /* the ranking's choice refused at run time: the implicit GEMM, which
    ** needs no workspace, takes every geometry */
    if (s == CUDNN_STATUS_NOT_SUPPORTED && p->algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM)
        s = cudnnConvolutionForward(h, &one, p->x, x, p->w, g->wt, p->conv, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                    NULL, 0, residual_before ? &one : &zero, p->y, g->y);
    if (s != CUDNN_STATUS_SUCCESS)
        return layers_cudnn_fail(s, "cudnnConvolutionForward");
    if (g->bias == NULL && g->act == PK_GEMM_ACT_NONE && !g->residual_after)
        return LOOM_OK;
    e = (cudaError_t)lcu_conv_epilogue(g->y, g->bias, g->residual_after ? g->residual : NULL, lcu_act_of(g->act),
                                       g->n, g->cout, g->ho * g->wo, stream);
    return e == cudaSuccess ? LOOM_OK : layers_cuda_fail(e, "conv2d epilogue launch");
}

/* An empty map padded to a non-empty output (cuDNN takes no zero size):
** the convolution is 0, then the residual and epilogue as in conv_launch. */
static loom_status conv_empty_input(const conv2d_geom *g, cudaStream_t stream)
{
    const size_t out_bytes = (size_t)(g->n * g->cout * g->ho * g->wo) * sizeof(float);
    cudaError_t e = cudaSuccess;
    if (g->residual == NULL || g->residual_after)
        e = cudaMemsetAsync(g->y, 0, out_bytes, stream);
    else if (g->residual != g->y)
        e = cudaMemcpyAsync(g->y, g->residual, out_bytes, cudaMemcpyDeviceToDevice, stream);
    if (e == cudaSuccess)
        e = (cudaError_t)lcu_conv_epilogue(g->y, g->bias, g->residual_after ? g->residual : NULL, lcu_act_of(g->act),
                                           g->n, g->cout, g->ho * g->wo, stream);
    return e == cudaSuccess ? LOOM_OK : layers_cuda_fail(e, "conv2d of an empty input");
}

static loom_status conv2d_run_cuda(loom_call *call)
{
    conv2d_geom g;
    loom_tensor *out;
    cudaStream_t stream;
    loom_status st = conv2d_check(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0 || (st = layers_cuda_stream(call, &stream)) != LOOM_OK)
        return st;
    conv_key k;
    memset(&k, 0, sizeof k);
    k.n = g.n;
    k.cin = g.cin;
    k.h = g.h;
    k.w = g.w;
    k.cout = g.cout;
    k.groups = g.groups;
    k.kh = g.kh;
    k.kw = g.kw;
    k.sh = g.sh;
    k.sw = g.sw;
    k.ph = g.ph;
    k.pw = g.pw;
    k.dh = g.dh;
    k.dw = g.dw;
    k.device = call->ctx->device.device_id;
    if (g.n * g.cin * g.h * g.w == 0)
        return conv_empty_input(&g, stream);
    const float *x = g.x;
    if (g.pad_mode != PAD_ZEROS && (g.ph > 0 || g.pw > 0)) {
        k.h = g.h + 2 * g.ph;
        k.w = g.w + 2 * g.pw;
        k.ph = k.pw = 0;
        float *padded = pk_host->scratch(call->ctx, (size_t)(g.n * g.cin * k.h * k.w) * sizeof(float));
        if (padded == NULL)
            return pk_host->fail(LOOM_ENOMEM, "conv2d: no device scratch for the padded %lld x %lld input",
                                 (long long)k.h, (long long)k.w);
        cudaError_t e = (cudaError_t)lcu_pad(g.x, padded, g.n * g.cin, g.h, g.w, g.ph, g.pw, (int)g.pad_mode, stream);
        if (e != cudaSuccess)
            return layers_cuda_fail(e, "conv2d padding launch");
        x = padded;
    }
    if (k.n * k.cin * k.h * k.w > INT32_MAX || g.n * g.cout * g.ho * g.wo > INT32_MAX)
        return pk_host->fail(LOOM_EINVAL, "conv2d: a map of 2^31 elements or more is beyond cuDNN's 4-d descriptors "
                             "(split the batch)");
    cudnnHandle_t h;
    if ((st = layers_cudnn_acquire(call, &h)) != LOOM_OK)
        return st;
    conv_plan *p = NULL;
    int own = 0;
    st = plan_get(h, &k, g.ho, g.wo, &p, &own);
    void *ws = NULL;
    if (st == LOOM_OK && p->workspace > 0 && (ws = pk_host->scratch(call->ctx, p->workspace)) == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "conv2d: no device scratch for cuDNN's %zu-byte workspace", p->workspace);
    if (st == LOOM_OK)
        st = conv_launch(call, h, p, &g, x, ws, stream);
    layers_cuda_release();
    if (own)
        plan_destroy(p);
    return st;
}

const loom_kernel_desc layers_conv2d_cuda_kernel =
    PK_KERNEL_CUDA(vision_conv2d_schema, "cuda:cudnn", LAYERS_DTYPES, conv2d_run_cuda);
