/* SPDX-License-Identifier: BSD-3-Clause */
/*
** memmap_tensor.h - the one file-mapping implementation of the rl pack:
** tensordict's MemoryMappedTensor (a tensor whose bytes are a file: C
** order, little-endian, no header, bool one byte), as the rl.memmap_tensor
** object and the leaves of a TensorDict loaded from its memmap layout
** (td_memmap.c) use it.
**
** tensordict's calls and these:
**   MemoryMappedTensor.from_tensor(t, filename=f, existsok=e)  rl_mmt_create(f, n, e, t's bytes)
**   MemoryMappedTensor.empty(shape, dtype=d, filename=f)      rl_mmt_create(f, n, e, NULL): zeros
**   MemoryMappedTensor.from_filename(f, dtype, shape)          rl_mmt_open(f, n, mode)
** A created file is reserved as tensordict reserves it (O_CREAT|O_EXCL
** unless existsok; a symbolic link is refused), sized to exactly n bytes
** and mapped shared, so writes reach the file and every other mapping of it.
**
** These functions run on the pool's workers too: they never call
** pk_host->fail; a failure returns its status with the message in msg.
*/
#ifndef LOOM_RL_MEMMAP_TENSOR_H
#define LOOM_RL_MEMMAP_TENSOR_H

#include <stddef.h>

#include "td.h"

/* How a file's bytes are held. */
typedef enum rl_map_mode {
    RL_MAP_PRIVATE = 0,     /* mapped copy-on-write: writes stay in this process */
    RL_MAP_SHARED = 1,      /* mapped shared: writes reach the file and every other mapping */
    RL_MAP_READ = 2,        /* read into memory: the file may change or go afterwards */
    RL_MAP_READ_ONLY = 3    /* mapped shared without write access: writes are refused */
} rl_map_mode;

/* RL_MAP_READ copies of at least this many bytes go to an anonymous mapping
** populated at once (MAP_POPULATE) rather than malloc's: one call maps every
** page instead of a fault per page while read(2) fills it. */
#define RL_MMT_READ_MAP_MIN ((size_t)64 << 10)
/* ... and of at least this many in transparent huge pages where allowed. */
#define RL_MMT_HUGE_MIN ((size_t)2 << 20)

/* Parse "private" | "shared" | "read" | "read_only"; -1 for anything else. */
int rl_map_mode_parse(const char *name);
const char *rl_map_mode_name(rl_map_mode mode);

/* The bytes of the existing file at path, which must be a regular file of
** exactly nbytes (what = "the leaf file", source = "meta.json's dtype and
** shape" name them in messages: LOOM_ENOENT when it is missing, LOOM_EINVAL
** naming both sizes when it is shorter ("truncated") or longer). *out holds
** one reference; nbytes 0 gives a buffer without data. */
loom_status rl_mmt_open(const char *path, size_t nbytes, rl_map_mode mode, const char *what, const char *source,
                        rl_buf **out, char *msg, size_t msg_size);

/* A new file at path of nbytes, mapped shared: data's nbytes copied in, or
** zeros when data is NULL. existsok 0: an existing path is refused (and left
** as it is); 1: its content is replaced. */
loom_status rl_mmt_create(const char *path, size_t nbytes, int existsok, const void *data, rl_buf **out,
                          char *msg, size_t msg_size);

/* msync(MS_SYNC) of a shared mapping: the file holds every write when it
** returns. A buffer read into memory or mapped private has nothing to flush. */
loom_status rl_mmt_flush(const rl_buf *b, rl_map_mode mode, const char *path, char *msg, size_t msg_size);

#endif /* LOOM_RL_MEMMAP_TENSOR_H */
