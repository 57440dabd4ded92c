/* SPDX-License-Identifier: BSD-3-Clause */
/*
** spectral.h - the spectral module of the audio packs: torch.stft and
** torch.istft, torchaudio.functional.spectrogram / inverse_spectrogram /
** melscale_fbanks / create_dct and the MelSpectrogram and MFCC transforms.
**
** Layout (torch's): a waveform is (..., time); a spectrogram is
** (..., freq, frames), complex as LOOM_DTYPE_C64 / C128 (interleaved re, im)
** or, with return_complex=false, real with a trailing dim of 2. Any batch
** shape stands in front; f32 and f64 (c64 and c128) throughout.
**
** Every op resolves its framing once, in audio_stft_resolve
** (spectral_checks.c, shared by every backend): the defaults of hop_length
** and win_length, the window (given, or the op's default), the padding, the
** frame count and the scale of the normalisation. The kernels only run that
** geometry.
*/
#ifndef LOOM_AUDIO_SPECTRAL_H
#define LOOM_AUDIO_SPECTRAL_H

#include <stddef.h>
#include <stdint.h>

#include "dtype_traits.h"
#include "loom/plugin.h"
#include "pack.h"

#define AUDIO_REAL (PK_F32_F64)
#define AUDIO_COMPLEX (LOOM_DTYPE_BIT(LOOM_DTYPE_C64) | LOOM_DTYPE_BIT(LOOM_DTYPE_C128))

/* -------------------------------------------------------------- attributes */

/* torch.stft(input, n_fft, hop_length=None, win_length=None, window=None,
** center=True, pad_mode='reflect', normalized=False, onesided=None,
** return_complex=None); return_complex defaults to true here (torch 2 makes
** it required for real input and deprecates false). A complex input (c64,
** c128) gives the two-sided C2C spectrum: onesided must be false or absent. */
#define AUDIO_STFT_ATTRS(A, op)                                                                              \
    A(op, n_fft, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "size of the Fourier transform", ) \
    A(op, hop_length, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "samples between frames (default n_fft // 4)", ) \
    A(op, win_length, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "window size (default n_fft)", )              \
    A(op, center, BOOL, LOOM_DEFAULT_BOOL(1), 0, "pad n_fft // 2 on both sides so frame t is centred at t * hop_length", ) \
    A(op, pad_mode, STRING, LOOM_DEFAULT_STRING("reflect"), 0, "padding of center: reflect, constant, replicate, circular", ) \
    A(op, normalized, BOOL, LOOM_DEFAULT_BOOL(0), 0, "multiply by n_fft^-1/2", )                                \
    A(op, onesided, BOOL, LOOM_DEFAULT_NONE, 0, "n_fft // 2 + 1 bins (real input's default) instead of n_fft; complex input: false", ) \
    A(op, return_complex, BOOL, LOOM_DEFAULT_BOOL(1), 0, "complex output; false: a trailing dim of 2 (re, im)", )
PK_ATTR_ENUM(audio_stft, AUDIO_STFT_ATTRS);

/* torch.istft(input, n_fft, hop_length=None, win_length=None, window=None,
** center=True, normalized=False, onesided=None, length=None,
** return_complex=False) */
#define AUDIO_ISTFT_ATTRS(A, op)                                                                             \
    A(op, n_fft, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "size of the Fourier transform", ) \
    A(op, hop_length, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "samples between frames (default n_fft // 4)", ) \
    A(op, win_length, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "window size (default n_fft)", )              \
    A(op, center, BOOL, LOOM_DEFAULT_BOOL(1), 0, "the forward transform was centred: trim n_fft // 2 at both ends", ) \
    A(op, normalized, BOOL, LOOM_DEFAULT_BOOL(0), 0, "the forward transform was normalized (n_fft^-1/2)", )      \
    A(op, onesided, BOOL, LOOM_DEFAULT_NONE, 0, "input holds n_fft // 2 + 1 bins (default: unless it has n_fft)", ) \
    A(op, length, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_NONNEG, "output samples (trimmed or zero-padded)", )        \
    A(op, return_complex, BOOL, LOOM_DEFAULT_BOOL(0), 0, "complex output (C2C; a two-sided input, onesided false)", )
