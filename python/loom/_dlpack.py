# SPDX-License-Identifier: BSD-3-Clause
"""DLPack both ways, zero-copy.

Import: loom.from_dlpack(x) asks x.__dlpack__ for a versioned (1.x) capsule
and falls back to the legacy (0.x) form when the producer does not take
max_version (NumPy before 2.1, PyTorch before 2.4). loom takes the managed
tensor over (loom_tensor_from_dlpack[_legacy]); the capsule is renamed
"used_..." as the protocol requires, and the producer's deleter runs when
the loom tensor is freed. On a failure the capsule keeps the tensor, and its
producer's destructor frees it.

Export: Tensor.__dlpack__ hands each consumer a managed struct of its own
whose manager is the Tensor: the struct holds a reference to it, and the
consumer's call of the deleter drops that reference. So any number of
consumers share the memory, and it goes with the last one. The deleter is a
ctypes callback: it takes the GIL itself, from whatever thread a consumer
frees in. A capsule that no consumer took (one that was never renamed and
that only this module still holds) is released by a sweep at the next export.
"""
import ctypes
import sys
import threading
from ctypes import byref, c_char_p, c_int, c_void_p, py_object

from . import _lib
from ._errors import error_for
from ._tensor import HOST_DEVICES, Tensor, wrap_numpy

lib = _lib.lib

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = py_object
_api.PyCapsule_New.argtypes = [c_void_p, c_char_p, c_void_p]
_api.PyCapsule_GetName.restype = c_char_p
_api.PyCapsule_GetName.argtypes = [py_object]
_api.PyCapsule_GetPointer.restype = c_void_p
_api.PyCapsule_GetPointer.argtypes = [py_object, c_char_p]
_api.PyCapsule_SetName.restype = c_int
_api.PyCapsule_SetName.argtypes = [py_object, c_char_p]
_api.Py_IncRef.argtypes = [py_object]

# Capsules keep a pointer to their name: these bytes live as long as the module.
VERSIONED, USED_VERSIONED = b"dltensor_versioned", b"used_dltensor_versioned"
LEGACY, USED_LEGACY = b"dltensor", b"used_dltensor"
_NAMES = {VERSIONED: (lib.loom_tensor_from_dlpack, USED_VERSIONED),
          LEGACY: (lib.loom_tensor_from_dlpack_legacy, USED_LEGACY)}
MAX_VERSION = (1, 1)        # loom_dlpack_managed: DLPack 1.1

_legacy_producers = set()    # types whose __dlpack__ takes no max_version
_numpy_ndarray = None        # numpy.ndarray once NumPy is imported


def _is_ndarray(tp):
    global _numpy_ndarray
    if _numpy_ndarray is None:
        np = sys.modules.get("numpy")
        if np is None:
            return False
        _numpy_ndarray = np.ndarray
    return issubclass(tp, _numpy_ndarray)


_torch_to_dlpack = {}         # torch.Tensor types -> torch.utils.dlpack.to_dlpack, else None


def _torch_exporter(tp):
    """torch.utils.dlpack.to_dlpack when tp is a torch tensor type, else None.
    It makes the capsule in C, without the Python layers of Tensor.__dlpack__
    (most of a small call's cost); used for CPU tensors only, where there is
    no stream to order."""
    fn = _torch_to_dlpack.get(tp, False)
    if fn is False:
        torch = sys.modules.get("torch")
        fn = torch.utils.dlpack.to_dlpack if torch is not None and issubclass(tp, torch.Tensor) else None
        _torch_to_dlpack[tp] = fn
    return fn


def import_tensor(x, what, fast=True):
    """(address of a new loom_tensor viewing x, an object to keep alive or None).

    x is any object with __dlpack__; what names it in errors ("vision.nms: input 'boxes'").
    fast: a CPU torch tensor may go through torch.utils.dlpack.to_dlpack (an op's
    input, read during the call), instead of the protocol's x.__dlpack__."""
    tp = type(x)
    if fast:
        to_dlpack = _torch_exporter(tp)
        if to_dlpack is not None and not x.is_cuda and not x.is_conj() and not x.is_neg():
            return _take(to_dlpack(x), what), None
    try:
        dlpack = x.__dlpack__
    except AttributeError:
        raise TypeError(f"{what} must be a tensor (an object with __dlpack__: a loom.Tensor, "
                        f"NumPy array, PyTorch tensor...), not {tp.__name__}") from None
    ndarray = _is_ndarray(tp)
    kwargs = {}
    if not ndarray:
        device_type = x.__dlpack_device__()[0]
        if device_type not in HOST_DEVICES:
            kwargs["stream"] = 1    # loom runs on the default stream: the producer orders its work before it
    try:
        if tp in _legacy_producers:
            capsule = dlpack(**kwargs)
        else:
            try:
                capsule = dlpack(max_version=MAX_VERSION, **kwargs)
            except TypeError:
                _legacy_producers.add(tp)
                capsule = dlpack(**kwargs)
    except BufferError as e:
        if ndarray:         # NumPy < 2 exports no read-only array: view its memory instead
            return wrap_numpy(x, what), x
        raise BufferError(f"{what}: {e}") from e
    return _take(capsule, what), None


