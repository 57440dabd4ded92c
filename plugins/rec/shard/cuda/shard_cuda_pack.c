/* SPDX-License-Identifier: BSD-3-Clause */
/*
** shard_cuda_pack.c - the entry of rec-mpi-cuda.so: the same op
** definitions as rec-mpi.so (shard_schemas.c) and the cuda kernel of the
** sharded collection's forward over NCCL (sharded_ebc_nccl.c). A pack of
** its own, built when meson finds CUDA, MPI and NCCL (-Dnccl), so that
** rec-mpi.so never links NCCL or the CUDA runtime; the object class stays
** in rec-mpi.so, whose objects this kernel runs on.
*/
#include "shard.h"

static const loom_kernel_desc rec_shard_cuda_kernels[] = {
    PK_KERNEL_CUDA(rec_sebc_forward_schema, "cuda:nccl+fbgemm.tbe", 0, rec_sebc_forward_nccl),
};

static const pk_module rec_shard_cuda = {
    .name = "shard", .ops = rec_shard_ops, .n_ops = PK_COUNT(rec_shard_ops),
    .kernels = rec_shard_cuda_kernels, .n_kernels = PK_COUNT(rec_shard_cuda_kernels),
};

/* core-cuda registers the CUDA device, rec-mpi the object class, fbgemm-cuda the device lookups */
static const char *const rec_mpi_cuda_depends[] = { "core-cuda", "rec-mpi", "fbgemm-cuda", NULL };

PK_PACK_DEFINE_DEPS("rec-mpi-cuda", "0.1.0", "torchrec's sharded EmbeddingBagCollection forward on GPUs, one rank "
                    "per GPU, its collectives NCCL's (ncclSend/ncclRecv, ncclReduceScatter, ncclAllGather)",
                    NULL, NULL, rec_mpi_cuda_depends, &rec_shard_cuda)
