# SPDX-License-Identifier: BSD-3-Clause
"""Ops generated from the schemas: calls, signatures, docs, results equal
to the reference library's (its goldens in tests/data, and torchvision itself
where it is importable)."""
import inspect
import os
import subprocess

import numpy as np
import pytest

import loom
from conftest import REPO, data, random_boxes, run_python, torch_or_skip


def golden(*parts):
    return np.load(data(*parts))


def test_nms_matches_torchvision_goldens():
    for case, thr in (("f32_exact", 0.5), ("f32_special", 0.2), ("f32_nan", 0.3), ("f32_thr5", 0.5),
                      ("f64_thr3", 0.3), ("f64_ties", 0.3), ("f32_empty", 0.5)):
        boxes, scores = golden("vision", "boxes", f"nms_{case}_boxes.npy"), \
            golden("vision", "boxes", f"nms_{case}_scores.npy")
        want = golden("vision", "boxes", f"nms_{case}_output.npy")
        got = loom.ops.vision.nms(boxes, scores, iou_threshold=thr)
        assert isinstance(got, np.ndarray) and got.dtype == np.int64
        np.testing.assert_array_equal(got, want)


def test_nms_equals_torchvision():
    torch = torch_or_skip()
    import torchvision
    rng = np.random.default_rng(1)
    for n in (0, 1, 17, 500):
        boxes = torch.from_numpy(random_boxes(rng, n))
        scores = torch.from_numpy(rng.random(n).astype(np.float32))
        for thr in (0.3, 0.5, 0.7):
            got = loom.ops.vision.nms(boxes, scores, iou_threshold=thr)
            assert isinstance(got, torch.Tensor)
            assert torch.equal(got, torchvision.ops.nms(boxes, scores, thr))


def test_jagged_to_padded_dense_matches_fbgemm_golden():
    values = golden("fbgemm", "jagged", "to_padded_1d.values.npy")
    offsets = golden("fbgemm", "jagged", "to_padded_1d.offsets.npy")
    want = golden("fbgemm", "jagged", "to_padded_1d.out0.npy")
    got = loom.ops.fbgemm.jagged_to_padded_dense(values, offsets, max_lengths=[4], padding_value=7.0)
    np.testing.assert_array_equal(got, want)


def test_jagged_to_padded_dense_example():
    values = np.arange(6, dtype=np.float32).reshape(6, 1)
    offsets = np.array([0, 1, 3, 6], dtype=np.int64)
    got = loom.ops.fbgemm.jagged_to_padded_dense(values, offsets, max_lengths=[4])
    want = np.zeros((3, 4, 1), np.float32)
    want[0, :1, 0], want[1, :2, 0], want[2, :3, 0] = [0], [1, 2], [3, 4, 5]
    np.testing.assert_array_equal(got, want)


def test_positional_and_keyword_inputs():
    rng = np.random.default_rng(2)
    boxes, scores = random_boxes(rng, 30), rng.random(30).astype(np.float32)
    want = loom.ops.vision.nms(boxes, scores, iou_threshold=0.5)
    np.testing.assert_array_equal(loom.ops.vision.nms(boxes=boxes, scores=scores, iou_threshold=0.5), want)
    np.testing.assert_array_equal(loom.ops.vision.nms(boxes, scores=scores, iou_threshold=0.5), want)
    with pytest.raises(TypeError):
        loom.ops.vision.nms(boxes, scores, 0.5)                 # attributes are keyword-only


def test_attribute_defaults_and_values():
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(loom.ops.core.add(x, x), x * 2)             # alpha's default, 1
    np.testing.assert_array_equal(loom.ops.core.add(x, x, alpha=3), x * 4)
    np.testing.assert_array_equal(loom.ops.core.add(x, x, alpha=3.0), x * 4)  # the cached bag
    np.testing.assert_array_equal(loom.ops.core.add(x, x, alpha=0.5), x * 1.5)
    b = random_boxes(np.random.default_rng(3), 5)
    xywh = loom.ops.vision.box_convert(b, in_fmt="xyxy", out_fmt="xywh")
    np.testing.assert_allclose(xywh[:, 2:], b[:, 2:] - b[:, :2], rtol=1e-6)


def test_cached_attributes_keep_the_sign_of_zero():
    values = np.zeros((0, 1), np.float32)          # one empty row: all padding
    offsets = np.array([0, 0], np.int64)
    pad = loom.ops.fbgemm.jagged_to_padded_dense
    assert not np.signbit(pad(values, offsets, max_lengths=[2], padding_value=0.0)).any()
    assert np.signbit(pad(values, offsets, max_lengths=[2], padding_value=-0.0)).all()
    assert not np.signbit(pad(values, offsets, max_lengths=[2], padding_value=0.0)).any()


