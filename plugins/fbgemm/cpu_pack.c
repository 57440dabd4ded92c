/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu_pack.c - the entry of fbgemm.so: the ops of every module, the
** fbgemm.tbe object class and the cpu kernels (fbgemm_pack.h).
*/
#include "fbgemm_pack.h"

PK_PACK_DEFINE("fbgemm", "0.1.0",
               "fbgemm_gpu: table-batched embeddings (FP32..INT2, FP8), quantisers, row cache, jagged ops (cpu)",
               NULL, NULL, &fbgemm_tbe_cpu, &fbgemm_jagged_cpu)
