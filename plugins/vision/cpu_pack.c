/*
** cpu_pack.c - the entry of vision.so: defines the vision ops and registers
** their cpu kernels (vectorised, threaded through the core's pool).
*/
#include "vision_pack.h"
#include "cpu.h"

const loom_host_api *vision_host;

static loom_status vision_cpu_init(const loom_host_api *host, loom_registrar *reg)
{
    vision_host = host;
    pk_cpu_init(host);
    loom_status st = vision_define_ops(host, reg);
    if (st == LOOM_OK)
        st = vision_boxes_register_cpu(host, reg);
    if (st == LOOM_OK)
        st = vision_roi_register_cpu(host, reg);
    if (st == LOOM_OK)
        st = vision_deform_register_cpu(host, reg);
    return st;
}

LOOM_PLUGIN_DEFINE("vision", "0.1.0",
                   "torchvision.ops: NMS, box IoU and losses, RoI ops, deform_conv2d, DropBlock (cpu)",
                   vision_cpu_init, NULL)
