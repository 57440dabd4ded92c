/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rb_shared.c - the control block of a process-shared replay buffer
** (rb_shared.h).
*/
#include "rb_shared.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rb.h"

int rl_rb_shared_open(rl_rb *b)
{
    if (mkdir(b->scratch_dir, 0755) != 0 && errno != EEXIST)
        return pk_host->fail(LOOM_EIO, "%s: cannot make the directory: %s", b->scratch_dir, strerror(errno));
    size_t n = strlen(b->scratch_dir) + 32;
    char *path = malloc(n);
    if (path == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    snprintf(path, n, "%s/rb_shared.ctl", b->scratch_dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    loom_status st = LOOM_OK;
    if (fd < 0 || flock(fd, LOCK_EX) != 0)
        st = pk_host->fail(LOOM_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (st == LOOM_OK && fstat(fd, &sb) != 0)
        st = pk_host->fail(LOOM_EIO, "%s: %s", path, strerror(errno));
    const int fresh = st == LOOM_OK && sb.st_size == 0;
    if (fresh && ftruncate(fd, (off_t)sizeof(rl_rb_shared)) != 0)
        st = pk_host->fail(LOOM_EIO, "%s: cannot size it: %s", path, strerror(errno));
    if (st == LOOM_OK && !fresh && (uint64_t)sb.st_size != sizeof(rl_rb_shared))
        st = pk_host->fail(LOOM_EINVAL, "%s: %lld bytes, not a loom replay buffer control block of %zu", path,
                           (long long)sb.st_size, sizeof(rl_rb_shared));
    rl_rb_shared *c = MAP_FAILED;
    if (st == LOOM_OK) {
        c = mmap(NULL, sizeof *c, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (c == MAP_FAILED)
            st = pk_host->fail(LOOM_EIO, "%s: cannot map: %s", path, strerror(errno));
    }
    if (st == LOOM_OK && fresh) {
        memset(c, 0, sizeof *c);
        pthread_mutexattr_t ma;
        pthread_mutexattr_init(&ma);
        pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
        pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
        pthread_mutex_init(&c->lock, &ma);
        pthread_mutexattr_destroy(&ma);
        c->capacity = b->capacity;
        c->size = sizeof *c;
        __atomic_store_n(&c->magic, RL_RB_SHARED_MAGIC, __ATOMIC_RELEASE);
    } else if (st == LOOM_OK) {
        if (c->magic != RL_RB_SHARED_MAGIC || c->size != sizeof *c)
            st = pk_host->fail(LOOM_EINVAL, "%s: not a loom replay buffer control block", path);
        else if (c->capacity != b->capacity)
            st = pk_host->fail(LOOM_EINVAL, "%s: the shared buffer has max_size %lld, this one %lld", path,
                               (long long)c->capacity, (long long)b->capacity);
    }
    if (fd >= 0) {
        flock(fd, LOCK_UN);
        close(fd);
    }
    free(path);
    if (st != LOOM_OK) {
        if (c != MAP_FAILED)
            munmap(c, sizeof *c);
        return st;
    }
    b->ctl = c;
    return LOOM_OK;
}

void rl_rb_shared_close(rl_rb *b)
{
    if (b->ctl != NULL)
        munmap(b->ctl, sizeof *b->ctl);
    b->ctl = NULL;
}

int rl_rb_shared_lock(rl_rb *b)
{
    rl_rb_shared *c = b->ctl;
    int rc = pthread_mutex_lock(&c->lock);
    if (rc == EOWNERDEAD) {
        /* the holder died: what it had not published (len, cursor) was never counted */
        c->owner_died++;
        pthread_mutex_consistent(&c->lock);
        rc = 0;
    }
    if (rc != 0)
        return pk_host->fail(LOOM_EIO, "%s: cannot lock the shared buffer: %s", b->scratch_dir, strerror(rc));
    b->len = c->len;
    b->cursor = c->cursor;
    b->write_count = c->write_count;
    b->last_index = -1;              /* another process may have written last: the cursor tells */
    rl_rb_slice_cache_drop(b);
    loom_status st = LOOM_OK;
    if (b->store == NULL && c->storage_ready)
        st = rl_td_load_memmap(b->scratch_dir, RL_MAP_SHARED, NULL, &b->store);
    if (st != LOOM_OK)
        pthread_mutex_unlock(&c->lock);
    return st;
}

void rl_rb_shared_unlock(rl_rb *b, int wrote)
{
    rl_rb_shared *c = b->ctl;
    if (wrote) {
        c->len = b->len;
        c->cursor = b->cursor;
        c->write_count = b->write_count;
        if (b->store != NULL)
            c->storage_ready = 1;
    }
    pthread_mutex_unlock(&c->lock);
}
