/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cuda_fp16.h (host emulation, C++) - the CUDA C++ built-ins that
** tbe_cuda_device.cuh uses, for running its kernels on the host
** (tbe_cuda_emu.cpp): index variables per emulated thread, IEEE
** round-to-nearest arithmetic (the test is built without contraction),
** fp16 conversions from plugins/common/half.c, atomics under a mutex and
** __syncthreads as a barrier of the emulated block.
*/
#ifndef LOOM_TEST_EMU_CUDA_FP16_H
#define LOOM_TEST_EMU_CUDA_FP16_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>

#include <pthread.h>

extern "C" uint16_t pk_f32_to_f16(float f);
extern "C" float pk_f16_to_f32(uint16_t h);

struct __half {
    unsigned short bits;
};
struct float4 {
    float x, y, z, w;
};
struct uint2 {
    uint32_t x, y;
};
struct emu_dim3 {
    unsigned x, y, z;
};

extern thread_local emu_dim3 threadIdx, blockIdx, blockDim;
extern pthread_barrier_t *emu_block_barrier;
extern std::mutex emu_atomic_lock;

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __syncthreads() pthread_barrier_wait(emu_block_barrier)

inline __half __ushort_as_half(unsigned short v) { return __half{ v }; }
inline unsigned short __half_as_ushort(__half h) { return h.bits; }
inline float __half2float(__half h) { return pk_f16_to_f32(h.bits); }
inline __half __float2half_rn(float f) { return __half{ pk_f32_to_f16(f) }; }

inline float __uint_as_float(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline uint32_t __float_as_uint(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fdiv_rn(float a, float b) { return a / b; }

template <class T, class U> T atomicOr(T *p, U v)
{
    std::lock_guard<std::mutex> g(emu_atomic_lock);
    T old = *p;
    *p = old | static_cast<T>(v);
    return old;
}

template <class T, class U> T atomicMin(T *p, U v)
{
    std::lock_guard<std::mutex> g(emu_atomic_lock);
    T old = *p;
    if (static_cast<T>(v) < old)
        *p = static_cast<T>(v);
    return old;
}

#endif
