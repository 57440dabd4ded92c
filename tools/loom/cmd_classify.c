/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cmd_classify.c - `loom classify --model CLASS --weights FILE [--attr
** weights=ENTRY] IMAGE...`: torchvision's classification recipe through the
** public API only. The entry (vision.weights_meta) gives the preset and the
** category names; each image is read (vision.read_file), decoded to RGB
** (vision.decode_image) and preprocessed (vision.preprocess) straight into
** its slot of a [B, 3, crop, crop] batch; the batch goes through the model
** (a method call on the object made from the weights file), then
** vision.softmax, and the top k of each row are printed with their names.
**
** An image that cannot be read or decoded is reported (stderr, and as its
** "error" in --json) and the others are still classified; the exit status
** is then 1. The entry, the file and the options are checked before any
** image is touched: a class without entries, an unknown entry, or a file
** that does not fit the entry stops the command with the core's message.
*/
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"

static const char classify_usage[] =
    "usage: loom classify --model CLASS --weights FILE.safetensors [--attr weights=ENTRY]\n"
    "                     [--topk N] [--batch N] [--json] IMAGE...\n"
    "  Classify JPEG or PNG images with a model of the vision pack and one of its\n"
    "  weight entries (torchvision's multi-weight API): the entry's preset\n"
    "  (resize, centre crop, normalise), the model, softmax, and the top N\n"
    "  categories of the entry with their scores, per image.\n"
    "  --model CLASS      vision.resnet50, vision.resnet18, ... (`loom list`)\n"
    "  --weights FILE     the model's state_dict as safetensors (tools/convert_torchvision.py)\n"
    "  --attr KEY=VALUE   attributes of the model's class; weights=ENTRY names the entry\n"
    "                     (IMAGENET1K_V1, IMAGENET1K_V2, ...; default DEFAULT)\n"
    "  --topk N           categories per image (default 5)\n"
    "  --batch N          images per forward call (default 8)\n"
    "  --json             {\"model\", \"weights\", \"images\": [{\"image\", \"top\": [{\"index\",\n"
    "                     \"category\", \"score\"}]} or {\"image\", \"error\"}]}\n";

/* What the command line asked for. */
typedef struct classify_args {
    const char *model, *weights_path, *entry;
    char **attrs;                   /* KEY=VALUE words of argv */
    int n_attrs;
    long topk, batch;
    int json;
    char **images;
    int n_images;
} classify_args;

/* The entry's preset and categories, from vision.weights_meta. */
typedef struct entry_meta {
    cJSON *root;
    const char *name;
    long resize_size, crop_size;
    const char *interpolation;
    double mean[3], std[3];
    int antialias;
    const cJSON *categories;        /* array of strings */
    long n_categories;
} entry_meta;

static int parse_positive(const char *s, long *out)
{
    char *end;
    const long v = strtol(s, &end, 10);
    if (*end != '\0' || end == s || v < 1)
        return 0;
    *out = v;
    return 1;
}

/* A failure of the command itself (not of a loom call): stderr, and the
** --json error object as cli_fail prints it. Returns CLI_FAIL. */
static int fail_with(const char *fmt, ...) LOOM_PRINTF(1, 2);
static int fail_with(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (cli_json_errors) {
        cJSON *root = cJSON_CreateObject(), *e = cJSON_CreateObject();
        json_add_str(e, "status", "LOOM_EINVAL");
        json_add_str(e, "message", msg);
        json_add_num(e, "exit", CLI_FAIL);
        cJSON_AddItemToObject(root, "error", e);
        json_emit(root);
    }
    fprintf(stderr, "loom classify: %s\n", msg);
    return CLI_FAIL;
}

static int meta_number(const cJSON *o, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        return 0;
    *out = v->valuedouble;
    return 1;
}

static int meta_triple(const cJSON *o, const char *key, double out[3])
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 3)
        return 0;
    for (int i = 0; i < 3; i++) {
        const cJSON *x = cJSON_GetArrayItem(v, i);
        if (!cJSON_IsNumber(x))
            return 0;
        out[i] = x->valuedouble;
    }
    return 1;
}

