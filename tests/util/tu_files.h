/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tu_files.h - helpers shared by the file-format tests: a scratch
** directory, raw file I/O, a seeded PRNG for reproducible corruption, and
** tensors filled with every byte pattern (NaN payloads included) so that round
** trips are checked bit for bit. Needs the core's internals (internal.h).
*/
#ifndef LOOM_TESTS_TU_FILES_H
#define LOOM_TESTS_TU_FILES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "tu_env.h"

/* A fresh directory under $TMPDIR (or /tmp); tu_rm_tree removes it again. */
static inline char *tu_scratch_make(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/loom-files-XXXXXX", base && *base ? base : "/tmp");
    char *dir = mkdtemp(tmpl);
    return dir ? strdup(dir) : NULL;
}

static inline void tu_rm_tree(char *dir)
{
    char cmd[600];
    if (dir == NULL)
        return;
    /* the directory name came from mkdtemp: no quoting issues */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    free(dir);
}

/* The scratch directory of a test group whose group fixtures are
** tu_scratch_setup and tu_scratch_teardown. */
static char *tu_scratch_dir;

static inline int tu_scratch_setup(void **state)
{
    (void)state;
    tu_scratch_dir = tu_scratch_make();
    return tu_scratch_dir ? 0 : -1;
}

static inline int tu_scratch_teardown(void **state)
{
    (void)state;
    tu_rm_tree(tu_scratch_dir);
    return 0;
}

static inline char *tu_path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static inline int tu_write_bytes(const char *path, const void *data, size_t n)
{
    /* a new file rather than a truncated one: some file systems flush a
    ** file rewritten in place at close, which makes thousands of rewrites slow */
    unlink(path);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    size_t w = n ? fwrite(data, 1, n, f) : 0;
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* The whole file in a malloc'd buffer of exactly its size (so ASan sees any
** read past the end); NULL when it cannot be read. */
static inline unsigned char *tu_read_bytes(const char *path, size_t *n)
{
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
    *n = len > 0 && fread(b, 1, (size_t)len, f) == (size_t)len ? (size_t)len : 0;
    fclose(f);
    return b;
}

/* xorshift64*: the same sequence on every machine for a given seed. */
static inline uint64_t tu_rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

static inline size_t tu_rng_below(uint64_t *s, size_t n) { return n ? (size_t)(tu_rng_next(s) % n) : 0; }

/* A new compact CPU tensor whose bytes follow a seeded pattern. */
static inline loom_tensor *tu_pattern_tensor(loom_dtype dtype, int32_t ndim, const int64_t *shape,
                                          uint64_t seed)
{
    loom_tensor *t = NULL;
    if (loom__tensor_alloc(&t, dtype, ndim, shape, loom__cpu(), true) != LOOM_OK)
        return NULL;
    unsigned char *p = loom_data(t);
    size_t n = loom__tensor_nbytes(t);
    uint64_t s = seed | 1;
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)tu_rng_next(&s);
    if (dtype == LOOM_DTYPE_BOOL)
        for (size_t i = 0; i < n; i++)
            p[i] &= 1;
    return t;
}

static inline int tu_same_shape(const loom_tensor *a, const loom_tensor *b)
{
    if (a->ndim != b->ndim || a->dtype.code != b->dtype.code || a->dtype.bits != b->dtype.bits
        || a->dtype.lanes != b->dtype.lanes)
        return 0;
    for (int32_t i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return 0;
    return 1;
}

/* A fake CUDA device whose pointers are host pointers with high bits
** flipped: dereferencing one directly faults, so a writer that forgets to
** copy device tensors to the host first is caught. */
#define TU_FAKE_DEV_MASK ((uintptr_t)0x5a5a000000000000u)

static inline void *tu_fake_ptr(const void *p) { return (void *)((uintptr_t)p ^ TU_FAKE_DEV_MASK); }
static inline int32_t tu_fake_count(void) { return 1; }
static inline void *tu_fake_alloc(int32_t id, size_t n)
{
    /* Flipped as an integer: handing fresh (uninitialised) memory to tu_fake_ptr's
    ** const parameter reads as a use of it to -Wmaybe-uninitialized. */
    (void)id;
    return (void *)((uintptr_t)malloc(n) ^ TU_FAKE_DEV_MASK);
}
static inline void tu_fake_free(int32_t id, void *p) { (void)id; free(tu_fake_ptr(p)); }
static inline loom_status tu_fake_copy(void *dst, loom_dl_device dd, const void *src, loom_dl_device sd,
                                    size_t n)
{
    memcpy(dd.device_type == LOOM_DEVICE_CUDA ? tu_fake_ptr(dst) : dst,
           sd.device_type == LOOM_DEVICE_CUDA ? tu_fake_ptr(src) : src, n);
    return LOOM_OK;
}

static inline void tu_fake_device_install(void)
{
    static const loom_device_provider fake = {
        .struct_size = sizeof fake, .device_type = LOOM_DEVICE_CUDA, .name = "fake-cuda",
        .count = tu_fake_count, .alloc = tu_fake_alloc, .free = tu_fake_free, .copy = tu_fake_copy,
    };
    static int installed;
    if (!installed++)
        loom__device_add_provider(&fake, "test");
}

/* A copy of a host tensor on the fake device (free with loom_tensor_free). */
static inline loom_tensor *tu_to_fake_device(const loom_tensor *t)
{
    loom_dl_device dev = { LOOM_DEVICE_CUDA, 0 };
    loom_tensor *d = NULL;
    tu_fake_device_install();
    return loom_tensor_copy_to(&d, t, &dev) == LOOM_OK ? d : NULL;
}

#endif /* LOOM_TESTS_TU_FILES_H */
