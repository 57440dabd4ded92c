#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the audio pack's spectral ops to tests/data/audio/spectral/.

Every expected value comes from torch / torchaudio on the CPU: torch.stft
(real and complex signals), torch.istft (real and complex outputs),
torchaudio.functional.spectrogram, inverse_spectrogram,
melscale_fbanks, create_dct, and the transforms MelSpectrogram and MFCC
(f64 cases: the transform after .double(), whose float32 buffers are then
widened).

    .venv-audio/bin/python tools/gen_audio_spectral_goldens.py [OUTDIR]

cases.txt lists one case a line, read by tests/audio/spectral/test_spectral.c:
    <case> <op> <tolerance class> <attrs as k=v;k=v or ->
and each case has <case>_input.npy (absent for ops without inputs),
<case>_window.npy when a window is passed, and <case>_output.npy. The
tolerance class is f32, f64 or f64mel (see the test). Inputs are small and
seeded; keep the folder under ~300 KB.
"""
import math
import os
import sys

import numpy as np
import torch
import torchaudio
import torchaudio.functional as AF
import torchaudio.transforms as AT

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "audio", "spectral")

LINES = []


def save(name, t):
    np.save(os.path.join(OUT, name + ".npy"), t.detach().contiguous().numpy(), allow_pickle=False)


def case(name, op, tol, attrs, output, inp=None, window=None):
    if inp is not None:
        save(name + "_input", inp)
    if window is not None:
        save(name + "_window", window)
    save(name + "_output", output)
    LINES.append("%s %s %s %s" % (name, op, tol, ";".join("%s=%s" % kv for kv in attrs.items()) or "-"))


def b(v):
    return "true" if v else "false"


def signal(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)


def stft_cases():
    dt = {"f32": torch.float32, "f64": torch.float64}
    for tag, d in dt.items():
        x = signal((2, 3, 100), d, 1)
        w = torch.hann_window(32, dtype=d)
        X = torch.stft(x.reshape(-1, 100), 32, hop_length=8, window=w, return_complex=True).reshape(2, 3, 17, -1)
        case("stft_hann_" + tag, "audio.stft", tag, {"n_fft": 32, "hop_length": 8}, X, x, w)
        y = torch.istft(X.reshape(6, 17, -1), 32, hop_length=8, window=w, length=100).reshape(2, 3, 100)
        case("istft_hann_" + tag, "audio.istft", tag, {"n_fft": 32, "hop_length": 8, "length": 100}, y, X, w)
    # win_length < n_fft (the window centred in the frame), no centring, two-sided, normalized
    for tag, d in dt.items():
        x = signal((90,), d, 2)
        w = torch.hamming_window(20, dtype=d)
        X = torch.stft(x, 32, hop_length=7, win_length=20, window=w, center=False, onesided=False,
                       normalized=True, return_complex=True)
        case("stft_twosided_" + tag, "audio.stft", tag,
             {"n_fft": 32, "hop_length": 7, "win_length": 20, "center": "false", "onesided": "false",
              "normalized": "true"}, X, x, w)
    # padding modes, odd n_fft, default hop (n_fft // 4), (re, im) pairs
    for mode in ("constant", "replicate", "circular", "reflect"):
        x = signal((2, 40), torch.float64, 3)
        X = torch.stft(x, 15, pad_mode=mode, return_complex=True)
        case("stft_pad_" + mode, "audio.stft", "f64",
             {"n_fft": 15, "pad_mode": mode, "return_complex": "false"}, torch.view_as_real(X), x)
    # istft: odd n_fft, rectangular window, no centring, a length past the frames (zeros)
    x = signal((3, 60), torch.float32, 4)
    X = torch.stft(x, 15, hop_length=5, center=False, return_complex=True)
    y = torch.istft(X, 15, hop_length=5, center=False, length=70)
    case("istft_rect_long", "audio.istft", "f32",
         {"n_fft": 15, "hop_length": 5, "center": "false", "length": 70}, y, X)
    # istft: two-sided normalized input, default length
    x = signal((64,), torch.float64, 5)
    w = torch.hann_window(16, dtype=torch.float64)
    X = torch.stft(x, 16, hop_length=4, window=w, onesided=False, normalized=True, return_complex=True)
    y = torch.istft(X, 16, hop_length=4, window=w, onesided=False, normalized=True)
    case("istft_twosided_norm", "audio.istft", "f64",
         {"n_fft": 16, "hop_length": 4, "onesided": "false", "normalized": "true"}, y, X, w)


def complex_cases():
    """stft of a complex signal (two-sided C2C) and istft with return_complex=True."""
    cd = {"c64": (torch.complex64, torch.float32, "f32"), "c128": (torch.complex128, torch.float64, "f64")}
    for tag, (c, r, tol) in cd.items():
        x = torch.complex(signal((2, 48), r, 30), signal((2, 48), r, 31)).to(c)
        w = torch.hann_window(24, dtype=r)
        # centred (reflect), a window shorter than n_fft
        X = torch.stft(x, 32, hop_length=12, win_length=24, window=w, return_complex=True)
        case("stft_complex_center_" + tag, "audio.stft", tol, {"n_fft": 32, "hop_length": 12, "win_length": 24},
             X, x, w)
        # no centring, normalized, onesided given as false, the default (ones) window
        X = torch.stft(x, 16, hop_length=5, center=False, normalized=True, onesided=False, return_complex=True)
        case("stft_complex_nocenter_norm_" + tag, "audio.stft", tol,
             {"n_fft": 16, "hop_length": 5, "center": "false", "normalized": "true", "onesided": "false"}, X, x)
        # istft return_complex=True: the round trip of the centred spectrum, with length
        X = torch.stft(x, 32, hop_length=12, win_length=24, window=w, return_complex=True)
        y = torch.istft(X, 32, hop_length=12, win_length=24, window=w, onesided=False, length=48,
                        return_complex=True)
        case("istft_complex_" + tag, "audio.istft", tol,
             {"n_fft": 32, "hop_length": 12, "win_length": 24, "onesided": "false", "length": 48,
              "return_complex": "true"}, y, X, w)
    # constant padding of a complex signal, odd n_fft, (re, im) pairs
    x = torch.complex(signal((40,), torch.float64, 32), signal((40,), torch.float64, 33))
    X = torch.stft(x, 15, pad_mode="constant", return_complex=True)
    case("stft_complex_constant_pairs", "audio.stft", "f64",
         {"n_fft": 15, "pad_mode": "constant", "return_complex": "false"}, torch.view_as_real(X), x)
    # istft return_complex=True of a non-Hermitian two-sided spectrum, normalized, no centring, default length
    x = torch.complex(signal((60,), torch.float32, 34), signal((60,), torch.float32, 35))
    X = torch.stft(x, 16, hop_length=4, center=False, normalized=True, return_complex=True)
    X = X + 0.25 * torch.complex(signal(X.shape, torch.float32, 36), signal(X.shape, torch.float32, 37))
    y = torch.istft(X, 16, hop_length=4, center=False, normalized=True, return_complex=True)
    case("istft_complex_norm_nocenter", "audio.istft", "f32",
         {"n_fft": 16, "hop_length": 4, "center": "false", "normalized": "true", "return_complex": "true"}, y, X)


def spectrogram_cases():
    for tag, d in {"f32": torch.float32, "f64": torch.float64}.items():
        x = signal((2, 120), d, 10)
        w = torch.hann_window(24, dtype=d)
        for power, norm in ((2.0, False), (1.0, "window"), (0.5, "frame_length"), (None, True)):
            spec = AF.spectrogram(x, pad=3, window=w, n_fft=32, hop_length=10, win_length=24, power=power,
                                  normalized=norm, center=True, pad_mode="reflect", onesided=True,
                                  return_complex=True)
            name = "spectrogram_p%s_%s_%s" % ("none" if power is None else str(power).replace(".", ""),
                                             str(norm).lower(), tag)
            attrs = {"pad": 3, "n_fft": 32, "hop_length": 10, "win_length": 24, "normalized": str(norm).lower()}
            if power is not None:
                attrs["power"] = power
            case(name, "audio.spectrogram", tag, attrs, spec, x, w)
        # inverse: with pad and length, window-normalized
        spec = AF.spectrogram(x, pad=4, window=w, n_fft=32, hop_length=6, win_length=24, power=None,
                              normalized="window", return_complex=True)
        y = AF.inverse_spectrogram(spec, length=120, pad=4, window=w, n_fft=32, hop_length=6, win_length=24,
                                   normalized="window")
        case("inverse_spectrogram_" + tag, "audio.inverse_spectrogram", tag,
             {"length": 120, "pad": 4, "n_fft": 32, "hop_length": 6, "win_length": 24, "normalized": "window"},
             y, spec, w)
    # the default window (periodic Hann) and hop (win_length // 2), f32
    x = signal((500,), torch.float32, 11)
    spec = AT.Spectrogram(n_fft=64)(x)
    case("spectrogram_defaults", "audio.spectrogram", "f32", {"n_fft": 64, "power": 2.0}, spec, x)


def mel_cases():
    for name, args in (("htk", dict(norm=None, mel_scale="htk")), ("slaney", dict(norm="slaney", mel_scale="slaney"))):
        fb = AF.melscale_fbanks(65, 30.0, 7000.0, 16, 16000, **args)
        case("fbanks_" + name, "audio.melscale_fbanks", "f32table",
             {"n_freqs": 65, "f_min": 30.0, "f_max": 7000.0, "n_mels": 16, "sample_rate": 16000,
              "norm": args["norm"] or "none", "mel_scale": args["mel_scale"]}, fb)
    for norm in ("ortho", None):
        dct = AF.create_dct(13, 24, norm)
        case("dct_" + (norm or "none"), "audio.create_dct", "f32table",
             {"n_mfcc": 13, "n_mels": 24, "norm": norm or "none"}, dct)
    x32 = signal((2, 800), torch.float32, 20)
    t = AT.MelSpectrogram(sample_rate=16000, n_fft=128, hop_length=40, n_mels=20)
    case("mel_f32", "audio.mel_spectrogram", "f32", {"n_fft": 128, "hop_length": 40, "n_mels": 20}, t(x32), x32)
    t = AT.MelSpectrogram(sample_rate=8000, n_fft=100, win_length=80, hop_length=30, f_min=50.0, f_max=3500.0,
                          n_mels=12, power=1.0, norm="slaney", mel_scale="slaney", pad=2).double()
    x64 = signal((3, 600), torch.float64, 21)
    case("mel_slaney_f64", "audio.mel_spectrogram", "f64mel",
         {"sample_rate": 8000, "n_fft": 100, "win_length": 80, "hop_length": 30, "f_min": 50.0, "f_max": 3500.0,
          "n_mels": 12, "power": 1.0, "norm": "slaney", "mel_scale": "slaney", "pad": 2},
         t(x64), x64, t.spectrogram.window)
    mk = {"n_fft": 128, "hop_length": 64, "n_mels": 24}
    x = signal((2, 3, 800), torch.float32, 22)
    t = AT.MFCC(sample_rate=16000, n_mfcc=13, melkwargs=mk)
    case("mfcc_db_f32", "audio.mfcc", "f32", {"n_mfcc": 13, **mk}, t(x), x)
    t = AT.MFCC(sample_rate=16000, n_mfcc=10, norm=None, log_mels=True, melkwargs=mk).double()
    x = signal((700,), torch.float64, 23)
    case("mfcc_log_f64", "audio.mfcc", "f64mel", {"n_mfcc": 10, "dct_norm": "none", "log_mels": "true", **mk},
         t(x), x, t.MelSpectrogram.spectrogram.window)
    # a 2-D input: AmplitudeToDB's top_db over the whole (mels, time) item
    x = signal((900,), torch.float32, 24) * torch.linspace(0, 1, 900) ** 4
    t = AT.MFCC(sample_rate=16000, n_mfcc=12, melkwargs=mk)
    case("mfcc_topdb_f32", "audio.mfcc", "f32", {"n_mfcc": 12, **mk}, t(x), x)


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".npy"):
            os.remove(os.path.join(OUT, f))
    stft_cases()
    complex_cases()
    spectrogram_cases()
    mel_cases()
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("# made by tools/gen_audio_spectral_goldens.py (torch %s, torchaudio %s)\n"
                % (torch.__version__.split("+")[0], torchaudio.__version__.split("+")[0]))
        f.write("\n".join(LINES) + "\n")
    print("wrote", os.path.normpath(OUT), len(LINES), "cases")


if __name__ == "__main__":
    main()
