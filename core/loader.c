/*
** loader.c - discovery and loading of operator packs.
**
** Search order: the loom_init plugin_path option or LOOM_PLUGIN_PATH, the
** directory next to libloom (<libdir>/loom/plugins, found with dladdr), the
** configured install directory, and the build tree when libloom runs from it.
** In each directory every *.so is considered in name order. A pack is refused
** with one line naming the file and the reason; a refused pack changes
** nothing. The first pack of a name wins, so LOOM_PLUGIN_PATH overrides.
** Likewise the first pack to register an op holds its definition: a later
** pack that defines it differently (or repeats a kernel or an object class
** of an earlier pack) still loads, without those registrations; its scan
** entry says "loaded with N registrations refused: ..." naming both packs
** and, for the earlier one, the directory and origin it was found through
** (see registry.c).
** LOOM_PLUGINS_SELECT/DISABLE globs match the file name without ".so" (by
** convention the pack's name: core.so, core-cuda.so), before the file is
** opened: a filtered pack runs no code at all.
*/
#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "registry.h"

typedef struct scan_rec {
    char *path, *pack, *version, *reason;
    int32_t result;
    loom__pack *loaded;
    dev_t dev;
    ino_t ino;
} scan_rec;

static scan_rec *scans;
static int64_t n_scans, cap_scans;

typedef struct search_dir { char *path; const char *origin; } search_dir;
static search_dir *dirs;
static int64_t n_dirs, cap_dirs;

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
    scans[n_scans].path = loom__strdup(path);
    return &scans[n_scans++];
}

