/* SPDX-License-Identifier: BSD-3-Clause */
/*
** loader.c - discovery and loading of operator packs.
**
** Search order: the loom_init plugin_path option or LOOM_PLUGIN_PATH, then
** either the build tree, when libloom runs from it (and nothing else: a
** build never loads stale installed packs unless the plugin path names
** them), or the directory next to libloom (<libdir>/loom/plugins, found with
** dladdr) and the configured install directory.
** In each directory every *.so is considered in name order: every file is
** opened and its descriptor read first, then the inits run in that order,
** except that a pack waits for the packs and ops it depends on (ABI 1.1
** depends; see "dependencies" below). A pack is refused with one line naming
** the file and the reason; a refused pack changes nothing. The first pack of
** a name wins, so LOOM_PLUGIN_PATH overrides.
** Likewise the first pack to register an op holds its definition: a later
** pack that defines it differently (or repeats a kernel or an object class
** of an earlier pack) still loads, without those registrations; its scan
** entry says "loaded with N registrations refused: ..." naming both packs
** and, for the earlier one, the directory and origin it was found through
** (see registry.c).
** LOOM_PLUGINS_SELECT/DISABLE globs match the file name without ".so" (by
** convention the pack's name: core.so, core-cuda.so), before the file is
** opened: a filtered pack runs no code at all. So does a CUDA pack (one
** that links a CUDA library) on a host without a CUDA driver or device: the
** CUDA gate (cuda_gate.c) reads its ELF dynamic section and skips it with
** the reason, unless LOOM_CUDA_GATE=0. With LOOM_PROBE=1 a file is vetted
** in a child process before the host opens it (probe.c).
*/
#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "registry.h"

typedef struct scan_rec {
    char *path, *pack, *version, *reason;
    int32_t result;
    loom_status status;         /* why it was refused (loom_load_pack's return) */
    loom__pack *loaded;
    dev_t dev;
    ino_t ino;
    char **depends;             /* the descriptor's depends, copied: NULL-terminated, or NULL */
    bool cuda_gated;            /* skipped unopened: a CUDA pack where CUDA cannot run */
} scan_rec;

static scan_rec *scans;
static int64_t n_scans, cap_scans;

typedef struct search_dir { char *path; const char *origin; } search_dir;
static search_dir *dirs;
static int64_t n_dirs, cap_dirs;

/* A pack file opened and described, waiting for its init during a scan. */
typedef struct candidate {
    int64_t scan;               /* its scan_rec (an index: scans may move) */
    void *lib;
    const loom_plugin_desc *desc;
    const char *origin;         /* why it holds what it registers, for messages */
    bool pending;
    bool reported;              /* its settlement was logged */
    bool probe_init;            /* LOOM_PROBE: its init is still to be probed (it has dependencies) */
} candidate;

static scan_rec *add_scan(const char *path)
{
    if (n_scans == cap_scans) {
        int64_t cap = cap_scans ? 2 * cap_scans : 32;
        scan_rec *p = realloc(scans, (size_t)cap * sizeof *p);
        if (p == NULL)
            return NULL;
        scans = p;
        cap_scans = cap;
    }
    memset(&scans[n_scans], 0, sizeof scans[n_scans]);
    if ((scans[n_scans].path = loom__strdup(path)) == NULL)
        return NULL;
    return &scans[n_scans++];
}

static char *vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    int n;
    char *text;

    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text != NULL)
        vsnprintf(text, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return text;
}

static void set_reason(scan_rec *r, int32_t result, const char *fmt, ...) LOOM_PRINTF(3, 4);
static void set_reason(scan_rec *r, int32_t result, const char *fmt, ...)
{
    va_list ap;
    char *text;

    va_start(ap, fmt);
    text = vformat(fmt, ap);
    va_end(ap);
    free(r->reason);
    r->reason = text;   /* NULL (out of memory) reads as "" */
    r->result = result;
}

/* A growing string for reasons made of parts. */
typedef struct strbuf { char *s; size_t len; } strbuf;

static void sb_add(strbuf *b, const char *fmt, ...) LOOM_PRINTF(2, 3);
static void sb_add(strbuf *b, const char *fmt, ...)
{
    va_list ap;
    char *part, *grown;
    size_t n;

    va_start(ap, fmt);
    part = vformat(fmt, ap);
    va_end(ap);
    if (part == NULL)
        return;
    n = strlen(part);
    grown = realloc(b->s, b->len + n + 3);
    if (grown != NULL) {
        b->s = grown;
        if (b->len > 0) {
            memcpy(b->s + b->len, "; ", 2);
            b->len += 2;
        }
        memcpy(b->s + b->len, part, n + 1);
        b->len += n;
    }
    free(part);
}

static void add_dir(const char *path, const char *origin)
{
    char real[PATH_MAX];

    if (path == NULL || path[0] == '\0')
        return;
    if (strlen(path) >= sizeof real) {
        loom__log(0, "plugin directory '%.64s...' (%s) is longer than PATH_MAX (%d bytes); not searched", path,
                  origin, PATH_MAX);
        return;
    }
    if (realpath(path, real) == NULL)
        snprintf(real, sizeof real, "%s", path);   /* shown in doctor as given */
    for (int64_t i = 0; i < n_dirs; i++)
        if (strcmp(dirs[i].path, real) == 0)
            return;
    if (n_dirs == cap_dirs) {
        int64_t cap = cap_dirs ? 2 * cap_dirs : 16;
        search_dir *grown = realloc(dirs, (size_t)cap * sizeof *grown);
        if (grown == NULL) {
            loom__log(0, "out of memory: plugin directory %s (%s) not searched", real, origin);
            return;
        }
        dirs = grown;
        cap_dirs = cap;
    }
    if ((dirs[n_dirs].path = loom__strdup(real)) == NULL) {
        loom__log(0, "out of memory: plugin directory %s (%s) not searched", real, origin);
        return;
    }
    dirs[n_dirs].origin = origin;
    n_dirs++;
}

