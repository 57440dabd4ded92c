# SPDX-License-Identifier: BSD-3-Clause
"""examples/python and README.md's Python example run as written."""
import os
import re

import pytest

from conftest import REPO, run_python


def script(name):
    with open(os.path.join(REPO, "examples", "python", name), encoding="utf-8") as f:
        return f.read()


def test_tbe_lookup_example():
    out = run_python(script("tbe_lookup.py")).stdout
    assert "max |loom - numpy| = 0.00e+00" in out


def test_dispatch_record_example():
    out = run_python(script("dispatch_record.py")).stdout
    assert "vision.box_iou   -> cpu" in out and "dispatch vision.nms" in out


def test_detector_example():
    pytest.importorskip("torch", reason="PyTorch is not importable in this interpreter")
    pytest.importorskip("torchvision", reason="torchvision is not importable in this interpreter")
    out = run_python(script("detector_postprocess.py")).stdout
    assert "batched_nms equal: True, roi_align equal: True" in out


def test_readme_example():
    pytest.importorskip("torch", reason="PyTorch is not importable in this interpreter")
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        block = re.search(r"```python\n(.*?)```", f.read(), re.S).group(1)
    out = run_python(block).stdout
    assert out.splitlines()[-1] == "(3, 4, 1) True"
