/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cuda_pack.c - the entry of fbgemm-cuda.so: the same op definitions as
** fbgemm.so and the cuda kernels. The CUDA device provider comes from
** core-cuda.so; every launch is asynchronous on the call's ctx->stream.
*/
#include "fbgemm_pack.h"

/* core-cuda registers the CUDA device: it must be loaded first */
static const char *const fbgemm_cuda_depends[] = { "core-cuda", NULL };

PK_PACK_DEFINE_DEPS("fbgemm-cuda", "0.1.0", "fbgemm_gpu: table-batched embeddings and jagged ops (cuda)",
                    NULL, NULL, fbgemm_cuda_depends, &fbgemm_tbe_cuda, &fbgemm_jagged_cuda)