/* Directory of the file that contains libloom's code, or "". */
static void core_dir(char *buf, size_t size)
{
    Dl_info info;
    buf[0] = '\0';
    if (dladdr((void *)(uintptr_t)&core_dir, &info) != 0 && info.dli_fname != NULL) {
        char real[PATH_MAX];
        if (realpath(info.dli_fname, real) != NULL) {
            char *slash = strrchr(real, '/');
            if (slash != NULL)
                *slash = '\0';
            snprintf(buf, size, "%s", real);
        }
    }
}

static void collect_dirs(void)
{
    char here[PATH_MAX], next[PATH_MAX + 32];

    if (loom__cfg.plugin_path != NULL) {
        char *copy = loom__strdup(loom__cfg.plugin_path), *save = NULL;
        if (copy == NULL)
            loom__log(0, "out of memory: the plugin path (%s) is not searched", loom__cfg.plugin_path_origin);
        for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d != NULL; d = strtok_r(NULL, ":", &save))
            add_dir(d, loom__cfg.plugin_path_origin);
        free(copy);
    }
    if (loom__cfg.no_default_dirs)
        return;
    core_dir(here, sizeof here);
    /* The build tree, when this libloom (or the test binary holding the
    ** core) lives inside it: packs sit in <build>/plugins/<domain>/. A
    ** build-tree libloom searches only the build tree's packs (after the
    ** plugin path), so a pack developer never runs stale installed kernels
    ** by accident; installed packs are searched from there only when the
    ** plugin path names them. */
    char build_root[PATH_MAX];
    snprintf(build_root, sizeof build_root, "%s", LOOM_BUILD_PLUGIN_DIR);
    char *slash = strrchr(build_root, '/');
    if (slash != NULL)
        *slash = '\0';
    size_t root_len = strlen(build_root);
    if (here[0] != '\0' && root_len > 0 && strncmp(here, build_root, root_len) == 0
        && (here[root_len] == '/' || here[root_len] == '\0')) {
        DIR *d = opendir(LOOM_BUILD_PLUGIN_DIR);
        struct dirent *e;
        char sub[PATH_MAX + 300];
        add_dir(LOOM_BUILD_PLUGIN_DIR, "build tree");
        while (d != NULL && (e = readdir(d)) != NULL) {
            struct stat sb;
            if (e->d_name[0] == '.')
                continue;
            snprintf(sub, sizeof sub, "%s/%s", LOOM_BUILD_PLUGIN_DIR, e->d_name);
            if (stat(sub, &sb) == 0 && S_ISDIR(sb.st_mode))
                add_dir(sub, "build tree");
        }
        if (d != NULL)
            closedir(d);
        return;
    }
    if (here[0] != '\0') {
        snprintf(next, sizeof next, "%s/loom/plugins", here);
        struct stat sb;
        if (stat(next, &sb) == 0 && S_ISDIR(sb.st_mode))
            add_dir(next, "next to libloom");
    }
    add_dir(LOOM_PLUGIN_DIR, "installed");
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool name_selected(const char *name)
{
    if (loom__cfg.select != NULL && !loom__glob_list_match(loom__cfg.select, name))
        return false;
    if (loom__cfg.disable != NULL && loom__glob_list_match(loom__cfg.disable, name))
        return false;
    return true;
}

static const loom__pack *pack_named(const char *name)
{
    for (int64_t i = 0; i < loom__n_packs; i++)
        if (strcmp(loom__packs[i]->name, name) == 0)
            return loom__packs[i];
    return NULL;
}

static void free_depends(char **d)
{
    for (size_t i = 0; d != NULL && d[i] != NULL; i++)
        free(d[i]);
    free(d);
}

static char **copy_depends(const char *const *d)
{
    size_t n = 0;
    char **copy;

    while (d != NULL && d[n] != NULL)
        n++;
    if (d == NULL || (copy = calloc(n + 1, sizeof *copy)) == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if ((copy[i] = loom__strdup(d[i])) == NULL) {
            free_depends(copy);
            return NULL;
        }
    return copy;
}

static void pack_free(loom__pack *p)
{
    if (p == NULL)
        return;
    free(p->path);
    free(p->name);
    free(p->version);
    free(p->description);
    free(p->origin);
    free(p->refused);
    free_depends(p->depends);
    free(p);
}

/* The file name without directory and ".so": by convention the pack's name. */
static const char *file_stem(const char *path, char *buf, size_t size)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t n;
    snprintf(buf, size, "%s", base);
    n = strlen(buf);
    if (n > 3 && strcmp(buf + n - 3, ".so") == 0)
        buf[n - 3] = '\0';
    return buf;
}

/* An op dependency names an op ("vision.nms"), a pack dependency a pack. */
static bool is_op_name(const char *dep) { return strchr(dep, '.') != NULL; }

