# SPDX-License-Identifier: BSD-3-Clause
"""Finding libloom and declaring its public C API (abi/loom/loom.h) to ctypes.

libloom is found, in order, at the path in LOOM_LIBRARY (a build tree's
build/core/libloom.so.0, say), then by its soname libloom.so.0 through the
dynamic loader (an installed libloom: /usr/lib, /usr/local/lib after
ldconfig, or LD_LIBRARY_PATH). libloom finds the packs itself, exactly as
it does for a C host: LOOM_PLUGIN_PATH, then the build tree it belongs to,
or the plugin directory next to it.

Every function is declared through ctypes.CDLL, which releases the GIL for
the duration of each call: loom calls from several Python threads run at
once. The structs mirror loom.h member by member; each starts with
struct_size, which the caller sets (see struct_init).
"""
import ctypes
import os
from ctypes import (POINTER, Structure, Union, c_char_p, c_double, c_int, c_int32, c_int64,
                    c_size_t, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p)

SONAME = "libloom.so.0"


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class Tensor(Structure):
    """loom_tensor, layout-identical to DLPack's DLTensor."""
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32), ("dtype", DLDataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


# The deleter of both DLPack forms, taking the managed struct's address.
Deleter = ctypes.CFUNCTYPE(None, c_void_p)


class ManagedVersioned(Structure):
    """loom_dlpack_managed, DLPack 1.x's DLManagedTensorVersioned."""


ManagedVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p),
                             ("deleter", Deleter), ("flags", c_uint64), ("dl_tensor", Tensor)]


class ManagedLegacy(Structure):
    """loom_dlpack_legacy, DLPack 0.x's DLManagedTensor."""


ManagedLegacy._fields_ = [("dl_tensor", Tensor), ("manager_ctx", c_void_p), ("deleter", Deleter)]


class AttrUnion(Union):
    _fields_ = [("i", c_int64), ("f", c_double), ("b", c_int32), ("s", c_char_p),
                ("ints", POINTER(c_int64)), ("floats", POINTER(c_double)), ("t", c_void_p)]


class AttrValue(Structure):
    _fields_ = [("type", c_int32), ("is_set", c_int32), ("count", c_int64), ("u", AttrUnion)]


class ArgDef(Structure):
    _fields_ = [("name", c_char_p), ("dtypes", c_uint64), ("flags", c_uint32), ("ndim", c_int32),
                ("doc", c_char_p)]


class AttrDef(Structure):
    _fields_ = [("name", c_char_p), ("type", c_int32), ("flags", c_uint32), ("dflt", AttrValue),
                ("doc", c_char_p)]


class AttrChoices(Structure):
    _fields_ = [("attr", c_uint32), ("values", POINTER(c_char_p))]


class OpSchema(Structure):
    _fields_ = [("struct_size", c_uint32), ("name", c_char_p), ("version", c_uint32), ("doc", c_char_p),
                ("n_inputs", c_uint32), ("inputs", POINTER(ArgDef)),
                ("n_outputs", c_uint32), ("outputs", POINTER(ArgDef)),
                ("n_attrs", c_uint32), ("attrs", POINTER(AttrDef)),
                ("object_class", c_char_p), ("cost", c_void_p),
                ("n_choices", c_uint32), ("choices", POINTER(AttrChoices))]


class ObjectClass(Structure):
    _fields_ = [("struct_size", c_uint32), ("name", c_char_p), ("doc", c_char_p),
                ("n_attrs", c_uint32), ("attrs", POINTER(AttrDef)),
                ("create", c_void_p), ("destroy", c_void_p),
                ("n_choices", c_uint32), ("choices", POINTER(AttrChoices))]


class InitOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("plugin_path", c_char_p), ("backends", c_char_p),
                ("strict", c_int32), ("verbose", c_int32), ("num_threads", c_int32),
                ("no_default_dirs", c_int32), ("log_stream", c_void_p), ("probe_packs", c_int32)]


class CallOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("object", c_void_p), ("backend", c_char_p),
                ("stream", c_void_p), ("num_threads", c_int32)]


class NamedFile(Structure):
    _fields_ = [("name", c_char_p), ("path", c_char_p)]


class NamedTensor(Structure):
    _fields_ = [("name", c_char_p), ("tensor", c_void_p)]


class ObjectOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("device", DLDevice), ("weights_path", c_char_p),
                ("n_files", c_int32), ("files", POINTER(NamedFile)),
                ("callbacks_name", c_char_p), ("callbacks", c_void_p),
                ("n_tensors", c_int32), ("tensors", POINTER(NamedTensor))]     # ABI 1.3


class DispatchInfo(Structure):
    _fields_ = [("struct_size", c_uint32), ("op", c_char_p), ("backend", c_char_p), ("impl", c_char_p),
                ("fallback", c_int32), ("text", c_char_p)]


