#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the vision `models` module.

For each ResNet-family class (and regnet_y_400mf, regnet_x_400mf, efficientnet_v2_s,
shufflenet_v2_x0_5 and mnasnet0_5, with mnasnet0_5 in its version-1 layout too), torchvision.models.<name>(weights=None) with
seeded random weights and non-trivial batchnorm statistics (running mean,
variance, gamma and beta drawn per channel, so the folding is exercised),
in eval mode, on a seeded 64x64 input batch (224x224 as well for resnet50):

  build-models/vision/<name>/model.safetensors  safetensors.torch.save_file(model.state_dict())
  build-models/vision/<name>/input.npy, logits.npy
  build-models/vision/resnet18/extra_key.safetensors  the same plus a key resnet18 lacks
  build-models/vision/resnet18/classes10.safetensors  a fine-tuned head: fc 512 -> 10
  build-models/vision/{vit_b_16,swin_t}/model.safetensors, input224.npy, logits224.npy
      (every parameter random: torchvision zeroes the heads)

The weights are tens to hundreds of MB, so they are made here (tools/dev
goldens) and not committed; the tests skip with a message when they are
absent. Committed, small (tests/data/vision/models/): files that do not fit
the architecture: a key missing, a wrong shape, a wrong dtype, a truncated
file, each read by the error tests; regnet_configs.json, the stage table
(widths, depths, group widths) torchvision's BlockParams gives every RegNet;
and the transformers' small cases:
vit_block/ (one EncoderBlock), vit_tiny/ and vit_tiny_rep/ (a tiny
VisionTransformer, at its size and interpolated; with pre_logits),
swin_ops/ (ShiftedWindowAttention, PatchMerging) and swin_tiny/; the
convnets' tiny configurations tiny_<family>/ (write_convnets_tiny).

    .venv/bin/python tools/gen_vision_models_goldens.py [--only NAME,...] [--tiny-only] [MODELS_DIR]

Needs numpy, torch, torchvision and safetensors.
"""
import argparse
import os

# PyTorch picks its CPU kernels by ISA (AVX-512 or AVX2): the float32 summation
# orders, and so the last bits of the goldens, follow it. Pinning AVX2 makes a
# rerun write the same files on every machine.
os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision.models as tvm  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SMALL = os.path.join(ROOT, "tests", "data", "vision", "models")

NAMES = ["resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
         "resnext101_32x8d", "resnext101_64x4d", "wide_resnet50_2", "wide_resnet101_2"]


def randomise(model, seed):
    """Random weights (torchvision's init) and batchnorm statistics far from identity."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                c = m.num_features
                m.weight.copy_(torch.rand(c, generator=g) * 0.5 + 0.5)
                m.bias.copy_(torch.randn(c, generator=g) * 0.1)
                m.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(c, generator=g) * 0.5 + 0.75)
                m.num_batches_tracked.fill_(int(torch.randint(1, 1000, (1,), generator=g)))
    model.eval()
    return model


def save_npy(path, t):
    np.save(path, t.detach().contiguous().numpy().astype(np.float32), allow_pickle=False)


def write_model(out, name, seed):
    torch.manual_seed(seed)
    model = randomise(getattr(tvm, name)(weights=None), seed)
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    sd = {k: v.contiguous() for k, v in model.state_dict().items()}
    save_file(sd, os.path.join(d, "model.safetensors"))
    x = torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        save_npy(os.path.join(d, "input.npy"), x)
        save_npy(os.path.join(d, "logits.npy"), model(x))
        if name == "resnet50":
            x224 = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(seed + 2))
            save_npy(os.path.join(d, "input224.npy"), x224)
            save_npy(os.path.join(d, "logits224.npy"), model(x224))
    if name == "resnet18":
        extra = dict(sd)
        extra["fc2.weight"] = torch.zeros(3, 3)
        save_file(extra, os.path.join(d, "extra_key.safetensors"))
        model.fc = torch.nn.Linear(512, 10)
        with torch.no_grad():
            sd10 = {k: v.contiguous() for k, v in model.state_dict().items()}
            save_file(sd10, os.path.join(d, "classes10.safetensors"))
            save_npy(os.path.join(d, "logits10.npy"), model(x))


def write_small():
    """Files that do not fit resnet18, kept tiny: each stops create at its first key."""
    os.makedirs(SMALL, exist_ok=True)
    g = torch.Generator().manual_seed(7)
    w = torch.randn(64, 3, 7, 7, generator=g)
    save_file({"bn1.weight": torch.ones(64)}, os.path.join(SMALL, "missing_conv1.safetensors"))
    save_file({"conv1.weight": w[:, :, :5, :5].contiguous()}, os.path.join(SMALL, "wrong_shape.safetensors"))
    save_file({"conv1.weight": w.double()}, os.path.join(SMALL, "wrong_dtype.safetensors"))
    path = os.path.join(SMALL, "truncated.safetensors")
    save_file({"conv1.weight": w}, path)
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: len(data) - 1000])