/* Copy a descriptor's depends into r, checking each entry; the reason, or NULL. */
#define MAX_DEPENDS 256
static const char *read_depends(scan_rec *r, const char *const *deps, char *why, size_t size)
{
    size_t n = 0;
    if (deps == NULL)
        return NULL;
    for (; n < MAX_DEPENDS && deps[n] != NULL; n++) {
        size_t len = strlen(deps[n]);
        if (len == 0 || len >= LOOM_MAX_NAME) {
            snprintf(why, size, "depends[%zu] is %s", n, len == 0 ? "empty" : "as long as LOOM_MAX_NAME (128 "
                     "bytes) or longer");
            return why;
        }
    }
    if (n == MAX_DEPENDS) {
        snprintf(why, size, "depends has no NULL terminator within %d entries", MAX_DEPENDS);
        return why;
    }
    if (n > 0 && (r->depends = copy_depends(deps)) == NULL) {
        snprintf(why, size, "out of memory");
        return why;
    }
    return NULL;
}

static void candidate_close(candidate *c)
{
    if (c->lib != NULL)
        dlclose(c->lib);
    c->lib = NULL;
    c->pending = false;
}

/* oneDNN as Debian builds it runs its primitives on OpenMP (libgomp),
** whose workers by default spin for up to GOMP_SPINCOUNT (300000) rounds
** after every parallel region. Between the primitives, loom's own pool runs
** the other ops on the same cores, so the two spin against each other:
** resnet18 with conv on onednn took twice the CPU time on 2 cores (3.1 s
** against 1.5 s for 10 images), and more wall time than conv on cpu. Fully
** passive workers (OMP_WAIT_POLICY=PASSIVE, or a count of 0) cure that but
** sleep in the kernel after every region, and waking them costs latency at
** batch 1, where the regions are short and back to back: efficientnet_v2_s
** at batch 1 on 2 idle cores took 40-42 ms with a count of 0 against 25-28
** ms with 1000 and 24-26 ms with 10000. A long spin is as costly when
** another process holds one of the cores: a worker (or the master, at the
** region's barrier) then spins for a partner that is not running, and the
** same call took 101 ms with 10000, 69 ms with 3000 and 57 ms with 1000
** beside one busy loop (resnet50 at batch 8, whose regions are long, moved
** by 1-3% either way). So unless the environment chooses (OMP_WAIT_POLICY
** or GOMP_SPINCOUNT set), GOMP_SPINCOUNT=1000 is set before the first pack,
** and with it any OpenMP runtime a pack links, is loaded: idle workers spin
** for a few microseconds (long enough for the next primitive of a model on
** idle cores), then sleep. A process that loaded an OpenMP runtime before
** loom_init keeps the settings it read then. setenv runs here, in
** loom_init, on the thread that calls it. */
static void omp_short_spin_by_default(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    if (getenv("OMP_WAIT_POLICY") == NULL && getenv("GOMP_SPINCOUNT") == NULL)
        (void)setenv("GOMP_SPINCOUNT", "1000", 0);
}

