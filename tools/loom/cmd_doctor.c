/*
** cmd_doctor.c - `loom doctor [--json]`: everything needed to understand
** why an op ran where it ran or why a pack is missing: versions, the
** configuration in effect and where each setting came from, the CPU
** topology, threads, devices, the search directories with their origin, and
** every file the loader looked at with what happened to it.
*/
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "json.h"

static const char usage[] =
    "usage: loom doctor [--json]\n"
    "  Core and ABI versions, the configuration in effect (environment), CPU\n"
    "  topology, threads, devices, plugin search directories, and every file the\n"
    "  loader saw: loaded, refused (with the reason), skipped, or no device.\n"
    "  --json   print one JSON object\n";

static const char *scan_result_name(int32_t r)
{
    switch (r) {
    case LOOM_SCAN_LOADED:    return "loaded";
    case LOOM_SCAN_REFUSED:   return "refused";
    case LOOM_SCAN_SKIPPED:   return "skipped";
    case LOOM_SCAN_NO_DEVICE: return "no device";
    default:                  return "unknown";
    }
}

/* Print multi-line text with every line indented. */
static void print_indented(const char *text, const char *indent)
{
    const char *p = text;
    while (p != NULL && *p != '\0') {
        const char *nl = strchr(p, '\n');
        int len = nl != NULL ? (int)(nl - p) : (int)strlen(p);
        printf("%s%.*s\n", indent, len, p);
        p = nl != NULL ? nl + 1 : NULL;
    }
}

static int doctor_text(void)
{
    uint32_t abi = loom_abi_version();
    int64_t n;

    printf("loom %s, ABI %u.%u (this tool was built with ABI %u.%u)\n", loom_version(),
           abi >> 16, abi & 0xffffu, LOOM_ABI_MAJOR, LOOM_ABI_MINOR);
    printf("configuration:\n");
    n = loom_config_count();
    for (int64_t i = 0; i < n; i++)
        printf("  %s\n", loom_config_at(i));
    printf("CPU topology:\n");
    print_indented(loom_cpu_topology(), "  ");
    printf("threads: %d\n", loom_num_threads());

    printf("devices:\n");
    n = loom_device_count();
    for (int64_t i = 0; i < n; i++) {
        loom_device_info d = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &d) != LOOM_OK)
            return cli_fail();
        printf("  %s:%d  %s\n", d.kind != NULL ? d.kind : cli_device_name(d.device.device_type),
               d.device.device_id, d.description != NULL ? d.description : "");
    }

    printf("plugin search directories, in order:\n");
    n = loom_search_dir_count();
    if (n == 0)
        printf("  (none)\n");
    for (int64_t i = 0; i < n; i++) {
        const char *origin = NULL;
        const char *dir = loom_search_dir_at(i, &origin);
        printf("  %s  (%s)\n", dir != NULL ? dir : "?", origin != NULL ? origin : "?");
    }

    printf("files seen:\n");
    n = loom_scan_count();
    if (n == 0)
        printf("  (none)\n");
    for (int64_t i = 0; i < n; i++) {
        loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
        if (loom_scan_at(i, &e) != LOOM_OK)
            return cli_fail();
        printf("  %-9s %s\n", scan_result_name(e.result), e.path != NULL ? e.path : "?");
        if (e.pack != NULL)
            printf("            pack %s %s: %lld ops, %lld kernels, %lld classes, %lld live objects\n",
                   e.pack, e.version != NULL ? e.version : "", (long long)e.n_ops,
                   (long long)e.n_kernels, (long long)e.n_classes, (long long)e.live_objects);
        if (e.reason != NULL && e.reason[0] != '\0')
            printf("            %s\n", e.reason);
    }
    return CLI_OK;
}

static int doctor_json(void)
{
    cJSON *root = cJSON_CreateObject(), *a, *o;
    uint32_t abi = loom_abi_version();
    char abi_text[32];
    int64_t n;

    json_add_str(root, "version", loom_version());
    snprintf(abi_text, sizeof abi_text, "%u.%u", abi >> 16, abi & 0xffffu);
    json_add_str(root, "abi_version", abi_text);

    a = cJSON_AddArrayToObject(root, "config");
    n = loom_config_count();
    for (int64_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, json_str(loom_config_at(i)));
    json_add_str(root, "cpu_topology", loom_cpu_topology());
    json_add_num(root, "threads", loom_num_threads());

    a = cJSON_AddArrayToObject(root, "devices");
    n = loom_device_count();
    for (int64_t i = 0; i < n; i++) {
        loom_device_info d = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &d) != LOOM_OK) {
            cJSON_Delete(root);
            return cli_fail();
        }
        o = cJSON_CreateObject();
        json_add_str(o, "kind", d.kind);
        json_add_num(o, "device_type", d.device.device_type);
        json_add_num(o, "device_id", d.device.device_id);
        json_add_str(o, "description", d.description);
        cJSON_AddItemToArray(a, o);
    }

    a = cJSON_AddArrayToObject(root, "search_dirs");
    n = loom_search_dir_count();
    for (int64_t i = 0; i < n; i++) {
        const char *origin = NULL;
        const char *dir = loom_search_dir_at(i, &origin);
        o = cJSON_CreateObject();
        json_add_str(o, "path", dir);
        json_add_str(o, "origin", origin);
        cJSON_AddItemToArray(a, o);
    }

    a = cJSON_AddArrayToObject(root, "files");
    n = loom_scan_count();
    for (int64_t i = 0; i < n; i++) {
        loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
        if (loom_scan_at(i, &e) != LOOM_OK) {
            cJSON_Delete(root);
            return cli_fail();
        }
        o = cJSON_CreateObject();
        json_add_str(o, "path", e.path);
        json_add_str(o, "result", scan_result_name(e.result));
        json_add_str(o, "pack", e.pack);
        json_add_str(o, "version", e.version);
        json_add_str(o, "reason", e.reason);
        json_add_num(o, "ops", (double)e.n_ops);
        json_add_num(o, "kernels", (double)e.n_kernels);
        json_add_num(o, "classes", (double)e.n_classes);
        json_add_num(o, "live_objects", (double)e.live_objects);
        cJSON_AddItemToArray(a, o);
    }
    return json_emit(root);
}

int cmd_doctor(int argc, char **argv)
{
    return cli_json_or_text("doctor", usage, argc, argv, doctor_json, doctor_text);
}
