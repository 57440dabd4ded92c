/* SPDX-License-Identifier: BSD-3-Clause */
/*
** shard_cpu.c - the shard module of rec-mpi.so: the sharded collection's
** class and the kernels of its methods, and the pack's entry. rec-mpi.so is
** a pack of its own so that rec.so never depends on MPI; it finds
** fbgemm.tbe when an object is created. The sharded EmbeddingCollection is
** a module of its own (sharded_ec_schemas.c).
*/
#include "shard.h"

static const loom_object_class *const shard_classes[] = { &rec_sebc_class };

static const loom_kernel_desc rec_shard_cpu_kernels[] = {
    PK_KERNEL_CPU(rec_sebc_forward_schema, "cpu:mpi+fbgemm.tbe", 0, rec_sebc_forward_timed),
    PK_KERNEL_CPU(rec_sebc_backward_schema, "cpu:mpi+fbgemm.tbe_backward", 0, rec_sebc_backward_timed),
    PK_KERNEL_CPU(rec_sebc_allreduce_schema, "cpu:mpi", 0, rec_sebc_allreduce),
    PK_KERNEL_CPU(rec_sebc_weight_schema, "cpu:mpi+fbgemm.tbe_state", 0, rec_sebc_weight),
    PK_KERNEL_CPU(rec_sebc_stats_schema, "cpu", 0, rec_sebc_stats_read),
};

const pk_module rec_shard_cpu = {
    .name = "shard", .ops = rec_shard_ops, .n_ops = PK_COUNT(rec_shard_ops),
    .classes = shard_classes, .n_classes = PK_COUNT(shard_classes),
    .kernels = rec_shard_cpu_kernels, .n_kernels = PK_COUNT(rec_shard_cpu_kernels),
};

PK_PACK_DEFINE("rec-mpi", "0.1.0", "torchrec's sharded EmbeddingBagCollection and EmbeddingCollection over OpenMPI "
               "(table_wise, row_wise, column_wise, table_row_wise, data_parallel; fused optimizer)",
               NULL, shard_mpi_fini, &rec_shard_cpu, &rec_shard_ec_cpu,
               &rec_shard_prefetch_cpu)
