/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cmd_info.c - `loom info OP [--json]`: the schema of one operator (inputs
** with dtypes and rank, outputs, attributes with type, default and whether
** required, the object class of a method with its attributes) and its
** kernels in the dispatch order the current policy gives them.
*/
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "json.h"

static const char usage[] =
    "usage: loom info OP [--json]\n"
    "  The schema of OP and its kernels in dispatch order (see LOOM_BACKENDS).\n"
    "  --json   print one JSON object (an empty dtypes list means any dtype)\n";

static void print_args(const char *title, const loom_arg_def *args, uint32_t n)
{
    char dtypes[256];
    printf("%s:\n", title);
    if (n == 0)
        printf("  (none)\n");
    for (uint32_t i = 0; i < n; i++) {
        char rank[32];
        if (args[i].ndim < 0)
            snprintf(rank, sizeof rank, "any rank");
        else
            snprintf(rank, sizeof rank, "rank %d", args[i].ndim);
        printf("  %-14s %-28s %-9s%s  %s\n", args[i].name,
               cli_dtype_list(args[i].dtypes, dtypes, sizeof dtypes), rank,
               (args[i].flags & LOOM_ARG_OPTIONAL) ? " optional" : "",
               args[i].doc != NULL ? args[i].doc : "");
    }
    /* strings: the CLI's --lines form fills a jagged u8 input and its offsets */
    for (uint32_t i = 0; i + 1 < n; i++)
        if ((args[i].flags & LOOM_ARG_JAGGED) && args[i].dtypes == LOOM_DTYPE_BIT(LOOM_DTYPE_U8)
            && strcmp(title, "inputs") == 0)
            printf("  (strings: --lines %s=FILE.txt gives %s and %s, one UTF-8 string per line)\n", args[i].name,
                   args[i].name, args[i + 1].name);
}

static void print_attrs(const char *title, const loom_attr_def *attrs, uint32_t n)
{
    char value[256];
    printf("%s:\n", title);
    if (n == 0)
        printf("  (none)\n");
    for (uint32_t i = 0; i < n; i++) {
        char dflt[300];
        if (attrs[i].flags & LOOM_ATTR_REQUIRED)
            snprintf(dflt, sizeof dflt, "required");
        else
            snprintf(dflt, sizeof dflt, "default %s", cli_attr_value(&attrs[i].dflt, value, sizeof value));
        printf("  %-14s %-7s %-20s %s\n", attrs[i].name, cli_attr_type_name(attrs[i].type), dflt,
               attrs[i].doc != NULL ? attrs[i].doc : "");
    }
}

static int info_text(const loom_op *op, const loom_op_schema *s)
{
    int64_t n = loom_op_kernel_count(op);
    char dtypes[256];

    printf("%s (version %u)\n", s->name, s->version);
    if (s->doc != NULL)
        printf("  %s\n", s->doc);
    print_args("inputs", s->inputs, s->n_inputs);
    print_args("outputs", s->outputs, s->n_outputs);
    print_attrs("attributes", s->attrs, s->n_attrs);
    if (s->object_class != NULL) {
        const loom_object_class *c = cli_find_class(s->object_class);
        char title[300];
        printf("method of object class %s%s\n", s->object_class,
               c == NULL ? " (class not loaded)" : "");
        if (c != NULL) {
            snprintf(title, sizeof title, "attributes of %s (pass with --attr; weights with --weights)", c->name);
            print_attrs(title, c->attrs, c->n_attrs);
        }
    }
    printf("kernels in dispatch order:\n");
    if (n == 0)
        printf("  (none)\n");
    for (int64_t i = 0; i < n; i++) {
        loom_kernel_info k = LOOM_KERNEL_INFO_INIT;
        if (loom_op_kernel_at(op, i, &k) != LOOM_OK)
            return cli_fail();
        printf("  %lld. %-8s %-24s pack %-10s %-5s dtypes %s%s\n", (long long)i + 1, k.backend,
               k.impl != NULL ? k.impl : "-", k.pack != NULL ? k.pack : "-",
               cli_device_name(k.device_type), cli_dtype_list(k.dtypes, dtypes, sizeof dtypes),
               cli_kernel_note(&k));
    }
    return CLI_OK;
}

