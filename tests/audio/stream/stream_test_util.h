/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_test_util.h - what the audio.stream_reader tests share: the test
** media, made once per test program by tools/gen_stream_media.sh with the
** ffmpeg CLI into a temporary folder (the tests skip, saying so, where the
** CLI is missing); the CLI's own decode of a file as the reference; and
** short-hands for a reader object and its methods. Public API only. The
** build makes the media once (LOOM_STREAM_MEDIA names its folder); the
** tests make them themselves when run without it.
*/
#ifndef LOOM_TESTS_STREAM_TEST_UTIL_H
#define LOOM_TESTS_STREAM_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

/* cmocka group setup/teardown: tu_setup, then the media (st_have_media()
** says whether they were made); teardown removes them. */
int st_setup(void **state);
int st_teardown(void **state);
int st_have_media(void);
/* Skips the calling test (cmocka skip) when there are no media. */
#define ST_NEED_MEDIA()                                                                  \
    do {                                                                                 \
        if (!st_have_media()) {                                                          \
            fprintf(stderr, "skipped: the ffmpeg CLI is not installed (test media are made with it)\n"); \
            skip();                                                                      \
        }                                                                                \
    } while (0)

/* The path of a test medium ("tone.wav"), in a static buffer per call slot. */
const char *st_media(const char *name);
/* The bytes of a file (malloc'd; *n its size); fails the test when unreadable. */
uint8_t *st_read_file(const char *path, size_t *n);
/* The stdout of `ffmpeg -nostdin -loglevel error ARGS` (malloc'd); fails on error. */
uint8_t *st_ffmpeg(size_t *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A reader on attrs "k=v;k=v" (class attributes); fails the test on error. */
loom_object *st_reader(const char *attrs);
/* The same on a device (loom_object_options.device). */
loom_object *st_reader_on(const char *attrs, loom_dl_device device);
/* Run a method with attrs "k=v;..." ("\\;": a ';' inside a value; NULL: none); the status (outputs
** filled up to n_out). */
loom_status st_call(loom_object *r, const char *op, const char *attrs, loom_tensor **out, int32_t n_out);
/* st_call with input tensors. */
loom_status st_call_in(loom_object *r, const char *op, const char *attrs, const loom_tensor *const *in, int32_t n_in,
                       loom_tensor **out, int32_t n_out);
/* An audio.stream_writer on attrs "k=v;..." (NULL: memory needs format, so
** give it); fails the test on error. */
loom_object *st_writer(const char *attrs);
/* 1 when ffprobe and `ffmpeg -f null` read the whole file without a word
** on stderr (-v error); 1 also when the CLI is missing (said once). */
int st_cli_accepts(const char *path);
/* The i64 scalar output of a method (fails the test on error). */
int64_t st_call_i64(loom_object *r, const char *op, const char *attrs);
/* Every chunk of output `output` until the source ends (fill_buffer, then
** pop one chunk; at the end, pop what is left): the concatenated bytes and
** the chunks' frame counts and pts (up to max_chunks). Chunks of a reader
** on a device are copied to the host. */
typedef struct st_chunks {
    uint8_t *bytes;
    size_t n_bytes;
    int64_t n_chunks;
    int64_t frames[4096];
    double pts[4096];
    int dtype;
} st_chunks;
void st_read_all(loom_object *r, int32_t n_outputs, int32_t output, st_chunks *out);
void st_chunks_free(st_chunks *c);

#endif /* LOOM_TESTS_STREAM_TEST_UTIL_H */
