/* SPDX-License-Identifier: BSD-3-Clause */
/*
** callspec.c - turn `loom run`/`loom bench` arguments into a ready call
** (see callspec.h for the life cycle).
**
** Names given on the command line are checked against the op's schema before
** any file is read, so a typo costs nothing and the message lists the names
** that would have been valid. Failures of loom itself (unreadable file,
** bad attribute value, object creation) print the core's message.
*/
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callspec.h"

static int usage_error(const callspec *c, const char *fmt, ...) LOOM_PRINTF(2, 3);
static int usage_error(const callspec *c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cli_usage_error(c->cmd, c->usage, "%s", msg);
}

/* Split "KEY=VALUE" in place. Returns 0, or -1 when there is no '=' or no key. */
static int split_kv(char *arg, cli_kv *kv)
{
    char *eq = strchr(arg, '=');
    if (eq == NULL || eq == arg)
        return -1;
    *eq = '\0';
    kv->key = arg;
    kv->value = eq + 1;
    return 0;
}

static int parse_count(const char *text, long min, long *out)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min)
        return -1;
    *out = v;
    return 0;
}

int callspec_parse(callspec *c, int mode, const char *usage, int argc, char **argv)
{
    enum { O_IN = 1000, O_LINES, O_KJT, O_ATTR, O_OUT, O_WEIGHTS, O_BACKEND, O_DEVICE, O_JSON, O_REPEAT, O_WARMUP };
    static const struct option run_opts[] = {
        { "in", required_argument, NULL, O_IN },
        { "lines", required_argument, NULL, O_LINES },
        { "kjt", required_argument, NULL, O_KJT },
        { "attr", required_argument, NULL, O_ATTR },
        { "out", required_argument, NULL, O_OUT },
        { "weights", required_argument, NULL, O_WEIGHTS },
        { "backend", required_argument, NULL, O_BACKEND },
        { "device", required_argument, NULL, O_DEVICE },
        { "json", no_argument, NULL, O_JSON },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    static const struct option bench_opts[] = {
        { "in", required_argument, NULL, O_IN },
        { "lines", required_argument, NULL, O_LINES },
        { "kjt", required_argument, NULL, O_KJT },
        { "attr", required_argument, NULL, O_ATTR },
        { "weights", required_argument, NULL, O_WEIGHTS },
        { "backend", required_argument, NULL, O_BACKEND },
        { "device", required_argument, NULL, O_DEVICE },
        { "json", no_argument, NULL, O_JSON },
        { "repeat", required_argument, NULL, O_REPEAT },
        { "warmup", required_argument, NULL, O_WARMUP },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int ch;

    memset(c, 0, sizeof *c);
    c->mode = mode;
    c->cmd = argv[0];
    c->usage = usage;
    c->repeat = 20;
    c->warmup = 3;
    c->device.device_type = LOOM_DEVICE_CPU;
    /* Each option takes at most one slot, so argc bounds every list. */
    c->ins = calloc((size_t)argc, sizeof *c->ins);
    c->attrs = calloc((size_t)argc, sizeof *c->attrs);
    c->outs = calloc((size_t)argc, sizeof *c->outs);
    c->lines = calloc((size_t)argc, sizeof *c->lines);
    c->kjts = calloc((size_t)argc, sizeof *c->kjts);
    if (c->ins == NULL || c->attrs == NULL || c->outs == NULL || c->lines == NULL || c->kjts == NULL) {
        fprintf(stderr, "loom %s: out of memory\n", c->cmd);
        return CLI_FAIL;
    }

    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, ":h", mode == CALLSPEC_RUN ? run_opts : bench_opts, NULL)) != -1) {
        switch (ch) {
        case O_IN:
            if (split_kv(optarg, &c->ins[c->n_ins++]) != 0)
                return usage_error(c, "--in wants NAME=FILE.npy or NAME=@FILE, got '%s'", optarg);
            break;
        case O_LINES:
            if (split_kv(optarg, &c->lines[c->n_lines++]) != 0)
                return usage_error(c, "--lines wants NAME=FILE.txt, got '%s'", optarg);
            break;
        case O_KJT:
            if (split_kv(optarg, &c->kjts[c->n_kjts++]) != 0)
                return usage_error(c, "--kjt wants NAME=FILE.safetensors, got '%s'", optarg);
            break;
        case O_ATTR:
            if (split_kv(optarg, &c->attrs[c->n_attrs++]) != 0)
                return usage_error(c, "--attr wants KEY=VALUE, got '%s'", optarg);
            break;
        case O_OUT:
            if (split_kv(optarg, &c->outs[c->n_outs++]) != 0)
                return usage_error(c, "--out wants NAME=FILE.npy, got '%s'", optarg);
            break;
        case O_WEIGHTS: c->weights = optarg; break;
        case O_BACKEND: c->backend = optarg; break;
        case O_DEVICE:  c->device_text = optarg; break;
        case O_JSON:    c->json = 1; break;
        case O_REPEAT:
            if (parse_count(optarg, 1, &c->repeat) != 0)
                return usage_error(c, "--repeat wants a count >= 1, got '%s'", optarg);
            break;
        case O_WARMUP:
            if (parse_count(optarg, 0, &c->warmup) != 0)
                return usage_error(c, "--warmup wants a count >= 0, got '%s'", optarg);
            break;
        case 'h':
            fputs(usage, stdout);
            return CLI_HELP_SHOWN;
        default:
            return cli_bad_option(c->cmd, usage, ch, argv);
        }
    }
    if (optind >= argc)
        return cli_usage_error(c->cmd, usage, "which operator? (`loom list` shows them)");
    if (optind + 1 < argc)
        return cli_usage_error(c->cmd, usage, "unexpected argument '%s'", argv[optind + 1]);
    c->op_name = argv[optind];
    return CLI_OK;
}

