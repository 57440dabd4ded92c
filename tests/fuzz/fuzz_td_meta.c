/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_td_meta.c - feeds: the rl pack's reader of tensordict's memmap
** layout. The first byte chooses the mapping (private, shared, read); the
** rest is DIR/meta.json of a directory that also holds x.memmap (64 bytes),
** y.memmap (8 bytes), a nested TensorDict t/ (meta.json: batch [2], leaf
** z f32 [2] in t/z.memmap), a NonTensorData n/ (meta.json with "data") and
** a NonTensorStack s/ (four values, nested lists among them),
** so the fuzzed metadata can name real leaves and sub-directories with any
** dtype and shape. loom_object_create("rl.tensordict", from=load) reads it.
** Asserts: no sanitizer report (meta.json is read into a buffer of exactly
** its size, so a parser read past its end is a heap overflow); a failed
** load leaves no object and sets a message; a loaded dict describes itself
** (rl.td_describe) and every tensor leaf reads back (rl.td_get) with every
** byte touched; the dict indexed (every other element, NonTensorStacks
** gathered with the tensors) describes itself again.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fuzz_util.h"

static char dir[64];
static char meta_path[128];

static void put(const char *rel, const void *data, size_t n)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "wb");
    FZ_CHECK(f != NULL, "cannot write %s", p);
    FZ_CHECK(fwrite(data, 1, n, f) == n, "short write %s", p);
    fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("core,rl");
    FZ_CHECK(loom_op_find("rl.td_get") != NULL, "the rl pack did not load");
    snprintf(dir, sizeof dir, "/tmp/loom-fuzz-td-%ld", (long)getpid());
    mkdir(dir, 0755);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/t", dir);
    mkdir(sub, 0755);
    snprintf(sub, sizeof sub, "%s/n", dir);
    mkdir(sub, 0755);
    snprintf(sub, sizeof sub, "%s/s", dir);
    mkdir(sub, 0755);
    uint8_t bytes[64];
    for (int i = 0; i < 64; i++)
        bytes[i] = (uint8_t)(i * 37 + 11);
    put("x.memmap", bytes, 64);
    put("y.memmap", bytes, 8);
    put("t/z.memmap", bytes, 8);
    const char *tmeta = "{\"z\":{\"device\":\"cpu\",\"shape\":[2],\"dtype\":\"torch.float32\",\"is_nested\":false},"
                        "\"shape\":[2],\"device\":\"cpu\",\"_type\":\"<class 'tensordict._td.TensorDict'>\"}";
    put("t/meta.json", tmeta, strlen(tmeta));
    const char *nmeta = "{\"_type\":\"<class 'tensordict.tensorclass.NonTensorData'>\",\"data\":[1,\"a\",null],"
                        "\"_is_non_tensor\":true,\"_metadata\":null}";
    put("n/meta.json", nmeta, strlen(nmeta));
    const char *smeta = "{\"_type\":\"<class 'tensordict.tensorclass.NonTensorStack'>\",\"stack_dim\":0,"
                        "\"device\":null,\"data\":[[1,\"a\"],{\"k\":[2]},null,\"d\"]}";
    put("s/meta.json", smeta, strlen(smeta));
    snprintf(meta_path, sizeof meta_path, "%s/meta.json", dir);
    return 0;
}

static loom_status call(loom_object *o, const char *op, const char *key, loom_tensor **out)
{
    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    if (key != NULL)
        FZ_CHECK(loom_attrs_set_string(a, "key", key) == LOOM_OK, "key");
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    loom_tensor *outs[1] = { NULL };
    loom_status st = loom_run(op, NULL, 0, a, outs, 1, &opt);
    loom_attrs_free(a);
    *out = outs[0];
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const char *const maps[] = { "private", "shared", "read" };
    put("meta.json", data + 1, size - 1);
    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    FZ_CHECK(loom_attrs_set_string(a, "from", "load") == LOOM_OK, "from");
    FZ_CHECK(loom_attrs_set_string(a, "path", dir) == LOOM_OK, "path");
    FZ_CHECK(loom_attrs_set_string(a, "map", maps[data[0] % 3]) == LOOM_OK, "map");
    loom_object *o = NULL;
    loom_status st = loom_object_create(&o, "rl.tensordict", a, NULL);
    loom_attrs_free(a);
    if (st != LOOM_OK) {
        FZ_CHECK(o == NULL, "a failed load left an object");
        FZ_CHECK(loom_last_error()[0] != '\0', "a failed load set no message");
        fz_debug("refused: %s", loom_last_error());
        return 0;
    }
    loom_tensor *desc = NULL;
    FZ_CHECK(call(o, "rl.td_describe", NULL, &desc) == LOOM_OK, "describe: %s", loom_last_error());
    fz_touch_tensor(desc);
    cJSON *root = cJSON_ParseWithLength(loom_data(desc), (size_t)desc->shape[0]);
    FZ_CHECK(root != NULL, "describe gave invalid JSON");
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "entries")) {
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(e, "kind");
        const cJSON *key = cJSON_GetObjectItemCaseSensitive(e, "key");
        FZ_CHECK(cJSON_IsString(kind) && cJSON_IsString(key), "describe entry");
        loom_tensor *t = NULL;
        const int tensor = strcmp(kind->valuestring, "tensor") == 0;
        st = call(o, tensor ? "rl.td_get" : "rl.td_get_non_tensor", key->valuestring, &t);
        FZ_CHECK(st == LOOM_OK, "get %s: %s", key->valuestring, loom_last_error());
        fz_touch_tensor(t);
        loom_tensor_free(t);
    }
    cJSON_Delete(root);
    loom_tensor_free(desc);
    /* td[::2] when the dict has a batch dim: stacks are gathered as tensors are */
    loom_tensor *bs = NULL;
    FZ_CHECK(call(o, "rl.td_batch_size", NULL, &bs) == LOOM_OK, "batch_size: %s", loom_last_error());
    const int has_dim = bs->shape[0] > 0;
    loom_tensor_free(bs);
    if (has_dim) {
        loom_attrs *ia = NULL;
        FZ_CHECK(loom_attrs_new(&ia) == LOOM_OK, "attrs");
        const int64_t every_other[3] = { 0, INT64_MAX, 2 };
        FZ_CHECK(loom_attrs_set_ints(ia, "slice", every_other, 3) == LOOM_OK, "slice");
        loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
        opt.object = o;
        const loom_tensor *none[1] = { NULL };
        st = loom_run("rl.td_index", none, 1, ia, NULL, 0, &opt);
        loom_attrs_free(ia);
        FZ_CHECK(st == LOOM_OK, "index: %s", loom_last_error());
        FZ_CHECK(call(o, "rl.td_describe", NULL, &desc) == LOOM_OK, "describe: %s", loom_last_error());
        fz_touch_tensor(desc);
        loom_tensor_free(desc);
    }
    loom_object_free(o);
    return 0;
}
