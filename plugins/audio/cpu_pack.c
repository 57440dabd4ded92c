/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu_pack.c - the entry of audio.so: defines the audio ops and registers
** their cpu kernels.
*/
#include "beamform/beamform.h"

PK_PACK_DEFINE("audio", "0.1.0", "torchaudio: multi-channel beamforming (cpu)", NULL, NULL, &audio_beamform_cpu)