/* "input, other": the names of a list of arg defs. */
static void arg_names(const loom_arg_def *args, uint32_t n, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < n && len + 1 < size; i++) {
        int w = snprintf(buf + len, size - len, "%s%s", i > 0 ? ", " : "", args[i].name);
        if (w > 0)
            len = (size_t)w >= size - len ? size - 1 : len + (size_t)w;
    }
    if (n == 0)
        snprintf(buf, size, "(none)");
}

static int find_arg(const loom_arg_def *args, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++) {
        if (args[i].name != NULL && strcmp(args[i].name, name) == 0)
            return (int)i;
    }
    return -1;
}

static int find_attr(const loom_attr_def *attrs, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++) {
        if (attrs[i].name != NULL && strcmp(attrs[i].name, name) == 0)
            return (int)i;
    }
    return -1;
}

int callspec_output_index(const callspec *c, const char *name)
{
    return find_arg(c->schema->outputs, c->schema->n_outputs, name);
}

static int parse_device(callspec *c)
{
    const char *t = c->device_text;
    if (t == NULL) {
        /* Forcing the CUDA backend only makes sense with the tensors on a GPU. */
        if (c->backend != NULL && strcmp(c->backend, "cuda") == 0)
            c->device = (loom_dl_device){ LOOM_DEVICE_CUDA, 0 };
        return CLI_OK;
    }
    if (strcmp(t, "cpu") == 0) {
        c->device = (loom_dl_device){ LOOM_DEVICE_CPU, 0 };
        return CLI_OK;
    }
    if (strncmp(t, "cuda", 4) == 0) {
        long id = 0;
        if (t[4] == ':' && parse_count(t + 5, 0, &id) != 0)
            return usage_error(c, "--device wants cpu, cuda or cuda:N, got '%s'", t);
        if (t[4] != '\0' && t[4] != ':')
            return usage_error(c, "--device wants cpu, cuda or cuda:N, got '%s'", t);
        c->device = (loom_dl_device){ LOOM_DEVICE_CUDA, (int32_t)id };
        return CLI_OK;
    }
    return usage_error(c, "--device wants cpu, cuda or cuda:N, got '%s'", t);
}

