/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_util.c - see fuzz_util.h.
*/
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_util.h"

#ifndef FUZZ_PACK_DIRS
#  error "FUZZ_PACK_DIRS: the build's plugin folders, ':'-separated (tests/fuzz/meson.build)"
#endif

/* Sanitizer defaults for every target (the environment still overrides):
** the shared ASan runtime (-shared-libsan, see tests/fuzz/meson.build) ends
** up after libstdc++, which libFuzzer pulls in, in the list of needed
** libraries; that is harmless (libstdc++ defines no allocator) but ASan
** refuses to start unless told. A UBSan report must stop the run, or
** libFuzzer would not see it as a crash. */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__asan_default_options(void) { return "verify_asan_link_order=0"; }
const char *__ubsan_default_options(void) { return "halt_on_error=1:print_stacktrace=1"; }

void fz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fuzz: %s:%d: check failed: %s: ", file, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (last loom error: %s)\n", loom_last_error());
    abort();
}

void fz_debug(const char *fmt, ...)
{
    static int on = -1;
    va_list ap;
    if (on < 0)
        on = getenv("LOOM_FUZZ_DEBUG") != NULL && getenv("LOOM_FUZZ_DEBUG")[0] != '\0';
    if (!on)
        return;
    fprintf(stderr, "fuzz: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void fz_init(const char *select)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    if (select != NULL)
        setenv("LOOM_PLUGINS_SELECT", select, 1);
    /* an output the input makes huge fails cleanly instead of taking the
    ** machine's memory (libFuzzer stops at 2 GB of RSS) */
    /* FZ_MAX_ALLOC: a target's own, smaller cap (set before fz_init) */
    const char *cap = getenv("FZ_MAX_ALLOC");
    setenv("LOOM_MAX_ALLOC", cap != NULL ? cap : "256M", 1);
    o.plugin_path = select != NULL ? FUZZ_PACK_DIRS : "";
    o.no_default_dirs = 1;
    o.num_threads = 1;
    o.verbose = -1;
    loom_status st = loom_init(&o);
    FZ_CHECK(st == LOOM_OK, "loom_init: %s", loom_status_name(st));
}

/* ------------------------------------------------------------ the file */

static int memfd = -1;
static char memfd_path[64];

const char *fz_file(const void *data, size_t size)
{
    if (memfd < 0) {
        memfd = memfd_create("loom-fuzz-input", MFD_CLOEXEC);
        FZ_CHECK(memfd >= 0, "memfd_create: %s", strerror(errno));
        snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
    }
    FZ_CHECK(ftruncate(memfd, 0) == 0, "ftruncate: %s", strerror(errno));
    const char *p = data;
    size_t done = 0;
    while (done < size) {
        ssize_t w = pwrite(memfd, p + done, size - done, (off_t)done);
        FZ_CHECK(w > 0 || (w < 0 && errno == EINTR), "pwrite: %s", strerror(errno));
        if (w > 0)
            done += (size_t)w;
    }
    return memfd_path;
}

/* ----------------------------------------------- exact-size file mappings */

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);

static mmap_fn real_mmap;
static munmap_fn real_munmap;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

static void find_real(void)
{
    void *a = dlsym(RTLD_NEXT, "mmap"), *b = dlsym(RTLD_NEXT, "munmap");
    memcpy(&real_mmap, &a, sizeof a);
    memcpy(&real_munmap, &b, sizeof b);
}

#define MAX_COPIES 256
static struct { void *p; size_t n; } copies[MAX_COPIES];
static pthread_mutex_t copies_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t n_exact;

uint64_t fz_exact_maps(void) { return atomic_load(&n_exact); }

