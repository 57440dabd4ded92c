/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cmd_td.c - `loom td info|load|save DIR`: TensorDicts in tensordict's
** memmap layout, through the rl pack's rl.tensordict object (public API
** only, as any host program would do it).
**
**   loom td info DIR [--json]              batch_size and every entry
**   loom td load DIR --out KEY=FILE.npy... leaves out as .npy files
**   loom td save DIR --batch-size 4 --in KEY=FILE.npy... [--non-tensor KEY=JSON...]
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"

static const char td_usage[] =
    "usage: loom td info DIR [--json]\n"
    "       loom td load DIR --out KEY=FILE.npy ...\n"
    "       loom td save DIR --batch-size N[,N...] --in KEY=FILE.npy ... [--non-tensor KEY=JSON ...]\n"
    "  DIR   a TensorDict in tensordict's memmap layout (TensorDict.memmap / load_memmap)\n"
    "  KEY   \"obs\", \"next.reward\" for (\"next\", \"reward\"), or a JSON list [\"next\",\"a.b\"]\n"
    "  load writes each KEY's tensor to FILE.npy; save builds a TensorDict from .npy files\n"
    "  and JSON values (NonTensorData) and writes it to DIR, leaves in parallel\n";

static loom_status call1(loom_object *o, const char *op, const loom_tensor *in, loom_tensor **out,
                         const char *n1, const char *v1, const char *n2, const char *v2)
{
    loom_attrs *a = NULL;
    loom_status st = loom_attrs_new(&a);
    if (st == LOOM_OK && n1 != NULL)
        st = loom_attrs_set_string(a, n1, v1);
    if (st == LOOM_OK && n2 != NULL)
        st = loom_attrs_set_string(a, n2, v2);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    const loom_tensor *ins[1] = { in };
    loom_tensor *outs[1] = { NULL };
    if (st == LOOM_OK)
        st = loom_run(op, ins, in != NULL ? 1 : 0, a, outs, out != NULL ? 1 : 0, &opt);
    loom_attrs_free(a);
    if (out != NULL)
        *out = outs[0];
    return st;
}

static loom_status open_dir(const char *dir, loom_object **o)
{
    loom_attrs *a = NULL;
    loom_status st = loom_attrs_new(&a);
    if (st == LOOM_OK)
        st = loom_attrs_set_string(a, "from", "load");
    if (st == LOOM_OK)
        st = loom_attrs_set_string(a, "path", dir);
    if (st == LOOM_OK)
        st = loom_object_create(o, "rl.tensordict", a, NULL);
    loom_attrs_free(a);
    return st;
}

static int td_info(const char *dir, int json)
{
    loom_object *o = NULL;
    loom_tensor *t = NULL;
    if (open_dir(dir, &o) != LOOM_OK || call1(o, "rl.td_describe", NULL, &t, NULL, NULL, NULL, NULL) != LOOM_OK) {
        loom_object_free(o);
        return cli_fail();
    }
    const char *text = loom_data(t);
    const size_t n = (size_t)t->shape[0];
    if (json) {
        printf("%.*s\n", (int)n, text);
    } else {
        cJSON *root = cJSON_ParseWithLength(text, n);
        const cJSON *bs = cJSON_GetObjectItemCaseSensitive(root, "batch_size");
        const cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
        char *b = cJSON_PrintUnformatted(bs);
        printf("%s: TensorDict, batch_size %s, %d entries\n", dir, b != NULL ? b : "?", cJSON_GetArraySize(entries));
        free(b);
        const cJSON *e;
        cJSON_ArrayForEach(e, entries) {
            const char *key = cJSON_GetObjectItemCaseSensitive(e, "key")->valuestring;
            const char *kind = cJSON_GetObjectItemCaseSensitive(e, "kind")->valuestring;
            if (strcmp(kind, "tensor") == 0) {
                char *s = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(e, "shape"));
                printf("  %-32s %-6s %s\n", key, cJSON_GetObjectItemCaseSensitive(e, "dtype")->valuestring,
                       s != NULL ? s : "?");
                free(s);
            } else {
                char *s = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(e, "value"));
                printf("  %-32s NonTensorData %.200s%s\n", key, s != NULL ? s : "?",
                       s != NULL && strlen(s) > 200 ? "..." : "");
                free(s);
            }
        }
        cJSON_Delete(root);
    }
    loom_tensor_free(t);
    loom_object_free(o);
    return CLI_OK;
}

/* KEY=VALUE into key (a copy) and a pointer to VALUE; NULL when malformed. */
static char *split_kv(const char *arg, const char **value)
{
    const char *eq = strrchr(arg, '=');
    if (eq == NULL || eq == arg || eq[1] == '\0')
        return NULL;
    /* a JSON value holds '=' rarely; a key never does: split at the first '=' */
    eq = strchr(arg, '=');
    char *key = strndup(arg, (size_t)(eq - arg));
    *value = eq + 1;
    return key;
}

