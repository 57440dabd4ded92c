/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cuda_kernels.cu - device code of core-cuda.so: core.add for f32, f64,
** f16 and bf16 over strided, broadcast operands. One thread per output
** element in a grid-stride loop; the index is decomposed with the output
** shape, so any strides work. Low-precision dtypes compute
** fma(alpha, other, input) in float and round to nearest even once, as
** torch's CUDA add does.
*/
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda_kernels.h"

namespace {

struct f32_op {
    typedef float T;
    __device__ static T apply(T a, T b, double alpha) { return fmaf((float)alpha, b, a); }
};
struct f64_op {
    typedef double T;
    __device__ static T apply(T a, T b, double alpha) { return fma(alpha, b, a); }
};
struct f16_op {
    typedef __half T;
    __device__ static T apply(T a, T b, double alpha)
    {
        return __float2half_rn(fmaf((float)alpha, __half2float(b), __half2float(a)));
    }
};
struct bf16_op {
    typedef __nv_bfloat16 T;
    __device__ static T apply(T a, T b, double alpha)
    {
        return __float2bfloat16_rn(fmaf((float)alpha, __bfloat162float(b), __bfloat162float(a)));
    }
};

template <typename Op>
__global__ void add_kernel(core_cuda_add_args args)
{
    typedef typename Op::T T;
    const T *a = static_cast<const T *>(args.a), *b = static_cast<const T *>(args.b);
    T *c = static_cast<T *>(args.c);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < args.n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t rem = i, oa = 0, ob = 0, oc = 0;
        for (int d = args.ndim - 1; d >= 0; d--) {
            int64_t idx = rem % args.shape[d];
            rem /= args.shape[d];
            oa += idx * args.sa[d];
            ob += idx * args.sb[d];
            oc += idx * args.sc[d];
        }
        c[oc] = Op::apply(a[oa], b[ob], args.alpha);
    }
}

template <typename Op>
int launch(const core_cuda_add_args *args, cudaStream_t stream)
{
    const int threads = 256;
    int64_t blocks = (args->n + threads - 1) / threads;
    if (blocks > 65535)
        blocks = 65535;
    add_kernel<Op><<<(unsigned)blocks, threads, 0, stream>>>(*args);
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int core_cuda_add_launch(const core_cuda_add_args *args, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    switch (args->dtype) {
    case 1: return launch<f32_op>(args, s);
    case 2: return launch<f64_op>(args, s);
    case 3: return launch<f16_op>(args, s);
    case 4: return launch<bf16_op>(args, s);
    default: return (int)cudaErrorInvalidValue;
    }
}
