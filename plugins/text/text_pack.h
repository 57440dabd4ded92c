/* SPDX-License-Identifier: BSD-3-Clause */
/*
** text_pack.h - what the files of the `text` op pack (text.so, cpu only)
** share. Everything has hidden visibility: a pack exports only
** loom_plugin_entry.
**
** Modules, each in its own folder with a meson.build that appends to
** text_cpu_src:
**   tokenizer/  the text.bert_tokenizer object and op (WordPiece, torchtext's
**               BERTTokenizer and, with compat=hf, Hugging Face's
**               BertWordPieceTokenizer)
**   glue/       the text.glue object: the nine GLUE datasets streamed from
**               their distribution files, as torchtext parses them
**   encoder/    the text.bert_encoder object: a BERT forward pass from a
**               safetensors checkpoint with Hugging Face key names, its
**               products through core.matmul
**
** Strings cross the ABI as the jagged pair of plugin.h: u8 UTF-8 values and
** i64 offsets [B+1].
*/
#ifndef LOOM_TEXT_PACK_H
#define LOOM_TEXT_PACK_H

#include "describe.h"
#include "loom/plugin.h"
#include "pack.h"

/* The modules of the pack, in registration order (cpu_pack.c). */
extern const pk_module text_tokenizer_cpu;
extern const pk_module text_glue_cpu;
extern const pk_module text_encoder_cpu;
/* text-cuda.so (cuda_pack.c) */
extern const pk_module text_encoder_cuda;

#endif /* LOOM_TEXT_PACK_H */