/* Open the file of scans[si] and read its descriptor, without running its
** init. False when the entry is settled already (filtered, a CUDA pack
** behind the CUDA gate, refused). */
static bool candidate_open(int64_t si, candidate *c)
{
    scan_rec *r = &scans[si];
    char stem[256], text[1024];
    char *probed = NULL;
    int verdict = LOOM__PROBE_GOOD;
    loom_plugin_entry_fn entry;
    const char *problem;
    bool mangled;

    omp_short_spin_by_default();
    c->scan = si;
    c->lib = NULL;
    c->desc = NULL;
    c->pending = false;
    c->reported = false;
    c->probe_init = false;
    if (!name_selected(file_stem(r->path, stem, sizeof stem))) {
        set_reason(r, LOOM_SCAN_SKIPPED, "filtered out by LOOM_PLUGINS_SELECT/LOOM_PLUGINS_DISABLE");
        return false;
    }
    /* A CUDA pack where CUDA cannot run is not opened at all (cuda_gate.c). */
    if (loom__cuda_gate_closed(r->path, stem, text, sizeof text)) {
        set_reason(r, LOOM_SCAN_SKIPPED, "%s", text);
        r->cuda_gated = true;
        return false;
    }
    /* Vetted loading: the host opens nothing the probe has not seen. */
    if (loom__probe_packs) {
        verdict = loom__probe_open(r->path, &probed);
        if (verdict == LOOM__PROBE_BAD || verdict == LOOM__PROBE_ERROR) {
            r->status = LOOM_EABI;
            set_reason(r, LOOM_SCAN_REFUSED, "%s", probed != NULL ? probed : "not probed: out of memory");
            free(probed);
            return false;
        }
        c->probe_init = verdict == LOOM__PROBE_NEEDS_DEPS;
    }
    if ((c->lib = dlopen(r->path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
        r->status = LOOM_ENOENT;
        set_reason(r, LOOM_SCAN_REFUSED, "not loadable: %s", dlerror());
        free(probed);
        return false;
    }
    r->status = LOOM_EABI;
    if ((entry = loom__entry_lookup(c->lib, &mangled)) == NULL) {
        set_reason(r, LOOM_SCAN_REFUSED, "%s", loom__entry_missing_text(mangled, text, sizeof text));
        goto refuse;
    }
    c->desc = entry(LOOM_ABI_MAJOR, LOOM_ABI_MINOR);
    if ((problem = loom__desc_problem(c->desc, text, sizeof text)) != NULL) {
        set_reason(r, LOOM_SCAN_REFUSED, "%s", problem);
        goto refuse;
    }
    if (verdict == LOOM__PROBE_REFUSE) {
        /* the child refused what the host accepts: do not run it unvetted */
        set_reason(r, LOOM_SCAN_REFUSED, "not probed (LOOM_PROBE=1): the probe refused it: %s",
                   probed != NULL ? probed : "?");
        goto refuse;
    }
    r->pack = loom__strdup(c->desc->name);
    r->version = loom__strdup(c->desc->version ? c->desc->version : "");
    if (r->pack == NULL || r->version == NULL) {
        r->status = LOOM_ENOMEM;
        set_reason(r, LOOM_SCAN_REFUSED, "out of memory");
        goto refuse;
    }
    if ((problem = read_depends(r, loom__desc_depends(c->desc), text, sizeof text)) != NULL) {
        r->status = LOOM_EINVAL;
        set_reason(r, LOOM_SCAN_REFUSED, "%s", problem);
        goto refuse;
    }
    free(probed);
    r->status = LOOM_OK;
    c->pending = true;
    return true;
refuse:
    free(probed);
    candidate_close(c);
    return false;
}

/* Index in loom__packs of the loaded pack that satisfies dep, or -1. */
static int64_t provider_index(const char *dep)
{
    const loom__pack *p = NULL;
    if (is_op_name(dep)) {
        const struct loom_op *op = loom__op_lookup(loom__snapshot_get(), dep);
        p = op != NULL ? op->def_pack : NULL;
    } else {
        p = pack_named(dep);
    }
    for (int64_t i = 0; p != NULL && i < loom__n_packs; i++)
        if (loom__packs[i] == p)
            return i;
    return -1;
}

static void mark_needed(char *const *deps, bool *need)
{
    for (size_t i = 0; deps != NULL && deps[i] != NULL; i++) {
        int64_t k = provider_index(deps[i]);
        if (k >= 0 && !need[k]) {
            need[k] = true;
            mark_needed(loom__packs[k]->depends, need);
        }
    }
}

/* The files of the loaded packs a pack with these depends needs,
** transitively, in load order: what its probe initialises first. */
static int dep_closure(char *const *deps, const char ***out)
{
    bool *need = calloc((size_t)loom__n_packs + 1, sizeof *need);
    const char **paths = calloc((size_t)loom__n_packs + 1, sizeof *paths);
    int n = 0;

    *out = paths;
    if (need == NULL || paths == NULL) {
        free(need);
        return 0;
    }
    mark_needed(deps, need);
    for (int64_t i = 0; i < loom__n_packs; i++)
        if (need[i] && loom__packs[i]->path != NULL)
            paths[n++] = loom__packs[i]->path;
    free(need);
    return n;
}

/* Whether a device of this type is present (CUDA host and managed memory
** live on the CUDA devices). */
static bool device_present(int32_t type)
{
    int64_t n = loom_device_count();
    if (type == LOOM_DEVICE_CUDA_HOST || type == LOOM_DEVICE_CUDA_MANAGED)
        type = LOOM_DEVICE_CUDA;
    for (int64_t i = 0; i < n; i++) {
        loom_device_info d = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &d) == LOOM_OK && d.device.device_type == type)
            return true;
    }
    return false;
}

/* Run c's init and commit it, or refuse it; the caller holds the lock. */
static void candidate_init(candidate *c)
{
    scan_rec *r = &scans[c->scan];
    const loom_plugin_desc *desc = c->desc;
    loom__pack *pack = NULL;
    loom_registrar *reg = NULL;
    loom_status st;

    c->pending = false;
    r->status = LOOM_EABI;
    if (c->probe_init && loom__probe_packs) {
        const char **deps = NULL;
        char *why = NULL;
        int n = dep_closure(r->depends, &deps);
        int verdict = loom__probe_init(r->path, deps, n, &why);
        free(deps);
        if (verdict != LOOM__PROBE_GOOD) {
            set_reason(r, LOOM_SCAN_REFUSED, "%s", why != NULL ? why : "not probed: out of memory");
            free(why);
            goto refuse;
        }
        free(why);
    }
    pack = calloc(1, sizeof *pack);
    if (pack == NULL) {
        r->status = LOOM_ENOMEM;
        set_reason(r, LOOM_SCAN_REFUSED, "out of memory");
        goto refuse;
    }
    pack->path = loom__strdup(r->path);
    pack->name = loom__strdup(desc->name);
    pack->version = loom__strdup(desc->version ? desc->version : "");
    pack->description = loom__strdup(desc->description ? desc->description : "");
    pack->lib = c->lib;
    pack->fini = LOOM_HAS_MEMBER(desc, loom_plugin_desc, fini) ? desc->fini : NULL;
    pack->origin = loom__strdup(c->origin);
    pack->depends = copy_depends((const char *const *)r->depends);
    pack->abi_minor_built = desc->abi_minor_built;
    if ((st = loom__registrar_begin(&reg, pack)) != LOOM_OK) {
        r->status = st;
        set_reason(r, LOOM_SCAN_REFUSED, "%s", loom_last_error());
        goto refuse;
    }
    loom__error_context(NULL);
    st = desc->init(&loom__host_api, reg);
    if (st != LOOM_OK) {
        r->status = st;
        set_reason(r, LOOM_SCAN_REFUSED, "init failed with %s: %s", loom_status_name(st), loom_last_error());
        goto refuse;
    }
    if ((st = loom__registrar_commit(reg)) != LOOM_OK) {
        /* commit releases the registrar on success only */
        r->status = st;
        set_reason(r, LOOM_SCAN_REFUSED, "%s", loom_last_error());
        goto refuse;
    }
    reg = NULL;
    c->lib = NULL;   /* the pack's now: registered code stays mapped */
    r->status = LOOM_OK;
    {
        loom__pack **grown = realloc(loom__packs, (size_t)(loom__n_packs + 1) * sizeof *grown);
        if (grown == NULL) {
            r->status = LOOM_ENOMEM;
            set_reason(r, LOOM_SCAN_REFUSED, "out of memory");
            return;   /* registered: keep the library mapped */
        }
        loom__packs = grown;
        loom__packs[loom__n_packs++] = pack;
    }
    r->loaded = pack;
    if (pack->n_refused > 0)
        loom__log(0, "pack %s loaded with %d registration%s refused: %s", r->path, pack->n_refused,
                  pack->n_refused == 1 ? "" : "s", pack->refused);
    /* A pack with kernels for a device type of which no device is present
    ** (its provider's pack absent or loaded later, or no such hardware). */
    if (pack->n_kernels > 0) {
        bool device_pack = false;
        const loom__snapshot *s = loom__snapshot_get();
        for (int64_t i = 0; s && i < s->n_ops && !device_pack; i++)
            for (int32_t j = 0; j < s->ops[i]->n_kernels; j++) {
                const loom__kernel *k = s->ops[i]->kernels[j];
                if (k->pack == pack && k->k.device_type != LOOM_DEVICE_CPU && !device_present(k->k.device_type))
                    device_pack = true;
            }
        if (device_pack && pack->n_refused > 0)
            set_reason(r, LOOM_SCAN_NO_DEVICE, "loaded with %d registration%s refused (and no device of its kind "
                       "is present, so its kernels stay idle): %s", pack->n_refused, pack->n_refused == 1 ? "" : "s",
                       pack->refused);
        else if (device_pack)
            set_reason(r, LOOM_SCAN_NO_DEVICE, "loaded; no device of its kind is present, so its kernels stay idle");
        if (device_pack)
            return;
    }
    if (pack->n_refused > 0)
        set_reason(r, LOOM_SCAN_LOADED, "loaded with %d registration%s refused: %s", pack->n_refused,
                   pack->n_refused == 1 ? "" : "s", pack->refused);
    else
        set_reason(r, LOOM_SCAN_LOADED, "loaded");
    return;

refuse:
    loom__registrar_abort(reg);
    pack_free(pack);
    candidate_close(c);
}

