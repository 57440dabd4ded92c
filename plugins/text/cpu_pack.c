/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu_pack.c - the entry of text.so: the GLUE readers and the BERT encoder.
*/
#include "text_pack.h"

static const char *const text_depends[] = { "core.matmul", NULL };

PK_PACK_DEFINE_DEPS("text", "0.1.0", "torchtext: GLUE readers, BERT sentence encoder (cpu)", NULL, NULL,
                    text_depends, &text_glue_cpu, &text_encoder_cpu)
