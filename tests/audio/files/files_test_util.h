/* SPDX-License-Identifier: BSD-3-Clause */
/*
** files_test_util.h - what the files tests share: the shipped files
** (tests/data/audio/files/info.txt) and a file's bytes as a u8 tensor.
*/
#ifndef LOOM_TESTS_AUDIO_FILES_UTIL_H
#define LOOM_TESTS_AUDIO_FILES_UTIL_H

#include <stdint.h>

#include "audio_test_util.h"

typedef struct ft_file {
    char name[64];              /* "pcm16_stereo.wav" */
    char stem[64];              /* "pcm16_stereo" */
    int64_t rate, frames, channels;
    char subtype[16];
} ft_file;

/* The files of info.txt; returns how many (at most max). */
int ft_files(ft_file *out, int max);

/* The bytes of tests/data/audio/files/<name> as u8 [n] (a new tensor). */
loom_tensor *ft_bytes(const char *name);

/* The first n bytes of t (a new tensor). */
loom_tensor *ft_prefix(const loom_tensor *t, int64_t n);

#endif