static void set_reason(scan_rec *r, int32_t result, const char *fmt, ...) LOOM_PRINTF(3, 4);
static void set_reason(scan_rec *r, int32_t result, const char *fmt, ...)
{
    va_list ap;
    int n;
    char *text;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text != NULL) {
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    free(r->reason);
    r->reason = text;   /* NULL (out of memory) reads as "" */
    r->result = result;
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
    if (here[0] != '\0') {
        snprintf(next, sizeof next, "%s/loom/plugins", here);
        struct stat sb;
        if (stat(next, &sb) == 0 && S_ISDIR(sb.st_mode))
            add_dir(next, "next to libloom");
    }
    add_dir(LOOM_PLUGIN_DIR, "installed");
    /* The build tree, when this libloom (or the test binary holding the
    ** core) lives inside it: packs sit in <build>/plugins/<domain>/. */
    char build_root[PATH_MAX];
    snprintf(build_root, sizeof build_root, "%s", LOOM_BUILD_PLUGIN_DIR);
    char *slash = strrchr(build_root, '/');
    if (slash != NULL)
        *slash = '\0';
    if (here[0] != '\0' && strncmp(here, build_root, strlen(build_root)) == 0) {
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
    }
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ISO C has no object-to-function pointer conversion; POSIX guarantees it
** for dlsym(). This is the only place in loom that performs it. */
static loom_plugin_entry_fn lookup_entry(void *lib)
{
    void *sym = dlsym(lib, LOOM_PLUGIN_ENTRY_SYMBOL);
    loom_plugin_entry_fn fn;
    _Static_assert(sizeof fn == sizeof sym, "function and data pointers differ");
    memcpy(&fn, &sym, sizeof fn);
    return fn;
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
    free(p);
}

/* Load one file into r; the caller holds loom__registry_lock. origin says
** how the file was found, for messages about what this pack holds. */
static loom_status load_file(scan_rec *r, const char *origin)
{
    const char *path = r->path;
    char stem[256];
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    void *lib;
    loom_plugin_entry_fn entry;
    const loom_plugin_desc *desc;
    loom__pack *pack = NULL;
    loom_registrar *reg = NULL;
    loom_status st;
    int32_t devices_before = (int32_t)loom_device_count();

    snprintf(stem, sizeof stem, "%s", base);
    if (strlen(stem) > 3 && strcmp(stem + strlen(stem) - 3, ".so") == 0)
        stem[strlen(stem) - 3] = '\0';
    if (!name_selected(stem)) {
        set_reason(r, LOOM_SCAN_SKIPPED, "filtered out by LOOM_PLUGINS_SELECT/LOOM_PLUGINS_DISABLE");
        return LOOM_OK;
    }
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        set_reason(r, LOOM_SCAN_REFUSED, "not loadable: %s", dlerror());
        return LOOM_ENOENT;
    }
    entry = lookup_entry(lib);
    if (entry == NULL) {
        set_reason(r, LOOM_SCAN_REFUSED, "no entry symbol %s (not a loom pack?)", LOOM_PLUGIN_ENTRY_SYMBOL);
        st = LOOM_EABI;
        goto refuse;
    }
    desc = entry(LOOM_ABI_MAJOR, LOOM_ABI_MINOR);
    st = LOOM_EABI;
    if (desc == NULL) {
        set_reason(r, LOOM_SCAN_REFUSED, "entry returned no descriptor for ABI %d.%d (the pack does not "
                   "support this core's ABI major)", LOOM_ABI_MAJOR, LOOM_ABI_MINOR);
        goto refuse;
    }
    if (desc->magic != LOOM_PLUGIN_MAGIC) {
        set_reason(r, LOOM_SCAN_REFUSED, "bad magic 0x%08x (expected 0x%08x)", desc->magic, LOOM_PLUGIN_MAGIC);
        goto refuse;
    }
    if (desc->abi_major != LOOM_ABI_MAJOR) {
        set_reason(r, LOOM_SCAN_REFUSED, "built for ABI major %u (ABI %u.%u), this core speaks ABI %d.%d",
                   desc->abi_major, desc->abi_major, desc->abi_minor_built, LOOM_ABI_MAJOR, LOOM_ABI_MINOR);
        goto refuse;
    }
    if (desc->abi_minor_required > LOOM_ABI_MINOR) {
        set_reason(r, LOOM_SCAN_REFUSED, "requires ABI %u.%u but this core provides ABI %d.%d: update loom",
                   desc->abi_major, desc->abi_minor_required, LOOM_ABI_MAJOR, LOOM_ABI_MINOR);
        goto refuse;
    }
    if (desc->struct_size < offsetof(loom_plugin_desc, fini) || desc->name == NULL || desc->init == NULL) {
        set_reason(r, LOOM_SCAN_REFUSED, "descriptor too small (%u bytes) or without name/init", desc->struct_size);
        goto refuse;
    }
    r->pack = loom__strdup(desc->name);
    r->version = loom__strdup(desc->version ? desc->version : "");
    if (pack_named(desc->name) != NULL) {
        set_reason(r, LOOM_SCAN_SKIPPED, "pack '%s' is already loaded from %s", desc->name,
                   pack_named(desc->name)->path);
        st = LOOM_OK;
        goto refuse;
    }
    pack = calloc(1, sizeof *pack);
    if (pack == NULL) {
        set_reason(r, LOOM_SCAN_REFUSED, "out of memory");
        st = LOOM_ENOMEM;
        goto refuse;
    }
    pack->path = loom__strdup(path);
    pack->name = loom__strdup(desc->name);
    pack->version = loom__strdup(desc->version ? desc->version : "");
    pack->description = loom__strdup(desc->description ? desc->description : "");
    pack->lib = lib;
    pack->fini = LOOM_HAS_MEMBER(desc, loom_plugin_desc, fini) ? desc->fini : NULL;
    pack->origin = loom__strdup(origin);
    if ((st = loom__registrar_begin(&reg, pack)) != LOOM_OK) {
        set_reason(r, LOOM_SCAN_REFUSED, "%s", loom_last_error());
        goto refuse;
    }
    loom__error_context(NULL);
    st = desc->init(&loom__host_api, reg);
    if (st != LOOM_OK) {
        set_reason(r, LOOM_SCAN_REFUSED, "init failed with %s: %s", loom_status_name(st), loom_last_error());
        goto refuse;
    }
    if ((st = loom__registrar_commit(reg)) != LOOM_OK) {
        /* commit releases the registrar on success only */
        set_reason(r, LOOM_SCAN_REFUSED, "%s", loom_last_error());
        goto refuse;
    }
    reg = NULL;
    {
        loom__pack **grown = realloc(loom__packs, (size_t)(loom__n_packs + 1) * sizeof *grown);
        if (grown == NULL) {
            set_reason(r, LOOM_SCAN_REFUSED, "out of memory");
            return LOOM_ENOMEM;   /* registered: keep the library mapped */
        }
        loom__packs = grown;
        loom__packs[loom__n_packs++] = pack;
    }
    r->loaded = pack;
    if (pack->n_refused > 0)
        loom__log(0, "pack %s loaded with %d registration%s refused: %s", path, pack->n_refused,
                  pack->n_refused == 1 ? "" : "s", pack->refused);
    if ((int32_t)loom_device_count() == devices_before && pack->n_kernels > 0) {
        bool device_pack = false;
        const loom__snapshot *s = loom__snapshot_get();
        for (int64_t i = 0; s && i < s->n_ops; i++)
            for (int32_t j = 0; j < s->ops[i]->n_kernels; j++)
                if (s->ops[i]->kernels[j]->pack == pack && s->ops[i]->kernels[j]->k.device_type != LOOM_DEVICE_CPU)
                    device_pack = true;
        if (device_pack && pack->n_refused > 0)
            set_reason(r, LOOM_SCAN_NO_DEVICE, "loaded with %d registration%s refused (and no device of its kind "
                       "is present, so its kernels stay idle): %s", pack->n_refused, pack->n_refused == 1 ? "" : "s",
                       pack->refused);
        else if (device_pack)
            set_reason(r, LOOM_SCAN_NO_DEVICE, "loaded; no device of its kind is present, so its kernels stay idle");
        if (device_pack)
            return LOOM_OK;
    }
    if (pack->n_refused > 0)
        set_reason(r, LOOM_SCAN_LOADED, "loaded with %d registration%s refused: %s", pack->n_refused,
                   pack->n_refused == 1 ? "" : "s", pack->refused);
    else
        set_reason(r, LOOM_SCAN_LOADED, "loaded");
    return LOOM_OK;

refuse:
    loom__registrar_abort(reg);
    pack_free(pack);
    dlclose(lib);
    return st;
}

