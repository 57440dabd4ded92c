/* SPDX-License-Identifier: BSD-3-Clause */
/*
** config.c - the settings read once at init, the log stream, small helpers.
**
** Precedence, per setting: an explicit loom_init_options member, else the
** environment variable, else the default. Empty variables count as unset.
** A malformed value never fails init: it is reported on the log stream
** (naming the variable and the value) and the default is used instead.
**
** LOOM_PLUGIN_PATH is read with secure_getenv, so a setuid or setgid process
** never loads code from a directory its caller chose; cfg->secure records that
** such a variable was present and ignored, for `loom doctor`.
**
** Invariant: after loom__config_load, cfg->log is never NULL and every string
** member is NULL or owned by cfg (released by loom__config_free).
*/
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "internal.h"

#define DEFAULT_BACKENDS "cuda,onednn,cpu"
#define MAX_THREADS 1024

loom__config loom__cfg;

/* Where each setting of loom__cfg came from, for loom__config_lines. */
enum { SETTING_PLUGIN_PATH, SETTING_SELECT, SETTING_DISABLE, SETTING_BACKENDS,
       SETTING_STRICT, SETTING_VERBOSE, SETTING_NUM_THREADS, SETTING_CPU_MAX_ISA,
       SETTING_NO_DEFAULT_DIRS, SETTING_LOG, SETTING_MAX_ALLOC, SETTING_PROBE, SETTING_PROBE_TIMEOUT,
       SETTING_CUDA_GATE, N_SETTINGS };

static const char *const origin_default = "default";
static const char *const origin_env = "environment";
static const char *const origin_option = "loom_init option";

static const char *origins[N_SETTINGS];

/* Vetted loading (probe.c, loader.c; declared in registry.h): LOOM_PROBE or
** loom_init_options.probe_packs, and LOOM_PROBE_TIMEOUT in seconds (0 = the
** default of 5). Set by loom__config_load of loom__cfg. */
bool loom__probe_packs;
double loom__probe_timeout;
#define DEFAULT_PROBE_TIMEOUT 5.0

char *loom__strdup(const char *s)
{
    size_t nbytes;
    char *copy;

    if (s == NULL)
        return NULL;
    nbytes = strlen(s) + 1;
    copy = malloc(nbytes);
    if (copy != NULL)
        memcpy(copy, s, nbytes);
    return copy;
}

bool loom__glob_list_match(const char *list, const char *name)
{
    const char *p = list;

    if (list == NULL || name == NULL)
        return false;
    while (*p != '\0') {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        const char *b = p, *e = p + len;
        char small[128], *pattern = small;
        bool hit;

        while (b < e && isspace((unsigned char)*b))
            b++;
        while (e > b && isspace((unsigned char)e[-1]))
            e--;
        if (e > b) {
            size_t plen = (size_t)(e - b);
            if (plen >= sizeof small && (pattern = malloc(plen + 1)) == NULL)
                return false;
            memcpy(pattern, b, plen);
            pattern[plen] = '\0';
            hit = fnmatch(pattern, name, 0) == 0;
            if (pattern != small)
                free(pattern);
            if (hit)
                return true;
        }
        if (end == NULL)
            break;
        p = end + 1;
    }
    return false;
}

/* Format one "loom: ..." line and write it with a single call while holding
** the stream lock, so lines from concurrent threads never interleave. */
static void log_line(FILE *stream, const char *fmt, va_list ap)
{
    char small[1024], *buf = small;
    static const char prefix[] = "loom: ";
    const size_t plen = sizeof prefix - 1;
    va_list ap2;
    int len;
    size_t n;

    va_copy(ap2, ap);
    memcpy(buf, prefix, plen);
    len = vsnprintf(buf + plen, sizeof small - plen, fmt, ap);
    if (len < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)len + plen + 2 > sizeof small) {
        buf = malloc((size_t)len + plen + 2);
        if (buf == NULL) {
            buf = small;                /* print what fits */
            len = (int)(sizeof small - plen - 2);
        } else {
            memcpy(buf, prefix, plen);
            vsnprintf(buf + plen, (size_t)len + 1, fmt, ap2);
        }
    }
    va_end(ap2);
    n = plen + (size_t)len;
    while (n > plen && buf[n - 1] == '\n')
        n--;
    buf[n++] = '\n';
    flockfile(stream);
    fwrite(buf, 1, n, stream);
    fflush(stream);
    funlockfile(stream);
    if (buf != small)
        free(buf);
}