PK_ATTR_ENUM(audio_istft, AUDIO_ISTFT_ATTRS);

/* torchaudio.functional.spectrogram(waveform, pad, window, n_fft,
** hop_length, win_length, power, normalized, center=True,
** pad_mode='reflect', onesided=True, return_complex=None), with the
** defaults of transforms.Spectrogram where the function has none (n_fft
** 400, hop win_length // 2, a periodic Hann window), except power: absent
** is the function's None (the complex spectrum). */
#define AUDIO_SPEC_NORMS "false, true, window, frame_length"
#define AUDIO_SPECTROGRAM_ATTRS(A, op)                                                                       \
    A(op, pad, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG, "zeros added on both sides first", )              \
    A(op, n_fft, INT, LOOM_DEFAULT_INT(400), LOOM_ATTR_POSITIVE, "size of the Fourier transform", )           \
    A(op, hop_length, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "samples between frames (default win_length // 2)", ) \
    A(op, win_length, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "window size (default n_fft)", )              \
    A(op, power, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "|X|^power; absent: the complex spectrum", )     \
    A(op, normalized, STRING, LOOM_DEFAULT_STRING("false"), 0, "false; true or window: divide by sqrt(sum w^2); frame_length: by sqrt(n_fft)", ) \
    A(op, center, BOOL, LOOM_DEFAULT_BOOL(1), 0, "pad n_fft // 2 on both sides", )                              \
    A(op, pad_mode, STRING, LOOM_DEFAULT_STRING("reflect"), 0, "padding of center: reflect, constant, replicate, circular", ) \
    A(op, onesided, BOOL, LOOM_DEFAULT_BOOL(1), 0, "n_fft // 2 + 1 bins instead of n_fft", )                   \
    A(op, return_complex, BOOL, LOOM_DEFAULT_BOOL(1), 0, "without power: complex; false: a trailing dim of 2", )
PK_ATTR_ENUM(audio_spectrogram, AUDIO_SPECTROGRAM_ATTRS);

/* torchaudio.functional.inverse_spectrogram(spectrogram, length, pad,
** window, n_fft, hop_length, win_length, normalized, center=True,
** pad_mode='reflect', onesided=True) */
#define AUDIO_INVERSE_SPECTROGRAM_ATTRS(A, op)                                                               \
    A(op, length, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_NONNEG, "samples of the waveform (pad removed)", )        \
    A(op, pad, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG, "the forward transform's pad", )                  \
    A(op, n_fft, INT, LOOM_DEFAULT_INT(400), LOOM_ATTR_POSITIVE, "size of the Fourier transform", )           \
    A(op, hop_length, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "samples between frames (default win_length // 2)", ) \
    A(op, win_length, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "window size (default n_fft)", )              \
    A(op, normalized, STRING, LOOM_DEFAULT_STRING("false"), 0, "the forward transform's normalized", )          \
    A(op, center, BOOL, LOOM_DEFAULT_BOOL(1), 0, "the forward transform was centred", )                        \
    A(op, pad_mode, STRING, LOOM_DEFAULT_STRING("reflect"), 0, "the forward transform's pad_mode (unused)", )    \
    A(op, onesided, BOOL, LOOM_DEFAULT_BOOL(1), 0, "the input holds n_fft // 2 + 1 bins", )
PK_ATTR_ENUM(audio_inverse_spectrogram, AUDIO_INVERSE_SPECTROGRAM_ATTRS);

/* torchaudio.functional.melscale_fbanks(n_freqs, f_min, f_max, n_mels,
** sample_rate, norm=None, mel_scale='htk') -> (n_freqs, n_mels) f32 */
#define AUDIO_MELSCALE_FBANKS_ATTRS(A, op)                                                                   \
    A(op, n_freqs, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "frequency bins (n_fft // 2 + 1)", ) \
    A(op, f_min, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "lowest frequency, Hz", ) \
    A(op, f_max, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE, "highest frequency, Hz", ) \
    A(op, n_mels, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "mel filters", )           \
    A(op, sample_rate, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "sample rate, Hz", ) \
    A(op, norm, STRING, LOOM_DEFAULT_STRING("none"), 0, "none, or slaney: divide each filter by its width", ) \
    A(op, mel_scale, STRING, LOOM_DEFAULT_STRING("htk"), 0, "htk or slaney", )