class KernelInfo(Structure):
    _fields_ = [("struct_size", c_uint32), ("backend", c_char_p), ("impl", c_char_p), ("pack", c_char_p),
                ("device_type", c_int32), ("dtypes", c_uint64), ("excluded", c_int32),
                ("device_present", c_int32)]





def struct_init(cls, **members):
    """A loom struct with every member zero but struct_size (LOOM_STRUCT_INIT)."""
    s = cls(**members)
    s.struct_size = ctypes.sizeof(cls)
    return s


_P = c_void_p
_PP = POINTER(c_void_p)
# name: (restype, argtypes). Only what the package calls.
_PROTOTYPES = {
    "loom_init": (c_int, [POINTER(InitOptions)]),
    "loom_version": (c_char_p, []),
    "loom_abi_version": (c_uint32, []),
    "loom_last_error": (c_char_p, []),
    "loom_status_name": (c_char_p, [c_int]),
    "loom_suggest": (c_char_p, [c_char_p, POINTER(c_char_p), c_int64]),
    "loom_dtype_name": (c_char_p, [c_int]),
    "loom_dtype_from_name": (c_int, [c_char_p]),
    "loom_dtype_size": (c_size_t, [c_int]),
    "loom_doctor_report": (c_size_t, [c_char_p, c_size_t]),
    "loom_tensor_new": (c_int, [_PP, c_int, c_int32, POINTER(c_int64), POINTER(DLDevice)]),
    "loom_tensor_wrap": (c_int, [_PP, _P, c_int, c_int32, POINTER(c_int64), POINTER(c_int64),
                                 POINTER(DLDevice)]),
    "loom_tensor_free": (None, [_P]),
    "loom_tensor_copy_to": (c_int, [_PP, _P, POINTER(DLDevice)]),
    "loom_tensor_nbytes": (c_size_t, [_P]),
    "loom_tensor_sync": (c_int, [_P]),
    "loom_tensor_from_dlpack": (c_int, [_PP, _P]),
    "loom_tensor_from_dlpack_legacy": (c_int, [_PP, _P]),
    "loom_tensor_to_dlpack": (c_int, [_PP, _P]),
    "loom_attrs_new": (c_int, [_PP]),
    "loom_attrs_free": (None, [_P]),
    "loom_attrs_set_int": (c_int, [_P, c_char_p, c_int64]),
    "loom_attrs_set_float": (c_int, [_P, c_char_p, c_double]),
    "loom_attrs_set_bool": (c_int, [_P, c_char_p, c_int]),
    "loom_attrs_set_string": (c_int, [_P, c_char_p, c_char_p]),
    "loom_attrs_set_ints": (c_int, [_P, c_char_p, POINTER(c_int64), c_int64]),
    "loom_attrs_set_floats": (c_int, [_P, c_char_p, POINTER(c_double), c_int64]),
    "loom_attrs_set_tensor": (c_int, [_P, c_char_p, _P]),
    "loom_op_find": (_P, [c_char_p]),
    "loom_op_schema_of": (POINTER(OpSchema), [_P]),
    "loom_op_run": (c_int, [_P, _P, c_int32, _P, _P, c_int32, POINTER(CallOptions)]),
    "loom_object_create_ex": (c_int, [_PP, c_char_p, _P, POINTER(ObjectOptions)]),
    "loom_object_free": (None, [_P]),
    "loom_last_dispatch": (c_int, [POINTER(DispatchInfo)]),
    "loom_op_count": (c_int64, []),
    "loom_op_schema_at": (POINTER(OpSchema), [c_int64]),
    "loom_op_kernel_count": (c_int64, [_P]),
    "loom_op_kernel_at": (c_int, [_P, c_int64, POINTER(KernelInfo)]),
    "loom_object_class_count": (c_int64, []),
    "loom_object_class_at": (POINTER(ObjectClass), [c_int64]),
    "loom_device_count": (c_int64, []),
    "loom_num_threads": (c_int32, []),
}


def _load():
    explicit = os.environ.get("LOOM_LIBRARY")
    if explicit:
        try:
            return ctypes.CDLL(explicit), explicit
        except OSError as e:
            raise ImportError(f"loom: LOOM_LIBRARY={explicit} cannot be loaded: {e}") from None
    try:
        return ctypes.CDLL(SONAME), SONAME
    except OSError as e:
        raise ImportError(
            f"loom: {SONAME} not found ({e}). Install loom (tools/dev install, then ldconfig) or point "
            "LOOM_LIBRARY at a build tree's libloom (build/core/libloom.so.0)") from None


lib, path = _load()
for _name, (_res, _args) in _PROTOTYPES.items():
    _fn = getattr(lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args
del _name, _res, _args, _fn


def text(b):
    """A C string as str (None stays None)."""
    return None if b is None else b.decode("utf-8", "replace")
