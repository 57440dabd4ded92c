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
#include <string.h>
#include <time.h>

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

/* Whether dependency dep of a pack is satisfied now, and by what. */
static int dep_satisfied(const char *dep, char *buf, size_t size)
{
    if (strchr(dep, '.') != NULL) {
        const loom_op *op = loom_op_find(dep);
        loom_kernel_info k = LOOM_KERNEL_INFO_INIT;
        if (op == NULL) {
            snprintf(buf, size, "missing: no loaded pack provides this op");
            return 0;
        }
        if (loom_op_kernel_count(op) > 0 && loom_op_kernel_at(op, 0, &k) == LOOM_OK && k.pack != NULL)
            snprintf(buf, size, "satisfied: op registered (kernels of pack %s)", k.pack);
        else
            snprintf(buf, size, "satisfied: op registered");
        return 1;
    }
    for (int64_t i = 0; i < loom_scan_count(); i++) {
        loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
        if (loom_scan_at(i, &e) == LOOM_OK && e.pack != NULL && strcmp(e.pack, dep) == 0
            && (e.result == LOOM_SCAN_LOADED || e.result == LOOM_SCAN_NO_DEVICE)) {
            snprintf(buf, size, "satisfied: pack loaded from %s", e.path);
            return 1;
        }
    }
    snprintf(buf, size, "missing: no pack '%s' is loaded", dep);
    return 0;
}

static void print_when(int64_t t, char *buf, size_t size)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (localtime_r(&tt, &tm) == NULL || strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(buf, size, "%lld", (long long)t);
}

static const char *file_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
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
            printf("            pack %s %s: defines %lld ops, brings %lld kernels%s, %lld classes, %lld live objects\n",
                   e.pack, e.version != NULL ? e.version : "", (long long)e.n_ops, (long long)e.n_kernels,
                   e.result == LOOM_SCAN_NO_DEVICE && e.n_kernels > 0 ? " (none can run: no device)" : "",
                   (long long)e.n_classes, (long long)e.live_objects);
        if (e.reason != NULL && e.reason[0] != '\0')
            printf("            %s\n", e.reason);
    }

    /* Every pack that was read (not a skipped duplicate), with each of its
    ** dependencies and whether it is satisfied now. */
    printf("dependencies:\n");
    int shown = 0;
    for (int64_t i = 0; i < n; i++) {
        loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
        char why[1024];
        if (loom_scan_at(i, &e) != LOOM_OK)
            return cli_fail();
        if (e.pack == NULL || e.result == LOOM_SCAN_SKIPPED)
            continue;
        shown++;
        if (e.depends == NULL || e.depends[0] == NULL) {
            printf("  %-20s none\n", e.pack);
            continue;
        }
        for (int k = 0; e.depends[k] != NULL; k++) {
            dep_satisfied(e.depends[k], why, sizeof why);
            printf("  %-20s %s (%s): %s\n", k == 0 ? e.pack : "", e.depends[k],
                   strchr(e.depends[k], '.') != NULL ? "op" : "pack", why);
        }
    }
    if (shown == 0)
        printf("  (no pack)\n");

    const char *cache = loom_probe_cache_path();
    int64_t n_rec = loom_probe_record_count(), good = 0, bad = 0;
    printf("quarantined packs (vetted loading, LOOM_PROBE=1; cache %s):\n",
           cache != NULL ? cache : "none: neither XDG_CACHE_HOME nor HOME is set");
    for (int64_t i = 0; i < n_rec; i++) {
        loom_probe_record r = LOOM_PROBE_RECORD_INIT;
        char when[64];
        if (loom_probe_record_at(i, &r) != LOOM_OK)
            return cli_fail();
        if (!r.quarantined) {
            good++;
            continue;
        }
        bad++;
        print_when(r.probed_at, when, sizeof when);
        printf("  %s\n            %s (probed %s); `loom doctor --forget %s` to retry\n", r.path, r.reason, when,
               file_name(r.path));
    }
    if (bad == 0)
        printf("  (none)\n");
    if (good > 0)
        printf("  %lld pack file%s passed the probe\n", (long long)good, good == 1 ? "" : "s");
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
        cJSON *deps = cJSON_AddArrayToObject(o, "depends");
        for (int k = 0; e.depends != NULL && e.depends[k] != NULL; k++) {
            char why[1024];
            cJSON *d = cJSON_CreateObject();
            int ok = dep_satisfied(e.depends[k], why, sizeof why);
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