PK_ATTR_ENUM(audio_melscale_fbanks, AUDIO_MELSCALE_FBANKS_ATTRS);

/* transforms.MelSpectrogram(sample_rate=16000, n_fft=400, win_length=None,
** hop_length=None, f_min=0.0, f_max=None, pad=0, n_mels=128, window_fn=
** hann_window, power=2.0, normalized=False, center=True, pad_mode='reflect',
** norm=None, mel_scale='htk'); the window is an optional input. The
** leading rows are shared with MFCC (its melkwargs). */
#define AUDIO_MEL_ATTRS_(A, op)                                                                              \
    A(op, sample_rate, INT, LOOM_DEFAULT_INT(16000), LOOM_ATTR_POSITIVE, "sample rate, Hz", )                \
    A(op, n_fft, INT, LOOM_DEFAULT_INT(400), LOOM_ATTR_POSITIVE, "size of the Fourier transform", )           \
    A(op, win_length, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "window size (default n_fft)", )              \
    A(op, hop_length, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "samples between frames (default win_length // 2)", ) \
    A(op, f_min, FLOAT, LOOM_DEFAULT_FLOAT(0.0), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "lowest frequency, Hz", ) \
    A(op, f_max, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE, "highest frequency, Hz (default sample_rate // 2)", ) \
    A(op, pad, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG, "zeros added on both sides first", )              \
    A(op, n_mels, INT, LOOM_DEFAULT_INT(128), LOOM_ATTR_POSITIVE, "mel filters", )                            \
    A(op, power, FLOAT, LOOM_DEFAULT_FLOAT(2.0), LOOM_ATTR_POSITIVE, "|X|^power before the filters", )          \
    A(op, normalized, STRING, LOOM_DEFAULT_STRING("false"), 0, "as spectrogram's normalized", )                \
    A(op, center, BOOL, LOOM_DEFAULT_BOOL(1), 0, "pad n_fft // 2 on both sides", )                              \
    A(op, pad_mode, STRING, LOOM_DEFAULT_STRING("reflect"), 0, "padding of center", )                          \
    A(op, norm, STRING, LOOM_DEFAULT_STRING("none"), 0, "filter norm: none or slaney", )                       \
    A(op, mel_scale, STRING, LOOM_DEFAULT_STRING("htk"), 0, "htk or slaney", )
#define AUDIO_MEL_SPECTROGRAM_ATTRS(A, op) AUDIO_MEL_ATTRS_(A, op)
PK_ATTR_ENUM(audio_mel_spectrogram, AUDIO_MEL_SPECTROGRAM_ATTRS);

/* transforms.MFCC(sample_rate=16000, n_mfcc=40, dct_type=2, norm='ortho',
** log_mels=False, melkwargs=None): melkwargs are the rows above; the DCT's
** norm is dct_norm here (MFCC's `norm`), the filters' is norm. AmplitudeToDB
** ('power', top_db=80) unless log_mels. */
#define AUDIO_MFCC_ATTRS(A, op)                                                                              \
    AUDIO_MEL_ATTRS_(A, op)                                                                                  \
    A(op, n_mfcc, INT, LOOM_DEFAULT_INT(40), LOOM_ATTR_POSITIVE, "coefficients kept (<= n_mels)", )          \
    A(op, dct_type, INT, LOOM_DEFAULT_INT(2), LOOM_ATTR_POSITIVE, "only 2", )                               \
    A(op, dct_norm, STRING, LOOM_DEFAULT_STRING("ortho"), 0, "ortho or none (MFCC's norm)", )                  \
    A(op, log_mels, BOOL, LOOM_DEFAULT_BOOL(0), 0, "log(mel + 1e-6) instead of decibels", )                   \
    A(op, top_db, FLOAT, LOOM_DEFAULT_FLOAT(80.0), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "decibels kept below each item's peak", )
