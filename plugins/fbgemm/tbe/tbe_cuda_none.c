/*
** tbe_cuda_none.c - the tbe module of fbgemm-cuda.so without tbe/cuda/:
** the tbe ops are defined (FBG_TBE_OPS, tbe_schemas.c) but have no cuda
** kernels.
*/
#include "pack.h"
#include "tbe_internal.h"

PK_OPS_TABLE(tbe_ops, FBG_TBE_OPS);

const pk_module fbgemm_tbe_cuda = { .name = "tbe", .ops = tbe_ops, .n_ops = PK_COUNT(tbe_ops) };