def test_signature_and_docs_come_from_the_schema():
    nms = loom.ops.vision.nms
    sig = inspect.signature(nms)
    assert list(sig.parameters) == ["boxes", "scores", "iou_threshold"]
    assert sig.parameters["iou_threshold"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["iou_threshold"].default is inspect.Parameter.empty
    assert "torchvision.ops.nms" in nms.__doc__ and "iou_threshold (float, required)" in nms.__doc__
    iou = inspect.signature(loom.ops.vision.box_iou)
    assert iou.parameters["fmt"].default == "xyxy"
    j = inspect.signature(loom.ops.fbgemm.jagged_to_padded_dense)
    assert j.parameters["offsets_1"].default is None
    assert j.parameters["padding_value"].default == 0.0
    assert nms.__module__ == "loom.ops.vision" and nms.__name__ == "nms"
    import pydoc
    assert "nms(boxes, scores, *, iou_threshold)" in pydoc.render_doc(nms, renderer=pydoc.plaintext)
    assert "vision" in dir(loom.ops) and "nms" in dir(loom.ops.vision)


def test_mistyped_names_get_suggestions():
    with pytest.raises(AttributeError, match="did you mean 'nms'"):
        loom.ops.vision.nmss
    with pytest.raises(AttributeError, match="did you mean 'vision'"):
        loom.ops.visoin


def test_bad_inputs_name_the_argument():
    b = np.zeros((3, 4), np.float32)
    with pytest.raises(TypeError, match="input 'scores' must be a tensor"):
        loom.ops.vision.nms(b, [1, 2, 3], iou_threshold=0.5)
    with pytest.raises(TypeError, match="attribute 'iou_threshold' must be a float"):
        loom.ops.vision.nms(b, np.zeros(3, np.float32), iou_threshold="half")
    with pytest.raises(TypeError, match="attribute 'max_lengths'"):
        loom.ops.fbgemm.jagged_to_padded_dense(b, np.zeros(2, np.int64), max_lengths=["a"])
    with pytest.raises(ValueError, match="'boxes' must be \\[N, 4\\]"):
        loom.ops.vision.nms(np.zeros((3, 3), np.float32), np.zeros(3, np.float32), iou_threshold=0.5)
    with pytest.raises(TypeError, match="method of fbgemm.tbe"):
        loom.ops.fbgemm.tbe(np.zeros(1, np.int64), np.zeros(2, np.int64))


def test_multiple_outputs_come_back_as_a_tuple():
    x = np.arange(2 * 3 * 4 * 4, dtype=np.float32).reshape(2, 3, 4, 4)
    rois = np.array([[0, 0, 0, 3, 3], [1, 1, 1, 2, 2]], np.float32)
    out = loom.ops.vision.roi_pool(x, rois, output_size=[2, 2])
    assert isinstance(out, tuple) and len(out) == 2
    assert out[0].shape == (2, 3, 2, 2)


def test_loom_tensors_in_loom_tensors_out():
    t = loom.from_dlpack(np.arange(3, dtype=np.int64))
    y = loom.ops.core.add(t, t)
    assert isinstance(y, loom.Tensor) and y.dtype == "i64"
    np.testing.assert_array_equal(np.from_dlpack(y), [0, 2, 4])


def test_third_party_pack_appears_under_its_domain(tmp_path):
    cc = os.environ.get("CC", "cc")
    so = tmp_path / "example.so"
    r = subprocess.run([cc, "-std=c11", "-shared", "-fPIC", "-fvisibility=hidden", "-I", os.path.join(REPO, "abi"),
                        "-o", str(so), os.path.join(REPO, "examples", "oppack", "scale.c")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"no C compiler to build the example pack: {r.stderr[:200]}")
    out = run_python("import loom, numpy as np\n"
                     "print(loom.ops.example.scale(np.ones(3, np.float32), factor=3.0).tolist())\n"
                     "print(loom.ops.example.scale.__doc__.splitlines()[0])\n",
                     env={"LOOM_PLUGIN_PATH": str(tmp_path)}).stdout
    assert out.splitlines()[0] == "[3.0, 3.0, 3.0]"


def test_batched_nms_equals_torchvision():
    torch = torch_or_skip()
    import torchvision
    rng = np.random.default_rng(4)
    boxes = torch.from_numpy(random_boxes(rng, 200))
    scores = torch.from_numpy(rng.random(200).astype(np.float32))
    idxs = torch.from_numpy(rng.integers(0, 5, 200))
    assert torch.equal(loom.ops.vision.batched_nms(boxes, scores, idxs, iou_threshold=0.5),
                       torchvision.ops.batched_nms(boxes, scores, idxs, 0.5))
    x = torch.rand(2, 3, 16, 16)
    rois = torch.tensor([[0, 1.0, 1.0, 9.0, 9.0], [1, 2.5, 0.5, 14.0, 7.0]])
    assert torch.allclose(loom.ops.vision.roi_align(x, rois, output_size=[4, 4], spatial_scale=1.0,
                                                    sampling_ratio=2, aligned=True),
                          torchvision.ops.roi_align(x, rois, [4, 4], 1.0, 2, True), atol=1e-6)


def test_a_name_that_is_input_and_attribute_takes_either_form():
    # audio's reference_channel: an int attribute, or a tensor of one-hot
    # weights; one parameter takes both, as torchaudio's does
    if not hasattr(loom.ops, "audio"):
        pytest.skip("the audio pack is not built here")
    rng = np.random.default_rng(7)
    f, c = 5, 3
    x = (rng.standard_normal((f, c, 8)) + 1j * rng.standard_normal((f, c, 8))).astype(np.complex64)
    psd_s = np.einsum("fct,fdt->fcd", x, x.conj()).astype(np.complex64)
    psd_n = np.broadcast_to(np.eye(c, dtype=np.complex64), (f, c, c)).copy()
    by_index = loom.ops.audio.mvdr_weights_souden(psd_s, psd_n, 1)
    one_hot = np.zeros(c, np.float32)
    one_hot[1] = 1
    by_weights = loom.ops.audio.mvdr_weights_souden(psd_s, psd_n, one_hot)
    assert by_index.shape == (f, c)
    np.testing.assert_allclose(by_index, by_weights, rtol=1e-6, atol=1e-7)
    by_keyword = loom.ops.audio.mvdr_weights_souden(psd_s, psd_n, reference_channel=1)
    assert np.array_equal(by_index, by_keyword)
