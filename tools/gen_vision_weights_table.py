#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write plugins/vision/models/weights_table.c and weights_docs.h from torchvision's multi-weight API.

For every class of the models module, each entry of its Weights enum
(torchvision.models.get_model_weights(name)): the name, the URL, the
preprocessing of weights.transforms (ImageClassification's crop_size,
resize_size, interpolation, mean, std, with that class's defaults where the
entry leaves them), the metadata (num_params, min_size, acc@1 / acc@5 on
ImageNet-1K, the recipe, the license where torchvision states one), which
entry DEFAULT aliases; and the 1000 names of _meta._IMAGENET_CATEGORIES.
The detectors' entries (DETECTORS: Faster R-CNN, RetinaNet, Mask R-CNN;
preset ObjectDetection, which only scales to [0, 1]: the model's own
transform resizes and normalises) carry their COCO-val2017 box_map (and
mask_map), num_params, min_size, recipe and the 91 names of
_meta._COCO_CATEGORIES ("__background__" and the "N/A" gaps included).
An entry may name a class the pack does not have: lookups are by name.
The weights themselves are not shipped.

    .venv/bin/python tools/gen_vision_weights_table.py [OUT_DIR]

Needs torchvision. The output is committed; run this again when a class is
added or torchvision changes its tables.
"""
import inspect
import json
import os
import sys

import torchvision
import torchvision.models as tvm
from torchvision.models._meta import _COCO_CATEGORIES, _IMAGENET_CATEGORIES
from torchvision.transforms._presets import ImageClassification, ObjectDetection

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT_DIR = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "plugins", "vision", "models")

CLASSES = ["resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
           "resnext101_32x8d", "resnext101_64x4d", "wide_resnet50_2", "wide_resnet101_2"]
CLASSES += ["regnet_y_400mf", "regnet_y_800mf", "regnet_y_1_6gf", "regnet_y_3_2gf", "regnet_y_8gf",
            "regnet_y_16gf", "regnet_y_32gf", "regnet_y_128gf", "regnet_x_400mf", "regnet_x_800mf",
            "regnet_x_1_6gf", "regnet_x_3_2gf", "regnet_x_8gf", "regnet_x_16gf", "regnet_x_32gf",
            "efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l",
            "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0",
            "mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3"]
CLASSES += ["vit_b_16", "vit_b_32", "vit_l_16", "vit_h_14", "swin_t", "swin_s", "swin_b"]
DETECTORS = ["fasterrcnn_resnet50_fpn", "fasterrcnn_resnet50_fpn_v2", "fasterrcnn_mobilenet_v3_large_fpn",
             "fasterrcnn_mobilenet_v3_large_320_fpn", "retinanet_resnet50_fpn", "retinanet_resnet50_fpn_v2",
             "maskrcnn_resnet50_fpn", "maskrcnn_resnet50_fpn_v2"]


def c_str(s):
    return "NULL" if s is None else json.dumps(s)


def preset(entry):
    t = entry.transforms
    assert t.func is ImageClassification, f"{entry}: preset {t.func} is not ImageClassification"
    sig = inspect.signature(ImageClassification.__init__).parameters
    kw = {k: p.default for k, p in sig.items() if p.default is not inspect.Parameter.empty}
    kw.update(t.keywords)
    return kw


def detector_rows(cls, rows, docs, defines):
    """The entries of detector cls: preset ObjectDetection, COCO-val2017 metrics, the COCO names."""
    enum = tvm.get_model_weights(cls)
    default = enum.DEFAULT.name
    lines = []
    for e in enum:
        assert e.transforms is ObjectDetection, f"{e}: preset {e.transforms} is not ObjectDetection"
        m = e.meta
        assert m["categories"] == _COCO_CATEGORIES, f"{e}: categories are not _COCO_CATEGORIES"
        coco = m["_metrics"]["COCO-val2017"]
        box, mask = coco["box_map"], coco.get("mask_map", -1.0)
        rows.append(
            f'    {{ "vision.{cls}", "{e.name}", {int(e.name == default)}, {c_str(e.url)},\n'
            f'      0, 0, NULL, {{ 0.0, 0.0, 0.0 }}, {{ 0.0, 0.0, 0.0 }},\n'
            f'      {m["num_params"]}, {len(m["categories"])}, {m["min_size"][0]}, {m["min_size"][1]}, 0.0, 0.0,\n'
            f'      {c_str(m.get("recipe"))}, {c_str(m.get("license"))},\n'
            f'      "ObjectDetection", "COCO-val2017", {float(box)!r}, {float(mask)!r}, model_coco_categories }},')
        lines.append(f'{e.name}: box_map {box}' + (f' mask_map {mask}' if mask >= 0 else "")
                     + f' (COCO-val2017), {m["num_params"]} params, {len(m["categories"])} classes (COCO), '
                     f'preset ObjectDetection, min_size {m["min_size"][0]}x{m["min_size"][1]}, '
                     f'recipe {m.get("recipe")}' + (f', license {m["license"]}' if m.get("license") else ""))
    docs.append(f'    {{ "vision.{cls}", {c_str("; ".join(lines) + f"; DEFAULT = {default}")} }},')
    defines.append(f'#define VISION_WEIGHTS_DOC_{cls} \\\n    '
                   + c_str("torchvision weight entry the file must fit (classes, num_params), or DEFAULT; "
                           "its COCO names label the detections; unset: none. " + "; ".join(lines)
                           + f"; DEFAULT = {default}"))


def main():
    rows, docs, defines = [], [], []
    for cls in CLASSES:
        enum = tvm.get_model_weights(cls)
        default = enum.DEFAULT.name
        lines = []
        for e in enum:
            p, m = preset(e), e.meta
            acc = m["_metrics"]["ImageNet-1K"]
            interp = p["interpolation"].value
            rows.append(
                f'    {{ "vision.{cls}", "{e.name}", {int(e.name == default)}, {c_str(e.url)},\n'
                f'      {p["resize_size"]}, {p["crop_size"]}, "{interp}", '
                f'{{ {", ".join(repr(float(v)) for v in p["mean"])} }}, '
                f'{{ {", ".join(repr(float(v)) for v in p["std"])} }},\n'
                f'      {m["num_params"]}, {len(m["categories"])}, {m["min_size"][0]}, {m["min_size"][1]}, '
                f'{acc["acc@1"]!r}, {acc["acc@5"]!r},\n'
                f'      {c_str(m.get("recipe"))}, {c_str(m.get("license"))},\n'
                f'      "ImageClassification", "ImageNet-1K", -1.0, -1.0, model_imagenet_categories }},')
            lines.append(f'{e.name}: acc@1 {acc["acc@1"]} acc@5 {acc["acc@5"]} (ImageNet-1K), '
                         f'{m["num_params"]} params, {len(m["categories"])} classes, resize {p["resize_size"]} '
                         f'crop {p["crop_size"]} {interp}, mean ({", ".join(str(v) for v in p["mean"])}) '
                         f'std ({", ".join(str(v) for v in p["std"])}), min_size {m["min_size"][0]}x'
                         f'{m["min_size"][1]}, recipe {m.get("recipe")}'
                         + (f', license {m["license"]}' if m.get("license") else ""))
        docs.append(f'    {{ "vision.{cls}", {c_str("; ".join(lines) + f"; DEFAULT = {default}")} }},')
        defines.append(f'#define VISION_WEIGHTS_DOC_{cls} \\\n    '
                       + c_str("torchvision weight entry the file must fit (classes, num_params), or DEFAULT; "
                               "unset: none. " + "; ".join(lines) + f"; DEFAULT = {default}"))
    for cls in DETECTORS:
        detector_rows(cls, rows, docs, defines)
    cats = ",\n".join("    " + json.dumps(c) for c in _IMAGENET_CATEGORIES)
    coco = ",\n".join("    " + json.dumps(c) for c in _COCO_CATEGORIES)
    with open(os.path.join(OUT_DIR, "weights_docs.h"), "w") as f:
        f.write(f"""/* SPDX-License-Identifier: BSD-3-Clause */
