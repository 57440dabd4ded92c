#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Writes examples/demos/data/speech.flac, the clean speech of the
# beamforming demo (examples/demos/audio_beamform.c): one English sentence
# spoken by espeak-ng, resampled by sox to 16 kHz mono 16-bit, about three
# seconds (under 100 KB). Needs the Debian packages espeak-ng and sox
# (tools/dev's PACKAGES).
#
#     tools/gen_audio_demo_speech.sh [OUT.flac]
set -eu
out=${1:-$(dirname "$0")/../examples/demos/data/speech.flac}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
espeak-ng -v en-us -s 150 -w "$tmp/speech.wav" \
    "The beamformer listens to eight microphones and keeps the talker in front."
# sox: 16 kHz, one channel, 16-bit samples, peak at -1 dBFS, at most 3.5 s
sox "$tmp/speech.wav" -r 16000 -c 1 -b 16 "$tmp/speech16.wav" norm -1 trim 0 3.5
sox "$tmp/speech16.wav" -C 8 "$out"