PK_ATTR_ENUM(audio_mfcc, AUDIO_MFCC_ATTRS);

/* torchaudio.functional.create_dct(n_mfcc, n_mels, norm) -> (n_mels, n_mfcc) f32 */
#define AUDIO_CREATE_DCT_ATTRS(A, op)                                                                        \
    A(op, n_mfcc, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "coefficients", )         \
    A(op, n_mels, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "mel filters", )          \
    A(op, norm, STRING, LOOM_DEFAULT_STRING("none"), 0, "ortho or none", )
PK_ATTR_ENUM(audio_create_dct, AUDIO_CREATE_DCT_ATTRS);

/* ------------------------------------------------------------------ op list */

#define AUDIO_SPECTRAL_OPS(X)                                                                                \
    X(audio_stft_schema) X(audio_istft_schema) X(audio_spectrogram_schema)                                   \
    X(audio_inverse_spectrogram_schema) X(audio_melscale_fbanks_schema) X(audio_create_dct_schema)           \
    X(audio_mel_spectrogram_schema) X(audio_mfcc_schema)
PK_OPS_DECLARE(audio_spectral_ops, AUDIO_SPECTRAL_OPS);

/* Which op a kernel runs (its .user). */
typedef enum audio_spectral_op {
    AUDIO_OP_STFT, AUDIO_OP_ISTFT, AUDIO_OP_SPECTROGRAM, AUDIO_OP_INVERSE_SPECTROGRAM,
    AUDIO_OP_MELSCALE_FBANKS, AUDIO_OP_CREATE_DCT, AUDIO_OP_MEL_SPECTROGRAM, AUDIO_OP_MFCC
} audio_spectral_op;
extern const audio_spectral_op audio_spectral_ids[8];

/* ----------------------------------------------------------------- geometry */

enum { AUDIO_PAD_REFLECT, AUDIO_PAD_CONSTANT, AUDIO_PAD_REPLICATE, AUDIO_PAD_CIRCULAR };

/* What the forward ops return. */
enum { AUDIO_OUT_COMPLEX, AUDIO_OUT_REAL_PAIRS, AUDIO_OUT_POWER };

/* The framing of one forward or inverse call, resolved from the attributes
** and the inputs (spectral_checks.c). Lengths are in samples. */
typedef struct audio_stft_geom {
    loom_dtype real;            /* F32 or F64: the arithmetic */
    int64_t batch;              /* product of the leading dims */
    int64_t length;             /* forward: samples of each signal; inverse: output samples */
    int64_t pad;                /* zeros on both sides before centring (spectrogram's pad) */
    int64_t center_pad;         /* n_fft // 2 when center, else 0 */
    int pad_mode;               /* AUDIO_PAD_* of the centring */
    int64_t n_fft, hop, win_length;
    int64_t n_frames;
    int64_t n_freq;             /* bins in the spectrum (n_fft // 2 + 1 when onesided, else n_fft) */
    int onesided;
    int complex_in;             /* forward: the signal is complex (C2C; two-sided) */
    int complex_out;            /* inverse: return_complex, the output is complex (C2C) */
    double scale;               /* forward: multiplies X; inverse: multiplies the unnormalised inverse FFT */
    int out_kind;               /* forward: AUDIO_OUT_* */
    double power;               /* forward with AUDIO_OUT_POWER */
    /* the window, zero-padded and centred to n_fft (left (n_fft - win_length) // 2), in `real` */
    const void *window;
    /* inverse: output range of the overlap-add [start, start + out_valid) is
    ** divided by the envelope; out_len - out_valid trailing zeros follow */
    int64_t ola_len;            /* n_fft + hop * (n_frames - 1) */
    int64_t start, out_valid, out_len;
    int64_t trim;               /* inverse_spectrogram: samples of `pad` dropped at each end */
} audio_stft_geom;

