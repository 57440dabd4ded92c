/* SPDX-License-Identifier: BSD-3-Clause */
/*
** text_pack.h - what the files of the `text` op pack share.
**
** Modules, each in its own folder with a meson.build that appends to
** text_cpu_src:
**   glue/     the text.glue object: the nine GLUE datasets streamed from
**             their distribution files, as torchtext parses them
**   encoder/  the text.bert_encoder object: a BERT forward pass from a
**             safetensors checkpoint with Hugging Face key names
**
** Invariant: pk_host (pack.h) is set by the pack's init before any kernel
** runs and stays valid until the core shuts down.
*/
#ifndef LOOM_TEXT_PACK_H
#define LOOM_TEXT_PACK_H

#include "describe.h"
#include "loom/plugin.h"
#include "pack.h"

extern const pk_module text_glue_cpu;
extern const pk_module text_encoder_cpu;

#endif /* LOOM_TEXT_PACK_H */
