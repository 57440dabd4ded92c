/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cuda_pack.c - the entry of text-cuda.so: the cuda kernel of
** text.bert_encoder (the object class stays in text.so, which must be
** loaded first, as core-cuda.so for the device and core.matmul on cuda).
** Every launch is asynchronous on the call's ctx->stream.
*/
#include "text_pack.h"

static const char *const text_cuda_depends[] = { "core-cuda", "text", NULL };

PK_PACK_DEFINE_DEPS("text-cuda", "0.1.0", "torchtext: BERT sentence encoder (cuda; products through cuBLAS)", NULL,
                    NULL, text_cuda_depends, &text_encoder_cuda)
