#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""tools/gen_fuzz_corpus.py - the seed corpus and dictionaries of the
libFuzzer targets in tests/fuzz/ (standard library only).

Writes tests/fuzz/corpus/<target>/<name> (small valid files and edge cases,
a few KB per target) and tests/fuzz/<target>.dict. Deterministic: running it
again rewrites the same bytes. The byte layouts of the inputs are those the
targets document at the top of tests/fuzz/fuzz_<target>.c.

    python3 tools/gen_fuzz_corpus.py [--out DIR] [--only TARGET ...]    (default: tests/fuzz, every target)
"""
import argparse
import io
import json
import os
import shutil
import struct
import zipfile

# ------------------------------------------------------------------- .npy


def npy(descr, shape, data, fortran=False, major=1, pad=True, header=None):
    """A .npy file as NumPy writes it (or with a given header text)."""
    if header is None:
        dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
        header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
            descr, "True" if fortran else "False", dims)
    lenbytes = 2 if major == 1 else 4
    pre = 6 + 2 + lenbytes
    if pad:
        total = pre + len(header) + 1
        header += " " * ((64 - total % 64) % 64) + "\n"
    h = header.encode("latin-1")
    size = struct.pack("<H", len(h)) if major == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes([major, 0]) + size + h + data


def npy_seeds():
    f32 = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
    return {
        "f32_2x3": npy("<f4", (2, 3), f32),
        "f32_fortran_2x3": npy("<f4", (2, 3), f32, fortran=True),
        "i4_big_endian": npy(">i4", (3,), struct.pack(">3i", 1, -2, 3)),
        "u1_scalar": npy("|u1", (), b"\x07"),
        "f8_v2": npy("<f8", (2,), struct.pack("<2d", 0.5, -1.0), major=2),
        "f2_v3_empty": npy("<f2", (0, 5), b"", major=3),
        "b1": npy("|b1", (4,), b"\x00\x01\x01\x00"),
        "c8": npy("<c8", (1,), struct.pack("<2f", 1, -1)),
        "c16_big": npy(">c16", (1,), struct.pack(">2d", 2, 3)),
        "bf16_V2": npy("|V2", (2, 2), b"\x80\x3f\x00\x40\x40\x40\x80\x40"),
        "f8e4m3_V1": npy("|V1", (3,), b"\x38\x40\xb8"),
        "i8_4d": npy("<i8", (1, 2, 1, 2), struct.pack("<4q", 1, 2, 3, -4)),
        "i2_no_order": npy("i2", (2,), struct.pack("<2h", 5, 6)),
        "py2_long_dim": npy("<i4", (), b"", header="{'descr': '<i4', 'fortran_order': False, 'shape': (2L,)}")
                        + struct.pack("<2i", 1, 2),
        "keys_reordered": npy("<f4", (), b"", header="{'shape': (1,), 'descr': '<f4', 'fortran_order': False}")
                          + struct.pack("<f", 9),
        "bad_truncated_data": npy("<f4", (2, 3), f32[:-2]),
        "bad_shape_not_tuple": npy("<f4", (), b"", header="{'descr': '<f4', 'fortran_order': False, 'shape': (3)}"),
        "bad_structured": npy("<f4", (), b"", header="{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}"),
    }


NPY_DICT = ["\x93NUMPY", "'descr'", "'fortran_order'", "'shape'", "True", "False", ": ", ", ", "(", ")",
            "{", "}", ",)", "L", "'<f4'", "'<f8'", "'<f2'", "'|V2'", "'|V1'", "'|i1'", "'|u1'", "'<i2'", "'<i4'",
            "'<i8'", "'|b1'", "'<c8'", "'<c16'", "'>f4'", "'=f4'", "'|f4'", "'<U4'", "'<M8'", "\x01\x00",
            "\x02\x00", "\x03\x00"]

# ------------------------------------------------------------ safetensors

ST_SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
            "U8": 1, "BOOL": 1}


def safetensors(tensors, metadata=None, align=8, header_text=None):
    """tensors: [(name, dtype, shape, bytes)] in data order; header padded
    with spaces to `align` bytes, as safetensors.torch.save_file does."""
    header, data, off = {}, b"", 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        data += raw
        off += len(raw)
    text = header_text if header_text is not None else json.dumps(header, separators=(",", ":"))
    h = text.encode("utf-8")
    if align > 1:
        h += b" " * ((align - len(h) % align) % align)
    return struct.pack("<Q", len(h)) + h + data


def raw(dtype, n, seed=1):
    return bytes((seed * 37 + i * 11) & 0xFF for i in range(n * ST_SIZES[dtype]))


def safetensors_seeds():
    every = [("t_" + d.lower(), d, (2,), raw(d, 2, k)) for k, d in enumerate(ST_SIZES)]
    return {
        "empty": safetensors([]),
        "one_f32": safetensors([("weight", "F32", (2, 3), struct.pack("<6f", 1, 2, 3, 4, 5, 6))]),
        "every_dtype": safetensors(every),
        "metadata": safetensors([("a", "I32", (1,), struct.pack("<i", 7))], metadata={"format": "pt"}),
        "misaligned": safetensors([("b", "U8", (3,), b"abc"), ("a", "F64", (1,), struct.pack("<d", 1.5))],
                                  align=1),
        "zero_size_and_scalar": safetensors([("s", "F32", (), struct.pack("<f", 3)), ("z", "F16", (0, 4), b"")]),
        "unsorted_names": safetensors([("zz", "I8", (2,), b"\x01\x02"), ("aa", "I8", (2,), b"\x03\x04")]),
        "bad_overlap": safetensors([], header_text='{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},'
                                                   '"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}') + b"abc",
        "bad_dup_key": safetensors([], header_text='{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
                                                   '"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}') + b"xy",
    }


ST_DICT = ['"dtype"', '"shape"', '"data_offsets"', '"__metadata__"', '{"', '":', '},"', "[0,", "]", "[]", "{}",
           "\\u0000", "\\ud800", "1e3", "9007199254740993", "-0", "\x08\x00\x00\x00\x00\x00\x00\x00"] + \
          ['"%s"' % d for d in ST_SIZES] + ['"F8_E5M2"', '"U16"', '"C64"']

# ------------------------------------------------------------- tbe tables

WT = {"fp32": 0, "fp16": 1, "bf16": 2, "fp8": 3, "int8": 4, "int4": 5, "int2": 6}


def tbe_params(pool=0, outd=0, bounds=1, tys=None, align_idx=0, dims_mode=0, num_emb=0, ftm=0, cache=0,
               p5=0, p6=0, batch_b=2, max_len=3, i32=0, psw=0, pruned=0):
    """The 8 parameter bytes of fuzz_tbe_tables.c."""
    wbits = 0
    mode = 0
    if tys is not None:
        mode = 1
        for t, name in enumerate(tys):
            wbits |= WT[name] << (3 * t)
    p0 = pool | outd << 2 | bounds << 4 | mode << 6
    p4 = align_idx | dims_mode << 3 | num_emb << 5 | ftm << 6 | cache << 7
    p7 = (batch_b - 1) | max_len << 2 | i32 << 5 | psw << 6 | pruned << 7
    return bytes([p0, wbits & 0xFF, wbits >> 8 & 0xFF, wbits >> 16 & 0xFF, p4, p5, p6, p7])


def int_rows(rows, dim, bits, align=1):
    """fbgemm IntNBit rows: f16 scale, f16 bias, then dim elements of `bits`."""
    body = 4 + dim * bits // 8
    stride = (body + align - 1) // align * align
    out = b""
    for r in range(rows):
        row = struct.pack("<ee", 0.5, -1.0) + bytes((r * 7 + i * 3) & 0xFF for i in range(dim * bits // 8))
        out += row + b"\x00" * (stride - body)
    return out, stride


def tbe_seeds():
    f32 = lambda rows, d, s: struct.pack("<%df" % (rows * d), *[((i * s) % 11) / 4.0 - 1 for i in range(rows * d)])
    f16 = lambda rows, d: struct.pack("<%de" % (rows * d), *[(i % 5) / 2.0 for i in range(rows * d)])
    i8, s8 = int_rows(6, 8, 8)
    i4, s4 = int_rows(5, 8, 4)
    i2, s2 = int_rows(4, 8, 2)
    i8a, s8a = int_rows(3, 4, 8, align=16)
    fp8 = bytes((i * 13) & 0x7F for i in range(4 * 8))
    return {
        "fp32_native": tbe_params() + safetensors([("table.0", "F32", (5, 4), f32(5, 4, 3)),
                                                   ("table.1", "F32", (3, 8), f32(3, 8, 5))]),
        "fp16_mean_f16out": tbe_params(pool=1, outd=1) + safetensors([("table.0", "F16", (4, 4), f16(4, 4))]),
        "bf16_pooling_none": tbe_params(pool=2, outd=2, tys=["bf16", "bf16"]) +
                             safetensors([("table.0", "BF16", (3, 4), raw("BF16", 12)),
                                          ("table.1", "BF16", (2, 4), raw("BF16", 8, 3))]),
        "int8_int4_int2_ftm": tbe_params(tys=["int8", "int4", "int2"], ftm=1, p6=0x0B, psw=1) +
                              safetensors([("table.0", "U8", (6, s8), i8), ("table.1", "U8", (5, s4), i4),
                                           ("table.2", "U8", (4, s2), i2)]),
        "fp8_i32_pruned": tbe_params(tys=["fp8"], i32=1, pruned=1, bounds=0) +
                          safetensors([("table.0", "U8", (4, 8), fp8)]),
        "int8_aligned16_dims": tbe_params(tys=["int8"], align_idx=5, dims_mode=1, num_emb=1) +
                               safetensors([("table.0", "U8", (3, s8a), i8a)]),
        "int8_cache_lfu": tbe_params(tys=["int8"], cache=1, p5=0x03, p6=0x03, batch_b=4, max_len=7) +
                          safetensors([("table.0", "U8", (6, s8), i8)]),
        "fp32_as_u8_rows": tbe_params(tys=["fp32"], bounds=3) +
                           safetensors([("table.0", "U8", (2, 16), f32(2, 4, 1))]),
        "bad_no_table0": tbe_params() + safetensors([("table.1", "F32", (1, 4), f32(1, 4, 1))]),
    }


TBE_DICT = ST_DICT + ['"table.0"', '"table.1"', '"table.2"', '"table.10"']

# --------------------------------------------------------- linear weights


def linear_seeds():
    w = struct.pack("<12f", *[i / 4.0 - 1 for i in range(12)])
    b = struct.pack("<3f", 0.5, -0.5, 1)
    return {
        "weight_bias": b"\x02" + safetensors([("bias", "F32", (3,), b), ("weight", "F32", (3, 4), w)]),
        "weight_only": b"\x01" + safetensors([("weight", "F32", (3, 4), w)]),
        "misaligned": b"\x03" + safetensors([("pad", "U8", (1,), b"\x00"), ("weight", "F32", (3, 4), w)], align=1),
        "empty_in": b"\x01" + safetensors([("weight", "F32", (2, 0), b"")]),
        "bad_bias_size": b"\x01" + safetensors([("bias", "F32", (2,), b[:8]), ("weight", "F32", (3, 4), w)]),
        "bad_f16_weight": b"\x01" + safetensors([("weight", "F16", (2, 2), raw("F16", 4))]),
    }


LINEAR_DICT = ST_DICT + ['"weight"', '"bias"']

# ------------------------------------------------------------------ attrs


def attrs_input(owner, pairs, tail=b""):
    """fuzz_attrs.c: 0xFF + owner NUL, pair count, then per pair 0xF0 + name
    NUL + value NUL, then the bytes that shape the inputs."""
    out = b"\xff" + owner.encode() + b"\x00" + bytes([len(pairs)])
    for name, value in pairs:
        out += b"\xf0" + name.encode() + b"\x00" + value.encode() + b"\x00"
    return out + tail


def attrs_seeds():
    t = b"\x05\x00\x00\x00" + b"\x40\x04\x04" * 6
    return {
        "nms": attrs_input("vision.nms", [("iou_threshold", "0.5")], t),
        "roi_align": attrs_input("vision.roi_align", [("output_size", "2,2"), ("spatial_scale", "0.5"),
                                                       ("sampling_ratio", "2"), ("aligned", "true")], t),
        "deform_conv2d": attrs_input("vision.deform_conv2d", [("stride", "[1, 1]"), ("padding", "(0,0)"),
                                                               ("dilation", "1")], t),
        "drop_block2d": attrs_input("vision.drop_block2d", [("p", "0.1"), ("block_size", "3"),
                                                             ("training", "True"), ("seed", "7")], t),
        "core_add": attrs_input("core.add", [("alpha", "2.5")], t),
        "core_cast": attrs_input("core.cast", [("dtype", "f16")], t),
        "jagged_to_padded": attrs_input("fbgemm.jagged_to_padded_dense", [("max_lengths", "3"),
                                                                          ("padding_value", "-1")], t),
        "quantize_rows": attrs_input("fbgemm.quantize_rows", [("weight_type", "int4"), ("row_alignment", "8")], t),
        "tbe_class": attrs_input("fbgemm.tbe", [("weights_tys", "fp32,int8"), ("embedding_dims", "4,8"),
                                                ("cache_load_factor", "0.2")]),
        "bad_names": attrs_input("vision.nms", [("no_such_attr", "1"), ("iou_threshold", "nan")]),
        "unknown_owner": attrs_input("no.such_op", [("x", "1")]),
    }


ATTRS_DICT = ["true", "false", "True", "False", "nan", "inf", "-inf", "1e308", "1e-320", "0x7fffffffffffffff",
              "-9223372036854775808", "[", "]", "(", ")", ",", " ", "-1", "0", "sum", "mean", "none", "fp32",
              "fp16", "bf16", "fp8", "int8", "int4", "int2", "lru", "lfu", "xyxy", "xywh", "cxcywh", "f32", "i64",
              "vision.", "core.", "fbgemm.", "\xff", "\xf0"]

# ----------------------------------------------------------------- config


def config_input(*values):
    return b"\x00".join(v.encode() for v in values)


def config_seeds():
    return {
        "defaults": config_input("cuda,onednn,cpu", "", "", "", "", "", ""),
        "per_op_rules": config_input("cpu;vision.nms=cpu,cuda;text.*=onednn;core.matmul=", "core,vision*",
                                     "*-cuda", "2", "avx2", "1", "1"),
        "all_set": config_input("onednn, cpu ;fbgemm.*=cpu", "*", "x.y", "1024", "AVX512", "3", "0"),
        "malformed": config_input(";;=;=,,", "[", "[!a-z]*,?", "-3", "neon", "9", "yes"),
        "spaces_and_globs": config_input(" cpu , cuda ", " core , fbgemm ", "vision-cuda", " 4 ", "sse4", "0", "1"),
        "big_numbers": config_input("cpu", "", "", "99999999999999999999", "avx2", "2147483648", "", "1e19"),
        "max_alloc": config_input("cpu", "", "", "", "", "", "", "50%"),
        "max_alloc_units": config_input("", "", "", "", "", "", "", "1.5GB"),
    }


CONFIG_DICT = ["cuda", "onednn", "cpu", ";", "=", ",", "*", "?", "[", "]", "[!", "\\", "avx2", "avx512", "sse4",
               "core", "vision", "fbgemm", "-cuda", "vision.nms", "core.*", "1024", "0", "3", "\x00", "K", "M", "G",
               "T", "B", "%", "1e", "inf", "nan"]

# ------------------------------------------------------------------- glue

GLUE_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "text", "glue", "root")
# fuzz_glue.c's dataset numbers, and each one's train and test file in the samples
GLUE_FILES = [
    ("CoLA", "cola_public/raw/in_domain_train.tsv", "cola_public/raw/out_of_domain_dev.tsv"),
    ("SST2", "SST-2/train.tsv", "SST-2/test.tsv"),
    ("MRPC", "msr_paraphrase_train.txt", "msr_paraphrase_test.txt"),
    ("QQP", "quora_duplicate_questions.tsv", None),
    ("STSB", "stsbenchmark/sts-train.csv", "stsbenchmark/sts-test.csv"),
    ("MNLI", "multinli_1.0_train.txt", "multinli_1.0_dev_matched.txt"),
    ("QNLI", "QNLI/train.tsv", "QNLI/test.tsv"),
    ("RTE", "RTE/train.tsv", "RTE/test.tsv"),
    ("WNLI", "WNLI/train.tsv", "WNLI/test.tsv"),
]


# fuzz_glue.c's dataset numbers of torchtext's zips (tests/data/text/glue/zips)
GLUE_ZIPS = {0: "cola_public_1.1.zip", 1: "SST-2.zip", 5: "multinli_1.0.zip", 6: "QNLIv2.zip", 7: "RTE.zip",
             8: "WNLI.zip"}


def glue_seeds():
    """fuzz_glue.c: one option byte (dataset, test split, skip, rows per call), then the file."""
    seeds = {}
    for d, (name, train, test) in enumerate(GLUE_FILES):
        for is_test, rel in ((0, train), (1, test)):
            if rel is None:
                continue
            with open(os.path.join(GLUE_ROOT, rel), "rb") as f:
                body = f.read()
            opt = d | (is_test << 4) | ((d & 1) << 5) | ((d % 4) << 6)
            seeds["%s_%s" % (name.lower(), "test" if is_test else "train")] = bytes([opt]) + body
    seeds["qqp_quote_open"] = bytes([3]) + b'h\n0\t1\t2\t"open\tq\t1\n'
    # the zip path: torchtext's zips of the samples (a file that starts "PK\3\4" is the dataset's zip)
    for d, name in GLUE_ZIPS.items():
        with open(os.path.join(GLUE_ROOT, "..", "zips", name), "rb") as f:
            body = f.read()
        for is_test in (0, 1):
            opt = d | (is_test << 4) | ((d & 1) << 5) | ((d % 4) << 6)
            seeds["zip_%s_%s" % (GLUE_FILES[d][0].lower(), "test" if is_test else "train")] = bytes([opt]) + body
    # one stored member, its truncation, and a zip with no member of the split
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        info = zipfile.ZipInfo("RTE/train.tsv", date_time=(2019, 4, 1, 0, 0, 0))
        z.writestr(info, b"h\n0\ta\tb\tentailment\n1\tc\t\xff\tnot_entailment\n")
    seeds["zip_rte_stored"] = bytes([7]) + buf.getvalue()
    seeds["zip_rte_truncated"] = bytes([7]) + buf.getvalue()[:60]
    seeds["zip_rte_no_member"] = bytes([7 | 0x10]) + buf.getvalue()
    seeds["wnli_crlf_bad"] = bytes([8 | 0x20]) + b"h\r\n0\ta\tb\tx\r\n\r\n1\t\xff\tb\t1"
    return seeds


GLUE_DICT = ["\t", "\n", "\r\n", "\r", '"', '""', "\xef\xbb\xbf", "entailment", "not_entailment", "neutral",
             "contradiction", "-", "0", "1", "5.000", "nan", "inf", "1_0", "+", " ",
             "PK\x03\x04", "PK\x01\x02", "PK\x05\x06", "RTE/train.tsv", "__MACOSX/"]


# ------------------------------------------------------------- audio files

AUDIO_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "audio", "files")


def audio_seeds():
    """fuzz_audio_file.c: 3 option bytes, then a shipped test file (tools/gen_audio_files_goldens.py)."""
    seeds = {}
    options = [b"\x03\x00\x00", b"\x00\x00\x00", b"\x0f\x25\x40", b"\x06\x07\x00"]
    for i, name in enumerate(sorted(f for f in os.listdir(AUDIO_DATA) if not f.endswith((".npy", ".txt")))):
        with open(os.path.join(AUDIO_DATA, name), "rb") as f:
            seeds[name.replace(".", "_")] = options[i % len(options)] + f.read()
    return seeds


AUDIO_DICT = ["RIFF", "WAVE", "fmt ", "data", "fact", "LIST", "RF64", "ds64", "fLaC", "OggS", "OpusHead", "OpusTags",
              "\x01vorbis", "\x03vorbis", "\x05vorbis", "FORM", "AIFF", "COMM", "SSND", ".snd", "caff",
              "\xff\xf8", "\xff\xff\xff\xff", "\x00\x00\x00\x00", "\x01\x00", "\x03\x00", "\xfe\xff"]


# ---------------------------------------------------------- image files

IMAGE_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "image_io")


def image_seeds(ext):
    """fuzz_image.c (fuzz_image_jpeg, fuzz_image_png): an option byte (mode, EXIF,
    decode_image), then a test image (tools/gen_vision_image_io_goldens.py)."""
    def seeds():
        out = {}
        for i, name in enumerate(sorted(f for f in os.listdir(IMAGE_DATA) if f.endswith(ext))):
            with open(os.path.join(IMAGE_DATA, name), "rb") as f:
                out[name.replace(".", "_")] = bytes([(i % 5) | (8 if i % 2 else 0) | (16 if i % 3 == 0 else 0)]) + f.read()
        return out
    return seeds


JPEG_DICT = ["\xff\xd8\xff", "\xff\xd9", "\xff\xc0", "\xff\xc2", "\xff\xc4", "\xff\xdb", "\xff\xda",
             "\xff\xdd", "\xff\xe0", "\xff\xe1", "\xff\xee", "\xff\xd0", "JFIF\x00", "Exif\x00\x00",
             "Adobe", "II*\x00", "MM\x00*", "\x01\x12", "\x00\x00", "\xff\xff"]
PNG_DICT = ["\x89PNG\r\n\x1a\n", "IHDR", "PLTE", "IDAT", "IEND", "tRNS", "eXIf", "gAMA", "sBIT", "iCCP", "zTXt",
            "acTL", "II*\x00", "MM\x00*", "\x01\x12", "\x78\x9c", "\x78\x01", "\x00\x00\x00\x00",
            "\xff\xff\xff\xff", "\x08\x06", "\x10\x02", "\x04\x03"]


# --------------------------------------------------------- media streams

def _ffmpeg(args, out):
    """One tiny medium made by the ffmpeg CLI (single-threaded, bitexact); None without the CLI."""
    import subprocess
    import tempfile
    if shutil.which("ffmpeg") is None:
        return None
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, out)
        subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-threads", "1"] + args
                       + ["-fflags", "+bitexact", "-flags", "+bitexact", "-map_metadata", "-1", path], check=True)
        with open(path, "rb") as f:
            return f.read()


def stream_seeds():
    """fuzz_stream.c: 2 option bytes, then a tiny medium per container the tests use (ffmpeg CLI)."""
    tone = ["-f", "lavfi", "-i", "sine=frequency=440:duration=0.05:sample_rate=8000"]
    video = ["-f", "lavfi", "-i", "testsrc=size=16x16:rate=10:duration=0.3"]
    media = {
        "wav": (tone + ["-c:a", "pcm_s16le"], "a.wav"),
        "flac": (tone + ["-c:a", "flac"], "a.flac"),
        "mp3": (tone + ["-c:a", "libmp3lame", "-b:a", "32k"], "a.mp3"),
        "aac_mp4": (tone + ["-c:a", "aac", "-b:a", "16k"], "a.mp4"),
        "opus_ogg": (tone + ["-c:a", "libopus", "-b:a", "16k", "-ar", "48000"], "a.ogg"),
        "h264_mp4": (video + tone + ["-c:v", "libx264", "-preset", "ultrafast", "-g", "2", "-pix_fmt", "yuv420p",
                                     "-c:a", "aac", "-b:a", "16k"], "v.mp4"),
        "vp9_webm": (video + ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "20k"],
                     "v.webm"),
    }
    options = [b"\x00\x05", b"\x02\x03", b"\x04\x21", b"\x06\x40", b"\x01\x02", b"\x03\x09", b"\x05\x11"]
    seeds = {}
    for i, (name, (args, out)) in enumerate(sorted(media.items())):
        data = _ffmpeg(args, out)
        if data is None:
            print("stream: no ffmpeg CLI, no seeds")
            return {}
        video_bit = 1 if name.endswith(("mp4", "webm")) and name.startswith(("h264", "vp9")) else 0
        seeds[name] = bytes([options[i % len(options)][0] & ~1 | video_bit, options[i % len(options)][1]]) + data
        seeds[name + "_audio"] = b"\x00\x07" + data
    return seeds


STREAM_DICT = ["RIFF", "WAVE", "fmt ", "data", "fLaC", "ID3", "\xff\xfb", "Xing", "LAME", "OggS", "OpusHead",
               "OpusTags", "ftyp", "moov", "mvhd", "trak", "mdia", "minf", "stbl", "stsd", "stts", "stsc", "stsz",
               "stco", "mdat", "elst", "mp4a", "avc1", "avcC", "esds", "\x1a\x45\xdf\xa3", "webm", "\x18\x53\x80\x67",
               "\x1f\x43\xb6\x75", "\xa3", "V_VP9", "A_OPUS", "\x00\x00\x00\x01", "\x00\x00\x01"]


# ------------------------------------------------------------ wordpiece

def wordpiece_seeds():
    """fuzz_wordpiece.c: an option byte, then text (bit 0 clear) or a vocab file."""
    text = ("Hello, World! unaffable caf\u00e9 na\u00efve \u4e2d\u6587\u5b57 \U0001f600 [CLS] x [SEP]\n"
            "e\u0301 a\u0323\u0308 \u0130stanbul \u00df \u2028 \u00a0 \u3000 ctl\x01\x7f\u200b\ufeff\n"
            + "a" * 120 + " " + "\u00e9" * 51 + "\n\u041f\u0440\u0438\u0432\u0435\u0442 "
            "\u0645\u0631\u062d\u0628\u0627 e-mail U.S.A. can't 3.14 \u201cq\u201d\n").encode("utf-8")
    vocab = b"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n\nhello\n##llo\nhe\n,\n!\nworld\n##a\na\n##\n#\ncaf\n##e\n"
    seeds = {
        "text_torchtext": b"\x00" + text,
        "text_hf": b"\x02" + text,
        "text_cased": b"\x04" + text,
        "text_strip_false": b"\x08" + text,
        "text_never_split": b"\x20" + text,
        "text_pairs_offsets": b"\x42" + text,
        "text_dense": b"\x82" + text,
        "text_dense_pairs": b"\xc0" + text,
        "text_bad_utf8": b"\x00ok\n\xc0\xaf\n\xed\xa0\x80\n\xf4\x90\x80\x80\n\xe2\x82",
        "text_nul": b"\x00ab\x00cd ef\n\x00\n",
        "vocab_small": b"\x01" + vocab,
        "vocab_small_hf": b"\x03" + vocab.replace(b"\n", b" \r\n"),
        "vocab_empty": b"\x01",
        "vocab_no_unk": b"\x01a\nb\n",
        "vocab_dup": b"\x01[UNK]\na\na\n",
        "vocab_bad_utf8": b"\x01[UNK]\n\xff\n",
        "vocab_suffix_only": b"\x41[UNK]\n##\n###\n##a\n",
    }
    return seeds


WORDPIECE_DICT = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]", "##", "\n", " ", "\t", "\r", "\x00", "\xc3\xa9",
                  "e\xcc\x81", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "\xe2\x80\xa8", "\xc2\xa0", "\xef\xbb\xbf",
                  "\xc4\xb0", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80", "hello", "##llo", "un", "##aff"]

# ------------------------------------------------------------------ ctc

CTC_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "audio", "ctc")
CTC_SMALL_ARPA = (b"\\data\\\nngram 1=4\nngram 2=2\n\n\\1-grams:\n-1.0\t<s>\t-0.5\n-0.7\t</s>\n-0.6\ta\t-0.3\n"
                  b"-0.8\tb\n\n\\2-grams:\n-0.2\t<s> a\n-0.3\ta b\n\n\\end\\\n")


def _loom_ctc_lm_convert(arpa, quantize):
    """loom's binary n-gram model of the ARPA bytes, made by the build's `loom ctc-lm convert`
    (LOOM_BUILD_ROOT, else build/); None without a build."""
    import subprocess
    import tempfile
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    for b in (os.environ.get("LOOM_BUILD_ROOT"), os.path.join(root, "build")):
        if b and os.path.exists(os.path.join(b, "tools", "loom")) and os.path.isdir(os.path.join(b, "plugins", "audio")):
            break
    else:
        return None
    env = dict(os.environ, LOOM_PLUGIN_PATH=os.path.join(b, "plugins", "core") + ":" + os.path.join(b, "plugins", "audio"))
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "lm.arpa"), "wb") as f:
            f.write(arpa)
        extra = ["--quantize", str(quantize)] if quantize else []
        subprocess.run([os.path.join(b, "tools", "loom"), "ctc-lm", "convert", os.path.join(d, "lm.arpa"),
                        os.path.join(d, "lm.bin")] + extra, env=env, check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(d, "lm.bin"), "rb") as f:
            return f.read()


def ctc_binary_seeds(arpa_3gram):
    """Option byte 3 (+8 seal the checksum, +4 decode) and loom binary models (ngram_binary.h)."""
    small = _loom_ctc_lm_convert(CTC_SMALL_ARPA, 0)
    if small is None:
        # no build to convert with: the committed seeds stay (main reads every target's seeds before it
        # rewrites the corpus)
        d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fuzz", "corpus", "ctc_files")
        kept = {}
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if name.startswith("bin_") or name == "kenlm_magic":
                with open(os.path.join(d, name), "rb") as f:
                    kept[name] = f.read()
        print("ctc_files: no build with `loom ctc-lm convert`: the %d committed binary-model seeds kept" % len(kept))
        return kept
    small_q = _loom_ctc_lm_convert(CTC_SMALL_ARPA, 4)
    big = _loom_ctc_lm_convert(arpa_3gram, 0)
    return {
        "bin_small": b"\x03" + small,
        "bin_small_decode": b"\x07" + small,
        "bin_small_q4_sealed": b"\x0b" + small_q,
        "bin_3gram_decode": b"\x0f" + big,
        "bin_truncated": b"\x0b" + small[:len(small) - 64],
        "bin_header_only": b"\x0b" + small[:256],
        "kenlm_magic": b"\x00mmap lm http://kheafield.com/code format version 5\n\0\0\0\0",
    }


def ctc_seeds():
    """fuzz_ctc_files.c: an option byte (0 ARPA, 1 tokens, 2 lexicon, 3 loom binary model; +4 decode,
    +8 seal a binary's checksum), then the file."""
    def data(name):
        with open(os.path.join(CTC_DATA, name), "rb") as f:
            return f.read()
    return {
        **ctc_binary_seeds(data("lm3.arpa")),
        "arpa_small": b"\x00" + CTC_SMALL_ARPA,
        "arpa_small_crlf": b"\x00" + CTC_SMALL_ARPA.replace(b"\n", b"\r\n"),
        "arpa_3gram": b"\x00" + data("lm3.arpa"),
        "tokens": b"\x05" + data("tokens.txt"),
        "tokens_shared": b"\x05-\n|\na A\nb\n",
        "tokens_dup": b"\x01-\n|\na\na\n",
        "lexicon_small": b"\x06ab a b |\nba b a |\nc c |\nabc a b c |\nab a b |\naa a a |\n",
        "lexicon_homophones": b"\x06" + b"".join(b"w%d a b |\n" % i for i in range(8)),
        "lexicon_bad_token": b"\x02ab a x |\n",
        "lexicon_test": b"\x02" + data("lexicon.txt"),
    }


CTC_DICT = ["\\data\\", "ngram ", "=", "\\1-grams:", "\\2-grams:", "\\3-grams:", "\\end\\", "<s>", "</s>",
            "<unk>", "\t", "\n", "\r\n", "-99", "-0.5", "0", "-0", "1e-40", "-inf", "nan", "|", "-", " |\n",
            "loom n-gram lm\n\x00", "\x01\x00\x00\x00", "\x04\x03\x02\x01", "\x00\x01\x00\x00",
            "\x00\x00\x80\x80", "\xff\xff\xff\xff"]


# ------------------------------------------------------------- td_meta

def td_meta_seeds():
    """fuzz_td_meta.c: a mapping byte, then DIR/meta.json naming x.memmap (64 bytes),
    y.memmap (8), the nested TensorDict t/, the NonTensorData n/ and the
    NonTensorStack s/ (four values)."""
    td_type = "<class 'tensordict._td.TensorDict'>"

    def leaf(dtype, shape):
        return {"device": "cpu", "shape": shape, "dtype": dtype, "is_nested": False}

    def meta(entries, shape=(4,)):
        m = dict(entries)
        m.update({"shape": list(shape), "device": "cpu", "_type": td_type})
        return json.dumps(m, separators=(",", ":")).encode()

    seeds = {
        "all": b"\x00" + meta({"x": leaf("torch.float32", [4, 4]), "y": leaf("torch.int64", [1]),
                              "t": {"type": "TensorDict"}, "n": {"type": "NonTensorData"}}, (1,)),
        "x_u8": b"\x01" + meta({"x": leaf("torch.uint8", [4, 16])}),
        "x_bf16_read": b"\x02" + meta({"x": leaf("torch.bfloat16", [4, 8])}),
        "x_bool": b"\x00" + meta({"x": leaf("torch.bool", [4, 2, 8])}),
        "y_f16": b"\x00" + meta({"y": leaf("torch.float16", [4])}),
        "empty_leaf": b"\x00" + meta({"e": leaf("torch.float32", [4, 0])}),
        "no_batch": b"\x00" + json.dumps({"x": leaf("torch.int32", [16])}).encode(),
        "short_leaf": b"\x00" + meta({"x": leaf("torch.float64", [4, 4])}),
        "bad_dtype": b"\x00" + meta({"x": leaf("torch.complex64", [4, 2])}),
        "nested_flag": b"\x00" + meta({"x": {"device": "cpu", "shape": [4], "dtype": "torch.int8", "is_nested": True}}),
        "other_type": b"\x00" + meta({"t": {"type": "LazyStackedTensorDict"}}),
        "garbage": b"\x00{\"shape\":[4],\"x\":{\"dtype\":",
        "deep_array": b"\x00" + b"[" * 200 + b"]" * 200,
        "unicode_key": b"\x00" + meta({"caf\u00e9 a/b": leaf("torch.uint8", [4])}),
        "stack": b"\x00" + meta({"x": leaf("torch.float32", [4, 4]), "s": {"type": "NonTensorStack"}}),
        "stack_bad_batch": b"\x02" + meta({"s": {"type": "NonTensorStack"}}, (2,)),
        "stack_as_data": b"\x01" + meta({"s": {"type": "NonTensorData"}, "n": {"type": "NonTensorStack"}}),
    }
    return seeds


TD_META_DICT = ['"shape"', '"dtype"', '"device"', '"is_nested"', '"type"', '"_type"', '"TensorDict"',
                '"NonTensorData"', '"NonTensorStack"', '"s"', '"torch.float32"', '"torch.int64"', '"torch.bool"', '"torch.bfloat16"',
                '"torch.uint8"', '"cpu"', '"x"', '"y"', '"t"', '"n"', "true", "false", "null", "[4,4]", "{", "}"]

# ------------------------------------------------------ tbe training state

def tbe_train_seeds():
    """2 parameter bytes of fuzz_tbe_train.c (optimizer, pooling, weight decay;
    batch) + tables with fbgemm's optimizer state: fresh, resumed, and lying."""
    f32 = lambda n, k=1: struct.pack("<%df" % n, *[((k * 7 + i * 3) % 11 - 5) / 10 for i in range(n)])
    f16 = lambda n: struct.pack("<%de" % n, *[((i * 5) % 9 - 4) / 8 for i in range(n)])
    tables = [("table.0", "F32", (5, 4), f32(20)), ("table.1", "F16", (3, 8), f16(24))]
    it = [("iter", "I64", (1,), struct.pack("<q", 7))]
    rowwise = [("momentum1.0", "F32", (5,), f32(5, 2)), ("momentum1.1", "F32", (3,), f32(3, 3))]
    adam = [("momentum1.0", "F32", (5, 4), f32(20, 2)), ("momentum1.1", "F32", (3, 8), f32(24, 3)),
            ("momentum2.0", "F32", (5, 4), struct.pack("<20f", *[0.25] * 20)),
            ("momentum2.1", "F32", (3, 8), struct.pack("<24f", *[0.5] * 24))]
    partial = adam[:2] + [("momentum2.0", "F32", (5,), struct.pack("<5f", *[0.25] * 5)),
                          ("momentum2.1", "F32", (3,), struct.pack("<3f", *[0.5] * 3))]
    return {
        "sgd_fresh": bytes([0x00, 0x03]) + safetensors(tables),
        "adagrad_mean_l2_fresh": bytes([0x0d, 0x01]) + safetensors(tables),
        "adagrad_resumed": bytes([0x01, 0x02]) + safetensors(tables + rowwise + it),
        "adam_resumed": bytes([0x02, 0x03]) + safetensors(tables + adam + it),
        "partial_adam_resumed_mean": bytes([0x07, 0x00]) + safetensors(tables + partial + it),
        "bad_momentum_size": bytes([0x01, 0x01]) + safetensors(tables + [("momentum1.0", "F32", (4,), f32(4))]),
        "bad_iter": bytes([0x02, 0x01]) + safetensors(tables + [("iter", "I64", (1,), struct.pack("<q", -3))]),
        "int8_refused": bytes([0x01, 0x01]) + safetensors([("table.0", "U8", (2, 12), bytes(range(24)))]),
    }


TBE_TRAIN_DICT = ['"table.0"', '"table.1"', '"momentum1.0"', '"momentum2.0"', '"momentum1.1"', '"iter"', '"F32"',
                  '"F16"', '"I64"', '"dtype"', '"shape"', '"data_offsets"']

# ------------------------------------------------------------- rec_kjt

def kjt_int(v):
    """One element as fuzz_rec_kjt.c's take_int reads it."""
    if -2 <= v <= 61:
        return bytes([v + 2])
    return b"\xff" + struct.pack("<I", v & 0xffffffff)


def kjt_input(op, values, lengths, n_keys=2, i64v=False, i64l=False, offsets=None, weights=None, spkpr=None,
              inverse=None, stride=None, ints=None, raw_keys=None, drop_lengths=False, segs=None):
    """fuzz_rec_kjt.c: op, types, present, keys, stride, the op's int list, the sizes and the elements."""
    types = (1 if i64v else 0) | (2 if i64l else 0) | (4 if raw_keys is not None else 0) | (8 if stride is not None else 0)
    present = (1 if offsets is not None else 0) | (4 if weights is not None else 0) | \
              (16 if spkpr is not None else 0) | (32 if inverse is not None else 0) | (64 if drop_lengths else 0)
    if offsets is not None and len(offsets) == len(lengths):
        present |= 2
    if weights is not None and len(weights) == len(values) + 1:
        present |= 8
    n_val = len(values)
    if n_val >= 128:
        types |= 16
        n_val -= 128
    b = bytes([op, types, present, n_keys])
    if raw_keys is not None:
        b += raw_keys + b"\xff"
    if stride is not None:
        b += kjt_int(stride)
    if ints is not None:
        b += bytes([len(ints)]) + b"".join(kjt_int(v) for v in ints)
    b += bytes([len(lengths), n_val])
    for arr in (values, lengths, offsets, weights):
        if arr is not None:
            b += b"".join(kjt_int(int(v)) for v in arr)
    if spkpr is not None:
        b += bytes([len(spkpr[0]) - 1]) + b"".join(kjt_int(v) for row in spkpr for v in row)
    if inverse is not None:
        b += bytes([len(inverse[0]) - 1]) + b"".join(kjt_int(v) for row in inverse for v in row)
    if segs is not None:
        b += bytes([len(segs) - 1]) + b"".join(kjt_int(v) for v in segs)
    return b


def rec_kjt_seeds():
    v, ln = [3, 1, 4, 1, 5], [1, 2, 0, 2]           # keys f0, f1; stride 2
    off = [0, 1, 3, 3, 5]
    return {
        "from_lengths": kjt_input(0, v, ln),
        "from_lengths_i64_weighted": kjt_input(0, v, ln, i64v=True, i64l=True, weights=[1, 2, 3, 4, 5]),
        "from_offsets": kjt_input(1, v, ln, offsets=off),
        "from_offsets_backwards": kjt_input(1, v, ln, offsets=[0, 3, 1, 3, 5]),
        "permute": kjt_input(2, v, ln, ints=[1, 0, 1]),
        "permute_out_of_range": kjt_input(2, v, ln, ints=[2]),
        "split": kjt_input(3, v, ln, ints=[1, 1]),
        "split_short": kjt_input(3, v, ln, ints=[1, 0]),
        "to_dict": kjt_input(4, v, ln, offsets=off, weights=[1, 1, 1, 1, 1]),
        "to_dict_offsets_only": kjt_input(4, v, ln, offsets=off, drop_lengths=True),
        "dedup": kjt_input(5, [7, 7, 8, 7, 7], [1, 1, 1, 2]),
        "vbe": kjt_input(0, v, [1, 2, 2], spkpr=[[1], [2]]),
        "vbe_inverse": kjt_input(5, v, [1, 2, 2], spkpr=[[1], [2]], inverse=[[0, 0], [0, 1]]),
        "concat": kjt_input(6, v, ln, ints=[1, 1], segs=[0, 2, 4]),
        "sum_mismatch": kjt_input(0, v, [1, 2, 0, 9]),
        "negative_length": kjt_input(0, v, [1, -2, 4, 2]),
        "stride_mismatch": kjt_input(0, v, ln, stride=3),
        "raw_keys": kjt_input(4, v, ln, raw_keys=b"a,,a,"),
        "huge": kjt_input(0, [0], [0x7fffffff, 1]),
    }


# ----------------------------------------------------- rec_metrics_state

def rec_metrics_state_seeds():
    """fuzz_rec_metrics_state.c: cfg (n_tasks, window_size), batches (bit 7: raw
    mode), then edits (resize byte, (position, value) pairs) or raw f64s."""
    return {
        "intact_t1": bytes([0, 3, 0]),
        "intact_t3_w8": bytes([2 | (7 << 2), 5, 0]),
        "empty": bytes([0, 0, 0]),
        "cut": bytes([0, 4, 1 | (3 << 1)]),
        "extended": bytes([1, 2, 2 | (2 << 2)]),
        "bad_count": bytes([0, 3, 0, 8, 3 << 3]),
        "nan_total": bytes([0, 3, 0, 5, 0]),
        "huge_count": bytes([0, 2, 0, 8, 3, 0xff, 0xff, 0xff, 0x7f]),
        "fraction": bytes([0, 6, 0, 12, 2 | 8]),
        "raw": bytes([0, 0x80]) + struct.pack("<8d", 7.0, 1.0, 1.0, 100.0, 6.0, 0.0, 1.0, 2.0),
    }

# --------------------------------------------------------- rec_knn_index

def rec_knn_index_seeds():
    """fuzz_rec_knn_index.c: an option byte (bit 0 file, bits 1-4 k - 1, bits
    5-7 nprobe), then a faiss index file: the faiss-made files of
    tests/data/rec/knn, one cut short and one whose list sizes lie."""
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rec", "knn")
    seeds = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".faissindex"):
            with open(os.path.join(d, name), "rb") as f:
                seeds[name[:-11]] = bytes([9 << 1]) + f.read()
    seeds["ivfpq_l2_file_nprobe8"] = bytes([1 | (4 << 1) | (7 << 5)]) + seeds["ivfpq_l2"][1:]
    seeds["flat_ip_cut"] = seeds["flat_ip"][:300]
    lie = bytearray(seeds["ivfpq_l2"])
    at = lie.index(b"full") + 4 + 8        # the first list size
    lie[at:at + 8] = struct.pack("<Q", 1 << 40)
    seeds["ivfpq_l2_lying_list"] = bytes(lie)
    return seeds
