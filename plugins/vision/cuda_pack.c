/*
** cuda_pack.c - the entry of vision-cuda.so: the same op definitions as
** vision.so and the cuda kernels. The CUDA device provider comes from
** core-cuda.so; every launch is asynchronous on the call's ctx->stream.
*/
#include "vision_pack.h"

const loom_host_api *vision_host;

static loom_status vision_cuda_init(const loom_host_api *host, loom_registrar *reg)
{
    vision_host = host;
    loom_status st = vision_define_ops(host, reg);
    if (st == LOOM_OK)
        st = vision_boxes_register_cuda(host, reg);
    if (st == LOOM_OK)
        st = vision_roi_register_cuda(host, reg);
    if (st == LOOM_OK)
        st = vision_deform_register_cuda(host, reg);
    return st;
}

/* core-cuda registers the CUDA device: it must be loaded first */
static const char *const vision_cuda_depends[] = { "core-cuda", NULL };
LOOM_PLUGIN_DEFINE_DEPS("vision-cuda", "0.1.0",
                   "torchvision.ops: NMS, box IoU and losses, RoI ops, deform_conv2d, DropBlock (cuda)",
                   vision_cuda_init, NULL, vision_cuda_depends)
