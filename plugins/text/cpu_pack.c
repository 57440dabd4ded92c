/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu_pack.c - the entry of text.so: the ops and object classes of every
** module of the text pack, with their cpu kernels (text_pack.h).
*/
#include "text_pack.h"

PK_PACK_DEFINE("text", "0.1.0", "torchtext: BERT WordPiece tokenizer (cpu)", NULL, NULL, &text_tokenizer_cpu)
