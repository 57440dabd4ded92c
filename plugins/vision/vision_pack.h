/* SPDX-License-Identifier: BSD-3-Clause */
/*
** vision_pack.h - what the files of the `vision` op packs (vision.so for
** cpu, vision-cuda.so for cuda) share. Everything has hidden visibility:
** a pack exports only loom_plugin_entry.
**
** The pack is split into modules (pack.h), each in its own folder with its
** own meson.build that appends to vision_cpu_src / vision_cuda_src /
** vision_cu_src:
**   boxes/   nms, batched_nms, box IoU family, IoU losses, box utilities
**   roi/     roi_align, roi_pool, ps_roi_align, ps_roi_pool and backwards
**   deform/  deform_conv2d (+ backward), drop_block2d/3d, stochastic_depth
**   image_io/ decode_jpeg, decode_png, decode_image, encode_jpeg, encode_png,
**            read_file (cpu only)
**   transforms/  torchvision.transforms.v2.functional kernels (cpu only)
**   layers/ conv2d, batch_norm, activations, pools, linear, softmax, layer_norm;
**           attention: ViT's encoder block, Swin's window attention and
**           patch merging (its own module)
**   models/ ResNet, ResNeXt, Wide ResNet object classes on the layers' ops;
**           vit, swin: the ViT and Swin classes (a module each)
**   detection/ the detectors' parts: GeneralizedRCNNTransform, anchors, box
**           coder, RPN proposals (cpu only)
** Every module names its ops once, in an X-macro list of its header
** (VISION_<MODULE>_OPS), defines their schemas once (compiled into both
** packs, so both define identical schemas) and gives one pk_module per
** backend: the same op table, that backend's kernels.
**
** Invariant: pk_host is set by the pack's init before any kernel runs and
** stays valid until the core shuts down.
*/
#ifndef LOOM_VISION_PACK_H
#define LOOM_VISION_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "describe.h"
#include "dtype_traits.h"
#include "loom/plugin.h"
#include "pack.h"

/* The float dtypes of torchvision's CPU kernels (no bf16). */
#define VISION_FLOATS (PK_F32_F64 | LOOM_DTYPE_BIT(LOOM_DTYPE_F16))

/* The instance for dtype (one of VISION_FLOATS) of a template object
** named with PK_FN: &name_f32, &name_f64 or &name_f16. */
#define VISION_PICK(dtype, name) \
    ((dtype) == LOOM_DTYPE_F64 ? &name##_f64 : (dtype) == LOOM_DTYPE_F16 ? &name##_f16 : &name##_f32)


/* The modules of each pack (<module>/<module>_cpu.c, <module>_cuda.c). */
extern const pk_module vision_boxes_cpu, vision_roi_cpu, vision_deform_cpu;
extern const pk_module vision_transforms_cpu;   /* transforms/: cpu only */
extern const pk_module vision_layers_cpu;      /* layers/: the models' building blocks (cpu, onednn) */
extern const pk_module vision_models_cpu;      /* models/: the classification models (object classes) */
extern const pk_module vision_attention_cpu;   /* layers/attention*: the transformer blocks */
extern const pk_module vision_vit_cpu;         /* models/vit_*: the ViT classes */
extern const pk_module vision_swin_cpu;        /* models/swin_*: the Swin classes */
extern const pk_module vision_detection_cpu;   /* detection/: the detectors' parts (cpu only) */
extern const pk_module vision_retinanet_cpu;   /* detection/retinanet_*: RetinaNet's parts (cpu only) */
extern const pk_module vision_paste_masks_cpu, vision_paste_masks_cuda;  /* roi/paste_masks_*: Mask R-CNN's paste */
extern const pk_module vision_boxes_cuda, vision_roi_cuda, vision_deform_cuda;
extern const pk_module vision_image_io_cpu;     /* image_io/: decode / encode (libjpeg-turbo, libpng) */
extern const pk_module vision_image_io_cuda;    /* image_io/: decode_jpeg through nvJPEG */

/* "f32[2,3]" into buf; returns buf. */
static inline char *vision_describe(const loom_tensor *t, char *buf, size_t size)
{
    return pk_describe(pk_host, t, buf, size);
}

#endif /* LOOM_VISION_PACK_H */
