/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_safetensors.c - feeds: the input as a whole safetensors file to
** loom_safetensors_open (read through fuzz_util's exact-size file copy, so
** a read past the end of the file is a heap overflow), then walks every
** tensor with loom_safetensors_count / _name / _get, and closes.
** Asserts: no sanitizer report; a failed open leaves *out NULL and sets a
** message; an open file lists unique names in strcmp order, each found by
** _get as a sane compact CPU tensor lying inside the file (or in an aligned
** copy) whose every byte can be read; names that are not listed, and
** indices out of range, are refused.
*/
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init(NULL);
    /* the interposition must be in effect, or overreads go unseen */
    static const char empty[] = "\x02\0\0\0\0\0\0\0{}";
    loom_safetensors *st = NULL;
    uint64_t before = fz_exact_maps();
    FZ_CHECK(loom_safetensors_open(&st, fz_file(empty, sizeof empty - 1)) == LOOM_OK, "empty file refused");
    FZ_CHECK(fz_exact_maps() == before + 1, "loom__map_file did not go through the exact-size copy");
    loom_safetensors_close(st);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    loom_safetensors *st = (loom_safetensors *)1;
    loom_status s = loom_safetensors_open(&st, fz_file(data, size));
    if (s != LOOM_OK) {
        FZ_CHECK(st == NULL, "failed open left a handle");
        FZ_CHECK(loom_last_error()[0] != '\0', "failure %s without a message", loom_status_name(s));
        return 0;
    }
    FZ_CHECK(st != NULL, "open succeeded without a handle");
    const int64_t n = loom_safetensors_count(st);
    FZ_CHECK(n >= 0 && (uint64_t)n <= size, "%lld tensors in %zu bytes", (long long)n, size);
    uint64_t total = 0;
    const char *prev = NULL;
    for (int64_t i = 0; i < n; i++) {
        const char *name = loom_safetensors_name(st, i);
        FZ_CHECK(name != NULL, "no name at index %lld", (long long)i);
        FZ_CHECK(prev == NULL || strcmp(prev, name) < 0, "names out of order or repeated at %lld", (long long)i);
        prev = name;
        const loom_tensor *t = NULL;
        FZ_CHECK(loom_safetensors_get(st, name, &t) == LOOM_OK && t != NULL, "listed tensor not found");
        FZ_CHECK(t->device.device_type == LOOM_DEVICE_CPU && t->byte_offset == 0 && t->strides == NULL,
                 "not a compact CPU tensor");
        size_t nb = loom_tensor_nbytes(t);
        size_t item = loom_dtype_size(loom_tensor_dtype_of(t));
        FZ_CHECK(nb == 0 || (uintptr_t)loom_data(t) % item == 0, "misaligned data");
        total += nb;
        fz_touch_tensor(t);
    }
    FZ_CHECK(total + 8 <= size, "%llu bytes of tensors in a %zu-byte file", (unsigned long long)total, size);
    FZ_CHECK(loom_safetensors_name(st, -1) == NULL && loom_safetensors_name(st, n) == NULL,
             "index out of range answered");
    const loom_tensor *t = (const loom_tensor *)1;
    char missing[64];
    snprintf(missing, sizeof missing, "%s~", prev != NULL ? prev : "");
    if (prev == NULL || strlen(prev) < 60)
        FZ_CHECK(loom_safetensors_get(st, missing, &t) != LOOM_OK && t == NULL, "unlisted name found");
    loom_safetensors_close(st);
    return 0;
}