/* Every name in kv must be one of defs (`what` is "input" or "output" in
** the messages), and none may be given twice. */
static int check_args(callspec *c, const char *what, const cli_kv *kv, int n, const loom_arg_def *defs,
                      uint32_t n_defs)
{
    char valid[1024];

    for (int i = 0; i < n; i++) {
        if (find_arg(defs, n_defs, kv[i].key) < 0) {
            arg_names(defs, n_defs, valid, sizeof valid);
            return usage_error(c, "%s has no %s '%s'; its %ss are: %s", c->schema->name, what, kv[i].key,
                               what, valid);
        }
        for (int j = 0; j < i; j++) {
            if (strcmp(kv[j].key, kv[i].key) == 0)
                return usage_error(c, "%s '%s' given twice", what, kv[i].key);
        }
    }
    return CLI_OK;
}

/* Every command-line name must exist in the schema; every required input
** must be given. Nothing is read before this passes. */
static int check_names(callspec *c)
{
    const loom_op_schema *s = c->schema;

    if (c->weights != NULL && s->object_class == NULL)
        return usage_error(c, "--weights is for methods of an object class; %s is not one", s->name);
    if (check_args(c, "input", c->ins, c->n_ins, s->inputs, s->n_inputs) != CLI_OK
        || check_args(c, "input", c->lines, c->n_lines, s->inputs, s->n_inputs) != CLI_OK)
        return CLI_USAGE;
    for (int i = 0; i < c->n_lines; i++) {
        int k = find_arg(s->inputs, s->n_inputs, c->lines[i].key);
        if (!(s->inputs[k].flags & LOOM_ARG_JAGGED))
            return usage_error(c, "--lines %s: '%s' is not a jagged input (strings are a LOOM_ARG_JAGGED u8 "
                               "input and its offsets)", c->lines[i].key, c->lines[i].key);
        for (int j = 0; j < c->n_ins; j++)
            if (strcmp(c->ins[j].key, c->lines[i].key) == 0
                || strcmp(c->ins[j].key, s->inputs[k + 1].name) == 0)
                return usage_error(c, "input '%s' given by both --in and --lines", c->ins[j].key);
    }
    for (uint32_t k = 0; k < s->n_inputs; k++) {
        int given = 0;
        for (int i = 0; i < c->n_ins; i++)
            given |= strcmp(c->ins[i].key, s->inputs[k].name) == 0;
        for (int i = 0; i < c->n_lines; i++) {
            int v = find_arg(s->inputs, s->n_inputs, c->lines[i].key);
            given |= v == (int)k || v + 1 == (int)k;
        }
        given |= c->kjt_inputs != NULL && c->kjt_inputs[k] != NULL;
        if (!given && !(s->inputs[k].flags & LOOM_ARG_OPTIONAL)) {
            if (s->inputs[k].flags & LOOM_ARG_JAGGED)
                return usage_error(c, "%s needs input '%s' (--lines %s=FILE.txt for strings, or --in %s=FILE.npy "
                                   "with its offsets)", s->name, s->inputs[k].name, s->inputs[k].name,
                                   s->inputs[k].name);
            return usage_error(c, "%s needs input '%s' (--in %s=FILE.npy)", s->name, s->inputs[k].name,
                               s->inputs[k].name);
        }
    }
    if (check_args(c, "output", c->outs, c->n_outs, s->outputs, s->n_outputs) != CLI_OK)
        return CLI_USAGE;
    for (int i = 0; i < c->n_attrs; i++) {
        const char *key = c->attrs[i].key;
        if (find_attr(s->attrs, s->n_attrs, key) >= 0)
            continue;
        if (c->cls != NULL && find_attr(c->cls->attrs, c->cls->n_attrs, key) >= 0)
            continue;
        return usage_error(c, "%s has no attribute '%s' (`loom info %s` lists them)", s->name, key, s->name);
    }
    return CLI_OK;
}

/* The whole of a file, malloc'd into *data (n bytes; not NUL-terminated).
** opt names the option in messages. */
static int slurp_file(const callspec *c, const char *opt, const char *path, char **data_out, size_t *n_out)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "loom %s: %s: cannot open '%s': %s\n", c->cmd, opt, path, strerror(errno));
        return CLI_FAIL;
    }
    char *data = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n == cap) {
            char *p = realloc(data, cap = cap ? cap * 2 : 65536);
            if (p == NULL) {
                free(data);
                fclose(f);
                fprintf(stderr, "loom %s: out of memory reading '%s'\n", c->cmd, path);
                return CLI_FAIL;
            }
            data = p;
        }
        got = fread(data + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(data);
        fprintf(stderr, "loom %s: %s: cannot read '%s'\n", c->cmd, opt, path);
        return CLI_FAIL;
    }
    *data_out = data;
    *n_out = n;
    return CLI_OK;
}

