/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cmd_doctor.c - `loom doctor [--json] [--forget PACK]`: everything needed to
** understand why an op ran where it ran or why a pack is missing: versions,
** the configuration in effect and where each setting came from, the CPU
** topology, threads, devices, the search directories with their origin,
** every file the loader looked at with what happened to it, the dependency
** graph of the packs (each dependency and whether it is satisfied), and the
** packs that vetted loading (LOOM_PROBE=1) quarantined. --forget clears the
** probe's record of a pack, so it is probed again.
*/
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"

static const char usage[] =
    "usage: loom doctor [--json]\n"
    "       loom doctor --forget PACK\n"
    "  Core and ABI versions, the configuration in effect (environment), CPU\n"
    "  topology, threads, devices, plugin search directories, every file the\n"
    "  loader saw: loaded, refused (with the reason), skipped, or no device; the\n"
    "  dependencies of each pack and whether each is satisfied; and the packs that\n"
    "  vetted loading (LOOM_PROBE=1) quarantined, with the reason.\n"
    "  --json          print one JSON object\n"
    "  --forget PACK   clear the probe's record of PACK (a path, or a file name such\n"
    "                  as vision.so) so that it is probed again at the next start\n";

/* The report is libloom's (loom_doctor_report), so hosts and the Python
** package print the same; the tool adds the ABI it was built with. */
static int doctor_text(void)
{
    size_t len = loom_doctor_report(NULL, 0);
    char *text = malloc(len + 1);
    if (text == NULL) {
        fprintf(stderr, "loom doctor: out of memory\n");
        return CLI_FAIL;
    }
    loom_doctor_report(text, len + 1);
    const char *nl = strchr(text, '\n');
    int first = nl != NULL ? (int)(nl - text) : (int)len;
    printf("%.*s (this tool was built with ABI %u.%u)\n%s", first, text, LOOM_ABI_MAJOR, LOOM_ABI_MINOR,
           nl != NULL ? nl + 1 : "");
    free(text);
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
        json_add_str(o, "result", loom_scan_result_name(e.result));
        json_add_str(o, "pack", e.pack);
        json_add_str(o, "version", e.version);
        json_add_str(o, "reason", e.reason);
        json_add_num(o, "ops", (double)e.n_ops);
        json_add_num(o, "kernels", (double)e.n_kernels);
        json_add_num(o, "classes", (double)e.n_classes);
        json_add_num(o, "live_objects", (double)e.live_objects);
        cJSON *deps = cJSON_AddArrayToObject(o, "depends");
        for (int k = 0; e.depends != NULL && e.depends[k] != NULL; k++) {
            char why[1024];
            cJSON *d = cJSON_CreateObject();
            int ok = loom_dependency_state(e.depends[k], why, sizeof why);
            json_add_str(d, "name", e.depends[k]);
            json_add_str(d, "kind", strchr(e.depends[k], '.') != NULL ? "op" : "pack");
            cJSON_AddBoolToObject(d, "satisfied", ok);
            json_add_str(d, "detail", why);
            cJSON_AddItemToArray(deps, d);
        }
        cJSON_AddItemToArray(a, o);
    }

    json_add_str(root, "probe_cache", loom_probe_cache_path());
    a = cJSON_AddArrayToObject(root, "quarantined");
    n = loom_probe_record_count();
    int64_t good = 0;
    for (int64_t i = 0; i < n; i++) {
        loom_probe_record r = LOOM_PROBE_RECORD_INIT;
        if (loom_probe_record_at(i, &r) != LOOM_OK) {
            cJSON_Delete(root);
            return cli_fail();
        }
        if (!r.quarantined) {
            good++;
            continue;
        }
        o = cJSON_CreateObject();
        json_add_str(o, "path", r.path);
        json_add_str(o, "reason", r.reason);
        json_add_num(o, "probed_at", (double)r.probed_at);
        cJSON_AddItemToArray(a, o);
    }
    json_add_num(root, "probe_passed", (double)good);
    return json_emit(root);
}

static int doctor_forget(const char *pack)
{
    int64_t n = 0;
    if (loom_probe_forget(pack, &n) != LOOM_OK)
        return cli_fail();
    printf("forgot %lld probe record%s of %s: it is probed again at the next start with LOOM_PROBE=1\n",
           (long long)n, n == 1 ? "" : "s", pack);
    return CLI_OK;
}

int cmd_doctor(int argc, char **argv)
{
    static const struct option opts[] = {
        { "json", no_argument, NULL, 'j' },
        { "forget", required_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *forget = NULL;
    int c, json = 0;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else if (c == 'f')
            forget = optarg;
        else if (c == 'h') {
            fputs(usage, stdout);
            return CLI_OK;
        } else
            return cli_bad_option("doctor", usage, c, argv);
    }
    if (optind < argc)
        return cli_usage_error("doctor", usage, "unexpected argument '%s'", argv[optind]);
    if (forget != NULL) {
        if (json)
            return cli_usage_error("doctor", usage, "--forget and --json do not go together");
        return doctor_forget(forget);   /* no loom_init: that would probe again */
    }
    if (cli_init() != CLI_OK)
        return CLI_FAIL;
    return json ? doctor_json() : doctor_text();
}
