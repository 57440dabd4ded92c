/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_cu_launch.cuh - what the CTC module's .cu files share: the check
** after a launch, which turns the launch's error into a message in err.
*/
#ifndef LOOM_AUDIO_CTC_CU_LAUNCH_CUH
#define LOOM_AUDIO_CTC_CU_LAUNCH_CUH

#include <cuda_runtime.h>
#include <stdio.h>

/* 0 when the last launch was accepted, else -1 and "what: reason" in err. */
static inline int ctc_cu_launched(const char *what, char *err, size_t err_size)
{
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        return 0;
    snprintf(err, err_size, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}

#endif /* LOOM_AUDIO_CTC_CU_LAUNCH_CUH */
