/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_cpu.c - the CTC module of audio.so: its object classes and kernels.
*/
#include "ctc.h"

extern const loom_kernel_desc audio_ctc_lm_kernels[];
extern const size_t audio_ctc_lm_n_kernels;
extern const loom_kernel_desc audio_ctc_lm_save_kernels[];
extern const size_t audio_ctc_lm_save_n_kernels;
extern const loom_kernel_desc audio_ctc_decoder_kernels[];
extern const size_t audio_ctc_decoder_n_kernels;
extern const loom_kernel_desc audio_ctc_stream_kernels[];
extern const size_t audio_ctc_stream_n_kernels;

static const loom_object_class *const ctc_classes[] = { &audio_ctc_lm_class, &audio_ctc_decoder_class };

static loom_status ctc_register_kernels(const loom_host_api *host, loom_registrar *reg)
{
    loom_status st = pk_register_kernels(host, reg, audio_ctc_lm_kernels, audio_ctc_lm_n_kernels);
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, audio_ctc_lm_save_kernels, audio_ctc_lm_save_n_kernels);
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, audio_ctc_decoder_kernels, audio_ctc_decoder_n_kernels);
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, audio_ctc_stream_kernels, audio_ctc_stream_n_kernels);
    return st;
}

const pk_module audio_ctc_cpu = {
    .name = "ctc", .ops = audio_ctc_ops, .n_ops = PK_COUNT(audio_ctc_ops),
    .classes = ctc_classes, .n_classes = PK_COUNT(ctc_classes),
    .register_more = ctc_register_kernels,
};
