#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of tools/convert_torchvision.py on random-weight checkpoints.

Each case writes a .pth as torchvision or its reference scripts write them,
runs the converter (the first case as a user runs it, a subprocess; the
others through its main(), so torch is imported once) and reads the result
back with safetensors: the keys are torchvision's state_dict keys, every
value is the checkpoint's, bit for bit, and the metadata names the
architecture, the source file and its sha256. The refusals (a corrupt
download, the wrong architecture, not a state_dict, a name that says no
architecture) exit 1 with a message naming the problem.

    .venv/bin/python tools/test_convert_torchvision.py     (exit 0: all passed, 77: no torch)
"""
import collections
import contextlib
import hashlib
import io
import os
import subprocess
import sys
import tempfile

try:
    import torch
    import torchvision
    from safetensors import safe_open
except ImportError as e:  # the CI side without the venv: meson counts 77 as skipped
    print(f"skipped: {e}")
    sys.exit(77)

TOOLS = os.path.dirname(os.path.abspath(__file__))
CONVERTER = os.path.join(TOOLS, "convert_torchvision.py")
sys.path.insert(0, TOOLS)
import convert_torchvision  # noqa: E402
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


class Run:
    def __init__(self, returncode, stderr):
        self.returncode, self.stderr = returncode, stderr


def convert(*args):
    """The converter's main in this process (torch is imported once), its stderr captured."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = convert_torchvision.main(list(args))
    return Run(rc, err.getvalue())


def convert_process(*args):
    """The converter as a user runs it."""
    return subprocess.run([sys.executable, CONVERTER, *args], capture_output=True, text=True)


def hub_name(d, arch, obj):
    """torch.save(obj) as torch.hub names its files: ARCH-SHA256PREFIX.pth."""
    tmp = os.path.join(d, "tmp.pth")
    torch.save(obj, tmp)
    with open(tmp, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    path = os.path.join(d, f"{arch}-{digest[:8]}.pth")
    os.replace(tmp, path)
    return path, digest


def read(path):
    with safe_open(path, "pt") as f:
        return {k: f.get_tensor(k) for k in f.keys()}, f.metadata()


def same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def main():
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as d:
        r18 = torchvision.models.resnet18(weights=None).state_dict()

        # torchvision's own download: a plain state_dict, the arch from the name
        path, digest = hub_name(d, "resnet18", r18)
        out = os.path.join(d, "r18.safetensors")
        r = convert_process(path, out)
        check(r.returncode == 0, f"plain resnet18 state_dict converts ({r.stderr.strip()})")
        got, meta = read(out)
        check(same(got, r18), "plain: torchvision's keys and the checkpoint's values, num_batches_tracked included")
        check(meta.get("arch") == "resnet18" and meta.get("sha256") == digest
              and meta.get("source") == os.path.basename(path), f"plain: metadata {meta}")

        # the default output name, beside the checkpoint
        r = convert(path)
        check(r.returncode == 0 and os.path.exists(os.path.splitext(path)[0] + ".safetensors"),
              "plain: default output NAME.safetensors")

        # a reference-script checkpoint: {"model": ..., "optimizer": ...} with DDP's module. prefix
        wrapped = {"model": collections.OrderedDict(("module." + k, v) for k, v in r18.items()), "epoch": 3,
                   "args": {"lr": 0.1}}
        path = os.path.join(d, "checkpoint.pth")
        torch.save(wrapped, path)
        r = convert(path, out, "--arch", "resnet18")
        check(r.returncode == 0, f"wrapped {{'model'}} with module. prefix converts ({r.stderr.strip()})")
        check(same(read(out)[0], r18), "wrapped: the prefix dropped, values kept")
        path = os.path.join(d, "state.pth")
        torch.save({"state_dict": r18}, path)
        r = convert(path, out, "--arch", "resnet18")
        check(r.returncode == 0 and same(read(out)[0], r18), "wrapped {'state_dict'} converts")

        # a fine-tuned head: 10 classes
        r18_10 = torchvision.models.resnet18(weights=None, num_classes=10).state_dict()
        path = os.path.join(d, "resnet18_finetuned.pth")
        torch.save(r18_10, path)
        r = convert(path, out)
        got = read(out)[0]
        check(r.returncode == 0 and tuple(got["fc.weight"].shape) == (10, 512) and same(got, r18_10),
              f"a 10-class head converts ({r.stderr.strip()})")

        # DenseNet's legacy keys (norm.1, conv.2, ...) and no num_batches_tracked (older than the
        # buffer: BatchNorm's versioned loader fills it with 0), as the published
        # densenet121-a639ec97.pth has them
        dn = torchvision.models.densenet121(weights=None).state_dict()
        legacy = collections.OrderedDict()
        for k, v in dn.items():
            if k.endswith("num_batches_tracked"):
                continue
            for old in ("norm1", "relu1", "conv1", "norm2", "relu2", "conv2"):
                if ".denselayer" in k and f".{old}." in k:
                    k = k.replace(f".{old}.", f".{old[:-1]}.{old[-1]}.")
            legacy[k] = v
        check(any(".norm.1." in k for k in legacy), "densenet: the file has legacy keys")
        path, _ = hub_name(d, "densenet121", legacy)
        r = convert(path, out)
        check(r.returncode == 0 and same(read(out)[0], dn),
              f"densenet121 legacy keys renamed as torchvision renames them ({r.stderr.strip()})")

        # refusals
        path, _ = hub_name(d, "resnet18", r18)
        bad = path.replace("resnet18-", "resnet18-").rsplit("-", 1)[0] + "-00000000.pth"
        os.replace(path, bad)
        r = convert(bad, out)
        check(r.returncode == 1 and "sha256" in r.stderr and "00000000" in r.stderr,
              f"a file whose sha256 does not match its name is refused: {r.stderr.strip()}")
        r = convert(bad, out, "--no-check-hash")
        check(r.returncode == 0, "--no-check-hash converts it anyway")
        r = convert(bad, out, "--no-check-hash", "--arch", "resnet34")
        check(r.returncode == 1 and "resnet34" in r.stderr and "layer1.2" in r.stderr,
              f"the wrong architecture is refused, naming the keys: {r.stderr.strip()[:200]}")
        path = os.path.join(d, "resnet18_list.pth")
        torch.save([1, 2, 3], path)
        r = convert(path, out)
        check(r.returncode == 1 and "not a state_dict" in r.stderr, f"not a state_dict: {r.stderr.strip()}")
        path = os.path.join(d, "weights.pth")
        torch.save(r18, path)
        r = convert(path, out)
        check(r.returncode == 1 and "--arch" in r.stderr, f"no architecture in the name: {r.stderr.strip()}")
        r = convert(path, out, "--arch", "no_such_net")
        check(r.returncode == 1 and "no_such_net" in r.stderr, f"an unknown --arch: {r.stderr.strip()[:200]}")
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
