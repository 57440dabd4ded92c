# SPDX-License-Identifier: BSD-3-Clause
"""loom from Python: every op and object class of the loaded packs, called on
PyTorch tensors, NumPy arrays or any DLPack producer without a copy.

    import loom, torch
    keep = loom.ops.vision.nms(boxes, scores, iou_threshold=0.5)   # a torch tensor back

libloom is LOOM_LIBRARY's file, else the installed libloom.so.0; it finds
the packs as for any host (LOOM_PLUGIN_PATH, the build tree, the installed
plugin directory).
"""
from . import _lib
from ._config import init, last_dispatch
from ._dlpack import from_dlpack
from ._doctor import doctor
from ._errors import (AbiError, BusyError, ConflictError, DeviceError, Error, FormatError, InternalError,
                      InvalidArgumentError, IOError_ as IOError, NoDeviceError, NotFoundError,
                      NotSupportedError, OutOfMemoryError, StrictError)
from ._object import Object
from ._tensor import Tensor
from . import ops

__version__ = _lib.text(_lib.lib.loom_version())
library_path = _lib.path

__all__ = ["init", "last_dispatch", "doctor", "from_dlpack", "Tensor", "Object", "ops", "Error",
           "InvalidArgumentError", "OutOfMemoryError", "NotSupportedError", "NotFoundError", "AbiError",
           "NoDeviceError", "BusyError", "DeviceError", "FormatError", "IOError", "ConflictError",
           "StrictError", "InternalError"]