/* Check, load and report one file; the caller holds the lock. */
static loom_status consider(const char *path, const char *origin)
{
    struct stat sb;
    scan_rec *r = add_scan(path);
    loom_status st;

    if (r == NULL)
        return loom__fail(LOOM_ENOMEM, "out of memory");
    if (stat(path, &sb) != 0) {
        set_reason(r, LOOM_SCAN_REFUSED, "cannot stat: %s", strerror(errno));
        loom__log(0, "refused pack %s: %s", path, r->reason);
        return loom__fail(LOOM_ENOENT, "%s: %s", path, r->reason);
    }
    r->dev = sb.st_dev;
    r->ino = sb.st_ino;
    for (int64_t i = 0; i + 1 < n_scans; i++)
        if (scans[i].loaded != NULL && scans[i].dev == sb.st_dev && scans[i].ino == sb.st_ino) {
            set_reason(r, LOOM_SCAN_SKIPPED, "same file as %s, already loaded", scans[i].path);
            return LOOM_OK;
        }
    st = load_file(r, origin);
    if (r->result == LOOM_SCAN_REFUSED) {
        loom__log(0, "refused pack %s: %s", path, r->reason);
        return loom__fail(st != LOOM_OK ? st : LOOM_EABI, "refused pack %s: %s", path, r->reason);
    }
    if (r->loaded != NULL)
        loom__log(1, "loaded pack '%s' %s from %s (%lld ops, %lld kernels, %lld classes)", r->loaded->name,
                  r->loaded->version, path, (long long)r->loaded->n_ops, (long long)r->loaded->n_kernels,
                  (long long)r->loaded->n_classes);
    else
        loom__log(1, "skipped %s: %s", path, r->reason);
    return LOOM_OK;
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

void loom__loader_scan(void)
{
    collect_dirs();
    for (int64_t i = 0; i < n_dirs; i++) {
        DIR *d = opendir(dirs[i].path);
        struct dirent *e;
        char *origin;
        char **names = NULL;
        int64_t n = 0, cap = 0;

        loom__log(1, "searching %s (%s)%s", dirs[i].path, dirs[i].origin, d ? "" : ": not readable");
        while (d != NULL && (e = readdir(d)) != NULL) {
            size_t len = strlen(e->d_name);
            if (len < 4 || strcmp(e->d_name + len - 3, ".so") != 0)
                continue;
            if (n == cap) {
                char **grown = realloc(names, (size_t)(cap ? 2 * cap : 16) * sizeof *names);
                if (grown == NULL) {
                    loom__log(0, "out of memory listing %s: the rest of it is not searched", dirs[i].path);
                    break;
                }
                names = grown;
                cap = cap ? 2 * cap : 16;
            }
            if ((names[n] = loom__strdup(e->d_name)) == NULL) {
                loom__log(0, "out of memory listing %s: the rest of it is not searched", dirs[i].path);
                break;
            }
            n++;
        }
        if (d != NULL)
            closedir(d);
        if (n > 0)
            qsort(names, (size_t)n, sizeof *names, cmp_names);
        origin = format_origin(dirs[i].path, dirs[i].origin);
        for (int64_t k = 0; k < n; k++) {
            char path[PATH_MAX + 300];
            snprintf(path, sizeof path, "%s/%s", dirs[i].path, names[k]);
            (void)consider(path, origin != NULL ? origin : "it was loaded first");
            free(names[k]);
        }
        free(origin);
        free(names);
    }
}

LOOM_API loom_status loom_load_pack(const char *path)
{
    loom_status st;
    char real[PATH_MAX];

    if (path == NULL)
        return loom__fail(LOOM_EINVAL, "loom_load_pack: path is NULL");
    if ((st = loom_init(NULL)) != LOOM_OK)
        return st;
    if (realpath(path, real) == NULL)
        return loom__fail(LOOM_ENOENT, "loom_load_pack: %s: %s", path, strerror(errno));
    pthread_mutex_lock(&loom__registry_lock);
    st = consider(real, "it was loaded first, by loom_load_pack");
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