def _take(capsule, what):
    """The loom_tensor of a producer's capsule, which is then marked used."""
    name = _api.PyCapsule_GetName(capsule)
    entry = _NAMES.get(name)
    if entry is None:
        raise TypeError(f"{what}: __dlpack__ returned a capsule named {name!r}, not a DLPack tensor")
    take, used = entry
    out = c_void_p()
    st = take(byref(out), _api.PyCapsule_GetPointer(capsule, name))
    if st != 0:
        raise error_for(st, what)
    _api.PyCapsule_SetName(capsule, used)
    return out.value


def from_dlpack(x):
    """A loom.Tensor over x's memory, without a copy. x: any object with
    __dlpack__ (PyTorch, NumPy >= 1.22, CuPy, JAX), on the CPU or a CUDA
    device, exporting either DLPack form. A loom.Tensor is returned as is."""
    if type(x) is Tensor:
        return x
    ptr, keep = import_tensor(x, "loom.from_dlpack: x", fast=False)
    return Tensor(ptr, keep)


# ------------------------------------------------------------------ export

_exports = {}               # managed struct address -> (struct, Tensor): the consumers' references
_pending = []               # (capsule, struct address) not yet seen taken
_lock = threading.Lock()


@_lib.Deleter
def _release(address):
    """The deleter of every struct export() made: drop the consumer's reference."""
    _exports.pop(address, None)


_api.Py_IncRef(_release)     # never freed: a consumer may call it while the interpreter shuts down


def _capsule_refs(item):
    """References to the capsule of a pending item, counted the same way
    whoever calls (what sys.getrefcount adds itself differs between versions)."""
    capsule = item[0]
    return sys.getrefcount(capsule)


# the count of a capsule that only its pending item holds
_UNHELD = _capsule_refs((_api.PyCapsule_New(1, VERSIONED, None), 0))


def _sweep():
    """Release the exports of capsules that no consumer took and nobody holds."""
    global _pending
    with _lock:
        pending, _pending = _pending, []
        for item in pending:
            if _api.PyCapsule_GetName(item[0]).startswith(b"used_"):
                continue                            # taken: the consumer holds the struct now
            if _capsule_refs(item) <= _UNHELD:      # untaken, and held by nobody else
                _exports.pop(item[1], None)
                continue
            _pending.append(item)


def export(tensor, stream, max_version, dl_device, copy):
    """Tensor.__dlpack__: a capsule of a new managed struct over tensor."""
    ptr = tensor._ptr
    if not ptr:
        raise BufferError("the tensor was freed")
    t = tensor._struct
    here = (t.device.device_type, t.device.device_id)
    if dl_device is not None and tuple(dl_device) != here:
        raise BufferError(f"loom exports in place only: the tensor is on device {here}, not {tuple(dl_device)}")
    if copy:
        raise BufferError("loom exports in place only (copy=True)")
    if here[0] not in HOST_DEVICES and stream != -1:
        st = lib.loom_tensor_sync(ptr)       # loom's work on the default stream precedes the consumer's
        if st != 0:
            raise error_for(st)
    if _pending:
        _sweep()
    if max_version is not None and max_version[0] >= 1:
        m = _lib.ManagedVersioned()
        m.version.major = 1          # no newer minor than the consumer reads
        m.version.minor = min(MAX_VERSION[1], max_version[1]) if max_version[0] == 1 else MAX_VERSION[1]
        name = VERSIONED
    else:
        m = _lib.ManagedLegacy()
        name = LEGACY
    m.dl_tensor = t
    m.deleter = _release
    address = ctypes.addressof(m)
    _exports[address] = (m, tensor)
    capsule = _api.PyCapsule_New(address, name, None)
    with _lock:
        _pending.append((capsule, address))
    return capsule


def live_exports():
    """How many exported structs consumers still hold (for tests)."""
    _sweep()
    return len(_exports)


def owned_capsule(ptr):
    """A versioned capsule that carries the loom_tensor at ptr over to one consumer,
    with libloom's own deleter (loom_tensor_to_dlpack): the fast path of op results."""
    m = c_void_p()
    st = lib.loom_tensor_to_dlpack(byref(m), ptr)
    if st != 0:
        lib.loom_tensor_free(ptr)
        raise error_for(st)
    return _api.PyCapsule_New(m.value, VERSIONED, None), m.value


def drop_owned(m):
    """Free what owned_capsule handed out when no consumer took it."""
    _lib.ManagedVersioned.from_address(m).deleter(m)