/* Log what happened to scans[si]; the status loom_load_pack returns. */
static loom_status report(int64_t si)
{
    const scan_rec *r = &scans[si];
    if (r->result == LOOM_SCAN_REFUSED) {
        loom__log(0, "refused pack %s: %s", r->path, r->reason ? r->reason : "");
        return loom__fail(r->status != LOOM_OK ? r->status : LOOM_EABI, "refused pack %s: %s", r->path,
                          r->reason ? r->reason : "");
    }
    if (r->loaded != NULL)
        loom__log(1, "loaded pack '%s' %s from %s (%lld ops, %lld kernels, %lld classes)", r->loaded->name,
                  r->loaded->version, r->path, (long long)r->loaded->n_ops, (long long)r->loaded->n_kernels,
                  (long long)r->loaded->n_classes);
    else
        loom__log(1, "skipped %s: %s", r->path, r->reason ? r->reason : "");
    return LOOM_OK;
}

/* A new entry for path, stat'ed; -1 when it is settled already (reported). */
static int64_t scan_begin(const char *path)
{
    struct stat sb;
    scan_rec *r = add_scan(path);

    if (r == NULL) {
        loom__log(0, "out of memory: pack %s not considered", path);
        loom__fail(LOOM_ENOMEM, "out of memory");
        return -1;
    }
    if (stat(path, &sb) != 0) {
        r->status = LOOM_ENOENT;
        set_reason(r, LOOM_SCAN_REFUSED, "cannot stat: %s", strerror(errno));
        report(n_scans - 1);
        return -1;
    }
    r->dev = sb.st_dev;
    r->ino = sb.st_ino;
    return n_scans - 1;
}

/* Settle c if its file or its name is loaded already (the first pack of a
** name wins). */
static bool settle_duplicate(candidate *c)
{
    scan_rec *r = &scans[c->scan];
    const loom__pack *p;

    for (int64_t i = 0; i < n_scans; i++)
        if (i != c->scan && scans[i].loaded != NULL && scans[i].dev == r->dev && scans[i].ino == r->ino) {
            set_reason(r, LOOM_SCAN_SKIPPED, "same file as %s, already loaded", scans[i].path);
            candidate_close(c);
            return true;
        }
    if ((p = pack_named(r->pack)) != NULL) {
        set_reason(r, LOOM_SCAN_SKIPPED, "pack '%s' is already loaded from %s", r->pack, p->path);
        candidate_close(c);
        return true;
    }
    return false;
}

/* ---------------------------------------------------------- dependencies
**
** A pack's depends name packs ("core-cuda") or ops ("vision.nms"). The scan
** opens and describes every file first, then runs the inits in search order
** (directory, then file name), each as soon as what it needs is loaded: a
** pack dependency by a loaded pack of that name, an op dependency by any
** loaded pack that registered the op (known only after that pack's init).
** After each init the scan starts again from the first waiting pack, so
** packs without dependencies load exactly in the old order. A pack waits
** for an earlier pack of its name (it may be refused, then the next one is
** the candidate). A dependency that cannot come (not found, refused,
** filtered, an op no pack registered) refuses the pack, naming it; when
** every waiting pack waits for another, each cycle among them (pack names,
** and an op's domain as the name of the pack that may provide it) is
** refused whole, naming the cycle, and a pack waiting for an op that no
** waiting pack can be expected to provide is refused, naming the op.
*/

