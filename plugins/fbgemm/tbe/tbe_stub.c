/* Placeholder: no ops yet. */
#include "fbgemm_pack.h"

const loom_op_schema *const fbgemm_tbe_ops[] = { NULL };
const size_t fbgemm_tbe_n_ops = 0;

loom_status fbgemm_tbe_register_cpu(const loom_host_api *host, loom_registrar *reg)
{
    (void)host;
    (void)reg;
    return LOOM_OK;
}

loom_status fbgemm_tbe_register_cuda(const loom_host_api *host, loom_registrar *reg)
{
    (void)host;
    (void)reg;
    return LOOM_OK;
}

const loom_object_class *const fbgemm_tbe_classes[] = { NULL };
const size_t fbgemm_tbe_n_classes = 0;
