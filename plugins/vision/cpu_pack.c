/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu_pack.c - the entry of vision.so: defines the vision ops and registers
** their cpu kernels (vectorised, threaded through the core's pool).
*/
#include "vision_pack.h"
#include "layers/layers.h"

PK_PACK_DEFINE("vision", "0.1.0",
               "torchvision.ops: NMS, box IoU and losses, RoI ops, deform_conv2d, DropBlock; model layers and ResNet-family models (cpu, onednn)",
               NULL, layers_onednn_fini,
               &vision_boxes_cpu, &vision_roi_cpu, &vision_deform_cpu,
               &vision_layers_cpu, &vision_models_cpu)
