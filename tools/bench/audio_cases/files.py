# SPDX-License-Identifier: BSD-3-Clause
"""Side-by-side cases of the audio pack's file decoding against soundfile
(libsndfile, what torchaudio >= 2.9 points to): a 10-minute 16 kHz mono
16-bit FLAC and the same as WAV, written once into a temporary folder,
decoded to float32 [frames, channels] on both sides (channels_first=false:
soundfile's layout). The rate is the real-time factor. Imported by
tools/bench/audio.
"""
import atexit
import os
import shutil
import tempfile

import numpy as np
import soundfile

import sidebyside

RATE = 16000
SECONDS = 600.0


def _files():
    d = tempfile.mkdtemp(prefix="loom-bench-audio-")
    atexit.register(shutil.rmtree, d, ignore_errors=True)
    rng = np.random.default_rng(1)
    t = np.arange(int(RATE * SECONDS)) / RATE
    x = 0.3 * np.sin(2 * np.pi * 440 * t) * np.sin(2 * np.pi * 0.5 * t) + 0.02 * rng.standard_normal(t.size)
    paths = {}
    for ext, fmt in (("flac", "FLAC"), ("wav", "WAV")):
        paths[ext] = os.path.join(d, "ten_minutes." + ext)
        soundfile.write(paths[ext], x, RATE, format=fmt, subtype="PCM_16")
    return paths


def cases():
    paths = _files()
    common = dict(items=SECONDS, unit="x RT", repeat=10, warmup=2)
    return [
        sidebyside.Case(
            name="load 10 min FLAC 16 kHz 16-bit", op="audio.load", inputs={},
            attrs={"uri": paths["flac"], "channels_first": "false"},
            reference=lambda: soundfile.read(paths["flac"], dtype="float32", always_2d=True), target=1.0, **common),
        sidebyside.Case(
            name="load 10 min WAV 16 kHz 16-bit", op="audio.load", inputs={},
            attrs={"uri": paths["wav"], "channels_first": "false"},
            reference=lambda: soundfile.read(paths["wav"], dtype="float32", always_2d=True), **common),
    ]
