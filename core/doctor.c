/* SPDX-License-Identifier: BSD-3-Clause */
/*
** doctor.c - loom_doctor_report: the text of `loom doctor`, made here so
** that the CLI, the Python package and any host print the same report:
** versions, the configuration in effect and where each setting came from,
** the CPU topology, threads, devices, the search directories with their
** origin, every file the loader looked at with what happened to it, the
** dependency graph of the packs (each dependency and whether it is
** satisfied now), and the packs that vetted loading (LOOM_PROBE=1)
** quarantined. Built from the public queries only, so it says nothing a
** host could not find out itself.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/* The report as it is written: into buf while it fits, counting the whole. */
typedef struct report {
    char *buf;
    size_t size, len;
} report;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void put(report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = r->len < r->size ? r->size - r->len : 0;
    int n = vsnprintf(room > 0 ? r->buf + r->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        r->len += (size_t)n;
}

const char *loom_scan_result_name(int32_t result)
{
    switch (result) {
    case LOOM_SCAN_LOADED:    return "loaded";
    case LOOM_SCAN_REFUSED:   return "refused";
    case LOOM_SCAN_SKIPPED:   return "skipped";
    case LOOM_SCAN_NO_DEVICE: return "no device";
    default:                  return "unknown";
    }
}

static const char *device_type_name(int32_t type)
{
    switch (type) {
    case LOOM_DEVICE_CPU:          return "cpu";
    case LOOM_DEVICE_CUDA:         return "cuda";
    case LOOM_DEVICE_CUDA_HOST:    return "cuda_host";
    case LOOM_DEVICE_CUDA_MANAGED: return "cuda_managed";
    default:                       return "unknown";
    }
}

/* Multi-line text with every line indented. */
static void put_indented(report *r, const char *text, const char *indent)
{
    const char *p = text;
    while (p != NULL && *p != '\0') {
        const char *nl = strchr(p, '\n');
        int len = nl != NULL ? (int)(nl - p) : (int)strlen(p);
        put(r, "%s%.*s\n", indent, len, p);
        p = nl != NULL ? nl + 1 : NULL;
    }
}

int loom_dependency_state(const char *dep, char *buf, size_t size)
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

static void format_when(int64_t t, char *buf, size_t size)
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

static void put_devices(report *r)
{
    put(r, "devices:\n");
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info d = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &d) == LOOM_OK)
            put(r, "  %s:%d  %s\n", d.kind != NULL ? d.kind : device_type_name(d.device.device_type),
                d.device.device_id, d.description != NULL ? d.description : "");
    }
    put(r, "plugin search directories, in order:\n");
    int64_t n = loom_search_dir_count();
    if (n == 0)
        put(r, "  (none)\n");
    for (int64_t i = 0; i < n; i++) {
        const char *origin = NULL;
        const char *dir = loom_search_dir_at(i, &origin);
        put(r, "  %s  (%s)\n", dir != NULL ? dir : "?", origin != NULL ? origin : "?");
    }
}

static void put_files(report *r)
{
    int64_t n = loom_scan_count();
    put(r, "files seen:\n");
    if (n == 0)
        put(r, "  (none)\n");
    for (int64_t i = 0; i < n; i++) {
        loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
        if (loom_scan_at(i, &e) != LOOM_OK)
            continue;
        put(r, "  %-9s %s\n", loom_scan_result_name(e.result), e.path != NULL ? e.path : "?");
        if (e.pack != NULL)
            put(r, "            pack %s %s: defines %lld ops, brings %lld kernels%s, %lld classes, %lld live objects\n",
                e.pack, e.version != NULL ? e.version : "", (long long)e.n_ops, (long long)e.n_kernels,
                e.result == LOOM_SCAN_NO_DEVICE && e.n_kernels > 0 ? " (none can run: no device)" : "",
                (long long)e.n_classes, (long long)e.live_objects);
        if (e.reason != NULL && e.reason[0] != '\0')
            put(r, "            %s\n", e.reason);
    }

    /* Every pack that was read (not a skipped duplicate), with each of its
    ** dependencies and whether it is satisfied now. */
    put(r, "dependencies:\n");
    int shown = 0;
    for (int64_t i = 0; i < n; i++) {
        loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
        char why[1024];
        if (loom_scan_at(i, &e) != LOOM_OK || e.pack == NULL || e.result == LOOM_SCAN_SKIPPED)
            continue;
        shown++;
        if (e.depends == NULL || e.depends[0] == NULL) {
            put(r, "  %-20s none\n", e.pack);
            continue;
        }
        for (int k = 0; e.depends[k] != NULL; k++) {
            loom_dependency_state(e.depends[k], why, sizeof why);
            put(r, "  %-20s %s (%s): %s\n", k == 0 ? e.pack : "", e.depends[k],
                strchr(e.depends[k], '.') != NULL ? "op" : "pack", why);
        }
    }
    if (shown == 0)
        put(r, "  (no pack)\n");
}

static void put_quarantine(report *r)
{
    const char *cache = loom_probe_cache_path();
    int64_t n_rec = loom_probe_record_count(), good = 0, bad = 0;
    put(r, "quarantined packs (vetted loading, LOOM_PROBE=1; cache %s):\n",
        cache != NULL ? cache : "none: neither XDG_CACHE_HOME nor HOME is set");
    for (int64_t i = 0; i < n_rec; i++) {
        loom_probe_record rec = LOOM_PROBE_RECORD_INIT;
        char when[64];
        if (loom_probe_record_at(i, &rec) != LOOM_OK)
            continue;
        if (!rec.quarantined) {
            good++;
            continue;
        }
        bad++;
        format_when(rec.probed_at, when, sizeof when);
        put(r, "  %s\n            %s (probed %s); `loom doctor --forget %s` to retry\n", rec.path, rec.reason, when,
            file_name(rec.path));
    }
    if (bad == 0)
        put(r, "  (none)\n");
    if (good > 0)
        put(r, "  %lld pack file%s passed the probe\n", (long long)good, good == 1 ? "" : "s");
}

size_t loom_doctor_report(char *buf, size_t size)
{
    report r = { .buf = buf, .size = buf != NULL ? size : 0, .len = 0 };
    uint32_t abi = loom_abi_version();
    if (r.size > 0)
        buf[0] = '\0';
    put(&r, "loom %s, ABI %u.%u\n", loom_version(), abi >> 16, abi & 0xffffu);
    put(&r, "configuration:\n");
    for (int64_t i = 0; i < loom_config_count(); i++)
        put(&r, "  %s\n", loom_config_at(i));
    put(&r, "CPU topology:\n");
    put_indented(&r, loom_cpu_topology(), "  ");
    put(&r, "threads: %d\n", loom_num_threads());
    put_devices(&r);
    put_files(&r);
    put_quarantine(&r);
    return r.len;
}
