/* SPDX-License-Identifier: BSD-3-Clause */
/*
** st_write.h - writing a safetensors file from a pack (the core's
** loom_safetensors_write is libloom's public API, which packs do not link):
** an object's tables and optimizer state saved under the names its create
** reads back.
**
** Contract: entries are written in the given order, header keys and data
** alike, with contiguous data_offsets (the layout every safetensors reader
** validates); the header is padded with spaces to a multiple of 8 bytes. The
** file is written to "<path>.tmp" and renamed over path only when complete,
** so a failed save (disk full, a bad entry) never leaves a partial file
** under path. Errors go through host->fail naming `what` and the path.
*/
#ifndef LOOM_PACK_ST_WRITE_H
#define LOOM_PACK_ST_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "loom/plugin.h"

typedef struct pk_st_entry {
    const char *name;
    loom_dtype dtype;           /* F32, F16, BF16, F64, I64, I32, I16, I8, U8 or BOOL */
    int32_t ndim;
    int64_t shape[4];
    const void *data;           /* host memory, numel * dtype size bytes */
} pk_st_entry;

loom_status pk_safetensors_write(const loom_host_api *host, const char *path, const pk_st_entry *entries,
                               int64_t n, const char *what);

#endif
