#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the audio files of the audio pack's tests to tests/data/audio/files/.

Each file is a short seeded signal (a chirp plus noise, 0.05 s) written by
soundfile (libsndfile), and its decode by soundfile.read is saved next to
it: the reference of audio.load (torchaudio >= 2.9 no longer decodes files
itself; soundfile is what its docs point to).

    .venv-audio/bin/python tools/gen_audio_files_goldens.py [OUTDIR]

Files:
  <name>.<ext>             the audio file
  <name>_float.npy         soundfile.read(dtype='float32', always_2d=True).T:
                           [channels, frames], what audio.load gives with
                           normalize=true
  <name>_native.npy        for PCM files: soundfile.read in the native
                           integer type (int16 / int32), normalize=false
  <name>_offset.npy        frames [37, 37 + 101) of the float decode
  info.txt                 <file> <sample_rate> <frames> <channels> <subtype>
A rerun rewrites the float WAV (its PEAK chunk holds a time stamp) and the
Ogg files (random stream serial numbers) with other bytes; their decodes,
and every other file, come out the same.
"""
import os
import sys

import numpy as np
import soundfile as sf

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "audio", "files")

FILES = [
    # name, extension, format, subtype, sample rate, channels
    ("pcm16_stereo", "wav", "WAV", "PCM_16", 8000, 2),
    ("pcm24_mono", "wav", "WAV", "PCM_24", 8000, 1),
    ("pcm32_stereo", "wav", "WAV", "PCM_32", 8000, 2),
    ("float_mono", "wav", "WAV", "FLOAT", 8000, 1),
    ("u8_mono", "wav", "WAV", "PCM_U8", 8000, 1),
    ("flac16_stereo", "flac", "FLAC", "PCM_16", 16000, 2),
    ("flac24_mono", "flac", "FLAC", "PCM_24", 8000, 1),
    ("vorbis_stereo", "ogg", "OGG", "VORBIS", 16000, 2),
    ("opus_mono", "opus", "OGG", "OPUS", 16000, 1),
]
NATIVE = {"PCM_16": "int16", "PCM_24": "int32", "PCM_32": "int32"}


def signal(rate, channels, seed):
    rng = np.random.default_rng(seed)
    t = np.arange(int(rate * 0.05)) / rate
    x = 0.5 * np.sin(2 * np.pi * (200 + 1500 * t) * t)
    return np.stack([x * (0.9 - 0.3 * c) + 0.05 * rng.standard_normal(t.size) for c in range(channels)], axis=1)


def main():
    os.makedirs(OUT, exist_ok=True)
    info = []
    for i, (name, ext, fmt, sub, rate, ch) in enumerate(FILES):
        path = os.path.join(OUT, name + "." + ext)
        sf.write(path, signal(rate, ch, i), rate, format=fmt, subtype=sub)
        x, r = sf.read(path, dtype="float32", always_2d=True)
        np.save(os.path.join(OUT, name + "_float.npy"), np.ascontiguousarray(x.T))
        np.save(os.path.join(OUT, name + "_offset.npy"), np.ascontiguousarray(x[37:138].T))
        if sub in NATIVE:
            y, _ = sf.read(path, dtype=NATIVE[sub], always_2d=True)
            np.save(os.path.join(OUT, name + "_native.npy"), np.ascontiguousarray(y.T))
        meta = sf.info(path)
        info.append("%s.%s %d %d %d %s" % (name, ext, meta.samplerate, meta.frames, meta.channels, meta.subtype))
    with open(os.path.join(OUT, "info.txt"), "w") as f:
        f.write("# made by tools/gen_audio_files_goldens.py (soundfile %s, libsndfile %s)\n"
                % (sf.__version__, sf.__libsndfile_version__))
        f.write("\n".join(info) + "\n")
    print("wrote", os.path.normpath(OUT), len(info), "files")


if __name__ == "__main__":
    main()
