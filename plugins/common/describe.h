/* SPDX-License-Identifier: BSD-3-Clause */
/*
** describe.h - text for error messages about tensors, shared by every pack.
*/
#ifndef LOOM_PACK_DESCRIBE_H
#define LOOM_PACK_DESCRIBE_H

#include <stddef.h>

#include "loom/plugin.h"

/* "f32[2,3]" into buf (truncated to size); returns buf. host names dtypes. */
char *pk_describe(const loom_host_api *host, const loom_tensor *t, char *buf, size_t size);

#endif
