/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_npy.c - feeds: the input as a whole .npy file, to the .npy reader
** twice, from memory (loom_npy_read_memory over libFuzzer's exact-size
** buffer) and from a file (loom_npy_read, through fuzz_util's exact-size
** file copy).
** Asserts: no sanitizer report; both reads agree (status, dtype, shape,
** bytes); a failure leaves *out NULL and sets a message; a success is a
** sane compact CPU tensor whose every byte can be read, and whose byte count
** fits in the input (the reader never invents data).
*/
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init(NULL);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    loom_tensor *mem = (loom_tensor *)1, *file = (loom_tensor *)1;
    loom_status sm = loom_npy_read_memory(&mem, data, size, "fuzz.npy");
    if (sm != LOOM_OK) {
        FZ_CHECK(mem == NULL, "failed read left a tensor");
        FZ_CHECK(loom_last_error()[0] != '\0', "failure %s without a message", loom_status_name(sm));
    }
    loom_status sf = loom_npy_read(&file, fz_file(data, size));
    FZ_CHECK(sf == sm, "memory read %s, file read %s", loom_status_name(sm), loom_status_name(sf));
    if (sm == LOOM_OK) {
        FZ_CHECK(mem->device.device_type == LOOM_DEVICE_CPU, "not a CPU tensor");
        size_t n = loom_tensor_nbytes(mem);
        FZ_CHECK(n <= size, "%zu bytes of data from a %zu-byte file", n, size);
        fz_touch_tensor(mem);
        fz_touch_tensor(file);
        FZ_CHECK(mem->ndim == file->ndim && memcmp(&mem->dtype, &file->dtype, sizeof mem->dtype) == 0
                     && memcmp(mem->shape, file->shape, (size_t)mem->ndim * sizeof *mem->shape) == 0
                     && loom_tensor_nbytes(file) == n && (n == 0 || memcmp(loom_data(mem), loom_data(file), n) == 0),
                 "memory and file reads differ");
    }
    loom_tensor_free(mem);
    loom_tensor_free(file);
    return 0;
}
