/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_lengths.c - the 'lengths' check of the CTC decoders (ctc_lengths.h).
*/
#include "ctc_lengths.h"
#include "describe.h"

loom_status ctc_check_lengths(const loom_tensor *len, const int64_t *lengths_host, int64_t B, int64_t T,
                              const char *of)
{
    char b[160];
    if (len->ndim != 1 || len->shape[0] != B)
        return pk_host->fail(LOOM_EINVAL, "'lengths' %s must be [B] with B = %lld, the batch of '%s'",
                             pk_describe(pk_host, len, b, sizeof b), (long long)B, of);
    for (int64_t i = 0; lengths_host != NULL && i < B; i++)
        if (lengths_host[i] < 0 || lengths_host[i] > T)
            return pk_host->fail(LOOM_EINVAL, "'lengths'[%lld] = %lld is outside [0, T = %lld]", (long long)i,
                                 (long long)lengths_host[i], (long long)T);
    return LOOM_OK;
}
