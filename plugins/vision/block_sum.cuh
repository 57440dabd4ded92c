/* SPDX-License-Identifier: BSD-3-Clause */
/*
** block_sum.cuh - the fixed-order sum over one thread block that the
** vision pack's device reductions share (loss reductions, bias gradients,
** drop_block's mask sum).
**
** Contract: every thread of the block calls it with its partial sum s and
** the same __shared__ array part of at least blockDim.x entries;
** blockDim.x is a power of two. The tree adds in the same order on every
** run (deterministic), and every thread gets the total.
*/
#ifndef LOOM_VISION_BLOCK_SUM_CUH
#define LOOM_VISION_BLOCK_SUM_CUH

static __device__ __forceinline__ double vision_block_sum(double *part, double s)
{
    part[threadIdx.x] = s;
    __syncthreads();
    for (int step = blockDim.x / 2; step > 0; step /= 2) {
        if ((int)threadIdx.x < step)
            part[threadIdx.x] += part[threadIdx.x + step];
        __syncthreads();
    }
    return part[0];
}

#endif /* LOOM_VISION_BLOCK_SUM_CUH */
