/* SPDX-License-Identifier: BSD-3-Clause */
/*
** memmap_tensor.c - files mapped as tensors (memmap_tensor.h): open an
** existing file exactly as large as its dtype and shape say, create one
** (reserved, sized, mapped shared), flush a shared mapping.
*/
#include "memmap_tensor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const mode_names[] = { "private", "shared", "read", "read_only" };

int rl_map_mode_parse(const char *name)
{
    for (int i = 0; name != NULL && i < 4; i++)
        if (strcmp(name, mode_names[i]) == 0)
            return i;
    return -1;
}

const char *rl_map_mode_name(rl_map_mode mode)
{
    return (unsigned)mode < 4 ? mode_names[mode] : "?";
}

static rl_buf *buf_of(void *data, size_t nbytes, int mapped)
{
    rl_buf *b = calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    b->refs = 1;
    b->data = data;
    b->nbytes = nbytes;
    b->mapped = mapped;
    return b;
}

static int read_all(int fd, void *data, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (uint8_t *)data + got, n - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* nbytes of zeroed private memory, every page mapped now; NULL when the
** kernel refuses. From RL_MMT_HUGE_MIN on, transparent huge pages are asked
** for (THP "madvise" mode) before the pages are populated, so a 2 MiB
** range costs one fault and one clear instead of 512. */
static void *anonymous_populated(size_t nbytes)
{
    const int huge = nbytes >= RL_MMT_HUGE_MIN;
    void *p = mmap(NULL, nbytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (huge ? 0 : MAP_POPULATE), -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#if defined(MADV_HUGEPAGE) && defined(MADV_POPULATE_WRITE)
    /* advice only: a kernel without THP or MADV_POPULATE_WRITE (before
    ** 5.14) faults the pages in during the read instead */
    if (huge) {
        (void)madvise(p, nbytes, MADV_HUGEPAGE);
        (void)madvise(p, nbytes, MADV_POPULATE_WRITE);
    }
#endif
    return p;
}

loom_status rl_mmt_open(const char *path, size_t nbytes, rl_map_mode mode, const char *what, const char *source,
                        rl_buf **out, char *msg, size_t msg_size)
{
    *out = NULL;
    const int writable = mode == RL_MAP_SHARED;
    int fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        snprintf(msg, msg_size, "%s: %s cannot be opened%s: %s", path, what, writable ? " for writing" : "",
                 strerror(err));
        return err == ENOENT ? LOOM_ENOENT : LOOM_EIO;
    }
    if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != (uint64_t)nbytes) {
        snprintf(msg, msg_size, "%s: %s holds %lld bytes, but %s need %zu%s", path, what,
                 S_ISREG(sb.st_mode) ? (long long)sb.st_size : 0LL, source, nbytes,
                 !S_ISREG(sb.st_mode) ? " (not a regular file)"
                 : (uint64_t)sb.st_size < (uint64_t)nbytes ? " (truncated)" : "");
        close(fd);
        return LOOM_EINVAL;
    }
    void *data = NULL;
    int err = 0;
    /* a large copy lands in an anonymous mapping populated in one call (no
    ** page fault per 4 KiB inside read(2)); freed by munmap as a mapping */
    const int read_mapped = mode == RL_MAP_READ && nbytes >= RL_MMT_READ_MAP_MIN;
    if (nbytes > 0 && mode == RL_MAP_READ) {
        if (read_mapped) {
            data = anonymous_populated(nbytes);
        } else {
            data = malloc(nbytes);
        }
        if (data == NULL || read_all(fd, data, nbytes) != 0) {
            err = data == NULL ? ENOMEM : errno != 0 ? errno : EIO;
            if (read_mapped && data != NULL)
                munmap(data, nbytes);
            else
                free(data);
            data = MAP_FAILED;
        }
    } else if (nbytes > 0) {
        data = mmap(NULL, nbytes, mode == RL_MAP_READ_ONLY ? PROT_READ : PROT_READ | PROT_WRITE,
                    mode == RL_MAP_PRIVATE ? MAP_PRIVATE : MAP_SHARED, fd, 0);
        err = errno;
    }
    close(fd);
    if (data == MAP_FAILED) {
        snprintf(msg, msg_size, "%s: cannot %s %s: %s", path, mode == RL_MAP_READ ? "read" : "map", what,
                 strerror(err));
        return LOOM_EIO;
    }
    *out = buf_of(data, nbytes, (mode != RL_MAP_READ || read_mapped) && nbytes > 0);
    if (*out == NULL) {
        if (mode == RL_MAP_READ && !read_mapped)
            free(data);
        else if (nbytes > 0)
            munmap(data, nbytes);
        snprintf(msg, msg_size, "out of memory");
        return LOOM_ENOMEM;
    }
    return LOOM_OK;
}

loom_status rl_mmt_create(const char *path, size_t nbytes, int existsok, const void *data, rl_buf **out,
                          char *msg, size_t msg_size)
{
    *out = NULL;
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (S_ISLNK(sb.st_mode)) {
            snprintf(msg, msg_size, "%s: refusing to write a memory-mapped tensor through a symbolic link", path);
            return LOOM_EINVAL;
        }
        if (!existsok) {
            snprintf(msg, msg_size, "%s: the file already exists (existsok=true replaces its content)", path);
            return LOOM_EINVAL;
        }
        if (!S_ISREG(sb.st_mode)) {
            snprintf(msg, msg_size, "%s: exists and is not a regular file", path);
            return LOOM_EINVAL;
        }
    }
    /* O_NOFOLLOW: a link planted after the check is refused, not followed */
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (existsok ? 0 : O_EXCL), 0644);
    if (fd < 0) {
        int err = errno;
        snprintf(msg, msg_size, "%s: cannot create the file: %s", path, strerror(err));
        return err == ENOENT ? LOOM_ENOENT : LOOM_EIO;
    }
    /* truncate to 0 first: a replaced file's old bytes never show through */
    int err = 0;
    if (ftruncate(fd, 0) != 0 || ftruncate(fd, (off_t)nbytes) != 0)
        err = errno;
    void *map = NULL;
    if (err == 0 && nbytes > 0) {
        map = mmap(NULL, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
            err = errno;
    }
    close(fd);
    if (err != 0) {
        snprintf(msg, msg_size, "%s: cannot size or map the file to %zu bytes: %s", path, nbytes, strerror(err));
        return LOOM_EIO;
    }
    if (data != NULL && nbytes > 0)
        memcpy(map, data, nbytes);
    *out = buf_of(nbytes > 0 ? map : NULL, nbytes, nbytes > 0);
    if (*out == NULL) {
        if (nbytes > 0)
            munmap(map, nbytes);
        snprintf(msg, msg_size, "out of memory");
        return LOOM_ENOMEM;
    }
    return LOOM_OK;
}

loom_status rl_mmt_flush(const rl_buf *b, rl_map_mode mode, const char *path, char *msg, size_t msg_size)
{
    if (b == NULL || b->data == NULL || b->nbytes == 0 || mode != RL_MAP_SHARED)
        return LOOM_OK;
    if (msync(b->data, b->nbytes, MS_SYNC) != 0) {
        snprintf(msg, msg_size, "%s: cannot flush the mapping: %s", path, strerror(errno));
        return LOOM_EIO;
    }
    return LOOM_OK;
}
