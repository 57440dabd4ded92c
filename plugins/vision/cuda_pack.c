/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cuda_pack.c - the entry of vision-cuda.so: the same op definitions as
** vision.so and the cuda kernels. The CUDA device provider comes from
** core-cuda.so; every launch is asynchronous on the call's ctx->stream.
** The layers module's cuBLAS / cuDNN handles and cached convolution plans
** are released by the pack's fini.
*/
#include "vision_pack.h"

/* layers/: the models' building blocks on cuda (layers_cuda.c, layers_cuda_handles.c) */
extern const pk_module vision_layers_cuda;
void layers_cuda_fini(void);

/* core-cuda registers the CUDA device: it must be loaded first */
static const char *const vision_cuda_depends[] = { "core-cuda", NULL };

/* decode_jpeg through nvJPEG when the build found it (plugins/meson.build) */
#ifdef LOOM_VISION_HAVE_NVJPEG
#define VISION_IMAGE_IO_CUDA , &vision_image_io_cuda
#else
#define VISION_IMAGE_IO_CUDA
#endif

PK_PACK_DEFINE_DEPS("vision-cuda", "0.1.0",
                    "torchvision.ops: NMS, box IoU and losses, RoI ops, deform_conv2d, DropBlock; the models' "
                    "layers on cuDNN and cuBLAS (cuda)", NULL,
                    layers_cuda_fini, vision_cuda_depends, &vision_boxes_cuda, &vision_roi_cuda, &vision_deform_cuda,
                    &vision_layers_cuda, &vision_paste_masks_cuda VISION_IMAGE_IO_CUDA)
