/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cuda_pack.c - the entry of audio-cuda.so: the same op definitions as
** audio.so and the cuda kernels (cuFFT, cuBLAS, cuSOLVER). The CUDA device comes from
** core-cuda.so, which must be loaded first; every launch is asynchronous on
** the call's ctx->stream.
*/
#include "audio_pack.h"

static const char *const audio_cuda_depends[] = { "core-cuda", NULL };

static void audio_cuda_fini(void)
{
    audio_beamform_cuda_release();
}

#if defined(LOOM_AUDIO_HAVE_FFMPEG)
/* with FFmpeg: the stream reader's NVDEC outputs and pop_chunk on cuda */
#  define AUDIO_CUDA_STREAM , &audio_stream_cuda
#else
#  define AUDIO_CUDA_STREAM
#endif

PK_PACK_DEFINE_DEPS("audio-cuda", "0.1.0",
                    "torchaudio: STFT family, spectrograms, mel features (cuFFT), multi-channel beamforming (cuBLAS, "
                    "cuSOLVER), greedy and prefix beam-search CTC decoding (cuda), StreamReader on NVDEC",
                    NULL, audio_cuda_fini, audio_cuda_depends,
                    &audio_spectral_cuda, &audio_beamform_cuda, &audio_ctc_greedy_cuda, &audio_ctc_prefix_cuda
                    AUDIO_CUDA_STREAM)