/* `--in NAME=@FILE`: the file's raw bytes as a u8 [N] tensor (an image for
** vision.decode_image, an audio file for audio.load's src). */
static int read_bytes(const callspec *c, const char *path, loom_tensor **out)
{
    char *data;
    size_t n;
    if (slurp_file(c, "--in", path, &data, &n) != CLI_OK)
        return CLI_FAIL;
    const int64_t shape[1] = { (int64_t)n };
    if (loom_tensor_new(out, LOOM_DTYPE_U8, 1, shape, NULL) != LOOM_OK) {
        free(data);
        return cli_fail();
    }
    if (n > 0)
        memcpy(loom_data(*out), data, n);
    free(data);
    return CLI_OK;
}

/* The lines of a text file as the jagged pair values (u8) + offsets (i64
** [B+1]): split at '\n' only, so '\r' and every other byte stay in the
** line; a final '\n' opens no line. */
static int read_lines(callspec *c, const char *path, loom_tensor **values, loom_tensor **offsets)
{
    char *data;
    size_t n;
    if (slurp_file(c, "--lines", path, &data, &n) != CLI_OK)
        return CLI_FAIL;
    int64_t newlines = 0;
    for (size_t i = 0; i < n; i++)
        newlines += data[i] == '\n';
    const int64_t lines = newlines + (n > 0 && data[n - 1] != '\n');
    const int64_t vshape[1] = { (int64_t)n - newlines };
    const int64_t oshape[1] = { lines + 1 };
    if (loom_tensor_new(values, LOOM_DTYPE_U8, 1, vshape, NULL) != LOOM_OK
        || loom_tensor_new(offsets, LOOM_DTYPE_I64, 1, oshape, NULL) != LOOM_OK) {
        free(data);
        return cli_fail();
    }
    uint8_t *v = loom_data(*values);
    int64_t *o = loom_data(*offsets), at = 0, b = 0;
    o[0] = 0;
    for (size_t i = 0, start = 0; i <= n; i++) {
        if (i == n ? i > start : data[i] == '\n') {
            if (i > start)
                memcpy(v + at, data + start, i - start);
            at += (int64_t)(i - start);
            o[++b] = at;
            start = i + 1;
        }
    }
    free(data);
    return CLI_OK;
}

static int read_inputs(callspec *c)
{
    const loom_op_schema *s = c->schema;

    c->inputs = calloc(s->n_inputs > 0 ? s->n_inputs : 1, sizeof *c->inputs);
    if (c->inputs == NULL) {
        fprintf(stderr, "loom %s: out of memory\n", c->cmd);
        return CLI_FAIL;
    }
    for (int i = 0; i < c->n_ins; i++) {
        int idx = find_arg(s->inputs, s->n_inputs, c->ins[i].key);
        loom_tensor *host = NULL, *dev = NULL;
        if (c->ins[i].value[0] == '@') {
            if (read_bytes(c, c->ins[i].value + 1, &host) != CLI_OK)
                return CLI_FAIL;
        } else if (loom_npy_read(&host, c->ins[i].value) != LOOM_OK) {
            return cli_fail();
        }
        if (c->device.device_type != LOOM_DEVICE_CPU) {
            loom_status st = loom_tensor_copy_to(&dev, host, &c->device);
            loom_tensor_free(host);
            if (st != LOOM_OK)
                return cli_fail();
            host = dev;
        }
        c->inputs[idx] = host;
    }
    for (uint32_t k = 0; c->kjt_inputs != NULL && k < s->n_inputs; k++) {
        if (c->kjt_inputs[k] == NULL)
            continue;
        c->inputs[k] = c->kjt_inputs[k];
        c->kjt_inputs[k] = NULL;
        if (c->device.device_type != LOOM_DEVICE_CPU) {
            loom_tensor *dev = NULL;
            loom_status st = loom_tensor_copy_to(&dev, c->inputs[k], &c->device);
            loom_tensor_free(c->inputs[k]);
            c->inputs[k] = dev;
            if (st != LOOM_OK)
                return cli_fail();
        }
    }
    for (int i = 0; i < c->n_lines; i++) {
        int idx = find_arg(s->inputs, s->n_inputs, c->lines[i].key);
        loom_tensor *v = NULL, *o = NULL;
        if (read_lines(c, c->lines[i].value, &v, &o) != CLI_OK) {
            loom_tensor_free(v);
            return CLI_FAIL;
        }
        c->inputs[idx] = v;
        c->inputs[idx + 1] = o;
        if (c->device.device_type != LOOM_DEVICE_CPU) {
            for (int k = 0; k < 2; k++) {
                loom_tensor *dev = NULL;
                loom_status st = loom_tensor_copy_to(&dev, c->inputs[idx + k], &c->device);
                loom_tensor_free(c->inputs[idx + k]);
                c->inputs[idx + k] = dev;
                if (st != LOOM_OK)
                    return cli_fail();
            }
        }
    }
    return CLI_OK;
}

