#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the vision `transforms` module to tests/data/vision/transforms/.

Every case is a call of torchvision.transforms.v2.functional on the CPU
(torch's uint8 resize there is its native fixed-point path: AVX2 on x86,
which is what `loom` must match bit for bit). The inputs are seeded random
images (uint8 0..255, float32 in [0, 1)), masks and boxes, shared between
cases. cases.txt lists one case a line, read by the C tests:

    OP NAME INPUT ATTRS

where ATTRS are `key=value` pairs separated by `;` in loom's attribute
syntax, the output is NAME.npy (and NAME_canvas.npy, the new canvas size,
for boxes) and the input INPUT.npy.

    .venv/bin/python tools/gen_vision_transforms_goldens.py [OUTDIR]

Needs numpy, torch and torchvision. Keeps the module under ~300 KB.
"""
import os
import sys

# torch's AVX2 kernels, also on an AVX-512 machine: the goldens (and the
# float32 summation orders loom reproduces) are theirs; the capability is
# recorded at the top of cases.txt
os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402
import torchvision.transforms.v2.functional as F  # noqa: E402
from torchvision import tv_tensors  # noqa: E402
from torchvision.transforms import InterpolationMode

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "transforms")

MODES = {"nearest": InterpolationMode.NEAREST, "nearest-exact": InterpolationMode.NEAREST_EXACT,
         "bilinear": InterpolationMode.BILINEAR, "bicubic": InterpolationMode.BICUBIC}

rng = np.random.default_rng(20261201)
inputs = {}
lines = []


def save(name, a):
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(a), allow_pickle=False)


def add_input(name, a):
    inputs[name] = a
    save(name, a)


def attrs_text(size=None, max_size=None, **kw):
    if isinstance(size, str):
        kw = {"size": size, **kw}
        size = None
    parts = []
    if size is not None:
        parts.append("size=" + ",".join(str(s) for s in size))
    if max_size is not None:
        parts.append(f"max_size={max_size}")
    for k, v in kw.items():
        parts.append(f"{k}={'true' if v is True else 'false' if v is False else v}")
    return ";".join(parts) if parts else "-"


def resize_case(name, inp, size, mode, antialias=True, max_size=None):
    x = torch.from_numpy(inputs[inp])
    y = F.resize(x, size, interpolation=MODES[mode], max_size=max_size, antialias=antialias)
    save(name, y.numpy())
    lines.append(f"vision.resize {name} {inp} "
                 + attrs_text(size, max_size, interpolation=mode, antialias=antialias))


def mask_case(name, inp, size, mode="nearest", max_size=None):
    m = tv_tensors.Mask(torch.from_numpy(inputs[inp]))
    y = F.resize(m, size, interpolation=MODES[mode], max_size=max_size)
    save(name, y.as_subclass(torch.Tensor).numpy())
    lines.append(f"vision.resize_mask {name} {inp} " + attrs_text(size, max_size, interpolation=mode))


def boxes_case(name, inp, canvas, size, fmt="xyxy", max_size=None):
    b = tv_tensors.BoundingBoxes(torch.from_numpy(inputs[inp]), format=fmt.upper(), canvas_size=canvas)
    y = F.resize(b, size, max_size=max_size)
    save(name, y.as_subclass(torch.Tensor).numpy())
    save(name + "_canvas", np.array(y.canvas_size, dtype=np.int64))
    lines.append(f"vision.resize_bounding_boxes {name} {inp} "
                 + attrs_text(size, max_size, canvas_size=f"{canvas[0]},{canvas[1]}", format=fmt))


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(2)
    # Images: [C, H, W] and a batch [N, C, H, W]; channel counts 1, 3, 4, 5
    # (torch's AVX2 uint8 kernels take C <= 4, its generic ones C > 4).
    add_input("img_u8", rng.integers(0, 256, (3, 23, 31), dtype=np.uint8))
    add_input("batch_u8", rng.integers(0, 256, (2, 3, 13, 18), dtype=np.uint8))
    add_input("batch_f32", rng.random((2, 1, 13, 18), dtype=np.float32))
    add_input("gray_u8", rng.integers(0, 256, (1, 96, 128), dtype=np.uint8))
    add_input("rgba_u8", rng.integers(0, 256, (4, 19, 17), dtype=np.uint8))
    add_input("c5_u8", rng.integers(0, 256, (5, 16, 21), dtype=np.uint8))
    add_input("small_f32", rng.random((3, 12, 15), dtype=np.float32))
    add_input("grey_u8", rng.integers(0, 256, (1, 14, 17), dtype=np.uint8))
    # a smooth image: bicubic overshoot stays small, so the clamp is rarely hit
    yy, xx = np.mgrid[0:23, 0:31]
    add_input("smooth_u8", np.stack([(127 + 120 * np.sin(xx / 4.0 + c) * np.cos(yy / 5.0)).astype(np.uint8)
                                     for c in range(3)]))

    sizes = {"down": [11, 14], "up": [30, 41], "mixed": [35, 13], "wonly": [23, 20], "short": [12]}
    configs = [("nearest", False), ("nearest-exact", False), ("bilinear", True), ("bilinear", False),
               ("bicubic", True), ("bicubic", False)]
    for mode, aa in configs:
        tag = mode.replace("-", "_") + ("_aa" if aa else "")
        for sname, size in sizes.items():
            resize_case(f"u8_{tag}_{sname}", "img_u8", size, mode, aa)
        for sname, size in (("down", [7, 9]), ("up", [20, 27]), ("mixed", [25, 8])):
            if mode.startswith("nearest") and sname != "down":
                continue   # a copy: the uint8 cases cover the indices
            resize_case(f"f32_{tag}_{sname}", "small_f32", size, mode, aa)
        resize_case(f"u8_{tag}_max_size", "img_u8", [12], mode, aa, max_size=14)
        resize_case(f"batch_u8_{tag}", "batch_u8", [7, 29], mode, aa)
        resize_case(f"batch_f32_{tag}", "batch_f32", [7, 29], mode, aa)
        resize_case(f"smooth_u8_{tag}", "smooth_u8", [17, 45], mode, aa)
    # wide filters (support > 8 taps: several vector chunks per output)
    for mode in ("bilinear", "bicubic"):
        resize_case(f"gray_u8_{mode}_aa_x9", "gray_u8", [11, 13], mode, True)
        resize_case(f"gray_u8_{mode}_x9", "gray_u8", [11, 13], mode, False)
        resize_case(f"rgba_u8_{mode}_aa", "rgba_u8", [8, 33], mode, True)
        resize_case(f"c5_u8_{mode}_aa", "c5_u8", [9, 10], mode, True)
        resize_case(f"c5_u8_{mode}", "c5_u8", [30, 10], mode, False)
    # (torch 2.15 asserts on a 1 x 1 uint8 output: its channels-last check is ambiguous there)
    resize_case("u8_bilinear_aa_1row", "img_u8", [1, 5], "bilinear", True)
    resize_case("u8_bicubic_1col", "img_u8", [5, 1], "bicubic", False)
    resize_case("u8_bicubic_aa_none", "img_u8", None, "bicubic", True, max_size=19)
    resize_case("u8_same_size", "img_u8", [23, 31], "bilinear", True)
    # float32 over more sizes (its own generator, so the inputs above keep
    # their values): windows of up to ~20 taps, the width or the height
    # alone, upscales; loom matches torch's float32 order bit for bit
    add_input("wide_f32", np.random.default_rng(14).random((3, 32, 40), dtype=np.float32))
    for mode, aa in (("bilinear", True), ("bilinear", False), ("bicubic", True), ("bicubic", False)):
        tag = mode + ("_aa" if aa else "")
        for sname, size in (("down", [7, 9]), ("up", [45, 57]), ("wonly", [32, 13]), ("honly", [11, 40])):
            resize_case(f"wide_f32_{tag}_{sname}", "wide_f32", size, mode, aa)

    # Masks: resized by nearest neighbour with their image
    add_input("mask_u8", rng.integers(0, 6, (2, 23, 31), dtype=np.uint8))
    add_input("mask_i64", rng.integers(0, 1000, (12, 15), dtype=np.int64))
    for sname, size in sizes.items():
        mask_case(f"mask_u8_{sname}", "mask_u8", size)
        mask_case(f"mask_u8_exact_{sname}", "mask_u8", size, "nearest-exact")
    mask_case("mask_i64_up", "mask_i64", [30, 41])
    mask_case("mask_u8_bilinear_means_nearest", "mask_u8", [11, 14], "bilinear")

    # Boxes on the img_u8 canvas (23 x 31), every format
    xy = rng.uniform(0, 20, (6, 2)).astype(np.float32)
    wh = rng.uniform(1, 10, (6, 2)).astype(np.float32)
    add_input("boxes_xyxy", np.concatenate([xy, xy + wh], axis=1))
    add_input("boxes_xywh", np.concatenate([xy, wh], axis=1))
    add_input("boxes_cxcywh", np.concatenate([xy + wh / 2, wh], axis=1))
    for fmt in ("xyxy", "xywh", "cxcywh"):
        for sname in ("down", "up", "short"):
            boxes_case(f"boxes_{fmt}_{sname}", f"boxes_{fmt}", (23, 31), sizes[sname], fmt)
    boxes_case("boxes_xyxy_max_size", "boxes_xyxy", (23, 31), [12], "xyxy", max_size=14)

    # Geometry on images and masks: crop (inside, off the top-left, past the
    # bottom-right), center_crop (smaller, larger by odd and even amounts, one
    # side larger), resized_crop, pad in every mode, flips.
    def geo(op, name, inp, fn, **attrs):
        x = torch.from_numpy(inputs[inp])
        y = fn(tv_tensors.Mask(x) if inp.startswith("mask") else x)
        save(name, y.as_subclass(torch.Tensor).numpy())
        lines.append(f"vision.{op} {name} {inp} " + attrs_text(**attrs))

    def ints(v):
        return ",".join(str(i) for i in v)

    for inp in ("img_u8", "small_f32", "mask_i64"):
        geo("crop", f"crop_{inp}_inside", inp, lambda x: F.crop(x, 3, 5, 11, 17), top=3, left=5, height=11, width=17)
        geo("crop", f"crop_{inp}_outside_tl", inp, lambda x: F.crop(x, -4, -6, 12, 15),
            top=-4, left=-6, height=12, width=15)
        geo("crop", f"crop_{inp}_outside_br", inp, lambda x: F.crop(x, 15, 20, 14, 19),
            top=15, left=20, height=14, width=19)
        geo("horizontal_flip", f"hflip_{inp}", inp, F.horizontal_flip)
        geo("vertical_flip", f"vflip_{inp}", inp, F.vertical_flip)
    for out in ([10], [10, 14], [8, 30], [28, 40], [30, 12], [24, 33], [22, 29]):
        tag = "x".join(map(str, out))
        geo("center_crop", f"center_crop_u8_{tag}", "img_u8", lambda x, o=out: F.center_crop(x, o),
            output_size=ints(out))
    geo("center_crop", "center_crop_mask_u8_9x30", "mask_u8", lambda x: F.center_crop(x, [9, 30]),
        output_size="9,30")
    geo("center_crop", "center_crop_batch_u8_20", "batch_u8", lambda x: F.center_crop(x, [20]), output_size="20")
    for mode, aa in (("bilinear", True), ("bicubic", False), ("nearest", False)):
        geo("resized_crop", f"resized_crop_u8_{mode}", "img_u8",
            lambda x, m=mode, a=aa: F.resized_crop(x, 2, 4, 15, 20, [9, 27], interpolation=MODES[m], antialias=a),
            top=2, left=4, height=15, width=20, size="9,27", interpolation=mode, antialias=aa)
        geo("resized_crop", f"resized_crop_f32_{mode}", "small_f32",
            lambda x, m=mode, a=aa: F.resized_crop(x, -3, 6, 17, 12, [9, 14], interpolation=MODES[m], antialias=a),
            top=-3, left=6, height=17, width=12, size="9,14", interpolation=mode, antialias=aa)
    geo("resized_crop", "resized_crop_mask_u8", "mask_u8",
        lambda x: F.resized_crop(tv_tensors.Mask(x), 1, 2, 20, 20, [33, 7]),
        top=1, left=2, height=20, width=20, size="33,7", interpolation="nearest")
    pads = {"all": [3], "lr_tb": [2, 5], "ltrb": [1, 4, 6, 2], "zero_side": [0, 3, 7, 0]}
    for mode in ("constant", "edge", "reflect", "symmetric"):
        for pname, pad in pads.items():
            geo("pad", f"pad_u8_{mode}_{pname}", "img_u8", lambda x, p=pad, m=mode: F.pad(x, p, padding_mode=m),
                padding=ints(pad), padding_mode=mode)
        geo("pad", f"pad_f32_{mode}", "small_f32", lambda x, m=mode: F.pad(x, [4, 1, 2, 3], padding_mode=m),
            padding="4,1,2,3", padding_mode=mode)
        geo("pad", f"pad_mask_i64_{mode}", "mask_i64", lambda x, m=mode: F.pad(tv_tensors.Mask(x), [2, 3], padding_mode=m),
            padding="2,3", padding_mode=mode)
    geo("pad", "pad_u8_fill7", "img_u8", lambda x: F.pad(x, [3, 1], fill=7), padding="3,1", fill="7")
    geo("pad", "pad_u8_fill_rgb", "img_u8", lambda x: F.pad(x, [2, 2, 1, 3], fill=[10, 128.7, 255]),
        padding="2,2,1,3", fill="10,128.7,255")
    geo("pad", "pad_f32_fill", "small_f32", lambda x: F.pad(x, [1], fill=0.25), padding="1", fill="0.25")
    geo("pad", "pad_grey_u8_symmetric_full", "grey_u8", lambda x: F.pad(x, [17, 14], padding_mode="symmetric"),
        padding="17,14", padding_mode="symmetric")

    # Box ops, every format, on boxes that stick out of the canvas, and
    # degenerate ones for sanitize (labels dropped with their boxes).
    xy = rng.uniform(-6, 28, (9, 2)).astype(np.float32)
    wh = rng.uniform(0.2, 14, (9, 2)).astype(np.float32)
    wh[3] = [0.5, 5]
    wh[5] = [4, 0]
    mixed = {"xyxy": np.concatenate([xy, xy + wh], 1), "xywh": np.concatenate([xy, wh], 1),
             "cxcywh": np.concatenate([xy + wh / 2, wh], 1)}
    add_input("labels_i64", np.arange(9, dtype=np.int64) * 10 + 1)
    canvas = (23, 31)

    def box_case(op, name, inp, fn, canvas_out=True, **attrs):
        b = torch.from_numpy(inputs[inp])
        out = fn(b)
        if canvas_out:
            out, cs = out
            save(name + "_canvas", np.array(cs, dtype=np.int64))
        save(name, out.numpy())
        lines.append(f"vision.{op} {name} {inp} " + attrs_text(**attrs))

    cs = f"{canvas[0]},{canvas[1]}"
    for fmt in ("xyxy", "xywh", "cxcywh"):
        add_input(f"mixed_{fmt}", mixed[fmt].astype(np.float32))
        inp = f"mixed_{fmt}"
        for new in ("xyxy", "xywh", "cxcywh"):
            if new != fmt:
                box_case("convert_bounding_box_format", f"convert_{fmt}_to_{new}", inp,
                         lambda b, n=new, f=fmt: F.convert_bounding_box_format(b, old_format=f, new_format=n),
                         canvas_out=False, old_format=fmt, new_format=new)
        box_case("clamp_bounding_boxes", f"clamp_{fmt}", inp,
                 lambda b, f=fmt: F.clamp_bounding_boxes(b, format=f, canvas_size=canvas, clamping_mode="soft"),
                 canvas_out=False, format=fmt, canvas_size=cs)
        from torchvision.transforms.v2.functional import _geometry as G
        box_case("horizontal_flip_bounding_boxes", f"hflip_boxes_{fmt}", inp,
                 lambda b, f=fmt: G.horizontal_flip_bounding_boxes(b, format=tv_tensors.BoundingBoxFormat[f.upper()],
                                                                   canvas_size=canvas),
                 canvas_out=False, format=fmt, canvas_size=cs)
        box_case("vertical_flip_bounding_boxes", f"vflip_boxes_{fmt}", inp,
                 lambda b, f=fmt: G.vertical_flip_bounding_boxes(b, format=tv_tensors.BoundingBoxFormat[f.upper()],
                                                                 canvas_size=canvas),
                 canvas_out=False, format=fmt, canvas_size=cs)
        BF = tv_tensors.BoundingBoxFormat[fmt.upper()]
        box_case("crop_bounding_boxes", f"crop_boxes_{fmt}", inp,
                 lambda b, f=BF: G.crop_bounding_boxes(b, f, 3, -2, 15, 20),
                 format=fmt, top=3, left=-2, height=15, width=20)
        box_case("crop_bounding_boxes", f"crop_boxes_{fmt}_noclamp", inp,
                 lambda b, f=BF: G.crop_bounding_boxes(b, f, 3, -2, 15, 20, clamping_mode=None),
                 format=fmt, top=3, left=-2, height=15, width=20, clamping_mode="none")
        for out in ([10, 14], [30, 40], [9]):
            tag = "x".join(map(str, out))
            box_case("center_crop_bounding_boxes", f"center_crop_boxes_{fmt}_{tag}", inp,
                     lambda b, f=BF, o=out: G.center_crop_bounding_boxes(b, f, canvas, o),
                     format=fmt, canvas_size=cs, output_size=ints(out))
        box_case("resized_crop_bounding_boxes", f"resized_crop_boxes_{fmt}", inp,
                 lambda b, f=BF: G.resized_crop_bounding_boxes(b, f, 2, 4, 15, 20, [9, 27]),
                 format=fmt, top=2, left=4, height=15, width=20, size="9,27")
        box_case("pad_bounding_boxes", f"pad_boxes_{fmt}", inp,
                 lambda b, f=BF: G.pad_bounding_boxes(b, f, canvas, [1, 4, 6, 2]),
                 format=fmt, canvas_size=cs, padding="1,4,6,2")
        box_case("affine_bounding_boxes", f"affine_boxes_{fmt}", inp,
                 lambda b, f=BF: G.affine_bounding_boxes(b, f, canvas, 17.0, [2.5, -3], 0.9, [5.0, -3.0]),
                 canvas_out=False, format=fmt, canvas_size=cs, angle=17.0, translate="2.5,-3", scale=0.9,
                 shear="5,-3")
        for exp in (False, True):
            box_case("rotate_bounding_boxes", f"rotate_boxes_{fmt}" + ("_expand" if exp else ""), inp,
                     lambda b, f=BF, e=exp: G.rotate_bounding_boxes(b, f, canvas, 33.0, expand=e),
                     format=fmt, canvas_size=cs, angle=33.0, expand=exp)
        # sanitize, with labels: SanitizeBoundingBoxes drops the labels of the dropped boxes
        for ms, ma in ((1.0, 1.0), (2.5, 10.0)):
            name = f"sanitize_{fmt}_{ms:g}_{ma:g}".replace(".", "p")
            kept, valid = F.sanitize_bounding_boxes(torch.from_numpy(inputs[inp]), format=fmt, canvas_size=canvas,
                                                    min_size=ms, min_area=ma)
            save(name, kept.numpy())
            save(name + "_labels", inputs["labels_i64"][valid.numpy()])
            save(name + "_valid", valid.numpy())
            lines.append(f"vision.sanitize_bounding_boxes {name} {inp}+labels_i64 "
                         + attrs_text(format=fmt, canvas_size=cs, min_size=ms, min_area=ma))

    # Colour: every op on uint8 (img_u8, a grey image, a batch) and float32
    # (a small image: float32 outputs are 4x the bytes).
    add_input("flat_u8", np.stack([np.full((9, 11), 7, np.uint8), rng.integers(0, 256, (9, 11), dtype=np.uint8),
                                   np.full((9, 11), 200, np.uint8)]))

    def colour(op, tag, fn, inps=("img_u8", "small_f32"), **attrs):
        for inp in inps:
            x = torch.from_numpy(inputs[inp])
            name = f"{op}_{tag}_{inp}" if tag else f"{op}_{inp}"
            save(name, fn(x).numpy())
            lines.append(f"vision.{op} {name} {inp} " + attrs_text(**attrs))

    for f_ in (0.0, 0.45, 1.7):
        t = f"{f_:g}".replace(".", "p")
        colour("adjust_brightness", t, lambda x, v=f_: F.adjust_brightness(x, v), brightness_factor=f_)
        colour("adjust_contrast", t, lambda x, v=f_: F.adjust_contrast(x, v), contrast_factor=f_)
        colour("adjust_saturation", t, lambda x, v=f_: F.adjust_saturation(x, v), saturation_factor=f_)
    colour("adjust_contrast", "grey", lambda x: F.adjust_contrast(x, 0.6), inps=("grey_u8",), contrast_factor=0.6)
    colour("adjust_contrast", "batch", lambda x: F.adjust_contrast(x, 1.3), inps=("batch_u8",), contrast_factor=1.3)
    colour("adjust_saturation", "grey", lambda x: F.adjust_saturation(x, 0.3), inps=("grey_u8",),
           saturation_factor=0.3)
    for h_ in (-0.5, -0.13, 0.27, 0.5):
        colour("adjust_hue", f"{h_:g}".replace(".", "p").replace("-", "m"), lambda x, v=h_: F.adjust_hue(x, v),
               inps=("img_u8", "small_f32", "flat_u8"), hue_factor=h_)
    for g_, gain in ((0.5, 1.0), (2.2, 1.0), (0.8, 1.3), (1.0, 0.7)):
        colour("adjust_gamma", f"{g_:g}_{gain:g}".replace(".", "p"), lambda x, v=g_, k=gain: F.adjust_gamma(x, v, k),
               gamma=g_, gain=gain)
    colour("autocontrast", "", F.autocontrast, inps=("img_u8", "small_f32", "flat_u8", "batch_u8"))
    colour("equalize", "", F.equalize, inps=("img_u8", "small_f32", "flat_u8", "grey_u8"))
    for b_ in (0, 1, 3, 8):
        colour("posterize", str(b_), lambda x, v=b_: F.posterize(x, v), bits=b_)
    colour("solarize", "u8", lambda x: F.solarize(x, 128.5), inps=("img_u8",), threshold=128.5)
    colour("solarize", "f32", lambda x: F.solarize(x, 0.4), inps=("small_f32",), threshold=0.4)
    colour("invert", "", F.invert, inps=("img_u8", "small_f32", "batch_u8"))
    for k, sg in (([3, 3], None), ([5, 3], [1.1, 0.6]), ([7, 7], [2.0])):
        tag = "x".join(map(str, k)) + ("" if sg is None else "_s" + "_".join(f"{v:g}" for v in sg).replace(".", "p"))
        attrs = {"kernel_size": ints(k)}
        if sg is not None:
            attrs["sigma"] = ",".join(f"{v:g}" for v in sg)
        colour("gaussian_blur", tag, lambda x, kk=k, ss=sg: F.gaussian_blur(x, kk, ss), **attrs)
    colour("normalize", "imagenet", lambda x: F.normalize(x, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
           inps=("small_f32",), mean="0.485,0.456,0.406", std="0.229,0.224,0.225")
    colour("normalize", "scalar", lambda x: F.normalize(x, [0.5], [0.25]), inps=("batch_f32",), mean="0.5", std="0.25")
    colour("to_dtype", "f32_scale", lambda x: F.to_dtype(x, torch.float32, scale=True), inps=("grey_u8",),
           dtype="float32", scale=True)
    colour("to_dtype", "f32", lambda x: F.to_dtype(x, torch.float32, scale=False), inps=("grey_u8",), dtype="float32")
    colour("to_dtype", "u8_scale", lambda x: F.to_dtype(x, torch.uint8, scale=True), inps=("small_f32",),
           dtype="uint8", scale=True)
    colour("rgb_to_grayscale", "", F.rgb_to_grayscale, inps=("img_u8", "small_f32", "batch_u8"))
    colour("rgb_to_grayscale", "3", lambda x: F.rgb_to_grayscale(x, 3), inps=("img_u8", "grey_u8"),
           num_output_channels=3)

    # vision.preprocess: the weights' ImageClassification preset (the v1
    # functional calls of weights.transforms()) on uint8 and float32 images
    from torchvision.transforms._presets import ImageClassification
    add_input("photo_u8", rng.integers(0, 256, (3, 45, 60), dtype=np.uint8))
    add_input("photo_batch_u8", rng.integers(0, 256, (2, 3, 30, 26), dtype=np.uint8))
    presets = [("bilinear", "photo_u8", 36, 32, True), ("bicubic", "photo_u8", 36, 32, True),
               ("bilinear", "photo_u8", 20, 24, True), ("bilinear", "photo_batch_u8", 28, 24, True),
               ("bilinear", "photo_u8", 36, 32, False), ("bicubic", "photo_batch_u8", 40, 16, True),
               ("bilinear", "small_f32", 10, 8, True)]
    # strong downscales: windows of 5 to 30 taps, where PyTorch's tap chain
    # is part unfused, part FMA (PREPROCESS_UNFUSED_TAPS in transforms.h)
    # (its own generator, so that the inputs after it keep their values)
    add_input("photo_big_u8", np.random.default_rng(20261204).integers(0, 256, (3, 96, 120), dtype=np.uint8))
    presets += [("bilinear", "photo_big_u8", 40, 36, True), ("bilinear", "photo_big_u8", 20, 16, True),
                ("bicubic", "photo_big_u8", 20, 16, True), ("bilinear", "photo_big_u8", 11, 10, True),
                ("bicubic", "photo_big_u8", 7, 6, True)]
    for mode, inp, rs, cs, aa in presets:
        name = f"preprocess_{inp}_{mode}_{rs}_{cs}" + ("" if aa else "_noaa")
        t = ImageClassification(crop_size=cs, resize_size=rs, interpolation=MODES[mode], antialias=aa)
        save(name, t(torch.from_numpy(inputs[inp])).numpy())
        lines.append(f"vision.preprocess {name} {inp} "
                     + attrs_text(resize_size=rs, crop_size=cs, interpolation=mode, antialias=aa))

    # the ResNet50 V2 preset on the demo photo, as loom classify runs it
    # (decode_image RGB, weights.transforms()): the FNV-1a hash of all the
    # float32 output bytes, and a [3, 16, 16] window around (122, 161), where
    # an FMA-only tap chain once gave 111 instead of 110
    street = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "demos", "data", "street.jpg")
    photo = torchvision.io.decode_image(torchvision.io.read_file(street), mode=torchvision.io.ImageReadMode.RGB)
    full = torchvision.models.ResNet50_Weights.IMAGENET1K_V2.transforms()(photo).numpy()
    fnv = 2166136261
    for byte in np.ascontiguousarray(full, dtype="<f4").tobytes():
        fnv = ((fnv ^ byte) * 16777619) & 0xFFFFFFFF
    save("preprocess_street_fnv", np.array([fnv], dtype=np.int64))
    save("preprocess_street_window", full[:, 114:130, 153:169])

    # affine and rotate (grid_sample, zeros padding, optional fill)
    for inp in ("img_u8", "small_f32"):
        fill3 = [10, 20, 30] if inp == "img_u8" else [0.1, 0.2, 0.3]
        fill3s = ",".join(f"{v:g}" for v in fill3)
        geo("affine", f"affine_{inp}_bilinear", inp,
            lambda x: F.affine(x, 17.0, [2.5, -3], 0.9, [5.0, -3.0], interpolation=MODES["bilinear"]),
            angle=17.0, translate="2.5,-3", scale=0.9, shear="5,-3", interpolation="bilinear")
        geo("affine", f"affine_{inp}_nearest", inp,
            lambda x: F.affine(x, -33.0, [1, 2], 1.2, [0.0, 0.0]),
            angle=-33.0, translate="1,2", scale=1.2, shear="0,0", interpolation="nearest")
        geo("affine", f"affine_{inp}_fill_center", inp,
            lambda x, f=fill3: F.affine(x, 12.0, [0, 0], 1.0, [10.0, 10.0], interpolation=MODES["bilinear"], fill=f,
                                        center=[4, 9]),
            angle=12.0, translate="0,0", scale=1.0, shear="10,10", interpolation="bilinear", fill=fill3s,
            center="4,9")
        geo("rotate", f"rotate_{inp}_30_bilinear", inp, lambda x: F.rotate(x, 30.0, interpolation=MODES["bilinear"]),
            angle=30.0, interpolation="bilinear")
        geo("rotate", f"rotate_{inp}_30_expand", inp,
            lambda x: F.rotate(x, 30.0, interpolation=MODES["bilinear"], expand=True),
            angle=30.0, interpolation="bilinear", expand=True)
        geo("rotate", f"rotate_{inp}_m45_nearest_fill", inp, lambda x: F.rotate(x, -45.0, expand=True, fill=7),
            angle=-45.0, interpolation="nearest", expand=True, fill=7)
        for a in (90.0, 180.0, 270.0):
            geo("rotate", f"rotate_{inp}_{a:g}_expand", inp, lambda x, v=a: F.rotate(x, v, expand=True),
                angle=a, expand=True)
        geo("rotate", f"rotate_{inp}_20_center", inp,
            lambda x: F.rotate(x, 20.0, interpolation=MODES["bilinear"], center=[5, 7]),
            angle=20.0, interpolation="bilinear", center="5,7")
    # perspective (from corners, and from coefficients) and elastic (a given displacement)
    sp, ep = [[0, 0], [30, 0], [30, 22], [0, 22]], [[3, 2], [27, 1], [29, 20], [1, 21]]
    coeffs = [1.05, 0.02, -1.5, -0.03, 0.97, 0.8, 0.0009, -0.0012]
    add_input("displacement_23x31", ((rng.random((1, 23, 31, 2), dtype=np.float32) - 0.5) * 0.2))
    add_input("displacement_12x15", ((rng.random((1, 12, 15, 2), dtype=np.float32) - 0.5) * 0.3))
    for inp, disp in (("img_u8", "displacement_23x31"), ("small_f32", "displacement_12x15")):
        for mode in ("bilinear", "nearest"):
            geo("perspective", f"perspective_{inp}_{mode}", inp,
                lambda x, m=mode: F.perspective(x, sp, ep, interpolation=MODES[m]),
                startpoints="0,0,30,0,30,22,0,22", endpoints="3,2,27,1,29,20,1,21", interpolation=mode)
            name = f"elastic_{inp}_{mode}"
            y = F.elastic(torch.from_numpy(inputs[inp]), torch.from_numpy(inputs[disp]), interpolation=MODES[mode],
                          fill=[5.0 if inp == "img_u8" else 0.5])
            save(name, y.numpy())
            lines.append(f"vision.elastic {name} {inp}+{disp} "
                         + attrs_text(interpolation=mode, fill=5 if inp == "img_u8" else 0.5))
        geo("perspective", f"perspective_{inp}_coefficients_fill", inp,
            lambda x: F.perspective(x, None, None, coefficients=coeffs, fill=[9.0]),
            coefficients=",".join(f"{v:g}" for v in coeffs), fill=9, interpolation="bilinear")
    geo("rotate", "rotate_batch_u8_m100", "batch_u8", lambda x: F.rotate(x, -100.0, interpolation=MODES["bilinear"]),
        angle=-100.0, interpolation="bilinear")

    # Masks through affine, rotate, perspective and elastic: torchvision's
    # *_mask kernels (the image grid, nearest, fill 0 unless given), on
    # uint8 labels [2, H, W], int64 labels [H, W] and a bool mask.
    add_input("mask_bool", rng.random((23, 31)) < 0.4)
    for inp in ("mask_u8", "mask_i64", "mask_bool"):
        geo("affine_mask", f"affine_{inp}", inp, lambda x: F.affine(x, 17.0, [2.5, -3], 0.9, [5.0, -3.0]),
            angle=17.0, translate="2.5,-3", scale=0.9, shear="5,-3")
        geo("rotate_mask", f"rotate_{inp}_30_expand", inp, lambda x: F.rotate(x, 30.0, expand=True),
            angle=30.0, expand=True)
        geo("perspective_mask", f"perspective_{inp}", inp, lambda x: F.perspective(x, sp, ep),
            startpoints="0,0,30,0,30,22,0,22", endpoints="3,2,27,1,29,20,1,21")
    geo("affine_mask", "affine_mask_i64_fill_center", "mask_i64",
        lambda x: F.affine(x, -33.0, [1, 2], 1.2, [10.0, 0.0], fill=7, center=[4, 9]),
        angle=-33.0, translate="1,2", scale=1.2, shear="10,0", fill=7, center="4,9")
    geo("rotate_mask", "rotate_mask_u8_m45_fill", "mask_u8", lambda x: F.rotate(x, -45.0, fill=9),
        angle=-45.0, fill=9)
    geo("rotate_mask", "rotate_mask_u8_20_center", "mask_u8", lambda x: F.rotate(x, 20.0, center=[5, 7]),
        angle=20.0, center="5,7")
    geo("rotate_mask", "rotate_mask_i64_90_expand", "mask_i64", lambda x: F.rotate(x, 90.0, expand=True),
        angle=90.0, expand=True)
    geo("perspective_mask", "perspective_mask_u8_coefficients_fill", "mask_u8",
        lambda x: F.perspective(x, None, None, coefficients=coeffs, fill=3),
        coefficients=",".join(f"{v:g}" for v in coeffs), fill=3)
    for inp, disp, fill in (("mask_u8", "displacement_23x31", None), ("mask_i64", "displacement_12x15", 4),
                            ("mask_bool", "displacement_23x31", None)):
        name = f"elastic_{inp}" + ("_fill" if fill is not None else "")
        y = F.elastic(tv_tensors.Mask(torch.from_numpy(inputs[inp])), torch.from_numpy(inputs[disp]), fill=fill)
        save(name, y.as_subclass(torch.Tensor).numpy())
        lines.append(f"vision.elastic_mask {name} {inp}+{disp} "
                     + (attrs_text(fill=fill) if fill is not None else "-"))

    # Boxes through perspective and elastic (every format; boxes sticking out)
    canvas_text = f"{canvas[0]},{canvas[1]}"
    for fmt in ("xyxy", "xywh", "cxcywh"):
        BF = tv_tensors.BoundingBoxFormat[fmt.upper()]
        inp = f"mixed_{fmt}"
        box_case("perspective_bounding_boxes", f"perspective_boxes_{fmt}", inp,
                 lambda b, f=BF: G.perspective_bounding_boxes(b, f, canvas, sp, ep),
                 canvas_out=False, format=fmt, canvas_size=canvas_text, startpoints="0,0,30,0,30,22,0,22",
                 endpoints="3,2,27,1,29,20,1,21")
        box_case("perspective_bounding_boxes", f"perspective_boxes_{fmt}_coefficients_noclamp", inp,
                 lambda b, f=BF: G.perspective_bounding_boxes(b, f, canvas, None, None, coefficients=coeffs,
                                                              clamping_mode=None),
                 canvas_out=False, format=fmt, canvas_size=canvas_text, coefficients=",".join(f"{v:g}" for v in coeffs),
                 clamping_mode="none")
        name = f"elastic_boxes_{fmt}"
        y = G.elastic_bounding_boxes(torch.from_numpy(inputs[inp]), BF, canvas,
                                     torch.from_numpy(inputs["displacement_23x31"]))
        save(name, y.numpy())
        lines.append(f"vision.elastic_bounding_boxes {name} {inp}+displacement_23x31 "
                     + attrs_text(format=fmt, canvas_size=canvas_text))

    # adjust_sharpness (the op AutoAugment's Sharpness calls)
    for f_ in (0.0, 0.3, 1.9):
        colour("adjust_sharpness", f"{f_:g}".replace(".", "p"), lambda x, v=f_: F.adjust_sharpness(x, v),
               inps=("img_u8", "small_f32", "batch_u8"), sharpness_factor=f_)

    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write(f"# torchvision {torchvision.__version__}, torch {torch.__version__}, "
                f"cpu capability {torch.backends.cpu.get_cpu_capability()}\n")
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} cases in {OUT}")
    augment_goldens(os.path.join(OUT, "augment"))
    sample_goldens(os.path.join(OUT, "sample"))


class DrawRecorder:
    """Records torchvision's random draws, in the order it makes them: every
    torch.randint and torch.randperm (their integers), torch.rand,
    Tensor.uniform_ and Tensor.normal_ (their float32 values: RandomErasing's
    value='random' noise, C x h x w in order), and the Dirichlet / Beta
    samples handed to record()."""

    def __init__(self):
        self.draws = []

    def record(self, t):
        self.draws.extend(float(v) for v in torch.as_tensor(t).flatten().tolist())
        return t

    def __enter__(self):
        self.saved = (torch.randint, torch.rand, torch.Tensor.uniform_, torch.randperm, torch.Tensor.normal_)
        randint, rand, uniform_, randperm, normal_ = self.saved
        torch.randint = lambda *a, **k: self.record(randint(*a, **k))
        torch.rand = lambda *a, **k: self.record(rand(*a, **k))
        torch.Tensor.uniform_ = lambda t, *a, **k: self.record(uniform_(t, *a, **k))
        torch.randperm = lambda *a, **k: self.record(randperm(*a, **k))
        torch.Tensor.normal_ = lambda t, *a, **k: self.record(normal_(t, *a, **k))
        RecordedAugMix.recorder = self
        return self

    def __exit__(self, *exc):
        torch.randint, torch.rand, torch.Tensor.uniform_, torch.randperm, torch.Tensor.normal_ = self.saved


class RecordedAugMix(torchvision.transforms.v2.AugMix):
    recorder = None

    def _sample_dirichlet(self, params):
        return self.recorder.record(torch._sample_dirichlet(params))


class RecordedMixBeta:
    """The Beta of a MixUp / CutMix built into a Compose, recorded by the
    active DrawRecorder (the one that set RecordedAugMix.recorder)."""

    def __init__(self, dist):
        self.dist = dist

    def sample(self, shape=()):
        return RecordedAugMix.recorder.record(self.dist.sample(shape))


def recorded_mix(cls, **kw):
    t = cls(**kw)
    t._dist = RecordedMixBeta(t._dist)
    return t


class RecordedBeta:
    def __init__(self, dist, recorder):
        self.dist, self.recorder = dist, recorder

    def sample(self, shape=()):
        return self.recorder.record(self.dist.sample(shape))


def augment_goldens(out):
    """The augmentations: each case runs torchvision's transform under a
    seed with its draws recorded; augment/cases.txt lists

        OP NAME INPUTS ATTRS

    INPUTS joined by '+' (the image, or images and labels, then NAME_draws:
    float64, the recorded draws); the outputs are NAME.npy (and, for mixup
    and cutmix, NAME_labels.npy)."""
    import torchvision.transforms.v2 as T
    os.makedirs(out, exist_ok=True)
    arng = np.random.default_rng(20261202)
    ins, rows = {}, []

    def put(name, a):
        np.save(os.path.join(out, name + ".npy"), np.ascontiguousarray(a), allow_pickle=False)

    def add(name, a):
        ins[name] = a
        put(name, a)

    yy, xx = np.mgrid[0:32, 0:40]
    smooth = np.stack([(120 + 100 * np.sin(xx / 5.0 + c) * np.cos(yy / 7.0)).astype(np.uint8) for c in range(3)])
    add("aug_u8", np.clip(smooth.astype(np.int16) + arng.integers(-20, 21, smooth.shape), 0, 255).astype(np.uint8))
    add("aug_batch_u8", arng.integers(0, 256, (3, 3, 20, 24), dtype=np.uint8))
    add("aug_grey_u8", arng.integers(0, 256, (1, 18, 22), dtype=np.uint8))
    add("aug_f32", arng.random((3, 16, 20), dtype=np.float32))
    add("mix_f32", arng.random((4, 3, 10, 12), dtype=np.float32))
    add("mix_u8", arng.integers(0, 256, (4, 3, 10, 12), dtype=np.uint8))
    add("labels_idx", np.array([3, 0, 4, 1], dtype=np.int64))
    probs = arng.random((4, 5), dtype=np.float32)
    add("labels_prob", (probs / probs.sum(1, keepdims=True)).astype(np.float32))

    def case(op, name, transform, inputs, attrs, seed, prepare=None):
        torch.manual_seed(seed)
        args = [torch.from_numpy(ins[i].copy()) for i in inputs]
        with DrawRecorder() as rec:
            if prepare:
                prepare(transform, rec)
            y = transform(*args)
        if isinstance(y, tuple):
            put(name, y[0].numpy())
            put(name + "_labels", y[1].numpy())
        else:
            put(name, y.numpy())
        put(name + "_draws", np.array(rec.draws, dtype=np.float64))
        rows.append(f"vision.{op} {name} {'+'.join(inputs + [name + '_draws'])} " + attrs_text(**attrs))

    def augmix_prepare(t, rec):
        t.recorder = rec

    mix = [("default", {}, {}),
           ("partial", dict(severity=5, mixture_width=2, chain_depth=2, alpha=0.5, all_ops=False),
            dict(severity=5, mixture_width=2, chain_depth=2, alpha=0.5, all_ops=False)),
           ("nearest_fill", dict(interpolation=InterpolationMode.NEAREST, fill=[10, 200, 30], severity=10),
            dict(interpolation="nearest", fill="10,200,30", severity=10))]
    for tag, kw, attrs in mix:
        for inp in ("aug_u8", "aug_batch_u8") if tag != "nearest_fill" else ("aug_u8",):
            for seed in (1, 2, 3):
                case("augmix", f"augmix_{tag}_{inp}_{seed}", RecordedAugMix(**kw), [inp], attrs, seed, augmix_prepare)
    case("augmix", "augmix_default_aug_f32_1", RecordedAugMix(), ["aug_f32"], {}, 4, augmix_prepare)
    case("augmix", "augmix_default_aug_grey_u8_1", RecordedAugMix(), ["aug_grey_u8"], {}, 5, augmix_prepare)

    for seed in range(1, 13):
        case("rand_augment", f"rand_augment_aug_u8_{seed}", T.RandAugment(), ["aug_u8"], {}, 100 + seed)
        case("trivial_augment_wide", f"trivial_augment_wide_aug_u8_{seed}", T.TrivialAugmentWide(), ["aug_u8"], {},
             200 + seed)
        case("auto_augment", f"auto_augment_aug_u8_{seed}", T.AutoAugment(), ["aug_u8"], {}, 300 + seed)
    case("rand_augment", "rand_augment_3ops_m15_batch", T.RandAugment(num_ops=3, magnitude=15),
         ["aug_batch_u8"], dict(num_ops=3, magnitude=15), 120)
    case("rand_augment", "rand_augment_bilinear_fill_f32",
         T.RandAugment(num_ops=4, interpolation=InterpolationMode.BILINEAR, fill=[0.1, 0.5, 0.9]),
         ["aug_f32"], dict(num_ops=4, interpolation="bilinear", fill="0.1,0.5,0.9"), 121)
    case("trivial_augment_wide", "trivial_augment_wide_batch", T.TrivialAugmentWide(num_magnitude_bins=11),
         ["aug_batch_u8"], dict(num_magnitude_bins=11), 220)
    case("auto_augment", "auto_augment_grey", T.AutoAugment(), ["aug_grey_u8"], {}, 320)

    for seed in range(1, 5):
        case("random_erasing", f"random_erasing_u8_{seed}", T.RandomErasing(p=1.0), ["aug_u8"], dict(p=1.0), 400 + seed)
    case("random_erasing", "random_erasing_value_batch", T.RandomErasing(p=1.0, value=[10, 20, 30], scale=(0.1, 0.5)),
         ["aug_batch_u8"], dict(p=1.0, value="10,20,30", scale="0.1,0.5"), 410)
    case("random_erasing", "random_erasing_f32", T.RandomErasing(p=0.9, value=0.25, ratio=(0.5, 2.0)),
         ["aug_f32"], dict(p=0.9, value=0.25, ratio="0.5,2"), 411)
    case("random_erasing", "random_erasing_skipped", T.RandomErasing(p=0.0), ["aug_u8"], dict(p=0.0), 412)
    # value='random': the noise is recorded with the other draws; uint8 takes
    # torch's float->uint8 cast of it (int(v) & 255).
    for seed in (1, 2):
        case("random_erasing", f"random_erasing_random_u8_{seed}", T.RandomErasing(p=1.0, value="random"),
             ["aug_u8"], dict(p=1.0, random=True), 420 + seed)
    case("random_erasing", "random_erasing_random_batch", T.RandomErasing(p=1.0, value="random", scale=(0.1, 0.3)),
         ["aug_batch_u8"], dict(p=1.0, random=True, scale="0.1,0.3"), 423)
    case("random_erasing", "random_erasing_random_f32", T.RandomErasing(p=1.0, value="random", ratio=(0.5, 2.0)),
         ["aug_f32"], dict(p=1.0, random=True, ratio="0.5,2"), 424)

    def beta_prepare(t, rec):
        t._dist = RecordedBeta(t._dist, rec)

    for op, cls in (("mixup", T.MixUp), ("cutmix", T.CutMix)):
        imgs = ("mix_f32",) if op == "mixup" else ("mix_f32", "mix_u8")
        for inp in imgs:
            for seed in (1, 2):
                case(op, f"{op}_{inp}_idx_{seed}", cls(num_classes=5), [inp, "labels_idx"], dict(num_classes=5),
                     500 + seed, beta_prepare)
            case(op, f"{op}_{inp}_prob_alpha", cls(alpha=0.4), [inp, "labels_prob"], dict(alpha=0.4), 510,
                 beta_prepare)

    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write(f"# torchvision {torchvision.__version__}, torch {torch.__version__}\n")
        f.write("\n".join(rows) + "\n")
    print(f"{len(rows)} augmentation cases in {out}")


def sample_goldens(out):
    """vision.transform_sample against torchvision.transforms.v2.Compose on a
    sample {image, boxes, masks, labels}, draws recorded. sample/cases.txt:

        NAME INPUTS FORMAT

    with NAME.json the pipeline, INPUTS the input files joined by '+' (image,
    boxes or -, masks or -, labels or -) and NAME_draws; the outputs are
    NAME_image, NAME_boxes, NAME_masks, NAME_labels (absent ones: empty)."""
    import json
    import torchvision.transforms.v2 as T
    os.makedirs(out, exist_ok=True)
    srng = np.random.default_rng(20261203)
    ins, rows = {}, []

    def put(name, a):
        np.save(os.path.join(out, name + ".npy"), np.ascontiguousarray(a), allow_pickle=False)

    def add(name, a):
        ins[name] = a
        put(name, a)

    yy, xx = np.mgrid[0:32, 0:40]
    add("img_u8", np.stack([(120 + 100 * np.sin(xx / 6.0 + c) * np.cos(yy / 5.0)).astype(np.uint8) for c in range(3)]))
    xy = srng.uniform(0, 30, (6, 2)).astype(np.float32)
    wh = srng.uniform(2, 14, (6, 2)).astype(np.float32)
    add("boxes_xyxy", np.concatenate([xy, xy + wh], 1))
    add("boxes_xywh", np.concatenate([xy, wh], 1))
    add("boxes_cxcywh", np.concatenate([xy + wh / 2, wh], 1))
    add("mask_u8", srng.integers(0, 5, (32, 40), dtype=np.uint8))
    per_box = np.zeros((6, 32, 40), dtype=np.uint8)
    for k in range(6):
        x0, y0 = int(xy[k, 0]), int(xy[k, 1])
        per_box[k, y0:y0 + int(wh[k, 1]) + 1, x0:x0 + int(wh[k, 0]) + 1] = 1
    add("mask_per_box", per_box)
    add("labels", np.arange(6, dtype=np.int64) + 10)
    add("batch_u8", srng.integers(0, 256, (4, 3, 16, 20), dtype=np.uint8))
    add("batch_labels", np.array([2, 0, 4, 2], dtype=np.int64))

    def case(name, steps, spec, image="img_u8", boxes=None, fmt="xyxy", masks=None, labels=None, seed=0):
        torch.manual_seed(seed)
        sample = {"image": tv_tensors.Image(torch.from_numpy(ins[image].copy()))}
        if boxes:
            sample["boxes"] = tv_tensors.BoundingBoxes(torch.from_numpy(ins[boxes].copy()), format=fmt.upper(),
                                                       canvas_size=tuple(ins[image].shape[-2:]))
        if masks:
            sample["masks"] = tv_tensors.Mask(torch.from_numpy(ins[masks].copy()))
        if labels:
            sample["labels"] = torch.from_numpy(ins[labels].copy())
        with DrawRecorder() as rec:
            y = T.Compose(steps)(sample)
        put(name + "_image", y["image"].as_subclass(torch.Tensor).numpy())
        put(name + "_boxes", y["boxes"].as_subclass(torch.Tensor).numpy() if boxes else np.zeros((0, 4), np.float32))
        if masks:
            put(name + "_masks", y["masks"].as_subclass(torch.Tensor).numpy())
        put(name + "_labels", y["labels"].numpy() if labels else np.zeros((0,), np.int64))
        put(name + "_draws", np.array(rec.draws, dtype=np.float64))
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(spec, f)
        rows.append(f"{name} {image}+{boxes or '-'}+{masks or '-'}+{labels or '-'}+{name}_draws {fmt}")

    for seed in range(4):
        case(f"rrc_flip_{seed}", [T.RandomResizedCrop([24, 28]), T.RandomHorizontalFlip()],
             [{"RandomResizedCrop": {"size": [24, 28]}}, {"RandomHorizontalFlip": {}}],
             boxes="boxes_xyxy", masks="mask_u8", labels="labels", seed=seed)
    for seed in range(3):
        case(f"pad_crop_sanitize_{seed}",
             [T.Pad([2, 3], fill=7), T.RandomCrop([26, 30]), T.RandomVerticalFlip(p=0.7), T.ClampBoundingBoxes(),
              T.SanitizeBoundingBoxes(min_size=2)],
             [{"Pad": {"padding": [2, 3], "fill": 7}}, {"RandomCrop": {"size": [26, 30]}},
              {"RandomVerticalFlip": {"p": 0.7}}, {"ClampBoundingBoxes": {}}, {"SanitizeBoundingBoxes": {"min_size": 2}}],
             boxes="boxes_cxcywh", fmt="cxcywh", masks="mask_per_box", labels="labels", seed=10 + seed)
    for seed in range(3):
        case(f"resize_jitter_normalize_{seed}",
             [T.Resize([20]), T.CenterCrop([16, 18]), T.ColorJitter(0.4, 0.4, 0.4, 0.1),
              T.ToDtype(torch.float32, scale=True), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])],
             [{"Resize": {"size": [20]}}, {"CenterCrop": {"size": [16, 18]}},
              {"ColorJitter": {"brightness": 0.4, "contrast": 0.4, "saturation": 0.4, "hue": 0.1}},
              {"ToDtype": {"dtype": "float32", "scale": True}},
              {"Normalize": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}}],
             boxes="boxes_xywh", fmt="xywh", masks="mask_u8", seed=20 + seed)
    case("random_crop_pad_if_needed_edge", [T.RandomCrop([36, 44], pad_if_needed=True, padding_mode="edge")],
         [{"RandomCrop": {"size": [36, 44], "pad_if_needed": True, "padding_mode": "edge"}}], masks="mask_u8", seed=30)
    case("resize_bicubic_max_size", [T.Resize([18], interpolation=InterpolationMode.BICUBIC, max_size=21)],
         [{"Resize": {"size": [18], "interpolation": "bicubic", "max_size": 21}}], boxes="boxes_xyxy",
         masks="mask_u8", seed=31)
    case("rrc_fallback", [T.RandomResizedCrop([10, 10], scale=(3.0, 4.0), ratio=(0.2, 0.25))],
         [{"RandomResizedCrop": {"size": [10, 10], "scale": [3.0, 4.0], "ratio": [0.2, 0.25]}}],
         boxes="boxes_xyxy", masks="mask_u8", seed=32)

    for seed in range(2):
        case(f"rotation_{seed}", [T.RandomRotation(30)], [{"RandomRotation": {"degrees": 30}}],
             boxes="boxes_xyxy", masks="mask_u8", labels="labels", seed=40 + seed)
    case("rotation_expand_bilinear_fill",
         [T.RandomRotation([-20, 40], interpolation=InterpolationMode.BILINEAR, expand=True, fill=5)],
         [{"RandomRotation": {"degrees": [-20, 40], "interpolation": "bilinear", "expand": True, "fill": 5}}],
         boxes="boxes_xywh", fmt="xywh", masks="mask_u8", seed=42)
    for seed in range(2):
        case(f"affine_{seed}",
             [T.RandomAffine(degrees=15, translate=(0.1, 0.2), scale=(0.8, 1.2), shear=(-5, 5, -3, 3),
                             interpolation=InterpolationMode.BILINEAR)],
             [{"RandomAffine": {"degrees": 15, "translate": [0.1, 0.2], "scale": [0.8, 1.2], "shear": [-5, 5, -3, 3],
                                "interpolation": "bilinear"}}],
             boxes="boxes_xyxy", masks="mask_u8", labels="labels", seed=50 + seed)
    case("affine_shear_center", [T.RandomAffine(degrees=0, shear=10, center=[5, 7], fill=9)],
         [{"RandomAffine": {"degrees": 0, "shear": 10, "center": [5, 7], "fill": 9}}],
         boxes="boxes_cxcywh", fmt="cxcywh", masks="mask_u8", seed=52)
    for seed in range(3):
        case(f"perspective_{seed}", [T.RandomPerspective(distortion_scale=0.4, p=0.8)],
             [{"RandomPerspective": {"distortion_scale": 0.4, "p": 0.8}}],
             boxes="boxes_xyxy", masks="mask_u8", seed=60 + seed)
    for seed in range(2):
        case(f"zoom_out_{seed}", [T.RandomZoomOut(fill=3, side_range=(1.0, 2.0), p=0.9), T.Resize([32, 40])],
             [{"RandomZoomOut": {"fill": 3, "side_range": [1.0, 2.0], "p": 0.9}}, {"Resize": {"size": [32, 40]}}],
             boxes="boxes_xyxy", masks="mask_u8", labels="labels", seed=70 + seed)
    for seed in range(2):
        case(f"elastic_{seed}", [T.ElasticTransform(alpha=20.0, sigma=3.0)],
             [{"ElasticTransform": {"alpha": 20.0, "sigma": 3.0}}],
             boxes="boxes_xyxy", masks="mask_u8", labels="labels", seed=100 + seed)
    case("elastic_nearest_fill", [T.ElasticTransform(alpha=[30.0, 10.0], sigma=[2.0, 4.0],
                                                     interpolation=InterpolationMode.NEAREST, fill=6)],
         [{"ElasticTransform": {"alpha": [30.0, 10.0], "sigma": [2.0, 4.0], "interpolation": "nearest", "fill": 6}}],
         boxes="boxes_xywh", fmt="xywh", masks="mask_u8", seed=102)
    for seed in range(4):
        case(f"iou_crop_{seed}", [T.RandomIoUCrop(), T.SanitizeBoundingBoxes()],
             [{"RandomIoUCrop": {}}, {"SanitizeBoundingBoxes": {}}],
             boxes="boxes_xyxy", masks="mask_u8", labels="labels", seed=110 + seed)
    case("iou_crop_options", [T.RandomIoUCrop(min_scale=0.5, sampler_options=[0.3, 0.5], trials=10)],
         [{"RandomIoUCrop": {"min_scale": 0.5, "sampler_options": [0.3, 0.5], "trials": 10}}],
         boxes="boxes_cxcywh", fmt="cxcywh", masks="mask_u8", labels="labels", seed=114)
    # the augmentations in a pipeline (image alone: torchvision refuses boxes and masks there)
    for seed in range(2):
        case(f"policies_{seed}", [T.RandomResizedCrop([24, 24]), T.RandAugment(num_ops=3), T.TrivialAugmentWide(),
                                  T.AutoAugment(), T.ToDtype(torch.float32, scale=True)],
             [{"RandomResizedCrop": {"size": [24, 24]}}, {"RandAugment": {"num_ops": 3}}, {"TrivialAugmentWide": {}},
              {"AutoAugment": {}}, {"ToDtype": {"dtype": "float32", "scale": True}}], seed=80 + seed)
        case(f"augmix_{seed}", [T.RandomHorizontalFlip(), RecordedAugMix(severity=4, alpha=0.7)],
             [{"RandomHorizontalFlip": {}}, {"AugMix": {"severity": 4, "alpha": 0.7}}], seed=90 + seed)

    # RandomErasing passes boxes and masks through (torchvision warns so)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(2):
            case(f"erasing_{seed}", [T.RandomHorizontalFlip(), T.RandomErasing(p=1.0, value="random"),
                                     T.RandomErasing(p=0.8, value=[10, 20, 30], scale=(0.05, 0.2))],
                 [{"RandomHorizontalFlip": {}}, {"RandomErasing": {"p": 1.0, "value": "random"}},
                  {"RandomErasing": {"p": 0.8, "value": [10, 20, 30], "scale": [0.05, 0.2]}}],
                 boxes="boxes_xyxy", masks="mask_u8", labels="labels", seed=120 + seed)
    # MixUp and CutMix on a batch with its class labels (one-hot out)
    for seed in range(2):
        case(f"mixup_{seed}", [T.RandomHorizontalFlip(), T.ToDtype(torch.float32, scale=True),
                               recorded_mix(T.MixUp, num_classes=5)],
             [{"RandomHorizontalFlip": {}}, {"ToDtype": {"dtype": "float32", "scale": True}},
              {"MixUp": {"num_classes": 5}}], image="batch_u8", labels="batch_labels", seed=130 + seed)
        case(f"cutmix_{seed}", [T.RandomErasing(p=1.0), recorded_mix(T.CutMix, num_classes=5, alpha=0.5)],
             [{"RandomErasing": {"p": 1.0}}, {"CutMix": {"num_classes": 5, "alpha": 0.5}}],
             image="batch_u8", labels="batch_labels", seed=140 + seed)
    case("cutmix_then_mixup", [T.ToDtype(torch.float32, scale=True), recorded_mix(T.CutMix, num_classes=5),
                               recorded_mix(T.MixUp, alpha=0.4)],
         [{"ToDtype": {"dtype": "float32", "scale": True}}, {"CutMix": {"num_classes": 5}}, {"MixUp": {"alpha": 0.4}}],
         image="batch_u8", labels="batch_labels", seed=150)

    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write(f"# torchvision {torchvision.__version__}, torch {torch.__version__}\n")
        f.write("\n".join(rows) + "\n")
    print(f"{len(rows)} transform_sample cases in {out}")


if __name__ == "__main__":
    main()
