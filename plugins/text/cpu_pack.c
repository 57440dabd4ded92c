/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu_pack.c - the entry of text.so: the ops and object classes of every
** module of the text pack, with their cpu kernels (text_pack.h). The
** encoder finds core.matmul when an encoder is created (not at load), so
** the tokenizer and the GLUE readers load without the core pack.
*/
#include "text_pack.h"

PK_PACK_DEFINE("text", "0.1.0", "torchtext: BERT WordPiece tokenizer, GLUE readers, BERT sentence encoder (cpu)",
               NULL, NULL, &text_tokenizer_cpu, &text_glue_cpu, &text_encoder_cpu)
