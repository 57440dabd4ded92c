/*
** cmd_demo.c - `loom demo [SECTION...]`: a short tour of what the loaded
** packs do, on generated data, ending with where each call ran.
**
** The table below is the list of sections; a section whose ops are missing
** says so and the tour goes on. The exit status is 1 when a section failed.
*/
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "demo.h"

static const demo_section sections[] = {
    { "matmul", "core.matmul", "core.matmul on every CPU backend", demo_core_matmul },
    { "add",    "core.add",    "core.add with broadcasting", demo_core_add },
    { "cast",   "core.cast",   "core.cast f32 -> bf16 -> f32: what bf16 keeps", demo_core_cast },
    { "linear", "core.linear", "core.linear with weights from a safetensors file", demo_core_linear },
    { "detect", "vision.batched_nms,vision.box_iou,vision.roi_align",
      "detector post-processing: batched NMS, IoU check, RoIAlign", demo_vision_detect },
    { "deform", "vision.deform_conv2d", "deform_conv2d with zero offsets is a convolution", demo_vision_deform },
    { "tbe", "fbgemm.tbe,fbgemm.quantize_rows,fbgemm.tbe_cache_stats",
      "embedding tables in every fbgemm weight type, and a row cache", demo_fbgemm_tbe },
    { "jagged", "fbgemm.jagged_to_padded_dense,fbgemm.dense_to_jagged",
      "jagged rows to a padded dense tensor and back", demo_fbgemm_jagged },
};
#define N_SECTIONS (sizeof sections / sizeof sections[0])

static const char usage[] =
    "usage: loom demo [--list] [SECTION...]\n"
    "  A short tour on generated data: each section runs a few calls, shows the\n"
    "  results, and the summary says which backend ran each call. Without\n"
    "  SECTION every section runs.\n"
    "  --list   print the sections\n";

/* Where each call ran, for the summary. Labels and names are copied: the
** dispatch strings are only valid until the next call. */
#define MAX_RECORDS 64
static struct {
    char label[64], op[64], backend[32], impl[64];
} records[MAX_RECORDS];
static int n_records;

void demo_record(const char *label)
{
    loom_dispatch_info d = LOOM_DISPATCH_INFO_INIT;
    if (n_records >= MAX_RECORDS || loom_last_dispatch(&d) != LOOM_OK)
        return;
    snprintf(records[n_records].label, sizeof records[n_records].label, "%s", label);
    snprintf(records[n_records].op, sizeof records[n_records].op, "%s", d.op != NULL ? d.op : "?");
    snprintf(records[n_records].backend, sizeof records[n_records].backend, "%s",
             d.backend != NULL ? d.backend : "?");
    snprintf(records[n_records].impl, sizeof records[n_records].impl, "%s", d.impl != NULL ? d.impl : "?");
    n_records++;
}

/* The first op of a ','-separated list that is not loaded, or NULL. */
static const char *missing_op(const char *ops, char *buf, size_t size)
{
    const char *p = ops;
    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        snprintf(buf, size, "%.*s", (int)len, p);
        if (loom_op_find(buf) == NULL)
            return buf;
        p += len;
        if (*p == ',')
            p++;
    }
    return NULL;
}

static int selected(const demo_section *s, int argc, char **argv, int first)
{
    if (first >= argc)
        return 1;
    for (int i = first; i < argc; i++) {
        if (strcmp(argv[i], s->name) == 0)
            return 1;
    }
    return 0;
}

static void summary(void)
{
    int wl = 5, wo = 2;
    if (n_records == 0)
        return;
    for (int i = 0; i < n_records; i++) {
        if ((int)strlen(records[i].label) > wl)
            wl = (int)strlen(records[i].label);
        if ((int)strlen(records[i].op) > wo)
            wo = (int)strlen(records[i].op);
    }
    printf("\nWhere each call ran (LOOM_VERBOSE=2 shows why):\n");
    for (int i = 0; i < n_records; i++)
        printf("  %-*s  %-*s  %-8s %s\n", wl, records[i].label, wo, records[i].op, records[i].backend,
               records[i].impl);
}

int cmd_demo(int argc, char **argv)
{
    static const struct option opts[] = {
        { "list", no_argument, NULL, 'l' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c, failed = 0, ran = 0;
    char missing[128];

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return CLI_OK;
        } else if (c == 'l') {
            for (size_t i = 0; i < N_SECTIONS; i++)
                printf("%-8s %s\n", sections[i].name, sections[i].title);
            return CLI_OK;
        } else {
            return cli_bad_option("demo", usage, c, argv);
        }
    }
    for (int i = optind; i < argc; i++) {
        int known = 0;
        for (size_t k = 0; k < N_SECTIONS; k++)
            known |= strcmp(argv[i], sections[k].name) == 0;
        if (!known)
            return cli_usage_error("demo", usage, "no section '%s' (`loom demo --list`)", argv[i]);
    }
    if (cli_init() != CLI_OK)
        return CLI_FAIL;
    n_records = 0;
    printf("loom %s demo\n", loom_version());
    for (size_t i = 0; i < N_SECTIONS; i++) {
        const demo_section *s = &sections[i];
        if (!selected(s, argc, argv, optind))
            continue;
        printf("\n== %s ==\n", s->title);
        if (missing_op(s->ops, missing, sizeof missing) != NULL) {
            printf("  skipped: op %s is not loaded (`loom doctor` shows what was)\n", missing);
            continue;
        }
        ran++;
        if (s->run() != CLI_OK)
            failed++;
    }
    summary();
    if (ran == 0)
        printf("\nNo section could run: no pack with these ops was loaded.\n");
    return failed > 0 ? CLI_FAIL : CLI_OK;
}

int demo_has_backend(const char *op_name, const char *backend)
{
    const loom_op *op = loom_op_find(op_name);
    int64_t n = op != NULL ? loom_op_kernel_count(op) : 0;
    for (int64_t i = 0; i < n; i++) {
        loom_kernel_info k = LOOM_KERNEL_INFO_INIT;
        if (loom_op_kernel_at(op, i, &k) == LOOM_OK && k.backend != NULL && strcmp(k.backend, backend) == 0)
            return 1;
    }
    return 0;
}

loom_tensor *demo_tensor(loom_dtype dtype, int32_t ndim, const int64_t *shape)
{
    loom_tensor *t = NULL;
    if (loom_tensor_new(&t, dtype, ndim, shape, NULL) != LOOM_OK) {
        cli_fail();
        return NULL;
    }
    return t;
}

loom_tensor *demo_f32(int32_t ndim, const int64_t *shape, const float *values)
{
    loom_tensor *t = demo_tensor(LOOM_DTYPE_F32, ndim, shape);
    if (t != NULL && values != NULL)
        memcpy(loom_data(t), values, loom_tensor_nbytes(t));
    return t;
}

float demo_random(void)
{
    /* xorshift32: the same numbers on every run and machine. */
    static uint32_t x = 2463534242u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return (float)((double)x / 2147483648.0 - 1.0);
}

void demo_show(const char *label, const loom_tensor *t)
{
    char shape[128];
    printf("  %-8s %s%s = ", label, loom_dtype_name(loom_tensor_dtype_of(t)), cli_shape(t, shape, sizeof shape));
    cli_print_values(t, 12);
    printf("\n");
}