/*
** weights_docs.h - written by tools/gen_vision_weights_table.py from
** torchvision {torchvision.__version__}: the doc of each class's `weights`
** attribute, listing its entries and their metadata (`loom info`). Do not
** edit; run the script again.
*/
#ifndef LOOM_VISION_MODELS_WEIGHTS_DOCS_H
#define LOOM_VISION_MODELS_WEIGHTS_DOCS_H

{chr(10).join(defines)}

#endif
""")
    with open(os.path.join(OUT_DIR, "weights_table.c"), "w") as f:
        f.write(f"""/* SPDX-License-Identifier: BSD-3-Clause */
/*
** weights_table.c - written by tools/gen_vision_weights_table.py from
** torchvision {torchvision.__version__}'s Weights enums,
** _meta._IMAGENET_CATEGORIES and _meta._COCO_CATEGORIES: the weight
** entries of every class of the models module and of the detectors, the
** ImageNet-1K and the COCO category names. Do not edit; run the script
** again.
*/
#include "weights.h"

const model_weights_entry model_weights_entries[] = {{
{chr(10).join(rows)}
}};
const size_t model_weights_n_entries = sizeof model_weights_entries / sizeof model_weights_entries[0];

/* One line per class: its entries and their metadata, for `loom info`. */
const model_weights_doc model_weights_docs[] = {{
{chr(10).join(docs)}
}};
const size_t model_weights_n_docs = sizeof model_weights_docs / sizeof model_weights_docs[0];

const char *const model_imagenet_categories[1000] = {{
{cats}
}};

const char *const model_coco_categories[{len(_COCO_CATEGORIES)}] = {{
{coco}
}};
""")


if __name__ == "__main__":
    main()
