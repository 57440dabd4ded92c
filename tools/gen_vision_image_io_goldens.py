#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the test images of the vision pack's image_io module and
torchvision.io's results on them to tests/data/vision/image_io/.

    .venv/bin/python tools/gen_vision_image_io_goldens.py [OUTDIR]

The images are small (tens of pixels a side, a few KB each) and made from a
seeded synthetic picture (gradients, edges and noise, so every DCT band and
PNG filter is exercised); PIL writes the JPEGs (libjpeg-turbo) and most
PNGs, a small writer below the PNGs PIL cannot write (16-bit RGB / RGBA,
1/2/4-bit gray, gray + alpha at 16 bits, Adam7-interlaced).

Files:
  <img>.jpg / <img>.png          the encoded test images (the decoders' inputs,
                                 the fuzz seeds, the truncation test's inputs)
  <img>__<MODE>.npy              torchvision.io.decode_jpeg / decode_png of the
                                 image in that ImageReadMode, as a compact CHW
                                 array: uint8, or uint16 for a 16-bit PNG (as
                                 torchvision >= 0.21 returns it)
  <img>__<MODE>__exif.npy        the same with apply_exif_orientation=True
  cases.txt                      "<img> <MODE> <exif 0|1> <golden stem>" per
                                 golden: what the tests decode
  refused.txt                    "<img> <MODE>" per line: torchvision refuses
                                 that mode for that image
  undefined.txt                  "<img> <MODE> <why>": torchvision returns
                                 uninitialised memory there (no golden)
  enc_src_rgb.npy, enc_src_gray.npy
                                 u8 CHW images the encoders are checked on
  enc_jpeg_<src>_q<Q>.npy        torchvision.io.encode_jpeg bytes (u8 [N])
  enc_png_<src>_l<L>.npy         torchvision.io.encode_png bytes (u8 [N])
  versions.txt                   the torchvision, PIL, libjpeg-turbo and zlib
                                 versions the data come from
"""
import io
import os
import struct
import sys
import warnings
import zlib

import numpy as np
import PIL
import PIL.features
import torch
import torchvision
from PIL import Image
from torchvision.io import ImageReadMode, decode_jpeg, decode_png, encode_jpeg, encode_png

warnings.filterwarnings("ignore", category=DeprecationWarning)   # torchvision.io 0.29's deprecation notice

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "image_io")
MODES = ["UNCHANGED", "GRAY", "GRAY_ALPHA", "RGB", "RGB_ALPHA"]


def picture(h, w, seed):
    """A u8 [h, w, 3] picture with smooth gradients, hard edges and noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 255 * x / max(w - 1, 1)
    g = 255 * y / max(h - 1, 1)
    b = 127.5 + 127.5 * np.sin((x + 2 * y) / 3.0)
    img = np.stack([r, g, b], -1)
    img[(x // 7 + y // 5) % 2 == 0] *= 0.6                         # a checkerboard of hard edges
    img += rng.normal(0, 12, img.shape)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def write_png(arr, bit_depth, color_type, extra=b"", adam7=False):
    """A PNG of arr (uint16 samples for 16 bits; for bit depths below 8, one
    sample per pixel in [0, 2^bit_depth)), filter type 0 rows; adam7: the
    seven interlaced passes (an empty pass has no rows), as PIL cannot write."""
    h, w = arr.shape[:2]
    arr = arr.reshape(h, w, -1)
    images = [arr[y0::dy, x0::dx] for x0, y0, dx, dy in ADAM7] if adam7 else [arr]
    rows = []
    for row in (r for im in images if im.size for r in im):
        if bit_depth == 16:
            raw = row.astype(">u2").tobytes()
        elif bit_depth == 8:
            raw = row.astype(np.uint8).tobytes()
        else:
            bits = "".join(format(int(v), "0%db" % bit_depth) for v in row.reshape(-1))
            bits += "0" * (-len(bits) % 8)
            raw = bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
        rows.append(b"\x00" + raw)
    ihdr = struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 1 if adam7 else 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + extra
            + png_chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + png_chunk(b"IEND", b""))


def exif_bytes(orientation):
    ex = Image.Exif()
    ex[0x0112] = orientation
    return ex.tobytes()


def pil_bytes(im, fmt, **kw):
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def images():
    """name -> encoded bytes."""
    out = {}
    rgb = Image.fromarray(picture(29, 37, 1))
    out["rgb420.jpg"] = pil_bytes(rgb, "JPEG", quality=90, subsampling=2)
    out["rgb422.jpg"] = pil_bytes(rgb, "JPEG", quality=85, subsampling=1)
    out["rgb444.jpg"] = pil_bytes(rgb, "JPEG", quality=95, subsampling=0)
    out["progressive.jpg"] = pil_bytes(rgb, "JPEG", quality=80, progressive=True, subsampling=2)
    out["restart.jpg"] = pil_bytes(rgb, "JPEG", quality=75, restart_marker_rows=1)
    out["gray.jpg"] = pil_bytes(rgb.convert("L"), "JPEG", quality=90)
    out["cmyk.jpg"] = pil_bytes(rgb.convert("CMYK"), "JPEG", quality=90)
    small = Image.fromarray(picture(13, 21, 2))
    for o in range(1, 9):
        out["exif%d.jpg" % o] = pil_bytes(small, "JPEG", quality=90, exif=exif_bytes(o))

    p = picture(19, 27, 3)
    alpha = ((np.arange(19 * 27).reshape(19, 27) * 37) % 256).astype(np.uint8)
    gray = np.asarray(Image.fromarray(p).convert("L"))
    out["gray8.png"] = pil_bytes(Image.fromarray(gray), "PNG")
    out["gray_alpha8.png"] = pil_bytes(Image.fromarray(np.stack([gray, alpha], -1), "LA"), "PNG")
    out["rgb8.png"] = pil_bytes(Image.fromarray(p), "PNG")
    out["rgba8.png"] = pil_bytes(Image.fromarray(np.dstack([p, alpha]), "RGBA"), "PNG")
    pal = Image.fromarray(p).quantize(colors=200, method=Image.Quantize.MEDIANCUT)    # 8-bit indices
    out["palette.png"] = pil_bytes(pal, "PNG")
    out["palette_trns.png"] = pil_bytes(pal, "PNG", transparency=bytes([0, 128] + [255] * 60 + [7]))
    pal4 = Image.fromarray(p).quantize(colors=16, method=Image.Quantize.MEDIANCUT)    # 4-bit indices
    out["palette4_trns.png"] = pil_bytes(pal4, "PNG", transparency=bytes([0, 64, 128]))
    rng = np.random.default_rng(4)
    g16 = (gray.astype(np.uint32) * 257 + rng.integers(0, 257, gray.shape)).astype(np.uint16)
    out["gray16.png"] = write_png(g16, 16, 0)
    rgb16 = (p.astype(np.uint32) * 257 + rng.integers(0, 257, p.shape)).astype(np.uint16)
    out["rgb16.png"] = write_png(rgb16, 16, 2)
    a16 = (alpha.astype(np.uint32) * 257).astype(np.uint16)
    out["rgba16.png"] = write_png(np.dstack([rgb16, a16]), 16, 6)
    out["gray_alpha16.png"] = write_png(np.dstack([g16, a16]), 16, 4)
    for bits in (1, 2, 4):
        out["gray%d.png" % bits] = write_png((gray >> (8 - bits)).astype(np.uint8), bits, 0)
    out["rgb_trns.png"] = write_png(p, 8, 2, png_chunk(b"tRNS", struct.pack(">HHH", 255, 0, 0)))
    out["rgb8_adam7.png"] = write_png(p, 8, 2, adam7=True)
    out["gray16_adam7.png"] = write_png(g16, 16, 0, adam7=True)
    out["png_exif6.png"] = pil_bytes(Image.fromarray(p), "PNG", exif=exif_bytes(6))
    return out


def undefined(name, data, mode):
    """Why torchvision's result for this image and mode is not defined (it
    returns torch.empty memory), or None. Its decode_png sizes the tensor
    from the mode but leaves libpng's output as it is: a palette image
    without tRNS is taken to have alpha, so GRAY_ALPHA / RGB_ALPHA get one
    channel less than the tensor holds; UNCHANGED palette rows of 1/2/4 bits
    stay packed. loom defines both (tests/vision/image_io: opaque alpha,
    one index per byte)."""
    if not name.endswith(".png"):
        return None
    bit_depth, color_type = data[24], data[25]
    has_trns = b"tRNS" in data[:data.find(b"IDAT")]
    if color_type == 3 and not has_trns and mode in ("GRAY_ALPHA", "RGB_ALPHA"):
        return "palette without tRNS: libpng gives %d channels" % (1 if mode == "GRAY_ALPHA" else 3)
    if color_type == 3 and bit_depth < 8 and mode == "UNCHANGED":
        return "%d-bit palette indices stay packed" % bit_depth
    return None


def chw(t):
    """torchvision's CHW result as a compact numpy array (uint16 stays uint16)."""
    return t.contiguous().numpy()


def main():
    os.makedirs(OUT, exist_ok=True)
    refused, undef, cases = [], [], []
    for name, data in sorted(images().items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        stem, ext = os.path.splitext(name)
        t = torch.frombuffer(bytearray(data), dtype=torch.uint8)
        decode = decode_jpeg if ext == ".jpg" else decode_png
        for mode in MODES:
            why = undefined(name, data, mode)
            if why is not None:
                undef.append("%s %s %s" % (name, mode, why))
                continue
            for exif in (False, True):
                try:
                    img = decode(t, mode=ImageReadMode[mode], apply_exif_orientation=exif)
                except RuntimeError:
                    if not exif:
                        refused.append("%s %s" % (name, mode))
                    continue
                if exif and "exif" not in stem:
                    continue
                suffix = "__exif" if exif else ""
                cases.append("%s %s %d %s__%s%s" % (name, mode, exif, stem, mode, suffix))
                np.save(os.path.join(OUT, "%s__%s%s.npy" % (stem, mode, suffix)), chw(img), allow_pickle=False)
    with open(os.path.join(OUT, "refused.txt"), "w") as f:
        f.write("\n".join(refused) + "\n")
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("\n".join(cases) + "\n")
    with open(os.path.join(OUT, "undefined.txt"), "w") as f:
        f.write("\n".join(undef) + "\n")

    srcs = {"rgb": torch.from_numpy(picture(24, 31, 5)).permute(2, 0, 1).contiguous()}
    srcs["gray"] = srcs["rgb"][1:2].contiguous()
    for s, img in srcs.items():
        np.save(os.path.join(OUT, "enc_src_%s.npy" % s), img.numpy(), allow_pickle=False)
        for q in (1, 50, 75, 95, 100):
            np.save(os.path.join(OUT, "enc_jpeg_%s_q%d.npy" % (s, q)), encode_jpeg(img, quality=q).numpy(),
                    allow_pickle=False)
        for lvl in (0, 1, 6, 9):
            np.save(os.path.join(OUT, "enc_png_%s_l%d.npy" % (s, lvl)),
                    encode_png(img, compression_level=lvl).numpy(), allow_pickle=False)
    with open(os.path.join(OUT, "versions.txt"), "w") as f:
        f.write("torch %s\ntorchvision %s\npillow %s\nlibjpeg-turbo (PIL) %s\nzlib (PIL) %s\n" % (
            torch.__version__, torchvision.__version__, PIL.__version__,
            PIL.features.version("libjpeg_turbo"), PIL.features.version("zlib")))


if __name__ == "__main__":
    main()
