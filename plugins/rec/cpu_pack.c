/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu_pack.c - the entry of rec.so: the ops of every module of the rec
** pack with their cpu kernels (rec_pack.h).
*/
#include "rec_pack.h"

PK_PACK_DEFINE("rec", "0.1.0", "torchrec: KeyedJaggedTensor operations with VBE (cpu)",
               NULL, NULL, &rec_kjt_cpu)
