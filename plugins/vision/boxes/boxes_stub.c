/* Placeholder: no ops yet. */
#include "vision_pack.h"

const loom_op_schema *const vision_boxes_ops[] = { NULL };
const size_t vision_boxes_n_ops = 0;

loom_status vision_boxes_register_cpu(const loom_host_api *host, loom_registrar *reg)
{
    (void)host;
    (void)reg;
    return LOOM_OK;
}

loom_status vision_boxes_register_cuda(const loom_host_api *host, loom_registrar *reg)
{
    (void)host;
    (void)reg;
    return LOOM_OK;
}