/* vision.weights_meta of (model, entry) into m. */
static int load_meta(const classify_args *a, entry_meta *m)
{
    loom_attrs *at = NULL;
    loom_tensor *out = NULL;
    memset(m, 0, sizeof *m);
    if (loom_op_find("vision.weights_meta") == NULL)
        return fail_with("the vision pack is not loaded (vision.weights_meta not found; see `loom doctor`)");
    if (loom_attrs_new(&at) != LOOM_OK || loom_attrs_set_string(at, "model", a->model) != LOOM_OK
        || loom_attrs_set_string(at, "weights", a->entry) != LOOM_OK
        || loom_run("vision.weights_meta", NULL, 0, at, &out, 1, NULL) != LOOM_OK) {
        loom_attrs_free(at);
        return cli_fail();
    }
    loom_attrs_free(at);
    m->root = cJSON_ParseWithLength(loom_data(out), loom_tensor_nbytes(out));
    loom_tensor_free(out);
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(m->root, "transforms");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(m->root, "name");
    const cJSON *interp = cJSON_GetObjectItemCaseSensitive(tr, "interpolation");
    const cJSON *aa = cJSON_GetObjectItemCaseSensitive(tr, "antialias");
    double rs = 0, cs = 0;
    m->categories = cJSON_GetObjectItemCaseSensitive(m->root, "categories");
    if (m->root == NULL || !cJSON_IsString(name) || !cJSON_IsString(interp) || !meta_number(tr, "resize_size", &rs)
        || !meta_number(tr, "crop_size", &cs) || !meta_triple(tr, "mean", m->mean) || !meta_triple(tr, "std", m->std)
        || !cJSON_IsArray(m->categories))
        return fail_with("vision.weights_meta of %s %s gave no preset and categories", a->model, a->entry);
    m->name = name->valuestring;
    m->interpolation = interp->valuestring;
    m->resize_size = (long)rs;
    m->crop_size = (long)cs;
    m->antialias = !cJSON_IsFalse(aa);
    m->n_categories = cJSON_GetArraySize(m->categories);
    return CLI_OK;
}

/* The object of the model class from the weights file, the entry named. */
static int make_model(const classify_args *a, const entry_meta *m, loom_object **obj)
{
    loom_attrs *at = NULL;
    int rc = CLI_OK;
    if (loom_attrs_new(&at) != LOOM_OK)
        return cli_fail();
    for (int i = 0; i < a->n_attrs && rc == CLI_OK; i++) {
        char *eq = strchr(a->attrs[i], '=');
        *eq = '\0';
        if (strcmp(a->attrs[i], "weights") != 0 && loom_attrs_parse(at, a->model, a->attrs[i], eq + 1) != LOOM_OK)
            rc = cli_fail();
        *eq = '=';
    }
    if (rc == CLI_OK && (loom_attrs_set_string(at, "weights", m->name) != LOOM_OK
                         || loom_object_create(obj, a->model, at, a->weights_path) != LOOM_OK))
        rc = cli_fail();
    loom_attrs_free(at);
    return rc;
}

/* The preset's attributes, for vision.preprocess. */
static int preset_attrs(const entry_meta *m, loom_attrs **out)
{
    if (loom_attrs_new(out) != LOOM_OK || loom_attrs_set_int(*out, "resize_size", m->resize_size) != LOOM_OK
        || loom_attrs_set_int(*out, "crop_size", m->crop_size) != LOOM_OK
        || loom_attrs_set_string(*out, "interpolation", m->interpolation) != LOOM_OK
        || loom_attrs_set_floats(*out, "mean", m->mean, 3) != LOOM_OK
        || loom_attrs_set_floats(*out, "std", m->std, 3) != LOOM_OK
        || loom_attrs_set_bool(*out, "antialias", m->antialias) != LOOM_OK)
        return cli_fail();
    return CLI_OK;
}

/* One image into slot (a [3, crop, crop] f32 view): read, decode to RGB,
** preset. LOOM_OK or the failing call's status (its message stays set). */
static loom_status prepare_image(const char *path, const loom_attrs *preset, loom_tensor *slot)
{
    loom_attrs *ra = NULL, *da = NULL;
    loom_tensor *bytes = NULL, *img = NULL;
    loom_status st;
    if ((st = loom_attrs_new(&ra)) == LOOM_OK && (st = loom_attrs_set_string(ra, "path", path)) == LOOM_OK
        && (st = loom_run("vision.read_file", NULL, 0, ra, &bytes, 1, NULL)) == LOOM_OK
        && (st = loom_attrs_new(&da)) == LOOM_OK && (st = loom_attrs_set_string(da, "mode", "RGB")) == LOOM_OK) {
        const loom_tensor *in[1] = { bytes };
        if ((st = loom_run("vision.decode_image", in, 1, da, &img, 1, NULL)) == LOOM_OK) {
            const loom_tensor *pin[1] = { img };
            st = loom_run("vision.preprocess", pin, 1, preset, &slot, 1, NULL);
        }
    }
    loom_tensor_free(bytes);
    loom_tensor_free(img);
    loom_attrs_free(ra);
    loom_attrs_free(da);
    return st;
}