# ------------------------------------------------------------------ RegNet

REGNET_NAMES = ["regnet_y_400mf", "regnet_y_800mf", "regnet_y_1_6gf", "regnet_y_3_2gf", "regnet_y_8gf",
                "regnet_y_16gf", "regnet_y_32gf", "regnet_y_128gf", "regnet_x_400mf", "regnet_x_800mf",
                "regnet_x_1_6gf", "regnet_x_3_2gf", "regnet_x_8gf", "regnet_x_16gf", "regnet_x_32gf"]
REGNET_GOLDENS = ["regnet_y_400mf", "regnet_x_400mf"]     # the smallest of each kind, in full


def regnet_block_params(name):
    """The BlockParams torchvision's builder `name` makes (its _regnet intercepted, no model built)."""
    import torchvision.models.regnet as rn
    seen = {}
    real = rn._regnet
    rn._regnet = lambda params, weights, progress, **kw: seen.setdefault("p", params)
    try:
        getattr(rn, name)(weights=None)
    finally:
        rn._regnet = real
    return seen["p"]


def write_regnet_configs():
    """tests/data/vision/models/regnet_configs.json: every variant's stage table."""
    import json
    table = {}
    for name in REGNET_NAMES:
        p = regnet_block_params(name)
        table[name] = {"widths": [int(w) for w in p.widths], "depths": [int(d) for d in p.depths],
                       "group_widths": [int(g) for g in p.group_widths],
                       "bottleneck_multipliers": [float(b) for b in p.bottleneck_multipliers],
                       "strides": [int(s) for s in p.strides], "se_ratio": p.se_ratio or 0.0}
    with open(os.path.join(SMALL, "regnet_configs.json"), "w") as f:    # one line per variant
        f.write("{\n" + ",\n".join(' "%s": %s' % (k, json.dumps(table[k], sort_keys=True)) for k in sorted(table))
                + "\n}\n")


# ---------------------------------------------------------- EfficientNetV2

EFFNET_GOLDENS = ["efficientnet_v2_s"]    # in full (21.5 M parameters); _m and _l share its code


# ------------------------------------------------- ShuffleNetV2, MNASNet

SMALL_GOLDENS = ["shufflenet_v2_x0_5", "mnasnet0_5"]     # the smallest of each family, in full


def write_mnasnet_v1(out, seed):
    """mnasnet0_5 in MNASNet's version-1 layout (the stem at 32 / 16 channels):
    torchvision's own _load_from_state_dict builds it when the state_dict says version 1."""
    torch.manual_seed(seed)
    model = tvm.mnasnet0_5(weights=None)
    missing, unexpected, errors = [], [], []
    model._load_from_state_dict({}, "", {"version": 1}, False, missing, unexpected, errors)
    model = randomise(model, seed)
    d = os.path.join(out, "mnasnet0_5")
    os.makedirs(d, exist_ok=True)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, os.path.join(d, "v1.safetensors"))
    x = torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        save_npy(os.path.join(d, "logits_v1.npy"), model(x))
# ------------------------------------------------------------ transformers
# ViT (and Swin): random weights drawn for every parameter (torchvision's
# init zeroes the heads and leaves the norms at identity, which would hide
# them), a tiny configuration of each family committed in tests/data (the
# same code path as the full models: their classes take the architecture
# as attributes), and vit_b_16 in full made here into build-models.

TRANSFORMERS = ["vit_b_16", "swin_t"]


