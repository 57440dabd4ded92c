/*
** tbe_cuda_none.c - fbgemm-cuda.so without tbe/cuda/: the tbe ops are
** defined (tbe_schemas.c) but have no cuda kernels.
*/
#include "fbgemm_pack.h"

loom_status fbgemm_tbe_register_cuda(const loom_host_api *host, loom_registrar *reg)
{
    (void)host;
    (void)reg;
    return LOOM_OK;
}
