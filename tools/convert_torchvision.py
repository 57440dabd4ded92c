#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Convert a torchvision .pth checkpoint into a safetensors file for loom.

    convert_torchvision.py CHECKPOINT.pth [OUT.safetensors] [--arch NAME] [--no-check-hash]

CHECKPOINT is what torchvision downloads into ~/.cache/torch/hub/checkpoints
(resnet50-11ad3fa6.pth: a state_dict), or what its reference training
scripts save (a dict whose 'model' or 'state_dict' entry is the state_dict;
a 'module.' prefix left by DistributedDataParallel is dropped).

The state_dict is loaded into torchvision's own model of the architecture
(--arch, or guessed from the file name as torchvision names its files:
the longest model name of torchvision.models.list_models() the stem starts
with) with load_state_dict(strict=True), so every key and shape is checked
by torchvision itself, and the legacy key layouts torchvision still accepts
are mapped to the current names as torchvision maps them (DenseNet's
'norm.1' keys as densenet._load_state_dict renames them; the versioned
_load_from_state_dict hooks of ViT's MLP blocks and MNASNet). A classifier
with another number of classes (a fine-tuned head) is accepted: the model is
rebuilt with that num_classes. What is written is that model's
state_dict() under torchvision's key names (buffers such as
num_batches_tracked included), bit for bit the checkpoint's values, with
the metadata arch, source (the file name), sha256 (of the .pth file) and
torchvision (its version).

torch.hub names its files NAME-HASH.pth with HASH the first hex digits of
the file's sha256; the hash is checked as torch.hub's check_hash does unless
--no-check-hash. Exit status: 0 written, 1 the checkpoint does not fit (the
message names the keys), 2 usage.
"""
import argparse
import collections
import hashlib
import os
import re
import sys

import torch
import torchvision
from safetensors.torch import save_file

# torchvision/models/densenet.py _load_state_dict: '.'s are no longer allowed
# in module names, so the old _DenseLayer keys 'norm.1' ... became 'norm1'.
DENSENET_LEGACY = re.compile(r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|running_var))$")
# torch.hub.download_url_to_file / load_state_dict_from_url: NAME-HASH.ext
HUB_HASH = re.compile(r"-([a-f0-9]+)\.")


class ConvertError(Exception):
    pass


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def guess_arch(path):
    """The longest torchvision model name the file's stem starts with."""
    stem = os.path.basename(path).split(".")[0]
    stem = re.sub(r"-[a-f0-9]{6,}$", "", stem)
    names = [n for n in torchvision.models.list_models() if stem == n or stem.startswith(n + "_") or stem.startswith(n + "-")]
    if not names:
        raise ConvertError(f"cannot tell the architecture from the file name '{os.path.basename(path)}'; give --arch "
                           "(one of torchvision.models.list_models())")
    return max(names, key=len)


def unwrap(obj, path):
    """The state_dict inside what torch.load gave."""
    if isinstance(obj, dict):
        for key in ("model", "state_dict", "model_state_dict"):
            inner = obj.get(key)
            if isinstance(inner, dict) and inner and all(torch.is_tensor(v) for v in inner.values()):
                meta = getattr(inner, "_metadata", None)
                obj = inner
                if meta is not None:
                    obj._metadata = meta
                break
    if not isinstance(obj, dict) or not obj:
        raise ConvertError(f"{path}: not a state_dict (a dict of tensors, or one under 'model' / 'state_dict')")
    bad = [k for k, v in obj.items() if not torch.is_tensor(v)]
    if bad:
        raise ConvertError(f"{path}: entries that are not tensors: {', '.join(map(str, bad[:5]))}")
    return obj


def normalise_keys(sd):
    """DistributedDataParallel's 'module.' prefix dropped, DenseNet's legacy keys renamed."""
    meta = getattr(sd, "_metadata", None)
    out = collections.OrderedDict()
    strip = all(k.startswith("module.") for k in sd)
    for k, v in sd.items():
        k = k[len("module."):] if strip else k
        m = DENSENET_LEGACY.match(k)
        out[m.group(1) + m.group(2) if m else k] = v
    if meta is not None:
        out._metadata = collections.OrderedDict(
            ((k[len("module."):] if strip and k.startswith("module.") else k), v) for k, v in meta.items())
    return out


def last_linear_key(model):
    name = None
    for n, m in model.named_modules():
        if isinstance(m, torch.nn.Linear):
            name = n
    return name


def build_model(arch, sd):
    """torchvision's model of arch, with num_classes taken from the checkpoint's classifier."""
    try:
        model = torchvision.models.get_model(arch, weights=None)
    except ValueError as e:
        raise ConvertError(f"--arch {arch}: {e}")
    head = last_linear_key(model)
    if head is not None and f"{head}.weight" in sd:
        want = model.state_dict()[f"{head}.weight"].shape
        got = sd[f"{head}.weight"].shape
        if len(got) == 2 and got[1] == want[1] and got[0] != want[0]:
            model = torchvision.models.get_model(arch, weights=None, num_classes=int(got[0]))
    return model.eval()


def convert(src, dst, arch=None, check_hash=True):
    digest = sha256_of(src)
    m = HUB_HASH.search(os.path.basename(src))
    if check_hash and m is not None and not digest.startswith(m.group(1)):
        raise ConvertError(f"{src}: the file's sha256 {digest[:len(m.group(1))]}... does not start with the "
                           f"'{m.group(1)}' its name says (a corrupt download?); --no-check-hash to convert anyway")
    arch = arch or guess_arch(src)
    try:
        obj = torch.load(src, map_location="cpu", weights_only=True)
    except Exception as e:
        raise ConvertError(f"{src}: torch.load failed: {e}")
    sd = normalise_keys(unwrap(obj, src))
    model = build_model(arch, sd)
    try:
        model.load_state_dict(sd, strict=True)
    except RuntimeError as e:
        raise ConvertError(f"{src} does not fit torchvision's {arch}: {e}")
    out = {k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}
    for k, v in out.items():
        if k in sd and not torch.equal(sd[k].to(v.dtype), v):
            raise ConvertError(f"{src}: key '{k}' changed when loaded into {arch}")
    save_file(out, dst, metadata={"arch": arch, "source": os.path.basename(src), "sha256": digest,
                                  "torchvision": torchvision.__version__, "format": "pt"})
    return arch, len(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("out", nargs="?", help="default: the checkpoint's name with .safetensors")
    ap.add_argument("--arch", help="torchvision model name (resnet50, densenet121, ...); default: from the file name")
    ap.add_argument("--no-check-hash", action="store_true", help="do not check the sha256 prefix in the file name")
    args = ap.parse_args(argv)
    dst = args.out or os.path.splitext(args.checkpoint)[0] + ".safetensors"
    try:
        arch, n = convert(args.checkpoint, dst, args.arch, not args.no_check_hash)
    except (ConvertError, OSError) as e:
        print(f"convert_torchvision: {e}", file=sys.stderr)
        return 1
    print(f"{dst}: {arch}, {n} tensors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
