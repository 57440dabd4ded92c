/* SPDX-License-Identifier: BSD-3-Clause */
/*
** audio_pack.h - the modules of the `audio` op packs (audio.so for cpu,
** audio-cuda.so for cuda), each in its own folder with its own meson.build
** that appends to audio_cpu_src / audio_cuda_src / audio_cu_src:
**   spectral/   stft, istft, spectrogram, inverse_spectrogram,
**               melscale_fbanks, create_dct, mel_spectrogram, mfcc
**   files/      load, save, info through libsndfile (cpu; built when
**               libsndfile is found: LOOM_AUDIO_HAVE_SNDFILE)
**   beamform/   psd, mvdr_weights_souden, mvdr_weights_rtf, rtf_evd,
**               rtf_power, apply_beamforming; the PSD, SoudenMVDR, RTFMVDR
**               and MVDR objects (LAPACK; cuBLAS and cuSOLVER on cuda)
**   ctc/        CTC decoding: the beam-search decoder object with its ARPA
**               n-gram LM (cpu), the greedy decoder (cpu, cuda)
**   stream/     the stream_reader object and stream_decode through FFmpeg
**               (cpu; built when FFmpeg is found: LOOM_AUDIO_HAVE_FFMPEG);
**               NVDEC outputs and pop_chunk on cuda
*/
#ifndef LOOM_AUDIO_PACK_H
#define LOOM_AUDIO_PACK_H

#include "pack.h"

extern const pk_module audio_spectral_cpu, audio_spectral_cuda;
extern const pk_module audio_files_cpu;
extern const pk_module audio_stream_cpu, audio_stream_cuda;
extern const pk_module audio_beamform_cpu, audio_beamform_cuda;
extern const pk_module audio_ctc_cpu, audio_ctc_greedy_cpu, audio_ctc_greedy_cuda, audio_ctc_prefix_cpu,
    audio_ctc_prefix_cuda;

/* The cuda pack's fini: the beamform module's cuBLAS and cuSOLVER handles. */
void audio_beamform_cuda_release(void);

/* The device's cached cuBLAS handle (beamform_cuda.c), bound to the call's
** stream, for any cuda module of the pack: held until audio_cuda_blas_put,
** which must follow every LOOM_OK (one handle serves one stream at a time). */
loom_status audio_cuda_blas_get(const loom_call *call, void **handle);
void audio_cuda_blas_put(void);

/* The cpu pack's fini: FFTW's cached plans. */
void audio_cpu_fini(void);

#endif /* LOOM_AUDIO_PACK_H */
