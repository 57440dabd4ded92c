/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cmd_detect.c - `loom detect --model CLASS --weights FILE [--attr K=V]
** [--min-score S] [--draw OUT.png] [--json] IMAGE`: a detector of the vision
** pack (vision.fasterrcnn_resnet50_fpn_v2, ...) on one JPEG or PNG image,
** through the public API only. The image is read (vision.read_file),
** decoded to RGB (vision.decode_image), scaled to [0, 1] floats as
** torchvision's to_tensor does (x / 255), and given to the model as a
** [1, 3, H, W] batch (a method call on the object made from the weights
** file; the model's own transform resizes and normalises it). The
** detections scoring at least --min-score are printed (label, score, box
** on the image in pixels). --draw writes the image with those boxes drawn
** (2 px outlines, a colour per label) as a PNG (vision.encode_png).
** With a weight entry chosen (--attr weights=COCO_V1 or DEFAULT; the object
** checks the file against it), each detection is named by the entry's
** categories (vision.weights_meta: the COCO names), in the text, the JSON
** ("category") and on the drawing (a label over each box).
** A Mask R-CNN (a method whose output 4 is `masks`) also gives each
** detection's mask pasted into the image: its area (the pixels whose
** probability is at least 0.5, as torchvision's examples threshold it)
** is printed, and --draw blends the thresholded mask in the box's colour.
*/
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "draw_text.h"
#include "json.h"

static const char detect_usage[] =
    "usage: loom detect --model CLASS --weights FILE.safetensors [--attr KEY=VALUE]...\n"
    "                   [--min-score S] [--draw OUT.png] [--json] IMAGE\n"
    "  Detect objects in a JPEG or PNG image with a detector of the vision pack\n"
    "  (torchvision's state_dict as safetensors): label, score and box per detection.\n"
    "  --model CLASS      vision.fasterrcnn_resnet50_fpn_v2, vision.retinanet_resnet50_fpn_v2, ...\n"
    "  --weights FILE     the model's state_dict as safetensors\n"
    "  --attr KEY=VALUE   attributes of the class (box_score_thresh=0.3, min_size=640, ...);\n"
    "                     weights=COCO_V1 (or DEFAULT) names the detections by the entry's categories\n"
    "  --min-score S      print and draw the detections scoring at least S (default 0.5)\n"
    "  --draw OUT.png     write the image with the boxes drawn\n"
    "  --json             {\"model\", \"image\", \"detections\": [{\"label\", \"score\", \"box\"}]}\n"
    "  Mask R-CNN models (vision.maskrcnn_resnet50_fpn_v2, ...) also give each mask's area\n"
    "  (pixels at probability >= 0.5; \"mask_area\" in JSON); --draw overlays the masks.\n";

typedef struct detect_args {
    const char *model, *weights_path, *draw, *image;
    char **attrs;
    int n_attrs, json;
    double min_score;
    const char *entry;          /* --attr weights=ENTRY, or NULL */
    cJSON *meta;                /* the entry's vision.weights_meta, or NULL */
} detect_args;

/* The entry's name of label, or NULL (no entry, or a label outside its categories). */
static const char *category_of(const detect_args *a, int64_t label)
{
    const cJSON *cats = a->meta != NULL ? cJSON_GetObjectItemCaseSensitive(a->meta, "categories") : NULL;
    const cJSON *c = label >= 0 && label < cJSON_GetArraySize(cats) ? cJSON_GetArrayItem(cats, (int)label) : NULL;
    return cJSON_IsString(c) ? c->valuestring : NULL;
}

/* a->meta: the JSON of the entry a->entry of the model's class (vision.weights_meta). */
static int read_entry(detect_args *a)
{
    loom_attrs *at = NULL;
    loom_tensor *out = NULL;
    loom_status st;
    if ((st = loom_attrs_new(&at)) == LOOM_OK && (st = loom_attrs_set_string(at, "model", a->model)) == LOOM_OK
        && (st = loom_attrs_set_string(at, "weights", a->entry)) == LOOM_OK)
        st = loom_run("vision.weights_meta", NULL, 0, at, &out, 1, NULL);
    loom_attrs_free(at);
    if (st != LOOM_OK)
        return cli_fail();
    a->meta = cJSON_ParseWithLength(loom_data(out), (size_t)loom_tensor_nbytes(out));
    loom_tensor_free(out);
    if (a->meta == NULL) {
        fprintf(stderr, "loom detect: vision.weights_meta of %s %s is not JSON\n", a->model, a->entry);
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* The object of the class from the weights file and the --attr words (a->entry: the weights one). */
static int make_model(detect_args *a, loom_object **obj)
{
    loom_attrs *at = NULL;
    int rc = CLI_OK;
    if (loom_attrs_new(&at) != LOOM_OK)
        return cli_fail();
    for (int i = 0; i < a->n_attrs && rc == CLI_OK; i++) {
        char *eq = strchr(a->attrs[i], '=');
        *eq = '\0';
        if (strcmp(a->attrs[i], "weights") == 0)
            a->entry = eq + 1;
        if (loom_attrs_parse(at, a->model, a->attrs[i], eq + 1) != LOOM_OK)
            rc = cli_fail();
        *eq = '=';
    }
    if (rc == CLI_OK && loom_object_create(obj, a->model, at, a->weights_path) != LOOM_OK)
        rc = cli_fail();
    loom_attrs_free(at);
    return rc;
}

/* The image as RGB u8 [3, H, W]. */
static int read_image(const char *path, loom_tensor **img)
{
    loom_attrs *ra = NULL, *da = NULL;
    loom_tensor *bytes = NULL;
    loom_status st;
    *img = NULL;
    if ((st = loom_attrs_new(&ra)) == LOOM_OK && (st = loom_attrs_set_string(ra, "path", path)) == LOOM_OK
        && (st = loom_run("vision.read_file", NULL, 0, ra, &bytes, 1, NULL)) == LOOM_OK
        && (st = loom_attrs_new(&da)) == LOOM_OK && (st = loom_attrs_set_string(da, "mode", "RGB")) == LOOM_OK)
        st = loom_run("vision.decode_image", (const loom_tensor *const[]){ bytes }, 1, da, img, 1, NULL);
    loom_tensor_free(bytes);
    loom_attrs_free(ra);
    loom_attrs_free(da);
    return st == LOOM_OK ? CLI_OK : cli_fail();
}

/* A 2 px outline of box (x1, y1, x2, y2) in colour rgb on img [3, H, W]. */
static void draw_box(loom_tensor *img, const float *box, const uint8_t *rgb)
{
    const int64_t h = img->shape[1], w = img->shape[2];
    uint8_t *p = loom_data(img);
    int64_t x1 = (int64_t)box[0], y1 = (int64_t)box[1], x2 = (int64_t)box[2], y2 = (int64_t)box[3];
    x1 = x1 < 0 ? 0 : x1 >= w ? w - 1 : x1;
    x2 = x2 < 0 ? 0 : x2 >= w ? w - 1 : x2;
    y1 = y1 < 0 ? 0 : y1 >= h ? h - 1 : y1;
    y2 = y2 < 0 ? 0 : y2 >= h ? h - 1 : y2;
    for (int64_t y = y1; y <= y2; y++)
        for (int64_t x = x1; x <= x2; x++) {
            const int edge = x - x1 < 2 || x2 - x < 2 || y - y1 < 2 || y2 - y < 2;
            if (!edge)
                continue;
            for (int c = 0; c < 3; c++)
                p[(c * h + y) * w + x] = rgb[c];
        }
}

/* Mask i of masks [n, 1, H, W]: its pixels at probability >= 0.5 counted, and
** with rgb given blended half and half into img [3, H, W] in that colour. */
static int64_t mask_area(const loom_tensor *masks, int64_t i, loom_tensor *img, const uint8_t *rgb)
{
    const int64_t h = masks->shape[2], w = masks->shape[3];
    const float *m = (const float *)loom_data(masks) + i * h * w;
    uint8_t *p = img != NULL ? loom_data(img) : NULL;
    int64_t area = 0;
    for (int64_t j = 0; j < h * w; j++) {
        if (!(m[j] >= 0.5f))
            continue;
        area++;
        for (int c = 0; p != NULL && c < 3; c++)
            p[c * h * w + j] = (uint8_t)((p[c * h * w + j] + rgb[c] + 1) / 2);
    }
    return area;
}

/* img with the kept boxes drawn (and labelled with their category and
** score where the entry names them), encoded as PNG into path. */
static int write_drawing(const detect_args *a, const char *path, loom_tensor *img, const float *boxes,
                         const float *scores, const int64_t *labels, const loom_tensor *masks, int64_t n,
                         double min_score)
{
    static const uint8_t palette[6][3] = { { 230, 25, 75 }, { 60, 180, 75 }, { 255, 225, 25 },
                                           { 0, 130, 200 }, { 245, 130, 48 }, { 145, 30, 180 } };
    for (int64_t i = 0; i < n && masks != NULL; i++)
        if (scores[i] >= min_score)
            mask_area(masks, i, img, palette[labels[i] % 6]);
    for (int64_t i = 0; i < n; i++)
        if (scores[i] >= min_score)
            draw_box(img, boxes + 4 * i, palette[labels[i] % 6]);
    for (int64_t i = 0; i < n; i++) {
        const char *name = category_of(a, labels[i]);
        if (scores[i] < min_score || name == NULL)
            continue;
        char text[96];
        snprintf(text, sizeof text, "%s %.2f", name, scores[i]);
        draw_label(img, (int64_t)boxes[4 * i], (int64_t)boxes[4 * i + 1], text, palette[labels[i] % 6]);
    }
    loom_tensor *png = NULL;
    if (loom_run("vision.encode_png", (const loom_tensor *const[]){ img }, 1, NULL, &png, 1, NULL) != LOOM_OK)
        return cli_fail();
    FILE *f = fopen(path, "wb");
    const size_t bytes = (size_t)loom_tensor_nbytes(png);
    int ok = f != NULL && fwrite(loom_data(png), 1, bytes, f) == bytes;
    if (f != NULL)
        ok = fclose(f) == 0 && ok;
    loom_tensor_free(png);
    if (!ok) {
        fprintf(stderr, "loom detect: cannot write %s\n", path);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int detect(const detect_args *a, loom_object *obj)
{
    loom_tensor *img = NULL, *batch = NULL, *out[5] = { NULL, NULL, NULL, NULL, NULL };
    int rc = read_image(a->image, &img);
    if (rc != CLI_OK)
        return rc;
    const int64_t h = img->shape[1], w = img->shape[2], bshape[4] = { 1, 3, h, w };
    if (loom_tensor_new(&batch, LOOM_DTYPE_F32, 4, bshape, NULL) != LOOM_OK) {
        loom_tensor_free(img);
        return cli_fail();
    }
    const uint8_t *px = loom_data(img);
    float *x = loom_data(batch);
    for (int64_t i = 0; i < 3 * h * w; i++)
        x[i] = (float)px[i] / 255.0f;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    /* a Mask R-CNN's method has the masks as output 4 */
    const loom_op *op = loom_op_find(a->model);
    const loom_op_schema *schema = op != NULL ? loom_op_schema_of(op) : NULL;
    const int has_masks = schema != NULL && schema->n_outputs > 4 && strcmp(schema->outputs[4].name, "masks") == 0;
    if (loom_run(a->model, (const loom_tensor *const[]){ batch }, 1, NULL, out, has_masks ? 5 : 4, &opt) != LOOM_OK)
        rc = cli_fail();
    if (rc == CLI_OK) {
        const int64_t n = out[0]->shape[0], *labels = loom_data(out[2]);
        const float *boxes = loom_data(out[0]), *scores = loom_data(out[1]);
        int64_t kept = 0;
        for (int64_t i = 0; i < n; i++)
            kept += scores[i] >= a->min_score;
        if (a->json) {
            cJSON *root = cJSON_CreateObject(), *list = cJSON_CreateArray();
            json_add_str(root, "model", a->model);
            json_add_str(root, "image", a->image);
            for (int64_t i = 0; i < n; i++) {
                if (scores[i] < a->min_score)
                    continue;
                cJSON *e = cJSON_CreateObject(), *b = cJSON_CreateArray();
                json_add_num(e, "label", (double)labels[i]);
                if (category_of(a, labels[i]) != NULL)
                    json_add_str(e, "category", category_of(a, labels[i]));
                json_add_num(e, "score", scores[i]);
                if (has_masks)
                    json_add_num(e, "mask_area", (double)mask_area(out[4], i, NULL, NULL));
                for (int c = 0; c < 4; c++)
                    cJSON_AddItemToArray(b, cJSON_CreateNumber(boxes[4 * i + c]));
                cJSON_AddItemToObject(e, "box", b);
                cJSON_AddItemToArray(list, e);
            }
            cJSON_AddItemToObject(root, "detections", list);
            if (json_emit(root) != 0)
                rc = CLI_FAIL;
        } else {
            printf("%s: %lld detections with score >= %g (of %lld)\n", a->image, (long long)kept, a->min_score,
                   (long long)n);
            for (int64_t i = 0; i < n; i++) {
                const char *name = category_of(a, labels[i]);
                if (scores[i] < a->min_score)
                    continue;
                if (name != NULL)
                    printf("  label %3lld %-16s score %.4f  box %8.1f %8.1f %8.1f %8.1f", (long long)labels[i],
                           name, scores[i], boxes[4 * i], boxes[4 * i + 1], boxes[4 * i + 2], boxes[4 * i + 3]);
                else
                    printf("  label %3lld  score %.4f  box %8.1f %8.1f %8.1f %8.1f", (long long)labels[i],
                           scores[i], boxes[4 * i], boxes[4 * i + 1], boxes[4 * i + 2], boxes[4 * i + 3]);
                if (has_masks)
                    printf("  mask %lld px", (long long)mask_area(out[4], i, NULL, NULL));
                printf("\n");
            }
        }
        if (rc == CLI_OK && a->draw != NULL)
            rc = write_drawing(a, a->draw, img, boxes, scores, labels, has_masks ? out[4] : NULL, n,
                               a->min_score);
    }
    for (int i = 0; i < 5; i++)
        loom_tensor_free(out[i]);
    loom_tensor_free(batch);
    loom_tensor_free(img);
    return rc;
}

int cmd_detect(int argc, char **argv)
{
    static const struct option opts[] = {
        { "model", required_argument, NULL, 'm' }, { "weights", required_argument, NULL, 'w' },
        { "attr", required_argument, NULL, 'a' }, { "min-score", required_argument, NULL, 's' },
        { "draw", required_argument, NULL, 'd' }, { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
    };
    detect_args a = { .min_score = 0.5 };
    a.attrs = calloc((size_t)argc + 1, sizeof *a.attrs);
    if (a.attrs == NULL)
        return CLI_FAIL;
    opterr = 0;
    optind = 1;
    int rc = CLI_OK, c;
    while (rc == CLI_OK && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(detect_usage, stdout);
            free(a.attrs);
            return CLI_OK;
        } else if (c == 'm') {
            a.model = optarg;
        } else if (c == 'w') {
            a.weights_path = optarg;
        } else if (c == 'a') {
            if (strchr(optarg, '=') == NULL || optarg[0] == '=')
                rc = cli_usage_error("detect", detect_usage, "--attr wants KEY=VALUE, got '%s'", optarg);
            else
                a.attrs[a.n_attrs++] = optarg;
        } else if (c == 's') {
            char *end;
            a.min_score = strtod(optarg, &end);
            if (*end != '\0' || end == optarg || !(a.min_score >= 0.0 && a.min_score <= 1.0))
                rc = cli_usage_error("detect", detect_usage, "--min-score takes a score in [0, 1], not '%s'", optarg);
        } else if (c == 'd') {
            a.draw = optarg;
        } else if (c == 'j') {
            a.json = 1;
        } else {
            rc = cli_bad_option("detect", detect_usage, c, argv);
        }
    }
    if (rc == CLI_OK && a.model == NULL)
        rc = cli_usage_error("detect", detect_usage,
                             "--model CLASS is required (vision.fasterrcnn_resnet50_fpn_v2, ...)");
    else if (rc == CLI_OK && a.weights_path == NULL)
        rc = cli_usage_error("detect", detect_usage, "--weights FILE.safetensors is required");
    else if (rc == CLI_OK && argc - optind != 1)
        rc = cli_usage_error("detect", detect_usage, "one IMAGE is wanted, %d given", argc - optind);
    if (rc == CLI_OK) {
        a.image = argv[optind];
        loom_object *obj = NULL;
        if ((rc = cli_init()) == CLI_OK && (rc = make_model(&a, &obj)) == CLI_OK
            && (a.entry == NULL || (rc = read_entry(&a)) == CLI_OK))
            rc = detect(&a, obj);
        loom_object_free(obj);
        cJSON_Delete(a.meta);
    }
    free(a.attrs);
    return rc;
}
