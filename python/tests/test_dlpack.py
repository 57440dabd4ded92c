# SPDX-License-Identifier: BSD-3-Clause
"""Zero-copy both ways: the same data pointer, for both DLPack forms."""
import numpy as np
import pytest

import loom
from conftest import torch_or_skip


def test_numpy_into_loom_is_zero_copy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = loom.from_dlpack(a)
    assert t.data_ptr == a.ctypes.data
    assert t.shape == (3, 4) and t.dtype == "f32" and t.device == "cpu"


def test_loom_into_numpy_is_zero_copy():
    t = loom.ops.core.add(loom.from_dlpack(np.ones((2, 3), np.float32)),
                          loom.from_dlpack(np.ones((2, 3), np.float32)))
    assert isinstance(t, loom.Tensor)
    a = np.from_dlpack(t)
    assert a.ctypes.data == t.data_ptr
    np.testing.assert_array_equal(a, np.full((2, 3), 2, np.float32))
    b = np.asarray(t)
    assert b.ctypes.data == t.data_ptr


def test_numpy_in_numpy_out_views_loom_memory():
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    y = loom.ops.core.add(x, x, alpha=2.0)
    assert isinstance(y, np.ndarray)
    np.testing.assert_array_equal(y, x * 3)
    assert isinstance(y.base, loom._tensor.HostView)


def test_numpy_view_and_readonly_arrays():
    a = np.arange(20, dtype=np.float32).reshape(4, 5)[:, 1:4]      # strided view
    t = loom.from_dlpack(a)
    assert t.strides == (5, 1) and t.data_ptr == a.ctypes.data
    ro = np.arange(4, dtype=np.int64)
    ro.setflags(write=False)
    t = loom.from_dlpack(ro)
    assert t.data_ptr == ro.ctypes.data and t.dtype == "i64"


class Producer:
    """A DLPack producer that hands out one form only: versioned (1.x) or legacy (0.x)."""

    def __init__(self, tensor, versioned):
        self.tensor, self.versioned = tensor, versioned

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        if self.versioned:
            return self.tensor.__dlpack__(max_version=kwargs.get("max_version"))
        if "max_version" in kwargs:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        return self.tensor.__dlpack__()


@pytest.mark.parametrize("versioned", [True, False])
def test_both_capsule_forms_are_taken(versioned):
    src = loom.from_dlpack(np.arange(5, dtype=np.int32))
    t = loom.from_dlpack(Producer(src, versioned))
    assert t.data_ptr == src.data_ptr and t.shape == (5,) and t.dtype == "i32"
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(5, dtype=np.int32))


def test_capsule_kinds_match_the_request():
    t = loom.from_dlpack(np.zeros(3, np.float32))
    assert b"dltensor_versioned" in repr(t.__dlpack__(max_version=(1, 0))).encode()
    assert '"dltensor"' in repr(t.__dlpack__())
    assert t.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError):
        t.__dlpack__(copy=True)
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))


def test_not_a_tensor_names_the_argument():
    with pytest.raises(TypeError, match="loom.from_dlpack: x must be a tensor"):
        loom.from_dlpack([1, 2, 3])


def test_torch_both_ways_same_pointer():
    torch = torch_or_skip()
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    t = loom.from_dlpack(x)
    assert t.data_ptr == x.data_ptr()
    y = torch.from_dlpack(t)
    assert y.data_ptr() == t.data_ptr
    z = loom.ops.core.add(x, x)
    assert isinstance(z, torch.Tensor)
    assert torch.equal(z, x * 2)
    assert loom.from_dlpack(z).data_ptr == z.data_ptr()


def test_torch_legacy_capsule():
    torch = torch_or_skip()
    x = torch.arange(4, dtype=torch.int64)
    capsule = torch.utils.dlpack.to_dlpack(x)          # a 0.x capsule, as torch < 2.4 gives

    class Old:
        def __dlpack__(self, stream=None):
            return capsule

        def __dlpack_device__(self):
            return (1, 0)
    t = loom.from_dlpack(Old())
    assert t.data_ptr == x.data_ptr()


def test_torch_strided_view_runs_on_a_compact_kernel():
    torch = torch_or_skip()
    b = (torch.rand(8, 10) * 50)[:, 2:6]
    b[:, 2:] += b[:, :2]
    assert not b.is_contiguous()
    import torchvision
    assert torch.equal(loom.ops.vision.box_iou(b, b), torchvision.ops.box_iou(b, b))


def test_cuda_tensors_when_a_device_is_present():
    torch = torch_or_skip()
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device here")
    x = torch.arange(8, dtype=torch.float32, device="cuda")
    t = loom.from_dlpack(x)
    assert t.data_ptr == x.data_ptr() and t.device == "cuda:0"
    assert torch.from_dlpack(t).data_ptr() == x.data_ptr()


def test_producer_refusals_name_the_argument():
    torch = torch_or_skip()
    z = (torch.rand(3) + 1j).conj()                 # torch exports no lazily conjugated tensor
    with pytest.raises(BufferError, match="input 'input'.*conjugate"):
        loom.ops.core.add(z, z)


def test_unsupported_dtype_names_the_argument():
    with pytest.raises(ValueError, match="input 'other'.*unsupported dtype"):
        loom.ops.core.add(np.zeros(3, np.float32), np.zeros(3, np.uint64))


def test_unsigned_16_and_32_bit_arrays_travel_both_ways():
    for npdt, name in ((np.uint16, "u16"), (np.uint32, "u32")):
        a = np.array([0, 1, 40000, np.iinfo(npdt).max], npdt)
        t = loom.from_dlpack(a)
        assert t.dtype == name
        np.testing.assert_array_equal(np.from_dlpack(t), a)
        np.testing.assert_array_equal(loom.ops.core.cast(a, dtype="f64"), a.astype(np.float64))
        np.testing.assert_array_equal(loom.ops.core.cast(np.array([70000.0, 3.7]), dtype=name),
                                      np.array([70000 % (np.iinfo(npdt).max + 1), 3], npdt))


def test_tensor_properties():
    a = np.zeros((2, 3, 4), np.int16)[:, ::2, :]
    t = loom.from_dlpack(a)
    assert t.shape == (2, 2, 4) and t.ndim == 3 and len(t) == 2
    assert t.strides == (12, 8, 1) and t.dtype == "i16" and t.device == "cpu"
    assert repr(t) == "loom.Tensor(shape=(2, 2, 4), dtype=i16, device=cpu)"
    c = loom.from_dlpack(np.zeros((2, 3), np.float64))
    assert c.strides == (3, 1) and c.nbytes == 48
    np.testing.assert_array_equal(c.numpy(), np.zeros((2, 3)))
