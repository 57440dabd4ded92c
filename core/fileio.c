/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fileio.c - whole-file mapping and atomic whole-file writes.
**
** loom__map_file maps a file read-only and private: the bytes never change
** under the reader even if another process rewrites the path, because
** writers (loom__write_file here) replace files by rename instead of writing
** in place. An empty file cannot be mapped, so it yields a pointer to a
** static byte with nbytes 0; loom__unmap_file recognises it.
**
** loom__write_file writes into a new file next to the target (same
** directory, so the rename cannot cross file systems), fsyncs it, renames it
** over the target and fsyncs the directory: a reader sees the old file or the
** whole new one, never a partial one. On failure the temporary is removed.
**
** Every error names the path and the operating-system reason.
*/
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* What an empty file maps to: non-NULL so callers need no special case. */
static const unsigned char empty_file[1];

loom_status loom__map_file(const char *path, const void **data_out, size_t *nbytes_out)
{
    if (data_out)
        *data_out = NULL;
    if (nbytes_out)
        *nbytes_out = 0;
    if (path == NULL || data_out == NULL || nbytes_out == NULL)
        return loom__fail(LOOM_EINVAL, "map_file: path and out pointers must not be NULL");

    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return loom__fail(e == ENOENT ? LOOM_ENOENT : LOOM_EIO, "cannot open '%s': %s", path,
                          strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return loom__fail(LOOM_EIO, "cannot stat '%s': %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return loom__fail(LOOM_EIO, "cannot map '%s': not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        *data_out = empty_file;
        return LOOM_OK;
    }
    if ((uintmax_t)st.st_size > (uintmax_t)SIZE_MAX) {
        close(fd);
        return loom__fail(LOOM_EIO, "cannot map '%s': %jd bytes exceed the address space", path,
                          (intmax_t)st.st_size);
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);  /* the mapping keeps the file alive */
    if (p == MAP_FAILED)
        return loom__fail(e == ENOMEM ? LOOM_ENOMEM : LOOM_EIO, "cannot map '%s': %s", path,
                          strerror(e));
    *data_out = p;
    *nbytes_out = (size_t)st.st_size;
    return LOOM_OK;
}

void loom__unmap_file(const void *data, size_t nbytes)
{
    if (data == NULL || data == (const void *)empty_file || nbytes == 0)
        return;
    munmap((void *)data, nbytes);
}

static loom_status write_all(int fd, const void *buf, size_t n, const char *path)
{
    const char *p = buf;
    while (n > 0) {
        /* write() may move less than asked, and at most 0x7ffff000 at once */
        size_t step = n < (size_t)1 << 30 ? n : (size_t)1 << 30;
        ssize_t w = write(fd, p, step);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return loom__fail(LOOM_EIO, "cannot write '%s': %s", path, strerror(errno));
        }
        p += w;
        n -= (size_t)w;
    }
    return LOOM_OK;
}

/* Open a fresh temporary next to path. O_EXCL with a unique name, rather
** than mkstemp, so the file gets 0666 minus the umask like any new file. */
static int open_temp(const char *path, char *tmp, size_t tmp_size)
{
    static atomic_uint counter;
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned n = atomic_fetch_add(&counter, 1u);
        int len = snprintf(tmp, tmp_size, "%s.tmp.%ld.%u", path, (long)getpid(), n);
        if (len < 0 || (size_t)len >= tmp_size) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* Make the rename itself durable. Failure here does not undo the write, so
** it is ignored: the file is complete either way. */
static void sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    if (slash == NULL) {
        strcpy(dir, ".");
    } else {
        size_t len = slash == path ? 1 : (size_t)(slash - path);
        if (len >= sizeof dir)
            return;
        memcpy(dir, path, len);
        dir[len] = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

loom_status loom__write_file(const char *path, const void *const *chunks, const size_t *sizes,
                           int n_chunks)
{
    if (path == NULL || path[0] == '\0')
        return loom__fail(LOOM_EINVAL, "write_file: empty path");
    if (n_chunks < 0 || (n_chunks > 0 && (chunks == NULL || sizes == NULL)))
        return loom__fail(LOOM_EINVAL, "write_file '%s': invalid chunk list", path);

    char tmp[PATH_MAX + 64];
    int fd = open_temp(path, tmp, sizeof tmp);
    if (fd < 0)
        return loom__fail(errno == ENOENT ? LOOM_ENOENT : LOOM_EIO,
                          "cannot create a file next to '%s': %s", path, strerror(errno));

    loom_status s = LOOM_OK;
    for (int i = 0; i < n_chunks && s == LOOM_OK; i++) {
        if (sizes[i] == 0)
            continue;
        if (chunks[i] == NULL)
            s = loom__fail(LOOM_EINVAL, "write_file '%s': chunk %d is NULL", path, i);
        else
            s = write_all(fd, chunks[i], sizes[i], path);
    }
    if (s == LOOM_OK && fsync(fd) != 0)
        s = loom__fail(LOOM_EIO, "cannot sync '%s': %s", path, strerror(errno));
    if (close(fd) != 0 && s == LOOM_OK)
        s = loom__fail(LOOM_EIO, "cannot close '%s': %s", path, strerror(errno));
    if (s == LOOM_OK && rename(tmp, path) != 0)
        s = loom__fail(LOOM_EIO, "cannot replace '%s': %s", path, strerror(errno));
    if (s != LOOM_OK) {
        unlink(tmp);
        return s;
    }
    sync_parent_dir(path);
    return LOOM_OK;
}