void loom__log(int level, const char *fmt, ...)
{
    va_list ap;

    if (level > 0 && level > loom__cfg.verbose)
        return;
    va_start(ap, fmt);
    log_line(loom__cfg.log != NULL ? loom__cfg.log : stderr, fmt, ap);
    va_end(ap);
}

/* A warning about the configuration being loaded goes to that
** configuration's stream, which need not be loom__cfg's yet. */
static void warn(const loom__config *cfg, const char *fmt, ...) LOOM_PRINTF(2, 3);
static void warn(const loom__config *cfg, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_line(cfg->log, fmt, ap);
    va_end(ap);
}

/* The variable's value, or NULL when unset or empty. */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? v : NULL;
}

/* A decimal integer filling the whole string, in [lo, hi]. */
static bool parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    while (end != s && isspace((unsigned char)*end))
        end++;
    if (end == s || *end != '\0' || errno != 0 || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* Sets *dst to an owned copy of src (NULL stays NULL). */
static loom_status set_string(char **dst, const char *src)
{
    *dst = NULL;
    if (src == NULL)
        return LOOM_OK;
    *dst = loom__strdup(src);
    if (*dst == NULL)
        return loom__fail(LOOM_ENOMEM, "loom_init: out of memory copying the configuration");
    return LOOM_OK;
}

static void load_strict(loom__config *cfg, int32_t opt, const char **origin)
{
    const char *v = env("LOOM_STRICT");

    cfg->strict = false;
    *origin = origin_default;
    if (opt != 0) {
        cfg->strict = opt > 0;
        *origin = origin_option;
    } else if (v != NULL) {
        if (strcmp(v, "1") == 0 || strcmp(v, "0") == 0) {
            cfg->strict = v[0] == '1';
            *origin = origin_env;
        } else {
            warn(cfg, "LOOM_STRICT='%s' is not 0 or 1; using 0", v);
        }
    }
}

/* LOOM_PROBE like LOOM_STRICT; LOOM_PROBE_TIMEOUT a number of seconds in (0, 3600]. */
static void load_probe(const loom__config *cfg, int32_t opt, bool *on, double *timeout, const char **origin,
                       const char **timeout_origin)
{
    const char *v = env("LOOM_PROBE"), *t = env("LOOM_PROBE_TIMEOUT");

    *on = false;
    *origin = origin_default;
    if (opt != 0) {
        *on = opt > 0;
        *origin = origin_option;
    } else if (v != NULL) {
        if (strcmp(v, "1") == 0 || strcmp(v, "0") == 0) {
            *on = v[0] == '1';
            *origin = origin_env;
        } else {
            warn(cfg, "LOOM_PROBE='%s' is not 0 or 1; using 0", v);
        }
    }
    *timeout = 0;
    *timeout_origin = origin_default;
    if (t != NULL) {
        char *end;
        double s;
        errno = 0;
        s = strtod(t, &end);
        while (end != t && isspace((unsigned char)*end))
            end++;
        if (end != t && *end == '\0' && errno == 0 && s > 0 && s <= 3600) {
            *timeout = s;
            *timeout_origin = origin_env;
        } else {
            warn(cfg, "LOOM_PROBE_TIMEOUT='%s' is not a number of seconds in (0, 3600]; using %g", t,
                 DEFAULT_PROBE_TIMEOUT);
        }
    }
}

/* LOOM_CUDA_GATE: 1 (the default) opens a CUDA pack only where the CUDA
** driver sees a device (cuda_gate.c); 0 opens every pack. */
static void load_cuda_gate(loom__config *cfg, const char **origin)
{
    const char *v = env("LOOM_CUDA_GATE");

    cfg->cuda_gate = true;
    *origin = origin_default;
    if (v == NULL)
        return;
    if (strcmp(v, "1") == 0 || strcmp(v, "0") == 0) {
        cfg->cuda_gate = v[0] == '1';
        *origin = origin_env;
    } else {
        warn(cfg, "LOOM_CUDA_GATE='%s' is not 0 or 1; using 1", v);
    }
}

static void load_verbose(loom__config *cfg, int32_t opt, const char **origin)
{
    const char *v = env("LOOM_VERBOSE");
    long n;

    cfg->verbose = 0;
    *origin = origin_default;
    if (opt != 0) {
        cfg->verbose = opt < 0 ? 0 : opt > 3 ? 3 : opt;
        *origin = origin_option;
    } else if (v != NULL) {
        if (parse_int(v, 0, 3, &n)) {
            cfg->verbose = (int)n;
            *origin = origin_env;
        } else if (parse_int(v, 4, INT_MAX, &n)) {
            warn(cfg, "LOOM_VERBOSE='%s' is above the highest level 3; using 3", v);
            cfg->verbose = 3;
            *origin = origin_env;
        } else {
            warn(cfg, "LOOM_VERBOSE='%s' is not a level in 0..3; using 0", v);
        }
    }
}

static void load_num_threads(loom__config *cfg, int32_t opt, const char **origin)
{
    const char *v = env("LOOM_NUM_THREADS");
    long n;

    cfg->num_threads = 0;
    *origin = origin_default;
    if (opt > 0) {
        cfg->num_threads = opt > MAX_THREADS ? MAX_THREADS : opt;
        *origin = origin_option;
    } else if (v != NULL) {
        if (parse_int(v, 1, MAX_THREADS, &n)) {
            cfg->num_threads = (int)n;
            *origin = origin_env;
        } else {
            warn(cfg, "LOOM_NUM_THREADS='%s' is not a thread count in 1..%d; "
                 "using the number of physical cores", v, MAX_THREADS);
        }
    }
}

static loom_status load_isa(loom__config *cfg, const char **origin)
{
    const char *v = env("LOOM_CPU_MAX_ISA");
    uint64_t mask;

    cfg->cpu_max_isa = NULL;
    *origin = origin_default;
    if (v == NULL)
        return LOOM_OK;
    if (loom__cpu_level(v, &mask)) {
        char lower[16];
        size_t i;
        for (i = 0; v[i] != '\0' && i + 1 < sizeof lower; i++)
            lower[i] = (char)tolower((unsigned char)v[i]);
        lower[i] = '\0';
        *origin = origin_env;
        return set_string(&cfg->cpu_max_isa, strcmp(lower, "native") == 0 ? NULL : lower);
    }
    warn(cfg, "LOOM_CPU_MAX_ISA='%s' is not one of scalar, sse4, avx2, avx512, amx, native; no cap applied", v);
    return LOOM_OK;
}

/* Physical memory in bytes, or 0 when the system does not say. */
static uint64_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

/* "1073741824", "512M", "16G", "1T" (powers of 1024, case-insensitive, an
** optional trailing B), "25%" of physical memory, or "0" for no cap. */
static bool parse_size(const char *s, uint64_t *out)
{
    char *end;
    double v;
    uint64_t mul = 1;

    errno = 0;
    v = strtod(s, &end);
    if (end == s || errno != 0 || !(v >= 0))
        return false;
    if (*end == '%') {
        uint64_t phys = physical_memory();
        if (end[1] != '\0' || v > 100 || phys == 0)
            return false;
        *out = (uint64_t)((double)phys * (v / 100.0));
        return true;
    }
    switch (toupper((unsigned char)*end)) {
    case 'K': mul = UINT64_C(1) << 10; end++; break;
    case 'M': mul = UINT64_C(1) << 20; end++; break;
    case 'G': mul = UINT64_C(1) << 30; end++; break;
    case 'T': mul = UINT64_C(1) << 40; end++; break;
    default: break;
    }
    if (toupper((unsigned char)*end) == 'B')
        end++;
    if (*end != '\0' || v * (double)mul >= 18446744073709551616.0)
        return false;
    *out = (uint64_t)(v * (double)mul);
    return true;
}

/* The default cap on one allocation: half of physical memory, so a single
** attribute-forced output cannot push the machine into swap or the OOM
** killer; without a figure from the system, no cap. */
static uint64_t default_max_alloc(void)
{
    return physical_memory() / 2;
}

static void load_max_alloc(loom__config *cfg, const char **origin)
{
    const char *v = env("LOOM_MAX_ALLOC");
    uint64_t n;

    cfg->max_alloc = default_max_alloc();
    *origin = origin_default;
    if (v == NULL)
        return;
    if (parse_size(v, &n)) {
        cfg->max_alloc = n;
        *origin = origin_env;
    } else {
        warn(cfg, "LOOM_MAX_ALLOC='%s' is not a size (bytes, or with K/M/G/T, or N%% of physical memory, "
             "or 0 for no cap); using half of physical memory", v);
    }
}

static void load_alloc_cache(loom__config *cfg)
{
    const char *v = env("LOOM_ALLOC_CACHE");
    uint64_t n;

    cfg->alloc_cache_set = false;
    cfg->alloc_cache = 0;
    if (v == NULL)
        return;
    if (parse_size(v, &n)) {
        cfg->alloc_cache_set = true;
        cfg->alloc_cache = n;
    } else {
        warn(cfg, "LOOM_ALLOC_CACHE='%s' is not a size (bytes, or with K/M/G/T, or N%% of physical memory, "
             "or 0 to turn the cache off); using the default", v);
    }
}

loom_status loom__alloc_cap_check(uint64_t nbytes, const char *what)
{
    uint64_t cap = loom__cfg.max_alloc;
    if (cap == 0 || nbytes <= cap)
        return LOOM_OK;
    return loom__fail(LOOM_ENOMEM, "%s: %llu bytes exceed LOOM_MAX_ALLOC (%llu bytes, %s); raise LOOM_MAX_ALLOC "
                      "if this is intended", what, (unsigned long long)nbytes, (unsigned long long)cap,
                      origins[SETTING_MAX_ALLOC] == origin_env ? "from the environment"
                                                               : "default: half of physical memory");
}

static loom_status load_strings(loom__config *cfg, const loom_init_options *o, bool has_opts,
                              const char **origin)
{
    const char *path_opt = has_opts && LOOM_HAS_MEMBER(o, loom_init_options, plugin_path)
                         ? o->plugin_path : NULL;
    const char *backends_opt = has_opts && LOOM_HAS_MEMBER(o, loom_init_options, backends)
                             ? o->backends : NULL;
    const char *path_env = secure_getenv("LOOM_PLUGIN_PATH");
    loom_status st;

    /* present for getenv but hidden by secure_getenv: a privileged process */
    cfg->secure = path_env == NULL && getenv("LOOM_PLUGIN_PATH") != NULL;
    cfg->plugin_path_origin = NULL;
    origin[SETTING_PLUGIN_PATH] = origin_default;
    if (path_opt != NULL) {
        origin[SETTING_PLUGIN_PATH] = origin_option;
        cfg->plugin_path_origin = origin_option;
        st = set_string(&cfg->plugin_path, path_opt[0] != '\0' ? path_opt : NULL);
    } else if (path_env != NULL && path_env[0] != '\0') {
        origin[SETTING_PLUGIN_PATH] = origin_env;
        cfg->plugin_path_origin = "LOOM_PLUGIN_PATH";
        st = set_string(&cfg->plugin_path, path_env);
    } else {
        st = set_string(&cfg->plugin_path, NULL);
    }
    if (st != LOOM_OK)
        return st;

    origin[SETTING_SELECT] = env("LOOM_PLUGINS_SELECT") ? origin_env : origin_default;
    if ((st = set_string(&cfg->select, env("LOOM_PLUGINS_SELECT"))) != LOOM_OK)
        return st;
    origin[SETTING_DISABLE] = env("LOOM_PLUGINS_DISABLE") ? origin_env : origin_default;
    if ((st = set_string(&cfg->disable, env("LOOM_PLUGINS_DISABLE"))) != LOOM_OK)
        return st;

    if (backends_opt != NULL && backends_opt[0] != '\0') {
        origin[SETTING_BACKENDS] = origin_option;
        return set_string(&cfg->backends, backends_opt);
    }
    if (env("LOOM_BACKENDS") != NULL) {
        origin[SETTING_BACKENDS] = origin_env;
        return set_string(&cfg->backends, env("LOOM_BACKENDS"));
    }
    /* Unset stays NULL: the dispatcher then ranks the built-in backends
    ** first and any third-party backend after them (an explicit list
    ** excludes backends it does not name). */
    origin[SETTING_BACKENDS] = origin_default;
    return set_string(&cfg->backends, NULL);
}

loom_status loom__config_load(loom__config *cfg, const loom_init_options *opts)
{
    const char *origin[N_SETTINGS];
    bool has = opts != NULL;
    loom_status st;

    if (cfg == NULL)
        return loom__fail(LOOM_EINVAL, "loom__config_load: NULL configuration");
    if (has && opts->struct_size < sizeof(uint32_t))
        return loom__fail(LOOM_EINVAL, "loom_init: options.struct_size is %u "
                          "(initialise the options with LOOM_INIT_OPTIONS_INIT)",
                          (unsigned)opts->struct_size);

    memset(cfg, 0, sizeof *cfg);
    cfg->log = stderr;
    origin[SETTING_LOG] = origin_default;
    if (has && LOOM_HAS_MEMBER(opts, loom_init_options, log_stream) && opts->log_stream != NULL) {
        cfg->log = opts->log_stream;
        origin[SETTING_LOG] = origin_option;
    }
    cfg->no_default_dirs = has && LOOM_HAS_MEMBER(opts, loom_init_options, no_default_dirs)
                        && opts->no_default_dirs != 0;
    origin[SETTING_NO_DEFAULT_DIRS] = cfg->no_default_dirs ? origin_option : origin_default;

    load_strict(cfg, has && LOOM_HAS_MEMBER(opts, loom_init_options, strict) ? opts->strict : 0,
                &origin[SETTING_STRICT]);
    load_verbose(cfg, has && LOOM_HAS_MEMBER(opts, loom_init_options, verbose) ? opts->verbose : 0,
                 &origin[SETTING_VERBOSE]);
    load_num_threads(cfg, has && LOOM_HAS_MEMBER(opts, loom_init_options, num_threads)
                     ? opts->num_threads : 0, &origin[SETTING_NUM_THREADS]);
    load_max_alloc(cfg, &origin[SETTING_MAX_ALLOC]);
    {
        bool probe;
        double timeout;
        load_probe(cfg, has && LOOM_HAS_MEMBER(opts, loom_init_options, probe_packs) ? opts->probe_packs : 0,
                   &probe, &timeout, &origin[SETTING_PROBE], &origin[SETTING_PROBE_TIMEOUT]);
        if (cfg == &loom__cfg) {
            loom__probe_packs = probe;
            loom__probe_timeout = timeout;
        }
    }
    load_alloc_cache(cfg);
    load_cuda_gate(cfg, &origin[SETTING_CUDA_GATE]);
    st = load_isa(cfg, &origin[SETTING_CPU_MAX_ISA]);
    if (st == LOOM_OK)
        st = load_strings(cfg, opts, has, origin);
    if (st != LOOM_OK) {
        loom__config_free(cfg);
        return st;
    }
    if (cfg == &loom__cfg)
        memcpy(origins, origin, sizeof origins);
    return LOOM_OK;
}

void loom__config_free(loom__config *cfg)
{
    if (cfg == NULL)
        return;
    free(cfg->plugin_path);
    free(cfg->select);
    free(cfg->disable);
    free(cfg->backends);
    free(cfg->cpu_max_isa);
    if (cfg == &loom__cfg) {
        loom__probe_packs = false;
        loom__probe_timeout = 0;
    }
    memset(cfg, 0, sizeof *cfg);
    cfg->log = stderr;
}

static char *line(const char *name, const char *value, const char *origin)
{
    const char *o = origin != NULL ? origin : origin_default;
    size_t nbytes = strlen(name) + strlen(value) + strlen(o) + 5;
    char *s = malloc(nbytes);

    if (s != NULL)
        snprintf(s, nbytes, "%s=%s (%s)", name, value, o);
    return s;
}

void loom__config_lines(char ***lines_out, int64_t *count_out)
{
    const loom__config *c = &loom__cfg;
    char threads[16], verbose[16], max_alloc[48], probe_timeout[32], **lines;
    const char *log_name = c->log == NULL || c->log == stderr ? "stderr"
                         : c->log == stdout ? "stdout" : "stream";
    int64_t n = 0;

    *lines_out = NULL;
    *count_out = 0;
    lines = calloc(N_SETTINGS + 1, sizeof *lines);
    if (lines == NULL)
        return;
    snprintf(threads, sizeof threads, "%d", c->num_threads > 0 ? c->num_threads : loom__physical_cores());
    snprintf(verbose, sizeof verbose, "%d", c->verbose);

    lines[n++] = line("LOOM_PLUGIN_PATH", c->plugin_path ? c->plugin_path : "",
                      c->secure && origins[SETTING_PLUGIN_PATH] == origin_default
                      ? "ignored in a privileged process" : origins[SETTING_PLUGIN_PATH]);
    lines[n++] = line("LOOM_PLUGINS_SELECT", c->select ? c->select : "*", origins[SETTING_SELECT]);
    lines[n++] = line("LOOM_PLUGINS_DISABLE", c->disable ? c->disable : "", origins[SETTING_DISABLE]);
    lines[n++] = line("LOOM_BACKENDS", c->backends ? c->backends : DEFAULT_BACKENDS ",<others>",
                      origins[SETTING_BACKENDS]);
    lines[n++] = line("LOOM_STRICT", c->strict ? "1" : "0", origins[SETTING_STRICT]);
    lines[n++] = line("LOOM_VERBOSE", verbose, origins[SETTING_VERBOSE]);
    lines[n++] = line("LOOM_NUM_THREADS", threads, c->num_threads > 0 ? origins[SETTING_NUM_THREADS]
                                                   : "default: physical cores");
    lines[n++] = line("LOOM_CPU_MAX_ISA", c->cpu_max_isa ? c->cpu_max_isa : "native",
                      origins[SETTING_CPU_MAX_ISA]);
    lines[n++] = line("no_default_dirs", c->no_default_dirs ? "1" : "0",
                      origins[SETTING_NO_DEFAULT_DIRS]);
    lines[n++] = line("log", log_name, origins[SETTING_LOG]);
    if (c->max_alloc == 0)
        snprintf(max_alloc, sizeof max_alloc, "0 (no cap)");
    else
        snprintf(max_alloc, sizeof max_alloc, "%llu (%.1f GiB)", (unsigned long long)c->max_alloc,
                 (double)c->max_alloc / (double)(UINT64_C(1) << 30));
    lines[n++] = line("LOOM_MAX_ALLOC", max_alloc, origins[SETTING_MAX_ALLOC]);
    lines[n++] = line("LOOM_PROBE", loom__probe_packs ? "1" : "0", origins[SETTING_PROBE]);
    snprintf(probe_timeout, sizeof probe_timeout, "%g", loom__probe_timeout > 0 ? loom__probe_timeout
                                                                                : DEFAULT_PROBE_TIMEOUT);
    lines[n++] = line("LOOM_PROBE_TIMEOUT", probe_timeout, origins[SETTING_PROBE_TIMEOUT]);
    lines[n++] = line("LOOM_CUDA_GATE", c->cuda_gate ? "1" : "0", origins[SETTING_CUDA_GATE]);
    for (int64_t i = 0; i < n; i++) {
        if (lines[i] == NULL) {
            for (int64_t j = 0; j < n; j++)
                free(lines[j]);
            free(lines);
            return;
        }
    }
    *lines_out = lines;
    *count_out = n;
}