static int td_load(const char *dir, int argc, char **argv)
{
    if (argc == 0)
        return cli_usage_error("td", td_usage, "load needs at least one --out KEY=FILE.npy");
    loom_object *o = NULL;
    if (open_dir(dir, &o) != LOOM_OK)
        return cli_fail();
    int rc = CLI_OK;
    for (int i = 0; i < argc && rc == CLI_OK; i++) {
        const char *file = NULL;
        char *key = strcmp(argv[i], "--out") == 0 && i + 1 < argc ? split_kv(argv[++i], &file) : NULL;
        if (key == NULL) {
            rc = cli_usage_error("td", td_usage, "'%s': expected --out KEY=FILE.npy", argv[i]);
            break;
        }
        loom_tensor *t = NULL;
        if (call1(o, "rl.td_get", NULL, &t, "key", key, NULL, NULL) != LOOM_OK || loom_npy_write(file, t) != LOOM_OK)
            rc = cli_fail();
        else
            printf("%s -> %s\n", key, file);
        loom_tensor_free(t);
        free(key);
    }
    loom_object_free(o);
    return rc;
}

static int td_save(const char *dir, int argc, char **argv)
{
    int64_t batch[LOOM_MAX_NDIM];
    int n_batch = -1;
    for (int i = 0; i + 1 < argc; i++)
        if (strcmp(argv[i], "--batch-size") == 0) {
            n_batch = 0;
            for (char *p = argv[i + 1]; *p != '\0' && n_batch < LOOM_MAX_NDIM;) {
                char *end;
                long long v = strtoll(p, &end, 10);
                if (end == p || v < 0 || (*end != ',' && *end != '\0'))
                    return cli_usage_error("td", td_usage, "--batch-size '%s': non-negative integers joined by ','",
                                           argv[i + 1]);
                batch[n_batch++] = v;
                p = *end == ',' ? end + 1 : end;
            }
        }
    if (n_batch < 0)
        return cli_usage_error("td", td_usage, "save needs --batch-size (an empty batch_size: --batch-size '')");
    if (cli_init() != CLI_OK)
        return CLI_FAIL;
    loom_attrs *a = NULL;
    loom_object *o = NULL;
    loom_status st = loom_attrs_new(&a);
    if (st == LOOM_OK && n_batch > 0)
        st = loom_attrs_set_ints(a, "batch_size", batch, n_batch);
    if (st == LOOM_OK)
        st = loom_object_create(&o, "rl.tensordict", a, NULL);
    loom_attrs_free(a);
    if (st != LOOM_OK)
        return cli_fail();
    int rc = CLI_OK;
    for (int i = 0; i < argc && rc == CLI_OK; i++) {
        if (strcmp(argv[i], "--batch-size") == 0) {
            i++;
            continue;
        }
        const int tensor = strcmp(argv[i], "--in") == 0, json = strcmp(argv[i], "--non-tensor") == 0;
        const char *value = NULL;
        char *key = (tensor || json) && i + 1 < argc ? split_kv(argv[++i], &value) : NULL;
        if (key == NULL) {
            rc = cli_usage_error("td", td_usage, "'%s': expected --in KEY=FILE.npy or --non-tensor KEY=JSON", argv[i]);
            break;
        }
        loom_tensor *t = NULL;
        if (tensor)
            st = loom_npy_read(&t, value);
        if (st == LOOM_OK)
            st = tensor ? call1(o, "rl.td_set", t, NULL, "key", key, NULL, NULL)
                        : call1(o, "rl.td_set_non_tensor", NULL, NULL, "key", key, "json", value);
        if (st != LOOM_OK)
            rc = cli_fail();
        loom_tensor_free(t);
        free(key);
    }
    if (rc == CLI_OK && call1(o, "rl.td_save", NULL, NULL, "path", dir, NULL, NULL) != LOOM_OK)
        rc = cli_fail();
    if (rc == CLI_OK)
        printf("%s: saved\n", dir);
    loom_object_free(o);
    return rc;
}

int cmd_td(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(td_usage, stdout);
        return CLI_OK;
    }
    if (argc < 3)
        return cli_usage_error("td", td_usage, "expected info, load or save and a directory");
    const char *sub = argv[1], *dir = argv[2];
    if (strcmp(sub, "info") == 0) {
        int json = argc > 3 && strcmp(argv[3], "--json") == 0;
        if (argc > 3 + json)
            return cli_usage_error("td", td_usage, "info: unexpected '%s'", argv[3 + json]);
        return cli_init() == CLI_OK ? td_info(dir, json) : CLI_FAIL;
    }
    if (strcmp(sub, "load") == 0)
        return cli_init() == CLI_OK ? td_load(dir, argc - 3, argv + 3) : CLI_FAIL;
    if (strcmp(sub, "save") == 0)
        return td_save(dir, argc - 3, argv + 3);
    return cli_usage_error("td", td_usage, "unknown td command '%s' (info, load, save)", sub);
}
