#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tools/gen_stream_media.sh OUTDIR - the test media of audio.stream_reader,
# made with Debian's ffmpeg CLI at test time (tests/audio/stream): a stereo
# two-tone track in WAV, FLAC, MP3, AAC/MP4 and Opus/Ogg, and a small
# testsrc video with a tone track as H.264+AAC in MP4 and VP9+Opus in WebM.
# Single-threaded encoders and bitexact flags, so that a run gives the
# same bytes every time; the tests compare the reader against the CLI's
# decode of these same files, so the files themselves need not be frozen.
set -eu
out=${1:?usage: gen_stream_media.sh OUTDIR}
mkdir -p "$out"
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y -threads 1 "$@"; }
tone="-f lavfi -i sine=frequency=440:duration=1.5:sample_rate=44100 -f lavfi -i sine=frequency=660:duration=1.5:sample_rate=44100"
stereo="-filter_complex [0:a][1:a]amerge=inputs=2[a] -map [a]"
flags="-fflags +bitexact -flags:a +bitexact -map_metadata -1"
# shellcheck disable=SC2086
ff $tone $stereo $flags -c:a pcm_s16le "$out/tone.wav"
# shellcheck disable=SC2086
ff $tone $stereo $flags -c:a flac "$out/tone.flac"
# shellcheck disable=SC2086
ff $tone $stereo $flags -c:a libmp3lame -b:a 128k "$out/tone.mp3"
# shellcheck disable=SC2086
ff $tone $stereo $flags -c:a aac -b:a 96k -movflags +faststart "$out/tone_aac.mp4"
# shellcheck disable=SC2086
ff $tone $stereo $flags -c:a libopus -b:a 64k -ar 48000 "$out/tone_opus.ogg"
video="-f lavfi -i testsrc=size=64x48:rate=10:duration=2 -f lavfi -i sine=frequency=440:duration=2:sample_rate=16000"
# shellcheck disable=SC2086
ff $video $flags -c:v libx264 -preset ultrafast -g 10 -pix_fmt yuv420p -c:a aac -b:a 32k -movflags +faststart \
    "$out/av_h264.mp4"
# shellcheck disable=SC2086
ff $video $flags -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -g 10 -b:v 100k -c:a libopus -b:a 32k -ar 48000 \
    "$out/av_vp9.webm"
