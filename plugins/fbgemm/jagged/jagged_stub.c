/* Placeholder: no ops yet. */
#include "fbgemm_pack.h"

const loom_op_schema *const fbgemm_jagged_ops[] = { NULL };
const size_t fbgemm_jagged_n_ops = 0;

loom_status fbgemm_jagged_register_cpu(const loom_host_api *host, loom_registrar *reg)
{
    (void)host;
    (void)reg;
    return LOOM_OK;
}

loom_status fbgemm_jagged_register_cuda(const loom_host_api *host, loom_registrar *reg)
{
    (void)host;
    (void)reg;
    return LOOM_OK;
}
