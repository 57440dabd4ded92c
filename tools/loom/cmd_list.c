/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cmd_list.c - `loom list [--json]`: every operator (name, version, the
** backends of its kernels in dispatch order, one-line doc) and every object
** class of every loaded pack.
*/
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "json.h"

static const char usage[] =
    "usage: loom list [--json]\n"
    "  Every operator (name, version, backends of its kernels in dispatch order,\n"
    "  one-line doc) and every object class of the loaded packs.\n"
    "  --json   print one JSON object {\"ops\": [...], \"classes\": [...]}\n";

/* "onednn,cpu": the backends of op's kernels that can run here, in
** dispatch order; those LOOM_BACKENDS excludes or whose device is absent
** follow in parentheses: "cpu (cuda: no device)". */
static void backends_of(const loom_op *op, char *buf, size_t size)
{
    int64_t n = op != NULL ? loom_op_kernel_count(op) : 0;
    char off[256] = "";
    size_t len = 0, off_len = 0;
    buf[0] = '\0';
    for (int64_t i = 0; i < n; i++) {
        loom_kernel_info k = LOOM_KERNEL_INFO_INIT;
        if (loom_op_kernel_at(op, i, &k) != LOOM_OK)
            continue;
        if (k.excluded || !k.device_present) {
            int w = snprintf(off + off_len, sizeof off - off_len, "%s%s: %s", off_len > 0 ? ", " : "", k.backend,
                             k.excluded ? "excluded" : "no device");
            if (w > 0)
                off_len = (size_t)w >= sizeof off - off_len ? sizeof off - 1 : off_len + (size_t)w;
            continue;
        }
        int w = snprintf(buf + len, size - len, "%s%s", len > 0 ? "," : "", k.backend);
        if (w > 0)
            len = (size_t)w >= size - len ? size - 1 : len + (size_t)w;
    }
    if (len == 0)
        len = (size_t)snprintf(buf, size, "-");
    if (off_len > 0 && len + 4 < size)
        snprintf(buf + len, size - len, " (%s)", off);
}

static cJSON *op_json(const loom_op_schema *s)
{
    const loom_op *op = loom_op_find(s->name);
    int64_t n = op != NULL ? loom_op_kernel_count(op) : 0;
    cJSON *o = cJSON_CreateObject(), *kernels = cJSON_CreateArray();

    json_add_str(o, "name", s->name);
    json_add_num(o, "version", s->version);
    for (int64_t i = 0; i < n; i++) {
        loom_kernel_info k = LOOM_KERNEL_INFO_INIT;
        if (loom_op_kernel_at(op, i, &k) == LOOM_OK)
            cJSON_AddItemToArray(kernels, json_str(k.backend));
    }
    cJSON_AddItemToObject(o, "kernels", kernels);
    json_add_str(o, "object_class", s->object_class);
    json_add_str(o, "doc", s->doc);
    return o;
}

static int list_json(void)
{
    cJSON *root = cJSON_CreateObject(), *ops = cJSON_CreateArray(), *classes = cJSON_CreateArray();
    int64_t n_ops = loom_op_count(), n_classes = loom_object_class_count();

    for (int64_t i = 0; i < n_ops; i++) {
        const loom_op_schema *s = loom_op_schema_at(i);
        if (s != NULL)
            cJSON_AddItemToArray(ops, op_json(s));
    }
    for (int64_t i = 0; i < n_classes; i++) {
        const loom_object_class *c = loom_object_class_at(i);
        cJSON *o = cJSON_CreateObject();
        if (c == NULL) {
            cJSON_Delete(o);
            continue;
        }
        json_add_str(o, "name", c->name);
        json_add_str(o, "doc", c->doc);
        cJSON_AddItemToArray(classes, o);
    }
    cJSON_AddItemToObject(root, "ops", ops);
    cJSON_AddItemToObject(root, "classes", classes);
    return json_emit(root);
}

static int list_text(void)
{
    int64_t n_ops = loom_op_count(), n_classes = loom_object_class_count();
    int wname = 4, wback = 8;
    char backends[256];

    for (int64_t i = 0; i < n_ops; i++) {
        const loom_op_schema *s = loom_op_schema_at(i);
        if (s == NULL)
            continue;
        backends_of(loom_op_find(s->name), backends, sizeof backends);
        if ((int)strlen(s->name) > wname)
            wname = (int)strlen(s->name);
        if ((int)strlen(backends) > wback)
            wback = (int)strlen(backends);
    }
    printf("operators (%lld):\n", (long long)n_ops);
    if (n_ops == 0)
        printf("  (none: see `loom doctor` for what the loader found)\n");
    for (int64_t i = 0; i < n_ops; i++) {
        const loom_op_schema *s = loom_op_schema_at(i);
        if (s == NULL)
            continue;
        backends_of(loom_op_find(s->name), backends, sizeof backends);
        printf("  %-*s v%-2u %-*s  %s\n", wname, s->name, s->version, wback, backends,
               s->doc != NULL ? s->doc : "");
    }
    printf("object classes (%lld):\n", (long long)n_classes);
    for (int64_t i = 0; i < n_classes; i++) {
        const loom_object_class *c = loom_object_class_at(i);
        if (c != NULL)
            printf("  %-*s %s\n", wname, c->name, c->doc != NULL ? c->doc : "");
    }
    return CLI_OK;
}

int cmd_list(int argc, char **argv)
{
    return cli_json_or_text("list", usage, argc, argv, list_json, list_text);
}
