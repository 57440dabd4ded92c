/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_cuda_none.c - the tbe module of fbgemm-cuda.so without tbe/cuda/:
** the tbe ops are defined (FBG_TBE_OPS, tbe_schemas.c) but have no cuda
** kernels.
*/
#include "pack.h"
#include "tbe_internal.h"


const pk_module fbgemm_tbe_cuda = { .name = "tbe", .ops = fbgemm_tbe_ops, .n_ops = PK_COUNT(fbgemm_tbe_ops) };
