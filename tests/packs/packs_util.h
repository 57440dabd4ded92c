/* SPDX-License-Identifier: BSD-3-Clause */
/* packs_util.h - start the core on the purpose-made packs of this folder. */
#ifndef PACKS_UTIL_H
#define PACKS_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"

/* Init on LOOM_TEST_PACKS only, with the given LOOM_BACKENDS value and
** LOOM_PLUGINS_SELECT globs (NULL = environment/default). */
static inline loom_status packs_init(const char *select, const char *backends, int strict, FILE *log)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    loom_shutdown();
    if (select != NULL)
        setenv("LOOM_PLUGINS_SELECT", select, 1);
    else
        unsetenv("LOOM_PLUGINS_SELECT");
    o.plugin_path = getenv("LOOM_TEST_PACKS");
    o.no_default_dirs = 1;
    o.backends = backends;
    o.strict = strict;
    o.log_stream = log;
    o.verbose = log != NULL ? 2 : -1;
    return loom_init(&o);
}

/* The scan entry whose path ends with file, or result -1. */
static inline loom_scan_entry packs_scan(const char *file)
{
    loom_scan_entry e = LOOM_SCAN_ENTRY_INIT, none = LOOM_SCAN_ENTRY_INIT;
    none.result = -1;
    for (int64_t i = 0; i < loom_scan_count(); i++) {
        loom_scan_at(i, &e);
        size_t n = strlen(e.path), m = strlen(file);
        if (n >= m && strcmp(e.path + n - m, file) == 0)
            return e;
    }
    return none;
}

/* Fail unless the scan entry of file has this result and (when needle is
** not NULL) a reason that mentions needle. Needs cmocka included first. */
static inline void packs_expect(const char *file, int32_t result, const char *needle)
{
    loom_scan_entry e = packs_scan(file);
    if (e.result != result || (needle != NULL && strstr(e.reason, needle) == NULL))
        fail_msg("%s: result %d, reason '%s'; expected result %d mentioning '%s'", file, e.result,
                 e.result >= 0 ? e.reason : "(not scanned)", result, needle ? needle : "");
}

static inline loom_tensor *f32_tensor(float *data, int64_t n)
{
    loom_tensor *t = NULL;
    loom_tensor_wrap(&t, data, LOOM_DTYPE_F32, 1, &n, NULL, NULL);
    return t;
}

#endif
