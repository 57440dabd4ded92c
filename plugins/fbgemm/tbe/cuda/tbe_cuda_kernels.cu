/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_cuda_kernels.cu - the C launchers of the fbgemm.tbe forward on CUDA
** (tbe_cuda.h): the bounds repair, then the forward, on the caller's
** stream. The kernels are in tbe_cuda_device.cuh.
*/
#include "tbe_cuda_device.cuh"

extern "C" int fbg_tbe_cuda_forward(const fbg_tbe_cuda_args *args, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    repair_offsets_kernel<<<1, kRepairThreads, 0, s>>>(*args);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || args->n_bags == 0)
        return (int)e;
    const int64_t blocks = (args->n_bags + kWarpsPerBlock - 1) / kWarpsPerBlock;
    forward_kernel<<<(unsigned)blocks, kWarp * kWarpsPerBlock, 0, s>>>(*args);
    return (int)cudaGetLastError();
}

extern "C" const char *fbg_tbe_cuda_error_string(int code)
{
    return code == 0 ? "no error" : cudaGetErrorString(static_cast<cudaError_t>(code));
}
