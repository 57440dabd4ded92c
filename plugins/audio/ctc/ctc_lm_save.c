/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_lm_save.c - the method audio.ctc_lm_save: an audio.ctc_lm model
** written in loom's binary n-gram format (ngram_binary.h), the offline
** conversion from ARPA (`loom ctc-lm convert`). The file is written under
** a temporary name in the target's directory, flushed to disk and renamed
** over the target: a reader sees the old file or the whole new one.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctc.h"
#include "ngram_binary.h"

static loom_status lm_save_run(loom_call *call)
{
    const ctc_arpa_lm *lm = call->object;
    if (lm == NULL)
        return pk_host->fail(LOOM_EINVAL, "audio.ctc_lm_save is a method: it needs an %s object", CTC_LM_CLASS);
    const char *path = call->attrs[PK_ATTR(ctc_lm_save, path)].u.s;
    if (path == NULL || path[0] == '\0')
        return pk_host->fail(LOOM_EINVAL, "audio.ctc_lm_save: 'path' is empty");
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.partial-%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return pk_host->fail(LOOM_EINVAL, "audio.ctc_lm_save: 'path' is too long");
    FILE *f = fopen(tmp, "wb");
    if (f == NULL)
        return pk_host->fail(LOOM_EIO, "audio.ctc_lm_save: 'path' %s: cannot write: %s", path, strerror(errno));
    loom_status st = LOOM_OK;
    if (ctc_ngram_binary_write(lm, f) != 0)
        st = pk_host->fail(errno == ENOMEM ? LOOM_ENOMEM : LOOM_EIO, "audio.ctc_lm_save: 'path' %s: writing failed: %s",
                           path, strerror(errno));
    if (st == LOOM_OK && (fflush(f) != 0 || fsync(fileno(f)) != 0))
        st = pk_host->fail(LOOM_EIO, "audio.ctc_lm_save: 'path' %s: flushing failed: %s", path, strerror(errno));
    const long size = st == LOOM_OK ? ftell(f) : -1;
    if (fclose(f) != 0 && st == LOOM_OK)
        st = pk_host->fail(LOOM_EIO, "audio.ctc_lm_save: 'path' %s: closing failed: %s", path, strerror(errno));
    if (st == LOOM_OK && rename(tmp, path) != 0)
        st = pk_host->fail(LOOM_EIO, "audio.ctc_lm_save: 'path' %s: cannot replace it with the written file: %s",
                           path, strerror(errno));
    if (st != LOOM_OK) {
        remove(tmp);
        return st;
    }
    loom_tensor *out;
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 0, NULL, &out)) == LOOM_OK)
        *(int64_t *)loom_data(out) = size;
    return st;
}

const loom_kernel_desc audio_ctc_lm_save_kernels[] = {
    PK_KERNEL_CPU(ctc_lm_save_schema, "cpu", 0, lm_save_run),
};
const size_t audio_ctc_lm_save_n_kernels = PK_COUNT(audio_ctc_lm_save_kernels);