static int parse_attrs(callspec *c)
{
    if (loom_attrs_new(&c->op_attrs) != LOOM_OK)
        return cli_fail();
    if (c->cls != NULL && loom_attrs_new(&c->class_attrs) != LOOM_OK)
        return cli_fail();
    for (int i = 0; i < c->n_attrs; i++) {
        const char *key = c->attrs[i].key;
        int to_class = c->cls != NULL && find_attr(c->cls->attrs, c->cls->n_attrs, key) >= 0;
        loom_attrs *bag = to_class ? c->class_attrs : c->op_attrs;
        if (loom_attrs_parse(bag, to_class ? c->cls->name : c->schema->name, key, c->attrs[i].value) != LOOM_OK)
            return cli_fail();
    }
    return CLI_OK;
}

int callspec_prepare(callspec *c)
{
    int rc;

    if (cli_init() != CLI_OK)
        return CLI_FAIL;
    c->op = loom_op_find(c->op_name);
    if (c->op == NULL)
        return cli_fail();
    c->schema = loom_op_schema_of(c->op);
    if (c->schema == NULL)
        return cli_fail();
    if (c->schema->object_class != NULL) {
        c->cls = cli_find_class(c->schema->object_class);
        if (c->cls == NULL) {
            fprintf(stderr, "loom: %s is a method of object class %s, which no loaded pack provides\n",
                    c->schema->name, c->schema->object_class);
            return CLI_FAIL;
        }
    }
    if ((rc = callspec_read_kjts(c)) != CLI_OK || (rc = check_names(c)) != CLI_OK || (rc = parse_device(c)) != CLI_OK)
        return rc;
    if ((rc = parse_attrs(c)) != CLI_OK || (rc = read_inputs(c)) != CLI_OK)
        return rc;
    if (c->cls != NULL && loom_object_create(&c->object, c->cls->name, c->class_attrs, c->weights) != LOOM_OK)
        return cli_fail();
    c->options = (loom_call_options)LOOM_CALL_OPTIONS_INIT;
    c->options.object = c->object;
    c->options.backend = c->backend;
    return CLI_OK;
}

loom_status callspec_call(callspec *c, loom_tensor **outputs)
{
    const loom_op_schema *s = c->schema;
    loom_status st = loom_op_run(c->op, (const loom_tensor *const *)c->inputs, (int32_t)s->n_inputs,
                                c->op_attrs, outputs, (int32_t)s->n_outputs, &c->options);
    if (st != LOOM_OK || c->device.device_type == LOOM_DEVICE_CPU)
        return st;
    for (uint32_t i = 0; i < s->n_outputs; i++) {
        if (outputs[i] != NULL && (st = loom_tensor_sync(outputs[i])) != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}

void callspec_free(callspec *c)
{
    if (c->inputs != NULL) {
        for (uint32_t i = 0; i < c->schema->n_inputs; i++)
            loom_tensor_free(c->inputs[i]);
    }
    free(c->inputs);
    callspec_free_kjts(c);
    loom_object_free(c->object);
    loom_attrs_free(c->op_attrs);
    loom_attrs_free(c->class_attrs);
    free(c->ins);
    free(c->attrs);
    free(c->outs);
    free(c->lines);
    memset(c, 0, sizeof *c);
}