REC_KNN_INDEX_DICT = ["IxFI", "IxF2", "IxFl", "IwPQ", "IxMp", "ilar", "full", "sprs", "il00"]

# ----------------------------------------------------------- sample_pipeline
def sample_pipeline_seeds():
    """fuzz_sample_pipeline.c: the JSON pipeline of vision.transform_sample: the
    golden pipelines of tests/data/vision/transforms/sample, and a few refused ones."""
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "transforms", "sample")
    seeds = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".json"):
            with open(os.path.join(d, name), "rb") as f:
                seeds[name[:-5]] = f.read()
    seeds["bad_missing_size"] = b'[{"Resize": {"size": [8]}}, {"RandomCrop": {}}]'
    seeds["bad_padding"] = b'[{"Pad": {"padding": [1, 2, 3]}}]'
    seeds["bad_json"] = b'[{"Resize": {"size": [8]}'
    seeds["bad_mix_value"] = b'[{"RandomErasing": {"value": "noise"}}, {"MixUp": {"num_classes": 0}}]'
    return seeds
SAMPLE_DICT = ["RandomHorizontalFlip", "RandomVerticalFlip", "Resize", "CenterCrop", "RandomCrop",
               "RandomResizedCrop", "Pad", "RandomRotation", "RandomAffine", "RandomPerspective", "RandomZoomOut",
               "ElasticTransform", "RandomIoUCrop", "ColorJitter", "Normalize", "ToDtype", "ClampBoundingBoxes",
               "SanitizeBoundingBoxes", "AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix", "RandomErasing",
               "MixUp", "CutMix", '"value"', '"random"', '"num_classes"', '"inplace"', '"size"',
               '"p"', '"padding"', '"fill"', '"padding_mode"', '"degrees"', '"scale"', '"ratio"', '"interpolation"',
               '"expand"', '"center"', '"translate"', '"shear"', '"alpha"', '"sigma"', '"trials"', "true", "null",
               "[", "]", "{", "}", ":", ","]