/* The k largest of row[0..n) by index into top[k], the larger first, the
** lower index first among equals. */
static void top_k(const float *row, long n, long k, long *top)
{
    for (long j = 0; j < k; j++) {
        long best = -1;
        for (long i = 0; i < n; i++) {
            int taken = 0;
            for (long t = 0; t < j && !taken; t++)
                taken = top[t] == i;
            if (!taken && (best < 0 || row[i] > row[best]))
                best = i;
        }
        top[j] = best;
    }
}

static const char *category(const entry_meta *m, long i)
{
    const cJSON *c = i < m->n_categories ? cJSON_GetArrayItem(m->categories, (int)i) : NULL;
    return cJSON_IsString(c) ? c->valuestring : "?";
}

/* Prints (or adds to images_json) the top k of each classified row. */
static void report(const classify_args *a, const entry_meta *m, const float *probs, long classes, char **names,
                   int n, cJSON *images_json)
{
    long k = a->topk < classes ? a->topk : classes;
    long *top = malloc((size_t)k * sizeof *top);
    if (top == NULL)
        return;
    for (int r = 0; r < n; r++) {
        const float *row = probs + (size_t)r * (size_t)classes;
        top_k(row, classes, k, top);
        if (images_json != NULL) {
            cJSON *img = cJSON_CreateObject(), *list = cJSON_CreateArray();
            json_add_str(img, "image", names[r]);
            for (long j = 0; j < k; j++) {
                cJSON *e = cJSON_CreateObject();
                json_add_num(e, "index", (double)top[j]);
                json_add_str(e, "category", category(m, top[j]));
                json_add_num(e, "score", row[top[j]]);
                cJSON_AddItemToArray(list, e);
            }
            cJSON_AddItemToObject(img, "top", list);
            cJSON_AddItemToArray(images_json, img);
        } else {
            printf("%s\n", names[r]);
            for (long j = 0; j < k; j++)
                printf("  %2ld. %8.5f  %s (%ld)\n", j + 1, row[top[j]], category(m, top[j]), top[j]);
        }
    }
    free(top);
}

/* Classify the images in batches; returns CLI_OK, or CLI_FAIL when an image
** failed (the others are reported) or a call on the batch failed. */
static int classify(const classify_args *a, const entry_meta *m, loom_object *obj)
{
    const long crop = m->crop_size, per = 3 * crop * crop, B = a->batch;
    const int64_t bshape[4] = { B, 3, crop, crop };
    loom_tensor *batch = NULL;
    loom_attrs *preset = NULL, *sa = NULL;
    cJSON *root = a->json ? cJSON_CreateObject() : NULL, *images_json = a->json ? cJSON_CreateArray() : NULL;
    char **names = calloc((size_t)B, sizeof *names);
    int rc = CLI_OK, bad_images = 0;
    if (names == NULL || loom_tensor_new(&batch, LOOM_DTYPE_F32, 4, bshape, NULL) != LOOM_OK
        || preset_attrs(m, &preset) != CLI_OK || loom_attrs_new(&sa) != LOOM_OK
        || loom_attrs_set_int(sa, "dim", 1) != LOOM_OK)
        rc = cli_fail();
    for (int next = 0; rc == CLI_OK && next < a->n_images;) {
        int n = 0;
        for (; next < a->n_images && n < B; next++) {
            loom_tensor *slot = NULL;
            const int64_t sshape[3] = { 3, crop, crop };
            loom_status st = loom_tensor_wrap(&slot, (float *)loom_data(batch) + (size_t)n * (size_t)per,
                                              LOOM_DTYPE_F32, 3, sshape, NULL, NULL);
            if (st == LOOM_OK)
                st = prepare_image(a->images[next], preset, slot);
            loom_tensor_free(slot);
            if (st == LOOM_OK) {
                names[n++] = a->images[next];
                continue;
            }
            bad_images++;
            fflush(stdout);   /* the lines of the images before it come first */
            fprintf(stderr, "loom classify: %s: %s\n", a->images[next], loom_last_error());
            if (images_json != NULL) {
                cJSON *e = cJSON_CreateObject();
                json_add_str(e, "image", a->images[next]);
                json_add_str(e, "error", loom_last_error());
                cJSON_AddItemToArray(images_json, e);
            }
        }
        if (n == 0)
            continue;
        /* the rows that decoded: a view of the batch's first n */
        const int64_t vshape[4] = { n, 3, crop, crop };
        loom_tensor *view = NULL, *logits = NULL, *probs = NULL;
        loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
        opt.object = obj;
        if (loom_tensor_wrap(&view, loom_data(batch), LOOM_DTYPE_F32, 4, vshape, NULL, NULL) != LOOM_OK
            || loom_run(a->model, (const loom_tensor *const[]){ view }, 1, NULL, &logits, 1, &opt) != LOOM_OK
            || loom_run("vision.softmax", (const loom_tensor *const[]){ logits }, 1, sa, &probs, 1, NULL) != LOOM_OK)
            rc = cli_fail();
        else
            report(a, m, loom_data(probs), (long)probs->shape[1], names, n, images_json);
        loom_tensor_free(view);
        loom_tensor_free(logits);
        loom_tensor_free(probs);
    }
    if (rc == CLI_OK && root != NULL) {
        json_add_str(root, "model", a->model);
        json_add_str(root, "weights", m->name);
        json_add_num(root, "topk", (double)a->topk);
        cJSON_AddItemToObject(root, "images", images_json);
        images_json = NULL;
        if (json_emit(root) != 0)
            rc = CLI_FAIL;
        root = NULL;
    }
    cJSON_Delete(images_json);
    cJSON_Delete(root);
    loom_attrs_free(preset);
    loom_attrs_free(sa);
    loom_tensor_free(batch);
    free(names);
    return rc == CLI_OK && bad_images > 0 ? CLI_FAIL : rc;
}

