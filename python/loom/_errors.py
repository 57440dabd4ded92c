# SPDX-License-Identifier: BSD-3-Clause
"""loom statuses as Python exceptions.

Every failing loom call raises a subclass of loom.Error carrying loom's own
message (loom_last_error of the calling thread) and the status. Where a
built-in exception means the same thing, the class derives from it too, so
`except ValueError` catches a bad argument whether loom or Python found it.
"""
from . import _lib


class Error(Exception):
    """A loom call failed. .status is the loom_status code, .status_name its name."""
    status = None
    status_name = None

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status
            self.status_name = _lib.text(_lib.lib.loom_status_name(status))


class InvalidArgumentError(Error, ValueError):
    """LOOM_EINVAL: an argument is invalid (shape, dtype, attribute, NULL)."""


class OutOfMemoryError(Error, MemoryError):
    """LOOM_ENOMEM."""


class NotSupportedError(Error, NotImplementedError):
    """LOOM_ENOTSUP: no kernel supports this call (dtype, layout, device)."""


class NotFoundError(Error, FileNotFoundError):
    """LOOM_ENOENT: no such operator, pack, object class or file."""


class AbiError(Error):
    """LOOM_EABI: built against an incompatible ABI (or DLPack major)."""


class NoDeviceError(Error):
    """LOOM_ENODEV: the device a pack or call needs is not present."""


class BusyError(Error):
    """LOOM_EBUSY: the object is still in use."""


class DeviceError(Error):
    """LOOM_EDEVICE: a backend library (CUDA, oneDNN, ...) reported an error."""


class FormatError(Error, ValueError):
    """LOOM_EFORMAT: a file is truncated, corrupt or lies about its contents."""


class IOError_(Error, OSError):
    """LOOM_EIO: an operating-system I/O call failed."""


IOError_.__name__ = IOError_.__qualname__ = "IOError"


class ConflictError(Error):
    """LOOM_ECONFLICT: schema clash or duplicate registration."""


class StrictError(Error):
    """LOOM_ESTRICT: LOOM_STRICT=1 forbade a fallback to another backend."""


class InternalError(Error):
    """LOOM_EINTERNAL: a broken invariant inside loom."""


BY_STATUS = {
    -1: InvalidArgumentError, -2: OutOfMemoryError, -3: NotSupportedError, -4: NotFoundError,
    -5: AbiError, -6: NoDeviceError, -7: BusyError, -8: DeviceError, -9: FormatError,
    -10: IOError_, -11: ConflictError, -12: StrictError, -13: InternalError,
}


def error_for(status, context=None):
    """The exception of a failed call on this thread: its class by status, loom's
    message (after context, when given: the argument it is about)."""
    message = _lib.text(_lib.lib.loom_last_error()) or _lib.text(_lib.lib.loom_status_name(status))
    if context:
        message = f"{context}: {message}"
    return BY_STATUS.get(status, Error)(message, status)


def check(status):
    """Raise the exception of status unless it is LOOM_OK."""
    if status != 0:
        raise error_for(status)
