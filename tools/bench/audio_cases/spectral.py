# SPDX-License-Identifier: BSD-3-Clause
"""Side-by-side cases of the audio pack's spectral ops against torch.stft /
torch.istft and torchaudio's MelSpectrogram and MFCC: 1 minute of 16 kHz
audio (a chirp in noise), n_fft 400 (25 ms), hop 160 (10 ms), a periodic
Hann window: an ASR front-end's framing. The rate is the real-time factor
(seconds of audio per second). Imported by tools/bench/audio.
"""
import numpy as np
import torch
import torchaudio

import sidebyside

RATE = 16000
SECONDS = 60.0


def _signal():
    rng = np.random.default_rng(0)
    t = np.arange(int(RATE * SECONDS)) / RATE
    x = 0.3 * np.sin(2 * np.pi * (300 + 20 * t) * t) + 0.05 * rng.standard_normal(t.size)
    return x.astype(np.float32)


def cases():
    x = _signal()
    tx = torch.from_numpy(x)
    win = torch.hann_window(400)
    X = torch.stft(tx, 400, 160, window=win, return_complex=True)
    Xc = X.contiguous()
    mel = torchaudio.transforms.MelSpectrogram(RATE, n_fft=400, hop_length=160, n_mels=80)
    mfcc = torchaudio.transforms.MFCC(RATE, n_mfcc=13, melkwargs={"n_fft": 400, "hop_length": 160, "n_mels": 80})
    common = dict(items=SECONDS, unit="x RT", repeat=30, warmup=5)
    return [
        sidebyside.Case(
            name="stft 1 min 16 kHz, n_fft 400, hop 160", op="audio.stft",
            inputs={"input": x, "window": win.numpy()}, attrs={"n_fft": "400", "hop_length": "160"},
            reference=lambda: torch.stft(tx, 400, 160, window=win, return_complex=True), target=1.0, **common),
        sidebyside.Case(
            name="istft 1 min 16 kHz, n_fft 400, hop 160", op="audio.istft",
            inputs={"input": Xc.numpy(), "window": win.numpy()},
            attrs={"n_fft": "400", "hop_length": "160", "length": str(x.size)},
            reference=lambda: torch.istft(Xc, 400, 160, window=win, length=x.size), target=1.0, **common),
        sidebyside.Case(
            name="mel_spectrogram 1 min, 80 mels", op="audio.mel_spectrogram",
            inputs={"waveform": x}, attrs={"n_fft": "400", "hop_length": "160", "n_mels": "80"},
            reference=lambda: mel(tx), target=1.0, **common),
        sidebyside.Case(
            name="mfcc 1 min, 80 mels, 13 coefficients", op="audio.mfcc",
            inputs={"waveform": x}, attrs={"n_fft": "400", "hop_length": "160", "n_mels": "80", "n_mfcc": "13"},
            reference=lambda: mfcc(tx), **common),
    ]