static cJSON *args_json(const loom_arg_def *args, uint32_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        json_add_str(o, "name", args[i].name);
        cJSON_AddItemToObject(o, "dtypes", json_dtype_array(args[i].dtypes));
        json_add_num(o, "ndim", args[i].ndim);
        cJSON_AddItemToObject(o, "optional", cJSON_CreateBool((args[i].flags & LOOM_ARG_OPTIONAL) != 0));
        json_add_str(o, "doc", args[i].doc);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *attrs_json(const loom_attr_def *attrs, uint32_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        json_add_str(o, "name", attrs[i].name);
        json_add_str(o, "type", cli_attr_type_name(attrs[i].type));
        cJSON_AddItemToObject(o, "required", cJSON_CreateBool((attrs[i].flags & LOOM_ATTR_REQUIRED) != 0));
        cJSON_AddItemToObject(o, "default", json_attr_value(&attrs[i].dflt));
        json_add_str(o, "doc", attrs[i].doc);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static int info_json(const loom_op *op, const loom_op_schema *s)
{
    cJSON *root = cJSON_CreateObject(), *kernels = cJSON_CreateArray();
    int64_t n = loom_op_kernel_count(op);

    json_add_str(root, "name", s->name);
    json_add_num(root, "version", s->version);
    json_add_str(root, "doc", s->doc);
    cJSON_AddItemToObject(root, "inputs", args_json(s->inputs, s->n_inputs));
    cJSON_AddItemToObject(root, "outputs", args_json(s->outputs, s->n_outputs));
    cJSON_AddItemToObject(root, "attributes", attrs_json(s->attrs, s->n_attrs));
    if (s->object_class != NULL) {
        const loom_object_class *c = cli_find_class(s->object_class);
        cJSON *cls = cJSON_CreateObject();
        json_add_str(cls, "name", s->object_class);
        cJSON_AddItemToObject(cls, "attributes",
                              c != NULL ? attrs_json(c->attrs, c->n_attrs) : cJSON_CreateNull());
        cJSON_AddItemToObject(root, "object_class", cls);
    } else {
        cJSON_AddItemToObject(root, "object_class", cJSON_CreateNull());
    }
    for (int64_t i = 0; i < n; i++) {
        loom_kernel_info k = LOOM_KERNEL_INFO_INIT;
        cJSON *o;
        if (loom_op_kernel_at(op, i, &k) != LOOM_OK) {
            cJSON_Delete(root);
            cJSON_Delete(kernels);
            return cli_fail();
        }
        o = cJSON_CreateObject();
        json_add_str(o, "backend", k.backend);
        json_add_str(o, "impl", k.impl);
        json_add_str(o, "pack", k.pack);
        json_add_str(o, "device", cli_device_name(k.device_type));
        cJSON_AddItemToObject(o, "dtypes", json_dtype_array(k.dtypes));
        cJSON_AddItemToObject(o, "excluded", cJSON_CreateBool(k.excluded != 0));
        cJSON_AddItemToObject(o, "device_present", cJSON_CreateBool(k.device_present != 0));
        cJSON_AddItemToArray(kernels, o);
    }
    cJSON_AddItemToObject(root, "kernels", kernels);
    return json_emit(root);
}

int cmd_info(int argc, char **argv)
{
    const loom_op *op;
    const loom_op_schema *s;
    int json, rc = cli_json_options("info", usage, argc, argv, &json);

    if (rc != CLI_OK)
        return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
    if (optind >= argc)
        return cli_usage_error("info", usage, "which operator? (`loom list` shows them)");
    if (optind + 1 < argc)
        return cli_usage_error("info", usage, "unexpected argument '%s'", argv[optind + 1]);
    if (cli_init() != CLI_OK)
        return CLI_FAIL;
    op = loom_op_find(argv[optind]);
    if (op == NULL)
        return cli_fail();
    s = loom_op_schema_of(op);
    if (s == NULL)
        return cli_fail();
    return json ? info_json(op, s) : info_text(op, s);
}
