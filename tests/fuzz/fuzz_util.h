/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_util.h - what the libFuzzer targets of tests/fuzz share: loom
** initialised once with a chosen set of packs, the fuzz input as a file loom
** can open, reading every byte of a result so ASan checks its bounds, and a
** cursor that takes parameters off the front of an input.
**
** Files: libloom maps the files it reads (loom__map_file). A mapping has
** page granularity, so ASan could not see a read past the end of a file.
** fuzz_util.c therefore interposes mmap/munmap for this process: a read-only
** private mapping of a whole file (what loom__map_file asks for) becomes a
** malloc'd copy of exactly the file's size, so a read one byte past the end
** of a fuzzed file is a heap-buffer-overflow report. Every other mapping goes
** to the real mmap.
*/
#ifndef LOOM_FUZZ_UTIL_H
#define LOOM_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

/* libFuzzer's entry points (the targets define them). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Print "fuzz: <msg>" and abort: a failed harness assertion is a crash
** libFuzzer records, with the input. */
#define FZ_CHECK(cond, ...)                                                  \
    do {                                                                     \
        if (!(cond))                                                         \
            fz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                 \
    } while (0)
_Noreturn void fz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* With LOOM_FUZZ_DEBUG set, print "fuzz: <msg>" (what a seed reached, for
** whoever writes seeds: LOOM_FUZZ_DEBUG=1 fuzz_x -runs=0 corpus/x). */
void fz_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* loom_init once: the packs whose names match the comma-separated globs
** `select` (LOOM_PLUGINS_SELECT), from this build's plugin folders only;
** NULL loads no pack. One thread, quiet, LOOM_MAX_ALLOC=256M (or the
** environment's FZ_MAX_ALLOC, which a target may set first). Aborts when
** init fails. */
void fz_init(const char *select);

/* The bytes as a file loom can open: a path to a per-process memfd holding
** exactly them. The path stays the same; each call replaces the contents. */
const char *fz_file(const void *data, size_t size);

/* Files read through the exact-size copies since start-up (to check that
** the interposition is in effect). */
uint64_t fz_exact_maps(void);

/* Read every byte (ASan checks each), return a checksum nobody can drop. */
uint64_t fz_touch(const void *p, size_t n);
/* Every byte of a compact tensor, checking that its fields are sane. */
uint64_t fz_touch_tensor(const loom_tensor *t);

/* Parameters off the front of an input: each take consumes bytes, and
** returns 0 once the input is used up. */
typedef struct fz_cursor {
    const uint8_t *p;
    size_t n;
} fz_cursor;
uint8_t fz_u8(fz_cursor *c);
uint32_t fz_u32(fz_cursor *c);
/* A NUL-terminated copy of the bytes up to the next `sep` (or the end),
** at most max bytes; the caller frees it. */
char *fz_str(fz_cursor *c, uint8_t sep, size_t max);

#endif