int cmd_classify(int argc, char **argv)
{
    static const struct option opts[] = {
        { "model", required_argument, NULL, 'm' }, { "weights", required_argument, NULL, 'w' },
        { "attr", required_argument, NULL, 'a' }, { "topk", required_argument, NULL, 'k' },
        { "batch", required_argument, NULL, 'b' }, { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
    };
    classify_args a = { .entry = "DEFAULT", .topk = 5, .batch = 8 };
    int c;
    a.attrs = calloc((size_t)argc + 1, sizeof *a.attrs);
    if (a.attrs == NULL)
        return fail_with("out of memory");
    opterr = 0;
    optind = 1;
    int rc = CLI_OK;
    while (rc == CLI_OK && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(classify_usage, stdout);
            free(a.attrs);
            return CLI_OK;
        } else if (c == 'm') {
            a.model = optarg;
        } else if (c == 'w') {
            a.weights_path = optarg;
        } else if (c == 'a') {
            if (strchr(optarg, '=') == NULL || optarg[0] == '=')
                rc = cli_usage_error("classify", classify_usage, "--attr wants KEY=VALUE, got '%s'", optarg);
            else if (strncmp(optarg, "weights=", 8) == 0)
                a.entry = optarg + 8;
            else
                a.attrs[a.n_attrs++] = optarg;
        } else if (c == 'k') {
            if (!parse_positive(optarg, &a.topk))
                rc = cli_usage_error("classify", classify_usage, "--topk takes a count >= 1, not '%s'", optarg);
        } else if (c == 'b') {
            if (!parse_positive(optarg, &a.batch) || a.batch > 4096)
                rc = cli_usage_error("classify", classify_usage, "--batch takes a count in [1, 4096], not '%s'",
                                     optarg);
        } else if (c == 'j') {
            a.json = 1;
        } else {
            rc = cli_bad_option("classify", classify_usage, c, argv);
        }
    }
    if (rc == CLI_OK && a.model == NULL)
        rc = cli_usage_error("classify", classify_usage, "--model CLASS is required (vision.resnet50, ...)");
    else if (rc == CLI_OK && a.weights_path == NULL)
        rc = cli_usage_error("classify", classify_usage, "--weights FILE.safetensors is required");
    else if (rc == CLI_OK && optind >= argc)
        rc = cli_usage_error("classify", classify_usage, "no IMAGE given");
    if (rc != CLI_OK) {
        free(a.attrs);
        return rc;
    }
    a.images = argv + optind;
    a.n_images = argc - optind;
    entry_meta m;
    loom_object *obj = NULL;
    memset(&m, 0, sizeof m);
    if ((rc = cli_init()) == CLI_OK && (rc = load_meta(&a, &m)) == CLI_OK && (rc = make_model(&a, &m, &obj)) == CLI_OK)
        rc = classify(&a, &m, obj);
    loom_object_free(obj);
    cJSON_Delete(m.root);
    free(a.attrs);
    return rc;
}