# ---------------------------------------------------------- rec_criteo

def rec_criteo_seeds():
    """fuzz_rec_criteo.c: an options byte (dense_transform, missing, drop_last, hashes,
    batch size), then a Criteo TSV: label, 13 integers, 26 hex categories."""
    def line(label="1", ints=None, cats=None):
        ints = ints if ints is not None else [str(i * 7 - 3) for i in range(13)]
        cats = cats if cats is not None else ["%08x" % (0x9e3779b9 * (k + 1) & 0xffffffff) for k in range(26)]
        return ("\t".join([label] + ints + cats) + "\n").encode()
    good = line() + line("0", [""] * 13, [""] * 26) + line("1", ["5"] * 13, ["ABCDEF01"] * 26)
    return {
        "good_log1p_b2": b"\x20" + good,
        "good_shift_min_zero_hashed_b3": b"\x55" + good,
        "good_none_drop_last_b1": b"\x0a" + good * 3,
        "crlf_b64": b"\xc0" + good.replace(b"\n", b"\r\n"),
        "no_final_newline": b"\x20" + good[:-1],
        "few_fields": b"\x21" + line() + b"1\t2\t3\n",
        "many_fields": b"\x20" + line()[:-1] + b"\t7\n",
        "bad_hex": b"\x20" + line(cats=["xyz"] + [""] * 25),
        "long_hex": b"\x31" + line(cats=["ffffffffffffffff"] + [""] * 25),
        "bad_int": b"\x21" + line(ints=["1e5"] + [""] * 12),
        "int_extremes_shift": b"\x01" + line(ints=["9223372036854775807", "-9223372036854775808"] + [""] * 11),
        "blank_line": b"\x40" + line() + b"\n" + line(),
        "nul_byte": b"\x20" + line()[:10] + b"\x00" + line()[10:],
        "empty": b"\x00",
    }


