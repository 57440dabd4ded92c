/* Placeholder: no ops yet. */
#include "vision_pack.h"

const loom_op_schema *const vision_roi_ops[] = { NULL };
const size_t vision_roi_n_ops = 0;

loom_status vision_roi_register_cpu(const loom_host_api *host, loom_registrar *reg)
{
    (void)host;
    (void)reg;
    return LOOM_OK;
}

loom_status vision_roi_register_cuda(const loom_host_api *host, loom_registrar *reg)
{
    (void)host;
    (void)reg;
    return LOOM_OK;
}
