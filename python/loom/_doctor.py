# SPDX-License-Identifier: BSD-3-Clause
"""loom.doctor(): the report of `loom doctor`, as libloom writes it
(loom_doctor_report): versions, the configuration in effect and where each
setting came from, CPU topology, threads, devices, search directories, every
file the loader saw and what happened to it, each pack's dependencies, and
quarantined packs."""
from ctypes import create_string_buffer

from . import _config, _lib


def doctor():
    """The doctor report, as text (what `loom doctor` prints)."""
    _config.ensure_init()
    lib = _lib.lib
    # sized by a first call; the report can grow between the two calls (a
    # pack loaded, an object made), so ask again until it fits
    size = lib.loom_doctor_report(None, 0) + 1
    while True:
        buf = create_string_buffer(size)
        need = lib.loom_doctor_report(buf, size)
        if need < size:
            return buf.value.decode("utf-8", "replace")
        size = need + 1