REC_CRITEO_DICT = ["\t", "\n", "\r\n", "-", "+", "0", "-1", "9223372036854775807", "ffffffff", "ABCDEF01",
                   "68fd1e64", "\t\t\t\t"]

def rec_shard_plan_seeds():
    """fuzz_rec_shard_plan.c: sharding plans (loom.rec.plan/1), one per sharding type, and near misses."""
    def table(name, st, kernel, ranks, shards, rows=10, dim=8):
        return {"name": name, "num_embeddings": rows, "embedding_dim": dim, "sharding_type": st,
                "compute_kernel": kernel, "ranks": ranks,
                "shards": [{"rank": r, "offsets": o, "sizes": z} for r, o, z in shards]}

    def plan(tables, world=2):
        return json.dumps({"format": "loom.rec.plan/1", "world_size": world, "tables": tables},
                          separators=(",", ":")).encode()
    tw = table("t0", "table_wise", "fused", [1], [(1, [0, 0], [10, 8])])
    rw = table("t1", "row_wise", "fused", [0, 1], [(0, [0, 0], [5, 8]), (1, [5, 0], [5, 8])])
    cw = table("t2", "column_wise", "fused_uvm_caching", [1, 0], [(1, [0, 0], [10, 4]), (0, [0, 4], [10, 4])])
    twrw = table("t3", "table_row_wise", "fused", [0, 1], [(0, [0, 0], [3, 8]), (1, [3, 0], [7, 8])])
    dp = table("t4", "data_parallel", "dense", [0, 1], [])
    return {
        "all_types": plan([tw, rw, cw, twrw, dp]),
        "one_table": plan([tw], world=4),
        "empty_shard": plan([table("e", "row_wise", "fused", [0, 1, 2, 3],
                                   [(0, [0, 0], [2, 8]), (1, [2, 0], [2, 8]), (2, [4, 0], [1, 8]),
                                    (3, [5, 0], [0, 8])], rows=5)], world=4),
        "overlap": plan([table("o", "row_wise", "fused", [0, 1], [(0, [0, 0], [6, 8]), (1, [5, 0], [5, 8])])]),
        "no_tables": plan([]),
        "spaced": json.dumps({"tables": [dp], "world_size": 2, "format": "loom.rec.plan/1"}, indent=1).encode(),
    }


