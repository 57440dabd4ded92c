# SPDX-License-Identifier: BSD-3-Clause
"""loom.Tensor: a tensor that loom made or imported, owned by Python.

A Tensor owns one loom_tensor and frees it (loom_tensor_free) when the last
reference to it goes: its own, and one per DLPack consumer it was handed to
(torch.from_dlpack, numpy.from_dlpack), so a consumer's view stays valid for
as long as the consumer keeps it, and the memory goes with the last of them.
A Tensor imported from another library's DLPack capsule holds that library's
memory; loom_tensor_free runs the producer's deleter.
"""
import ctypes

from . import _lib

lib = _lib.lib

# DLPack device types (DLDeviceType) loom knows.
DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 13: "cuda_managed"}
HOST_DEVICES = (1, 3, 13)

# (DLPack code, bits) -> (loom dtype index, NumPy array-interface typestr). The
# same table as loom_dtype_from_dl in plugin.h; bf16 and f8e4m3 travel as
# void types of their size, as loom's .npy files carry them.
DL_DTYPES = {
    (2, 32): (1, "<f4"), (2, 64): (2, "<f8"), (2, 16): (3, "<f2"), (4, 16): (4, "|V2"),
    (10, 8): (5, "|V1"), (0, 8): (6, "|i1"), (1, 8): (7, "|u1"), (0, 16): (8, "<i2"),
    (0, 32): (9, "<i4"), (0, 64): (10, "<i8"), (6, 8): (11, "|b1"), (5, 64): (12, "<c8"),
    (5, 128): (13, "<c16"), (1, 16): (14, "<u2"), (1, 32): (15, "<u4"),
}
# NumPy dtype.str -> loom dtype index, for wrapping arrays that DLPack cannot export.
NUMPY_DTYPES = {ts: d for (d, ts) in DL_DTYPES.values() if not ts.startswith("|V")}
NUMPY_DTYPES["|b1"] = 11


def dtype_index(t):
    """loom's dtype index of a loom_tensor struct (0 when loom has none)."""
    if t.dtype.lanes != 1:
        return 0
    return DL_DTYPES.get((t.dtype.code, t.dtype.bits), (0, None))[0]


class Tensor:
    """A tensor in loom's memory (an op's output) or imported with loom.from_dlpack.

    Pass it to any op, or to torch.from_dlpack / numpy.from_dlpack (zero-copy).
    """
    __slots__ = ("_ptr", "_keep", "__weakref__")

    def __init__(self, ptr, keep=None):
        """Internal: take ownership of the loom_tensor at address ptr. keep is an
        object whose memory the tensor views and that must outlive it."""
        self._ptr = ptr
        self._keep = keep

    def __del__(self):
        ptr, self._ptr = self._ptr, None
        if ptr:
            lib.loom_tensor_free(ptr)

    @property
    def _struct(self):
        return _lib.Tensor.from_address(self._ptr)

    @property
    def shape(self):
        t = self._struct
        return tuple(t.shape[i] for i in range(t.ndim))

    @property
    def ndim(self):
        return self._struct.ndim

    @property
    def strides(self):
        """Strides in elements (compact row-major when loom keeps none)."""
        t = self._struct
        if t.strides:
            return tuple(t.strides[i] for i in range(t.ndim))
        out, step = [], 1
        for i in reversed(range(t.ndim)):
            out.append(step)
            step *= t.shape[i]
        return tuple(reversed(out))

    @property
    def dtype(self):
        """loom's dtype name: "f32", "i64", ..."""
        return _lib.text(lib.loom_dtype_name(dtype_index(self._struct)))

    @property
    def device(self):
        """"cpu", or "cuda:N"."""
        d = self._struct.device
        name = DEVICE_NAMES.get(d.device_type, str(d.device_type))
        return name if d.device_type == 1 else f"{name}:{d.device_id}"

    @property
    def data_ptr(self):
        """Address of the first element."""
        t = self._struct
        return (t.data or 0) + t.byte_offset

    @property
    def nbytes(self):
        return lib.loom_tensor_nbytes(self._ptr)

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __repr__(self):
        return f"loom.Tensor(shape={self.shape}, dtype={self.dtype}, device={self.device})"

    # ---- DLPack producer (the consumer side is loom.from_dlpack) ----

    def __dlpack_device__(self):
        d = self._struct.device
        return (d.device_type, d.device_id)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        from . import _dlpack
        return _dlpack.export(self, stream, max_version, dl_device, copy)

    # ---- NumPy ----

    def numpy(self):
        """A NumPy array over the same memory (CPU tensors only)."""
        import numpy
        return numpy.asarray(HostView(self))

    def __array__(self, dtype=None, copy=None):
        import numpy
        if copy:
            return numpy.array(HostView(self), dtype=dtype, copy=True)
        a = numpy.asarray(HostView(self))
        return a if dtype is None else a.astype(dtype, copy=False)


class HostView:
    """NumPy's view of a CPU Tensor through the array interface; the array's
    base, so it keeps the Tensor alive for as long as the array lives."""
    __slots__ = ("tensor", "__array_interface__")

    def __init__(self, tensor):
        t = tensor._struct
        if t.device.device_type not in HOST_DEVICES:
            raise BufferError(f"a {tensor.device} tensor has no NumPy view: copy it to the CPU first")
        typestr = DL_DTYPES.get((t.dtype.code, t.dtype.bits), (0, None))[1]
        if typestr is None or t.dtype.lanes != 1:
            raise BufferError(f"NumPy has no dtype for loom's {tensor.dtype}")
        itemsize = t.dtype.bits // 8
        shape = tuple(t.shape[i] for i in range(t.ndim))
        strides = tuple(t.strides[i] * itemsize for i in range(t.ndim)) if t.strides else None
        self.tensor = tensor
        self.__array_interface__ = {
            "version": 3, "shape": shape, "typestr": typestr, "strides": strides,
            "data": ((t.data or 0) + t.byte_offset, False),
        }


def wrap_numpy(a, what):
    """A loom_tensor over a NumPy array's memory, for arrays DLPack refuses
    (NumPy before 2.0 exports no read-only array). The caller keeps a alive."""
    dtype = NUMPY_DTYPES.get(a.dtype.str)
    if dtype is None:
        raise TypeError(f"{what}: loom has no dtype for NumPy's {a.dtype}")
    ndim = a.ndim
    shape = (ctypes.c_int64 * max(ndim, 1))(*a.shape)
    strides = None
    if ndim:
        item = a.itemsize
        if any(s % item for s in a.strides):
            raise ValueError(f"{what}: strides {a.strides} are not multiples of the item size {item}")
        strides = (ctypes.c_int64 * ndim)(*(s // item for s in a.strides))
    out = ctypes.c_void_p()
    st = lib.loom_tensor_wrap(ctypes.byref(out), a.__array_interface__["data"][0] or None, dtype, ndim,
                              shape, strides, None)
    if st != 0:
        from ._errors import error_for
        raise error_for(st)
    return out.value