enum { DEP_OK, DEP_WAIT, DEP_MISSING };

/* The first waiting candidate of this pack name, or -1. */
static int64_t first_pending(const candidate *cs, int64_t n, const char *name)
{
    for (int64_t i = 0; i < n; i++)
        if (cs[i].pending && strcmp(scans[cs[i].scan].pack, name) == 0)
            return i;
    return -1;
}

static int dep_state(const char *dep, const candidate *cs, int64_t n, int64_t self)
{
    if (is_op_name(dep)) {
        if (loom__op_lookup(loom__snapshot_get(), dep) != NULL)
            return DEP_OK;
        for (int64_t i = 0; i < n; i++)
            if (cs[i].pending && i != self)
                return DEP_WAIT;   /* any waiting pack may register it */
        return DEP_MISSING;
    }
    if (pack_named(dep) != NULL)
        return DEP_OK;
    return first_pending(cs, n, dep) >= 0 ? DEP_WAIT : DEP_MISSING;
}

/* Why dep cannot be had, into b. */
static void add_missing(strbuf *b, const char *dep, bool explicit_load)
{
    char stem[256];

    if (is_op_name(dep)) {
        sb_add(b, "needs op '%s', which no loaded pack provides", dep);
        return;
    }
    for (int64_t i = n_scans - 1; i >= 0; i--)
        if (scans[i].pack != NULL && strcmp(scans[i].pack, dep) == 0 && scans[i].result == LOOM_SCAN_REFUSED) {
            sb_add(b, "needs pack '%s' (refused: %s)", dep, scans[i].reason ? scans[i].reason : "");
            return;
        }
    for (int64_t i = n_scans - 1; i >= 0; i--) {
        if (scans[i].pack != NULL || strcmp(file_stem(scans[i].path, stem, sizeof stem), dep) != 0)
            continue;
        if (scans[i].result == LOOM_SCAN_SKIPPED && scans[i].cuda_gated) {
            sb_add(b, "needs pack '%s' (%s)", dep, scans[i].reason ? scans[i].reason : "");
            return;
        }
        if (scans[i].result == LOOM_SCAN_SKIPPED) {
            sb_add(b, "needs pack '%s' (%s is filtered out by LOOM_PLUGINS_SELECT/LOOM_PLUGINS_DISABLE)", dep,
                   scans[i].path);
            return;
        }
        if (scans[i].result == LOOM_SCAN_REFUSED) {
            sb_add(b, "needs pack '%s' (refused: %s)", dep, scans[i].reason ? scans[i].reason : "");
            return;
        }
    }
    sb_add(b, "needs pack '%s' (%s)", dep, explicit_load ? "not loaded" : "not found");
}

/* Refuse c with text; settle it. */
static void refuse_text(candidate *c, loom_status st, const char *text)
{
    scan_rec *r = &scans[c->scan];
    r->status = st;
    set_reason(r, LOOM_SCAN_REFUSED, "%s", text != NULL ? text : "out of memory");
    candidate_close(c);
}

/* The waiting candidate that c waits for through dependency k (-1: none
** known); k == -1 is the edge to an earlier candidate of its name. */
static int64_t edge(const candidate *cs, int64_t n, int64_t i, int64_t k)
{
    const scan_rec *r = &scans[cs[i].scan];
    char domain[LOOM_MAX_NAME];
    const char *dep;

    if (k < 0) {
        int64_t first = first_pending(cs, n, r->pack);
        return first != i ? first : -1;
    }
    dep = r->depends[k];
    if (!is_op_name(dep))
        return pack_named(dep) != NULL ? -1 : first_pending(cs, n, dep);
    if (loom__op_lookup(loom__snapshot_get(), dep) != NULL)
        return -1;
    snprintf(domain, sizeof domain, "%.*s", (int)(strchr(dep, '.') - dep), dep);
    return first_pending(cs, n, domain);
}

static int64_t n_depends(const candidate *c)
{
    int64_t k = 0;
    const scan_rec *r = &scans[c->scan];
    while (r->depends != NULL && r->depends[k] != NULL)
        k++;
    return k;
}

/* Depth-first search for a cycle through i; path/len the current path,
** mark 0 new, 1 on the path, 2 done. On a cycle, *start is its first node
** on the path and true is returned. */
static bool find_cycle(const candidate *cs, int64_t n, int64_t i, int64_t *path, int64_t *len, char *mark,
                       int64_t *start)
{
    int64_t j = edge(cs, n, i, -1);
    mark[i] = 1;
    path[(*len)++] = i;
    /* Behind an earlier candidate of its name, it waits for that one only. */
    for (int64_t k = j >= 0 ? -1 : 0; k < (j >= 0 ? 0 : n_depends(&cs[i])); k++) {
        if ((j = edge(cs, n, i, k)) < 0 || mark[j] == 2)
            continue;
        if (mark[j] == 1) {
            for (*start = 0; path[*start] != j; (*start)++)
                ;
            return true;
        }
        if (find_cycle(cs, n, j, path, len, mark, start))
            return true;
    }
    mark[i] = 2;
    (*len)--;
    return false;
}

