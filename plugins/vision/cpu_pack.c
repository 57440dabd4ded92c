/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu_pack.c - the entry of vision.so: defines the vision ops and registers
** their cpu kernels (vectorised, threaded through the core's pool).
*/
#include "vision_pack.h"
#include "layers/layers.h"

/* image_io when libjpeg-turbo and libpng are built in (plugins/meson.build) */
#ifdef LOOM_VISION_HAVE_IMAGE_IO
#define VISION_IMAGE_IO_CPU , &vision_image_io_cpu
#else
#define VISION_IMAGE_IO_CPU
#endif

PK_PACK_DEFINE("vision", "0.1.0",
               "torchvision.ops: NMS, box IoU and losses, RoI ops, deform_conv2d, DropBlock; transforms v2; "
               "torchvision.io image decode / encode; model layers and ResNet-family models (cpu, onednn); detection parts",
               NULL, layers_onednn_fini,
               &vision_boxes_cpu, &vision_roi_cpu, &vision_deform_cpu, &vision_transforms_cpu VISION_IMAGE_IO_CPU,
               &vision_layers_cpu, &vision_models_cpu, &vision_attention_cpu, &vision_vit_cpu,
               &vision_swin_cpu, &vision_detection_cpu, &vision_retinanet_cpu,
               &vision_paste_masks_cpu)
