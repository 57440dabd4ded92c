# SPDX-License-Identifier: BSD-3-Clause
"""loom.init and the dispatch record.

loom.init mirrors loom_init_options; what it leaves out comes from the
environment (LOOM_PLUGIN_PATH, LOOM_BACKENDS, LOOM_STRICT, LOOM_NUM_THREADS,
...), read by libloom exactly as for a C host. The first op, object or
introspection call initialises with defaults when loom.init was not called.
"""
import threading
import warnings
from ctypes import byref

from . import _lib
from ._errors import check

lib = _lib.lib
_lock = threading.Lock()
_initialised = False


def init(plugin_path=None, backends=None, strict=None, num_threads=None, *, verbose=None,
         no_default_dirs=False, probe_packs=None):
    """Initialise loom: read the environment, build the thread pool, load the packs.

    plugin_path: directories searched first (a str with ':' between them, or a
        list), before LOOM_PLUGIN_PATH's.
    backends: a LOOM_BACKENDS policy, e.g. "cpu" or "vision.nms=cpu".
    strict: True (LOOM_STRICT=1: no silent fallback), False, or None for the environment.
    num_threads: CPU threads of loom's pool; None for LOOM_NUM_THREADS or the physical cores.
    verbose: 1..3, or -1 for quiet; None for LOOM_VERBOSE.
    no_default_dirs: search only plugin_path and LOOM_PLUGIN_PATH.
    probe_packs: True to vet packs in a child process first (LOOM_PROBE), False never.

    Only the first call of a process initialises (as loom_init); a later call
    with options warns that they are ignored.
    """
    global _initialised
    with _lock:
        if _initialised:
            if any(v not in (None, False) for v in (plugin_path, backends, strict, num_threads, verbose,
                                                      no_default_dirs, probe_packs)):
                warnings.warn("loom.init: loom is initialised already; these options are ignored",
                              RuntimeWarning, stacklevel=2)
            return
        if isinstance(plugin_path, (list, tuple)):
            plugin_path = ":".join(str(p) for p in plugin_path)
        if num_threads is not None and (isinstance(num_threads, bool) or not isinstance(num_threads, int)
                                        or num_threads < 1):
            raise ValueError(f"loom.init: num_threads must be a positive int, not {num_threads!r}")
        tri = {None: 0, True: 1, False: -1}
        for name, v in (("strict", strict), ("probe_packs", probe_packs)):
            if v not in tri:
                raise ValueError(f"loom.init: {name} must be True, False or None, not {v!r}")
        opts = _lib.struct_init(_lib.InitOptions)
        opts.plugin_path = None if plugin_path is None else str(plugin_path).encode()
        opts.backends = None if backends is None else str(backends).encode()
        opts.strict = tri[strict]
        opts.verbose = verbose or 0
        opts.num_threads = num_threads or 0
        opts.no_default_dirs = 1 if no_default_dirs else 0
        opts.probe_packs = tri[probe_packs]
        check(lib.loom_init(byref(opts)))
        _initialised = True


def ensure_init():
    if not _initialised:
        init()


def last_dispatch():
    """Why the last op call of this thread ran where it ran: a dict with op,
    backend, impl, fallback (a preferred backend declined) and text (the
    LOOM_VERBOSE=2 line: every candidate and the reason it was or was not chosen)."""
    ensure_init()
    info = _lib.struct_init(_lib.DispatchInfo)
    check(lib.loom_last_dispatch(byref(info)))
    return {"op": _lib.text(info.op), "backend": _lib.text(info.backend), "impl": _lib.text(info.impl),
            "fallback": bool(info.fallback), "text": _lib.text(info.text)}