/* Every waiting candidate waits for another: refuse the packs of a cycle,
** or those waiting for an op no waiting pack is expected to provide. */
static void break_deadlock(candidate *cs, int64_t n)
{
    int64_t *path = calloc((size_t)n + 1, sizeof *path), len = 0, start = 0;
    char *mark = calloc((size_t)n + 1, 1);
    bool refused = false;

    for (int64_t i = 0; path != NULL && mark != NULL && i < n; i++) {
        if (!cs[i].pending || mark[i] != 0)
            continue;
        len = 0;
        if (!find_cycle(cs, n, i, path, &len, mark, &start))
            continue;
        int64_t m = len - start;
        for (int64_t p = 0; p < m; p++) {
            strbuf b = { 0 };
            sb_add(&b, "dependency cycle: %s", scans[cs[path[start + p]].scan].pack);
            for (int64_t q = 1; q <= m; q++) {
                const char *next = scans[cs[path[start + (p + q) % m]].scan].pack;
                char *grown = realloc(b.s, b.len + strlen(next) + 5);
                if (grown == NULL)
                    break;
                b.s = grown;
                b.len += (size_t)sprintf(b.s + b.len, " -> %s", next);
            }
            refuse_text(&cs[path[start + p]], LOOM_EINVAL, b.s);
            free(b.s);
        }
        refused = true;
        break;
    }
    free(path);
    free(mark);
    if (refused)
        return;
    for (int64_t i = 0; i < n; i++) {
        strbuf b = { 0 };
        if (!cs[i].pending || first_pending(cs, n, scans[cs[i].scan].pack) != i)
            continue;
        for (int64_t k = 0; k < n_depends(&cs[i]); k++) {
            const char *dep = scans[cs[i].scan].depends[k];
            if (is_op_name(dep) && edge(cs, n, i, k) < 0 && loom__op_lookup(loom__snapshot_get(), dep) == NULL)
                add_missing(&b, dep, false);
        }
        if (b.len > 0) {
            refuse_text(&cs[i], LOOM_ENOENT, b.s);
            refused = true;
        }
        free(b.s);
    }
    if (refused)
        return;
    /* Unreachable by the argument above; never loop forever on a bug. */
    for (int64_t i = 0; i < n; i++)
        if (cs[i].pending)
            refuse_text(&cs[i], LOOM_EINTERNAL, "its dependencies could not be ordered (please report)");
}

/* Run the inits of cs[0..n) in dependency order; report each entry. */
static void resolve(candidate *cs, int64_t n)
{
    for (;;) {
        bool progress = false, any = false;
        for (int64_t i = 0; i < n && !progress; i++) {
            candidate *c = &cs[i];
            const scan_rec *r = &scans[c->scan];
            strbuf missing = { 0 };
            bool wait = false;

            if (!c->pending)
                continue;
            any = true;
            if (first_pending(cs, n, r->pack) != i)
                continue;   /* an earlier pack of its name comes first */
            if (settle_duplicate(c)) {
                c->reported = true;
                report(c->scan);
                progress = true;
                break;
            }
            for (int64_t k = 0; k < n_depends(c); k++) {
                int d = dep_state(r->depends[k], cs, n, i);
                if (d == DEP_MISSING)
                    add_missing(&missing, r->depends[k], false);
                wait |= d == DEP_WAIT;
            }
            if (missing.len > 0) {
                refuse_text(c, LOOM_ENOENT, missing.s);
                progress = true;
            } else if (!wait) {
                candidate_init(c);
                progress = true;
            }
            free(missing.s);
            if (progress) {
                c->reported = true;
                report(c->scan);
            }
        }
        if (!any)
            return;
        if (!progress) {
            break_deadlock(cs, n);
            for (int64_t i = 0; i < n; i++)
                if (!cs[i].pending && !cs[i].reported) {
                    cs[i].reported = true;
                    report(cs[i].scan);
                }
        }
    }
}

/* Why a pack found in dir holds what it registered first. */
static char *format_origin(const char *dir, const char *origin)
{
    static const char fmt[] = "it was loaded first: found earlier in the search order, in %s (%s)";
    int n = snprintf(NULL, 0, fmt, dir, origin ? origin : "?");
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text != NULL)
        snprintf(text, (size_t)n + 1, fmt, dir, origin ? origin : "?");
    return text;
}

/* The *.so files of dir in name order (names owned by the caller). */
static int64_t list_dir(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    int64_t n = 0, cap = 0;

    while (d != NULL && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".so") != 0)
            continue;
        if (n == cap) {
            char **grown = realloc(names, (size_t)(cap ? 2 * cap : 16) * sizeof *names);
            if (grown == NULL) {
                loom__log(0, "out of memory listing %s: the rest of it is not searched", dir);
                break;
            }
            names = grown;
            cap = cap ? 2 * cap : 16;
        }
        if ((names[n] = loom__strdup(e->d_name)) == NULL) {
            loom__log(0, "out of memory listing %s: the rest of it is not searched", dir);
            break;
        }
        n++;
    }
    if (d != NULL)
        closedir(d);
    if (n > 0)
        qsort(names, (size_t)n, sizeof *names, cmp_names);
    *out = names;
    return n;
}