/* A malloc'd copy of the first len bytes of fd (zeros past its end, as a
** mapping reads), or NULL to let the real mmap do it. */
static void *copy_file(int fd, size_t len)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return NULL;
    char *buf = malloc(len);
    if (buf == NULL)
        return NULL;
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(fd, buf + done, len - done, (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            return NULL;
        }
        if (r == 0) {
            memset(buf + done, 0, len - done);
            break;
        }
        done += (size_t)r;
    }
    pthread_mutex_lock(&copies_lock);
    for (int i = 0; i < MAX_COPIES; i++)
        if (copies[i].p == NULL) {
            copies[i].p = buf;
            copies[i].n = len;
            pthread_mutex_unlock(&copies_lock);
            atomic_fetch_add(&n_exact, 1);
            return buf;
        }
    pthread_mutex_unlock(&copies_lock);
    /* loom maps a file for as long as it reads it: this many at once in a
    ** one-threaded target means mappings leak */
    fz_fail(__FILE__, __LINE__, "copies", "more than %d files mapped at once", MAX_COPIES);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    pthread_once(&real_once, find_real);
    if (addr == NULL && len > 0 && prot == PROT_READ && flags == MAP_PRIVATE && fd >= 0 && off == 0) {
        int saved = errno;
        void *p = copy_file(fd, len);
        errno = saved;
        if (p != NULL)
            return p;
    }
    return real_mmap(addr, len, prot, flags, fd, off);
}

int munmap(void *addr, size_t len)
{
    pthread_once(&real_once, find_real);
    pthread_mutex_lock(&copies_lock);
    for (int i = 0; i < MAX_COPIES; i++)
        if (copies[i].p != NULL && copies[i].p == addr) {
            if (copies[i].n != len)
                fz_fail(__FILE__, __LINE__, "len", "munmap of a %zu-byte file copy with length %zu",
                        copies[i].n, len);
            copies[i].p = NULL;
            pthread_mutex_unlock(&copies_lock);
            free(addr);
            return 0;
        }
    pthread_mutex_unlock(&copies_lock);
    return real_munmap(addr, len);
}

/* ------------------------------------------------------------ touching */

uint64_t fz_touch(const void *p, size_t n)
{
    const volatile unsigned char *b = p;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum = sum * 31 + b[i];
    return sum;
}

uint64_t fz_touch_tensor(const loom_tensor *t)
{
    FZ_CHECK(t != NULL, "NULL tensor");
    FZ_CHECK(t->ndim >= 0 && t->ndim <= LOOM_MAX_NDIM, "ndim %d", (int)t->ndim);
    int64_t numel = 1;
    for (int32_t d = 0; d < t->ndim; d++) {
        FZ_CHECK(t->shape[d] >= 0, "dim %d is %lld", (int)d, (long long)t->shape[d]);
        numel *= t->shape[d];
    }
    FZ_CHECK(numel == loom_numel(t), "numel %lld vs loom_numel %lld", (long long)numel,
             (long long)loom_numel(t));
    size_t item = loom_dtype_size(loom_tensor_dtype_of(t));
    FZ_CHECK(item > 0, "dtype with no size");
    size_t n = loom_tensor_nbytes(t);
    FZ_CHECK(n == (size_t)numel * item, "nbytes %zu for %lld elements of %zu bytes", n, (long long)numel, item);
    FZ_CHECK(n == 0 || loom_data(t) != NULL, "NULL data for %zu bytes", n);
    FZ_CHECK(loom_is_contiguous(t), "not contiguous");
    return n ? fz_touch(loom_data(t), n) : 0;
}

/* ------------------------------------------------------------- cursor */

uint8_t fz_u8(fz_cursor *c)
{
    if (c->n == 0)
        return 0;
    c->n--;
    return *c->p++;
}

uint32_t fz_u32(fz_cursor *c)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)fz_u8(c) << (8 * i);
    return v;
}

char *fz_str(fz_cursor *c, uint8_t sep, size_t max)
{
    size_t len = 0;
    while (len < c->n && len < max && c->p[len] != sep)
        len++;
    char *s = malloc(len + 1);
    FZ_CHECK(s != NULL, "out of memory");
    memcpy(s, c->p, len);
    s[len] = '\0';
    c->p += len;
    c->n -= len;
    if (c->n > 0 && c->p[0] == sep) {
        c->p++;
        c->n--;
    }
    return s;
}
