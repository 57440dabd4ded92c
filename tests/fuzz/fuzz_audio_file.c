/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_audio_file.c - feeds: an audio file (WAV, FLAC, OGG/Vorbis, Opus,
** anything libsndfile opens) to audio.load and audio.info of the audio
** pack, read from memory (the src input, which libsndfile reads through
** sf_open_virtual). The first 3 bytes of an input choose load's
** arguments: bit 0 normalize, bit 1 channels_first, bit 2 a frame_offset
** (byte 1), bit 3 a num_frames (byte 2 + 1); the rest is the file, in an
** exact-size heap copy so a read past its end is a heap overflow.
** Asserts: no sanitizer report; a failure sets a message naming 'src'; a
** success gives a [channels, frames] (or [frames, channels]) waveform whose
** every byte is read, and a positive sample rate.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

#define PARAM_BYTES 3

/* LeakSanitizer's suppressions for this target: Debian's libvorbis leaks
** the codec setup vorbis_info_init made when a damaged Ogg Vorbis header
** fails libsndfile's open (xiph/vorbis#125, libsndfile/libsndfile#922), a
** system library's error path, as in tests/audio/files/lsan-libvorbis.supp. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:vorbis_info_init\n"; }

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("audio");
    FZ_CHECK(loom_op_find("audio.load") != NULL, "the audio pack did not load (libsndfile missing?)");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < PARAM_BYTES)
        return 0;
    const uint8_t flags = data[0], offset = data[1], frames = data[2];
    const int64_t n = (int64_t)(size - PARAM_BYTES);
    uint8_t *copy = malloc(n > 0 ? (size_t)n : 1);
    FZ_CHECK(copy != NULL, "out of memory");
    memcpy(copy, data + PARAM_BYTES, (size_t)n);
    loom_tensor *src;
    FZ_CHECK(loom_tensor_wrap(&src, copy, LOOM_DTYPE_U8, 1, &n, NULL, NULL) == LOOM_OK, "wrap: %s", loom_last_error());
    loom_attrs *a;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    loom_attrs_set_bool(a, "normalize", flags & 1);
    loom_attrs_set_bool(a, "channels_first", (flags >> 1) & 1);
    if (flags & 4)
        loom_attrs_set_int(a, "frame_offset", offset);
    if (flags & 8)
        loom_attrs_set_int(a, "num_frames", frames + 1);
    const loom_tensor *in[1] = { src };
    loom_tensor *out[5] = { NULL };
    loom_status st = loom_run("audio.load", in, 1, a, out, 2, NULL);
    if (st == LOOM_OK) {
        FZ_CHECK(out[0]->ndim == 2 && out[1]->ndim == 0, "load gave ranks %d, %d", out[0]->ndim, out[1]->ndim);
        FZ_CHECK(*(const int64_t *)loom_data(out[1]) > 0, "sample rate %lld",
                 (long long)*(const int64_t *)loom_data(out[1]));
        fz_touch_tensor(out[0]);
        loom_tensor_free(out[0]);
        loom_tensor_free(out[1]);
    } else {
        FZ_CHECK(strstr(loom_last_error(), "src") != NULL || strstr(loom_last_error(), "frame") != NULL,
                 "the error names neither src nor the frames: %s", loom_last_error());
    }
    loom_attrs_free(a);
    for (int i = 0; i < 5; i++)     /* a non-NULL entry would be a caller's output */
        out[i] = NULL;
    if (loom_run("audio.info", in, 1, NULL, out, 5, NULL) == LOOM_OK) {
        for (int i = 0; i < 5; i++) {
            fz_touch_tensor(out[i]);
            loom_tensor_free(out[i]);
        }
    }
    loom_tensor_free(src);
    free(copy);
    return 0;
}