void loom__loader_scan(void)
{
    candidate *cs = NULL;
    int64_t n = 0, cap = 0;
    char **origins;

    collect_dirs();
    origins = calloc((size_t)n_dirs + 1, sizeof *origins);
    if (loom__probe_packs)
        loom__probe_begin();
    /* Every file of every directory first: open it, read its descriptor. */
    for (int64_t i = 0; i < n_dirs; i++) {
        char **names = NULL;
        int64_t count;

        loom__log(1, "searching %s (%s)%s", dirs[i].path, dirs[i].origin,
                  access(dirs[i].path, R_OK | X_OK) == 0 ? "" : ": not readable");
        count = list_dir(dirs[i].path, &names);
        if (origins != NULL)
            origins[i] = format_origin(dirs[i].path, dirs[i].origin);
        for (int64_t k = 0; k < count; k++) {
            char path[PATH_MAX + 300];
            int64_t si;
            snprintf(path, sizeof path, "%s/%s", dirs[i].path, names[k]);
            free(names[k]);
            if ((si = scan_begin(path)) < 0)
                continue;
            if (n == cap) {
                candidate *grown = realloc(cs, (size_t)(cap ? 2 * cap : 32) * sizeof *cs);
                if (grown == NULL) {
                    scans[si].status = LOOM_ENOMEM;
                    set_reason(&scans[si], LOOM_SCAN_REFUSED, "out of memory");
                    report(si);
                    continue;
                }
                cs = grown;
                cap = cap ? 2 * cap : 32;
            }
            memset(&cs[n], 0, sizeof cs[n]);
            cs[n].origin = origins != NULL && origins[i] != NULL ? origins[i] : "it was loaded first";
            if (candidate_open(si, &cs[n]))
                n++;
            else
                report(si);
        }
        free(names);
    }
    /* Then every init, in dependency order. */
    resolve(cs, n);
    free(cs);
    for (int64_t i = 0; origins != NULL && i < n_dirs; i++)
        free(origins[i]);
    free(origins);
    if (loom__probe_packs)
        loom__probe_end();
}

LOOM_API loom_status loom_load_pack(const char *path)
{
    loom_status st;
    char real[PATH_MAX];
    int64_t si;
    candidate c = { 0 };

    if (path == NULL)
        return loom__fail(LOOM_EINVAL, "loom_load_pack: path is NULL");
    if ((st = loom_init(NULL)) != LOOM_OK)
        return st;
    if (realpath(path, real) == NULL)
        return loom__fail(LOOM_ENOENT, "loom_load_pack: %s: %s", path, strerror(errno));
    pthread_mutex_lock(&loom__registry_lock);
    if (loom__probe_packs)
        loom__probe_begin();
    if ((si = scan_begin(real)) < 0) {
        st = loom_last_status();
        goto done;
    }
    c.origin = "it was loaded first, by loom_load_pack";
    if (candidate_open(si, &c) && !settle_duplicate(&c)) {
        /* One explicit pack: its dependencies must be loaded already. */
        strbuf missing = { 0 };
        for (int64_t k = 0; k < n_depends(&c); k++)
            if (dep_state(scans[si].depends[k], NULL, 0, -1) != DEP_OK)
                add_missing(&missing, scans[si].depends[k], true);
        if (missing.len > 0)
            refuse_text(&c, LOOM_ENOENT, missing.s);
        else
            candidate_init(&c);
        free(missing.s);
    }
    st = report(si);
done:
    if (loom__probe_packs)
        loom__probe_end();
    pthread_mutex_unlock(&loom__registry_lock);
    return st;
}

void loom__loader_reset(void)
{
    for (int64_t i = loom__n_packs - 1; i >= 0; i--) {
        loom__pack *p = loom__packs[i];
        if (p->fini != NULL)
            p->fini();
    }
    for (int64_t i = 0; i < n_scans; i++) {
        free(scans[i].path);
        free(scans[i].pack);
        free(scans[i].version);
        free(scans[i].reason);
        free_depends(scans[i].depends);
    }
    free(scans);
    scans = NULL;
    n_scans = cap_scans = 0;
    for (int64_t i = 0; i < n_dirs; i++)
        free(dirs[i].path);
    free(dirs);
    dirs = NULL;
    n_dirs = cap_dirs = 0;
}

/* After the registry released kernels: forget the packs. Their libraries
** stay mapped until the process exits: libraries they pull in (OpenMP,
** oneDNN, the CUDA runtime) keep threads and pools that must not lose their
** code under them, and a later loom_init maps the same files again for free. */
void loom__loader_unload(void)
{
    for (int64_t i = 0; i < loom__n_packs; i++)
        pack_free(loom__packs[i]);
    free(loom__packs);
    loom__packs = NULL;
    loom__n_packs = 0;
}

LOOM_API int64_t loom_scan_count(void) { return n_scans; }

LOOM_API loom_status loom_scan_at(int64_t index, loom_scan_entry *out)
{
    loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
    const scan_rec *r;

    if (index < 0 || index >= n_scans)
        return loom__fail(LOOM_ENOENT, "loom_scan_at: no entry %lld", (long long)index);
    r = &scans[index];
    e.path = r->path;
    e.pack = r->pack;
    e.version = r->version;
    e.result = r->result;
    e.reason = r->reason ? r->reason : "";
    e.depends = (const char *const *)r->depends;
    if (r->loaded != NULL) {
        e.n_ops = r->loaded->n_ops;
        e.n_kernels = r->loaded->n_kernels;
        e.n_classes = r->loaded->n_classes;
        e.live_objects = atomic_load(&r->loaded->live_objects);
    }
    return loom__struct_out(out, &e, sizeof e, "loom_scan_at");
}

LOOM_API int64_t loom_search_dir_count(void) { return n_dirs; }

LOOM_API const char *loom_search_dir_at(int64_t index, const char **origin)
{
    if (index < 0 || index >= n_dirs)
        return NULL;
    if (origin != NULL)
        *origin = dirs[index].origin;
    return dirs[index].path;
}