def randomise_transformer(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            r = torch.randn(p.shape, generator=g)
            if name.endswith("class_token") or name.endswith("pos_embedding"):
                p.copy_(r * 0.5)
            elif p.ndim == 1 and (".ln" in name or name.startswith("ln") or "norm" in name) and name.endswith("weight"):
                p.copy_(1.0 + 0.2 * r)
            elif p.ndim == 1:
                p.copy_(0.1 * r)
            else:
                p.copy_(r / float(np.sqrt(np.prod(p.shape[1:]))))
    model.eval()
    return model


def state_dict_of(model):
    return {k: v.contiguous() for k, v in model.state_dict().items()}


def write_vit_tiny(d, seed, representation_size=None):
    """A VisionTransformer at image_size 32 (patch 8: a 4x4 grid), its logits
    at 32 and, through interpolate_embeddings, at 48 (a 6x6 grid)."""
    from torchvision.models.vision_transformer import VisionTransformer, interpolate_embeddings
    cfg = dict(patch_size=8, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=32, num_classes=10,
               representation_size=representation_size)
    torch.manual_seed(seed)
    model = randomise_transformer(VisionTransformer(image_size=32, **cfg), seed)
    os.makedirs(d, exist_ok=True)
    sd = state_dict_of(model)
    save_file(sd, os.path.join(d, "model.safetensors"))
    x = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        save_npy(os.path.join(d, "input.npy"), x)
        save_npy(os.path.join(d, "logits.npy"), model(x))
    if representation_size is None:
        big = VisionTransformer(image_size=48, **cfg).eval()
        big.load_state_dict(interpolate_embeddings(48, 8, dict(sd)))
        x48 = torch.randn(1, 3, 48, 48, generator=torch.Generator().manual_seed(seed + 2))
        with torch.no_grad():
            save_npy(os.path.join(d, "input48.npy"), x48)
            save_npy(os.path.join(d, "logits48.npy"), big(x48))


def write_vit_block(d, seed):
    """One EncoderBlock over 150 tokens (three blocks of query rows)."""
    from torchvision.models.vision_transformer import EncoderBlock
    torch.manual_seed(seed)
    block = randomise_transformer(EncoderBlock(4, 32, 48, 0.0, 0.0), seed)
    os.makedirs(d, exist_ok=True)
    save_file(state_dict_of(block), os.path.join(d, "block.safetensors"))
    x = torch.randn(2, 150, 32, generator=torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        save_npy(os.path.join(d, "input.npy"), x)
        save_npy(os.path.join(d, "output.npy"), block(x))


def write_swin_ops(d, seed):
    """ShiftedWindowAttention with a 4x3 window over [2, 10, 9, 16] (padded to
    12x9), shifted (2, 1) and not; PatchMerging of [2, 5, 7, 8] (odd sides)."""
    from torchvision.models.swin_transformer import PatchMerging, ShiftedWindowAttention
    torch.manual_seed(seed)
    attn = randomise_transformer(ShiftedWindowAttention(16, [4, 3], [2, 1], 2), seed)
    os.makedirs(d, exist_ok=True)
    save_file(state_dict_of(attn), os.path.join(d, "attn.safetensors"))
    x = torch.randn(2, 10, 9, 16, generator=torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        save_npy(os.path.join(d, "attn_input.npy"), x)
        save_npy(os.path.join(d, "attn_shifted.npy"), attn(x))
        attn.shift_size = [0, 0]
        save_npy(os.path.join(d, "attn_plain.npy"), attn(x))
    merge = randomise_transformer(PatchMerging(8), seed + 2)
    save_file(state_dict_of(merge), os.path.join(d, "merge.safetensors"))
    xm = torch.randn(2, 5, 7, 8, generator=torch.Generator().manual_seed(seed + 3))
    with torch.no_grad():
        save_npy(os.path.join(d, "merge_input.npy"), xm)
        save_npy(os.path.join(d, "merge_output.npy"), merge(xm))


def write_swin_tiny(d, seed):
    """A SwinTransformer (patch 4, embed 8, depths 2, 2, heads 2, 4, window 4)
    at 32x32 (stage 2's 4x4 map drops the shift) and at 40x44 (10x11 tokens
    padded to 12x12, then 5x6 padded to 8x8, both shifted)."""
    from torchvision.models.swin_transformer import SwinTransformer
    torch.manual_seed(seed)
    model = randomise_transformer(SwinTransformer([4, 4], 8, [2, 2], [2, 4], [4, 4], stochastic_depth_prob=0.1,
                                                  num_classes=10), seed)
    os.makedirs(d, exist_ok=True)
    save_file(state_dict_of(model), os.path.join(d, "model.safetensors"))
    x = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(seed + 1))
    x2 = torch.randn(1, 3, 40, 44, generator=torch.Generator().manual_seed(seed + 2))
    with torch.no_grad():
        save_npy(os.path.join(d, "input.npy"), x)
        save_npy(os.path.join(d, "logits.npy"), model(x))
        save_npy(os.path.join(d, "input40x44.npy"), x2)
        save_npy(os.path.join(d, "logits40x44.npy"), model(x2))


# The convnet families' tiny configurations (committed, a few tens of KB
# each): the generic classes vision.resnet, vision.regnet,
# vision.efficientnet_v2, vision.shufflenet_v2 and vision.mnasnet take the
# architecture as attributes, so CI runs every family's forward without
# the full-size weights.
TINY_REGNET = dict(depth=4, w_0=8, w_a=8.0, w_m=2.0, group_width=8, se_ratio=0.25)
TINY_REGNET_STEM, TINY_CLASSES = 8, 10


def write_convnet_tiny(d, model, seed, size=32):
    """model (random weights, batchnorm statistics from randomise) with a
    seeded [2, 3, size, size] batch and its logits."""
    randomise(model, seed)
    os.makedirs(d, exist_ok=True)
    save_file(state_dict_of(model), os.path.join(d, "model.safetensors"))
    x = torch.randn(2, 3, size, size, generator=torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        save_npy(os.path.join(d, "input.npy"), x)
        save_npy(os.path.join(d, "logits.npy"), model(x))


def write_regnet_tiny(d, seed):
    """RegNet(BlockParams.from_init_params(**TINY_REGNET), stem_width 8, 10
    classes): stages of widths 8, 16, 32 and depths 1, 1, 2 (an identity
    residual), squeeze-excitation."""
    from torchvision.models.regnet import BlockParams, RegNet
    torch.manual_seed(seed)
    model = RegNet(BlockParams.from_init_params(**TINY_REGNET), num_classes=TINY_CLASSES,
                   stem_width=TINY_REGNET_STEM)
    write_convnet_tiny(d, model, seed)


TINY_SHUFFLENET = dict(stages_repeats=[2, 1, 1], stages_out_channels=[8, 16, 32, 64, 128])


def write_shufflenet_tiny(d, seed):
    """ShuffleNetV2(**TINY_SHUFFLENET, 10 classes): stage 2 with a stride-1
    block (the chunk and the shuffle of the kept half)."""
    from torchvision.models.shufflenetv2 import ShuffleNetV2
    torch.manual_seed(seed)
    write_convnet_tiny(d, ShuffleNetV2(num_classes=TINY_CLASSES, **TINY_SHUFFLENET), seed)


TINY_MNASNET_ALPHA = 0.025


def write_mnasnet_tiny(d, seed):
    """MNASNet(alpha 0.025, 10 classes): _get_depths(0.025) is 8 for every
    depth, the least _round_to_multiple_of gives, so the file is about
    220 KB (the 1280-wide head and classifier are a third of it)."""
    from torchvision.models.mnasnet import MNASNet
    torch.manual_seed(seed)
    write_convnet_tiny(d, MNASNet(TINY_MNASNET_ALPHA, num_classes=TINY_CLASSES), seed)


class TinyResNet(tvm.ResNet):
    """torchvision's ResNet with the stem's and the stages' widths as
    arguments (torchvision fixes them at 64 and 64, 128, 256, 512): its own
    __init__ with 64-wide stages, then conv1, bn1 and layer1..4 rebuilt
    from its blocks by its _make_layer, so the modules, the forward and the
    state_dict keys are torchvision's."""

    def __init__(self, block, layers, widths, stem_width, num_classes, groups=1, width_per_group=64):
        super().__init__(block, [1, 1, 1, 1], num_classes=num_classes, groups=groups,
                         width_per_group=width_per_group)
        self.inplanes = stem_width
        self.conv1 = torch.nn.Conv2d(3, stem_width, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = self._norm_layer(stem_width)
        for i, (n, w) in enumerate(zip(layers, widths)):
            setattr(self, "layer%d" % (i + 1), self._make_layer(block, w, n, stride=1 if i == 0 else 2))
        self.fc = torch.nn.Linear(widths[3] * block.expansion, num_classes)
        for m in self.modules():    # ResNet.__init__'s init, on the rebuilt convs too
            if isinstance(m, torch.nn.Conv2d):
                torch.nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")


# basic: an identity residual in layer1, a downsample at each stride;
# bottleneck: grouped 3x3 convs (width int(planes * 16 / 64) * 2) and a
# stride-1 downsample in layer1 (the stem's 8 channels to 4 x 8)
TINY_RESNET_BASIC = dict(layers=[2, 1, 1, 1], widths=[8, 16, 24, 32], stem_width=8)
TINY_RESNET_BOTTLENECK = dict(layers=[2, 1, 1, 1], widths=[8, 8, 16, 16], stem_width=8, groups=2,
                              width_per_group=16)


def write_resnet_tiny(d, block, seed, cfg):
    from torchvision.models.resnet import BasicBlock, Bottleneck
    torch.manual_seed(seed)
    model = TinyResNet(BasicBlock if block == "basic" else Bottleneck, num_classes=TINY_CLASSES, **cfg)
    write_convnet_tiny(d, model, seed)


# rows of (fused, expand_ratio, kernel, stride, in, out, layers): a
# FusedMBConv without expansion and with its residual, one with expansion
# (stride 2, then a residual block), an MBConv (stride 2, then a residual
# block); the head 32 wide
TINY_EFFNET = [(1, 1, 3, 1, 8, 8, 2), (1, 4, 3, 2, 8, 16, 2), (0, 4, 3, 2, 16, 24, 2)]
TINY_EFFNET_LAST = 32


def write_effnet_tiny(d, seed):
    """EfficientNet(TINY_EFFNET as FusedMBConvConfig / MBConvConfig,
    last_channel 32, BatchNorm2d eps 1e-3 as efficientnet_v2_*, 10
    classes)."""
    from functools import partial
    from torchvision.models.efficientnet import EfficientNet, FusedMBConvConfig, MBConvConfig
    torch.manual_seed(seed)
    setting = [(FusedMBConvConfig if f else MBConvConfig)(e, k, s, i, o, n) for f, e, k, s, i, o, n in TINY_EFFNET]
    model = EfficientNet(setting, dropout=0.2, num_classes=TINY_CLASSES, last_channel=TINY_EFFNET_LAST,
                         norm_layer=partial(torch.nn.BatchNorm2d, eps=1e-03))
    write_convnet_tiny(d, model, seed)


def write_convnets_tiny():
    write_resnet_tiny(os.path.join(SMALL, "tiny_resnet_basic"), "basic", 530, TINY_RESNET_BASIC)
    write_resnet_tiny(os.path.join(SMALL, "tiny_resnet_bottleneck"), "bottleneck", 540, TINY_RESNET_BOTTLENECK)
    write_effnet_tiny(os.path.join(SMALL, "tiny_effnet"), 550)
    write_regnet_tiny(os.path.join(SMALL, "tiny_regnet"), 500)
    write_shufflenet_tiny(os.path.join(SMALL, "tiny_shufflenet"), 510)
    write_mnasnet_tiny(os.path.join(SMALL, "tiny_mnasnet"), 520)


def write_transformers_small():
    write_vit_block(os.path.join(SMALL, "vit_block"), 300)
    write_vit_tiny(os.path.join(SMALL, "vit_tiny"), 301)
    write_vit_tiny(os.path.join(SMALL, "vit_tiny_rep"), 302, representation_size=12)
    write_swin_ops(os.path.join(SMALL, "swin_ops"), 320)
    write_swin_tiny(os.path.join(SMALL, "swin_tiny"), 321)


def write_transformers(out, only):
    """vit_b_16 and swin_t in full: model.safetensors, a [2, 3, 224, 224]
    batch and its logits."""
    for i, name in enumerate(TRANSFORMERS):
        if name not in only:
            continue
        seed = 310 + 20 * i
        torch.manual_seed(seed)
        model = randomise_transformer(getattr(tvm, name)(weights=None), seed)
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        save_file(state_dict_of(model), os.path.join(d, "model.safetensors"))
        x = torch.randn(2, 3, 224, 224, generator=torch.Generator().manual_seed(seed + 1))
        with torch.no_grad():
            save_npy(os.path.join(d, "input224.npy"), x)
            save_npy(os.path.join(d, "logits224.npy"), model(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=",".join(NAMES + REGNET_GOLDENS + EFFNET_GOLDENS + SMALL_GOLDENS + TRANSFORMERS))
    ap.add_argument("out", nargs="?", default=os.path.join(ROOT, "build-models", "vision"))
    ap.add_argument("--tiny-only", action="store_true",
                    help="write the committed tiny convnet configurations (tests/data) and nothing else")
    args = ap.parse_args()
    if args.tiny_only:
        write_convnets_tiny()
        return
    write_small()
    write_transformers_small()
    write_convnets_tiny()
    for i, name in enumerate(NAMES):
        if name in args.only.split(","):
            write_model(args.out, name, 100 + i)
    write_regnet_configs()
    for i, name in enumerate(REGNET_GOLDENS):
        if name in args.only.split(","):
            write_model(args.out, name, 200 + i)
    for i, name in enumerate(EFFNET_GOLDENS):
        if name in args.only.split(","):
            write_model(args.out, name, 300 + i)
    for i, name in enumerate(SMALL_GOLDENS):
        if name in args.only.split(","):
            write_model(args.out, name, 400 + i)
    if "mnasnet0_5" in args.only.split(","):
        write_mnasnet_v1(args.out, 401)     # the input of write_model's mnasnet0_5 (seed 402)
    write_transformers(args.out, args.only.split(","))


if __name__ == "__main__":
    main()