REC_SHARD_PLAN_DICT = ["\"format\"", "\"loom.rec.plan/1\"", "\"world_size\"", "\"tables\"", "\"name\"",
                 "\"num_embeddings\"", "\"embedding_dim\"", "\"sharding_type\"", "\"compute_kernel\"",
                 "\"ranks\"", "\"shards\"", "\"rank\"", "\"offsets\"", "\"sizes\"", "\"table_wise\"",
                 "\"row_wise\"", "\"column_wise\"", "\"table_row_wise\"", "\"data_parallel\"", "\"fused\"",
                 "\"dense\"", "\"quant\"", "9007199254740993", "-1", "1e300", "[0,0]"]


# ------------------------------------------------------------- rec_plan

def rec_plan_seeds():
    """fuzz_rec_plan.c: the planner config JSON itself (examples/rec/plan_config.json's keys)."""
    def cfg(topology, tables, **kw):
        d = {"topology": topology, "tables": tables}
        d.update(kw)
        return json.dumps(d, separators=(",", ":")).encode()
    t = lambda name, rows, dim, **kw: dict({"name": name, "num_embeddings": rows, "embedding_dim": dim}, **kw)
    cuda4 = {"world_size": 4, "local_world_size": 2, "compute_device": "cuda", "hbm_cap": 1 << 30}
    return {
        "mixed_cuda": cfg(cuda4, [t("a", 100000, 64, pooling_factor=2.0), t("b", 1000, 16),
                                  t("c", 400000, 256, sharding_types=["row_wise", "column_wise", "table_row_wise"]),
                                  t("d", 500000, 128, compute_kernels=["fused_uvm_caching"], cache_load_factor=0.3,
                                    prefetch_pipeline=True)], batch_size=512),
        "cpu_fp16": cfg({"world_size": 2, "compute_device": "cpu", "ddr_cap": 1 << 30},
                        [t("a", 5000, 96, data_type="FP16", min_partition=32, feature_names=["x", "y"])],
                        partitioner="memory_balanced", optimizer="adam"),
        "no_fit": cfg({"world_size": 2, "hbm_cap": 1 << 24}, [t("big", 10000000, 128, compute_kernels=["fused"])]),
        "bad_field": cfg({"world_size": 2}, [t("a", 10, 4, sharding_types=["diagonal"])]),
        "one_table": cfg({"world_size": 1}, [t("a", 1, 1)]),
        "truncated": cfg(cuda4, [t("a", 10, 4)])[:40],
    }