/* The forward geometry of stft, spectrogram, mel_spectrogram or mfcc:
** checks the signal and the window (argument `window_index` of the call,
** NULL for the default) and fills *g (the window in scratch). The caller
** has read the attributes into the arguments. */
typedef struct audio_stft_args {
    int64_t n_fft, hop, win_length;     /* hop / win_length 0: their default */
    int hop_default_quarter;            /* hop default n_fft // 4 (torch) instead of win_length // 2 */
    int default_hann;                   /* absent window: periodic Hann (torchaudio), else ones (torch) */
    int center, pad_mode, onesided, out_kind;   /* onesided -1: the default */
    int64_t pad;
    const char *normalized;             /* "false", "true", "window", "frame_length"; NULL: see norm_bool */
    int norm_bool;                      /* stft/istft's normalized */
    double power;
    int64_t length;                     /* inverse: -1 for none */
    int complex_out;                    /* inverse: return_complex */
    /* where the window comes from and goes: window_values is a host copy of
    ** the window input (NULL: read the input itself, a host tensor), and
    ** window_buf host memory for n_fft reals (NULL: the call's scratch, which
    ** is host memory only for cpu calls) */
    const void *window_values;
    void *window_buf;
} audio_stft_args;

loom_status audio_stft_resolve(loom_call *call, const loom_tensor *signal, const loom_tensor *window,
                               const audio_stft_args *a, audio_stft_geom *g);
loom_status audio_istft_resolve(loom_call *call, const loom_tensor *spec, int spec_pairs, const loom_tensor *window,
                                const audio_stft_args *a, audio_stft_geom *g);

/* 1 / the overlap-added square of g's window over the output range
** [0, g->out_valid) into inv (host, g->out_valid reals of g->real), after
** torch's NOLA check: an envelope below 1e-11 is refused. */
loom_status audio_istft_envelope(const audio_stft_geom *g, void *inv);

/* Output `index`: the first `lead` dims of `in`, then `tail`. */
loom_status audio_alloc_lead(loom_call *call, int32_t index, loom_dtype dt, const loom_tensor *in, int32_t lead,
                             const int64_t *tail, int32_t n_tail, loom_tensor **out);
static inline loom_dtype audio_complex_of(loom_dtype real)
{
    return real == LOOM_DTYPE_F64 ? LOOM_DTYPE_C128 : LOOM_DTYPE_C64;
}

/* Attribute readers, one per op (spectral_checks.c). */
loom_status audio_stft_read_args(const loom_call *call, audio_stft_args *a);
loom_status audio_istft_read_args(const loom_call *call, audio_stft_args *a);
loom_status audio_spectrogram_read_args(const loom_call *call, audio_stft_args *a);
loom_status audio_inverse_spectrogram_read_args(const loom_call *call, audio_stft_args *a);
loom_status audio_mel_read_args(const loom_call *call, audio_stft_args *a);

/* The normalisation names of spectrogram's `normalized`: 0 none, 1 window, 2 frame_length; -1 unknown. */
int audio_spec_norm(const char *s);
int audio_pad_mode(const char *s);

/* ------------------------------------------------------------- mel and DCT */

/* The mel filter bank and the DCT of torchaudio, computed in float32 as
** torch does (its default dtype), written as `dtype` (F32 or F64; an f64
** model is the f32 buffers widened, as Module.double() makes them).
** mel_tables.c; shared with the cuda pack. */
typedef struct audio_mel_args {
    int64_t n_freqs, n_mels, sample_rate;
    double f_min, f_max;
    int slaney_norm, slaney_scale;
} audio_mel_args;
/* fb [n_freqs, n_mels]; work holds n_freqs + n_mels + 2 floats */
void audio_melscale_fbanks_fill(const audio_mel_args *a, loom_dtype dtype, void *fb, float *work);
/* (n_mels, n_mfcc) */
void audio_create_dct_fill(int64_t n_mfcc, int64_t n_mels, int ortho, loom_dtype dtype, void *dct);
loom_status audio_mel_read_fbank_args(const loom_call *call, int64_t n_fft, audio_mel_args *m);

/* ------------------------------------------------------------------ modules */

extern const pk_module audio_spectral_cpu;
extern const pk_module audio_spectral_cuda;

#endif /* LOOM_AUDIO_SPECTRAL_H */
