# SPDX-License-Identifier: BSD-3-Clause
"""loom statuses as Python exceptions, each class with loom's message."""
import numpy as np
import pytest

import loom
from conftest import run_python


def test_einval_is_valueerror():
    with pytest.raises(loom.InvalidArgumentError) as e:
        loom.ops.vision.nms(np.zeros((3, 3), np.float32), np.zeros(3, np.float32), iou_threshold=0.5)
    assert isinstance(e.value, ValueError) and isinstance(e.value, loom.Error)
    assert e.value.status == -1 and e.value.status_name == "LOOM_EINVAL"
    assert "'boxes' must be [N, 4]" in str(e.value)


def test_einval_for_a_constraint():
    with pytest.raises(ValueError, match="iou_threshold' must be finite"):
        loom.ops.vision.nms(np.zeros((3, 4), np.float32), np.zeros(3, np.float32), iou_threshold=float("nan"))


def test_enoent_is_filenotfounderror():
    with pytest.raises(loom.NotFoundError) as e:
        loom.Object("fbgemm.tbe", weights="/nonexistent.safetensors")
    assert isinstance(e.value, FileNotFoundError) and isinstance(e.value, loom.Error)
    assert e.value.status_name == "LOOM_ENOENT" and "/nonexistent.safetensors" in str(e.value)


def test_enotsup_is_notimplementederror():
    # a policy that leaves vision.nms no kernel: init options, then the environment
    code = ("import loom, numpy as np\n"
            "{init}\n"
            "try:\n"
            "    loom.ops.vision.nms(np.zeros((3, 4), np.float32), np.zeros(3, np.float32), iou_threshold=0.5)\n"
            "except NotImplementedError as e:\n"
            "    assert isinstance(e, loom.NotSupportedError) and isinstance(e, loom.Error), type(e)\n"
            "    print(e.status_name, e)\n")
    out = run_python(code.format(init="loom.init(backends='vision.nms=onednn')")).stdout
    assert out.startswith("LOOM_ENOTSUP") and "no kernel can run" in out
    out = run_python(code.format(init=""), env={"LOOM_BACKENDS": "vision.nms=onednn"}).stdout
    assert out.startswith("LOOM_ENOTSUP") and "excluded by LOOM_BACKENDS" in out


def test_format_error_for_a_corrupt_file(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all")
    with pytest.raises(loom.Error) as e:
        loom.Object("fbgemm.tbe", weights=str(bad))
    assert e.value.status_name == "LOOM_EFORMAT" and isinstance(e.value, loom.FormatError)


def test_every_status_has_a_class():
    from loom import _errors
    for status in range(-13, 0):
        cls = _errors.BY_STATUS[status]
        assert issubclass(cls, loom.Error)
        err = cls("message", status)
        assert err.status_name.startswith("LOOM_E") and str(err) == "message"
    assert issubclass(loom.InvalidArgumentError, ValueError)
    assert issubclass(loom.NotFoundError, FileNotFoundError)
    assert issubclass(loom.NotSupportedError, NotImplementedError)