REC_PLAN_DICT = ['"topology"', '"tables"', '"world_size"', '"local_world_size"', '"compute_device"', '"hbm_cap"',
                 '"ddr_cap"', '"intra_host_bw"', '"inter_host_bw"', '"batch_size"', '"name"', '"num_embeddings"',
                 '"embedding_dim"', '"feature_names"', '"pooling"', '"data_type"', '"pooling_factor"',
                 '"sharding_types"', '"compute_kernels"', '"cache_load_factor"', '"prefetch_pipeline"',
                 '"min_partition"', '"partitioner"', '"optimizer"', '"storage_reservation"', '"cuda"', '"cpu"',
                 '"table_wise"', '"row_wise"', '"column_wise"', '"table_row_wise"', '"data_parallel"', '"fused"',
                 '"fused_uvm_caching"', '"dense"', '"quant"', '"memory_balanced"', '"FP16"', "true", "1e30", "-1"]

# ------------------------------------------------------------------ write

TARGETS = {
    "npy": (npy_seeds, NPY_DICT),
    "safetensors": (safetensors_seeds, ST_DICT),
    "tbe_tables": (tbe_seeds, TBE_DICT),
    "tbe_train": (tbe_train_seeds, TBE_TRAIN_DICT),
    "linear_weights": (linear_seeds, LINEAR_DICT),
    "attrs": (attrs_seeds, ATTRS_DICT),
    "config": (config_seeds, CONFIG_DICT),
    "glue": (glue_seeds, GLUE_DICT),
    "audio_file": (audio_seeds, AUDIO_DICT),
    "ctc_files": (ctc_seeds, CTC_DICT),
    "image_jpeg": (image_seeds(".jpg"), JPEG_DICT),
    "image_png": (image_seeds(".png"), PNG_DICT),
    "stream": (stream_seeds, STREAM_DICT),
    "wordpiece": (wordpiece_seeds, WORDPIECE_DICT),
    "td_meta": (td_meta_seeds, TD_META_DICT),
    "rec_kjt": (rec_kjt_seeds, []),
    "rec_metrics_state": (rec_metrics_state_seeds, []),
    "sample_pipeline": (sample_pipeline_seeds, SAMPLE_DICT),
    "rec_criteo": (rec_criteo_seeds, REC_CRITEO_DICT),
    "rec_knn_index": (rec_knn_index_seeds, REC_KNN_INDEX_DICT),
    "rec_shard_plan": (rec_shard_plan_seeds, REC_SHARD_PLAN_DICT),
    "rec_plan": (rec_plan_seeds, REC_PLAN_DICT),
}


def dict_entry(s):
    b = s.encode("latin-1")
    return '"' + "".join(chr(c) if 32 <= c < 127 and chr(c) not in '"\\' else "\\x%02x" % c for c in b) + '"'


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fuzz"))
    ap.add_argument("--only", nargs="*", default=None, help="write these targets only")
    args = ap.parse_args()
    for target, (seeds, words) in TARGETS.items():
        if args.only is not None and target not in args.only:
            continue
        d = os.path.join(args.out, "corpus", target)
        made = seeds()              # before the old corpus goes: a target may keep seeds it cannot remake
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        total = 0
        for name, data in sorted(made.items()):
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
            total += len(data)
        with open(os.path.join(args.out, target + ".dict"), "w") as f:
            f.write("# SPDX-License-Identifier: BSD-3-Clause\n")
            f.write("# libFuzzer dictionary of fuzz_%s (tools/gen_fuzz_corpus.py)\n" % target)
            for w in dict.fromkeys(words):
                f.write(dict_entry(w) + "\n")
        print("%-16s %2d seeds, %5d bytes" % (target, len(made), total))


if __name__ == "__main__":
    main()
