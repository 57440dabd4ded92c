/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_cuda_emu.cpp - the launchers of tbe_cuda.h running the kernels of
** plugins/fbgemm/tbe/cuda/tbe_cuda_device.cuh on the host: the one-block
** repair kernel with a few real threads (it synchronises; the GPU runs it
** with 1024, the kernel takes any count), the forward kernel thread by
** thread (its threads never talk to each other).
** With it, test_tbe_cuda.c checks the kernels' indexing, layouts, bounds
** repairs and bit-exact numerics against the cpu op without a GPU; what
** only a GPU can show (alignment faults, launch limits) is left to the
** real build of the same test.
*/
#include <thread>
#include <vector>

#include "tbe_cuda_device.cuh"

thread_local emu_dim3 threadIdx, blockIdx, blockDim;

/* Threads of the emulated repair block: not a power of two, so that the
** scan and the per-thread segments meet uneven splits. */
static const int kEmuRepairThreads = 3;
pthread_barrier_t *emu_block_barrier;
std::mutex emu_atomic_lock;

extern "C" int fbg_tbe_cuda_forward(const fbg_tbe_cuda_args *args, void *stream)
{
    (void)stream;
    const fbg_tbe_cuda_args a = *args;
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, nullptr, kEmuRepairThreads);
    emu_block_barrier = &barrier;
    std::vector<std::thread> block;
    for (int t = 0; t < kEmuRepairThreads; t++)
        block.emplace_back([&a, t] {
            threadIdx = emu_dim3{ static_cast<unsigned>(t), 0, 0 };
            blockIdx = emu_dim3{ 0, 0, 0 };
            blockDim = emu_dim3{ static_cast<unsigned>(kEmuRepairThreads), 1, 1 };
            repair_offsets_kernel(a);
        });
    for (auto &th : block)
        th.join();
    pthread_barrier_destroy(&barrier);
    const int64_t blocks = (a.n_bags + kWarpsPerBlock - 1) / kWarpsPerBlock;
    for (int64_t b = 0; b < blocks; b++)
        for (int t = 0; t < kWarp * kWarpsPerBlock; t++) {
            threadIdx = emu_dim3{ static_cast<unsigned>(t), 0, 0 };
            blockIdx = emu_dim3{ static_cast<unsigned>(b), 0, 0 };
            blockDim = emu_dim3{ static_cast<unsigned>(kWarp * kWarpsPerBlock), 1, 1 };
            forward_kernel(a);
        }
    return 0;
}

extern "C" const char *fbg_tbe_cuda_error_string(int code)
{
    return code == 0 ? "no error" : "emulated launch failed";
}
