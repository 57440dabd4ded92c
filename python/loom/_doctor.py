# SPDX-License-Identifier: BSD-3-Clause
"""loom.doctor(): the report of `loom doctor`, from the same public queries:
versions, the configuration in effect and where each setting came from, CPU
topology, threads, devices, search directories, every file the loader saw
and what happened to it, each pack's dependencies, and quarantined packs."""
import time
from ctypes import byref, c_char_p

from . import _config, _lib

lib = _lib.lib
_SCAN_RESULTS = {0: "loaded", 1: "refused", 2: "skipped", 3: "no device"}


def _scan_entries():
    out = []
    for i in range(lib.loom_scan_count()):
        e = _lib.struct_init(_lib.ScanEntry)
        if lib.loom_scan_at(i, byref(e)) == 0:
            deps = []
            if e.depends:
                k = 0
                while e.depends[k]:
                    deps.append(_lib.text(e.depends[k]))
                    k += 1
            out.append((e, deps))
    return out


def _dependency(dep, entries):
    t = _lib.text
    if "." in dep:
        op = lib.loom_op_find(dep.encode())
        if not op:
            return "missing: no loaded pack provides this op"
        k = _lib.struct_init(_lib.KernelInfo)
        if lib.loom_op_kernel_count(op) > 0 and lib.loom_op_kernel_at(op, 0, byref(k)) == 0 and k.pack:
            return f"satisfied: op registered (kernels of pack {t(k.pack)})"
        return "satisfied: op registered"
    for e, _ in entries:
        if e.pack and t(e.pack) == dep and e.result in (0, 3):
            return f"satisfied: pack loaded from {t(e.path)}"
    return f"missing: no pack '{dep}' is loaded"


def doctor():
    """The doctor report, as text (what `loom doctor` prints)."""
    _config.ensure_init()
    t = _lib.text
    abi = lib.loom_abi_version()
    lines = [f"loom {t(lib.loom_version())}, ABI {abi >> 16}.{abi & 0xffff} (Python package)",
             "configuration:"]
    lines += [f"  {t(lib.loom_config_at(i))}" for i in range(lib.loom_config_count())]
    lines.append("CPU topology:")
    lines += [f"  {line}" for line in (t(lib.loom_cpu_topology()) or "").splitlines()]
    lines.append(f"threads: {lib.loom_num_threads()}")
    lines.append("devices:")
    for i in range(lib.loom_device_count()):
        d = _lib.struct_init(_lib.DeviceInfo)
        if lib.loom_device_at(i, byref(d)) == 0:
            lines.append(f"  {t(d.kind) or d.device.device_type}:{d.device.device_id}  {t(d.description) or ''}")
    lines.append("plugin search directories, in order:")
    n = lib.loom_search_dir_count()
    if n == 0:
        lines.append("  (none)")
    for i in range(n):
        origin = c_char_p()
        d = lib.loom_search_dir_at(i, byref(origin))
        lines.append(f"  {t(d) or '?'}  ({t(origin.value) or '?'})")
    lines.append("files seen:")
    entries = _scan_entries()
    if not entries:
        lines.append("  (none)")
    for e, _ in entries:
        lines.append(f"  {_SCAN_RESULTS.get(e.result, 'unknown'):<9} {t(e.path) or '?'}")
        if e.pack:
            none_run = " (none can run: no device)" if e.result == 3 and e.n_kernels > 0 else ""
            lines.append(f"            pack {t(e.pack)} {t(e.version) or ''}: defines {e.n_ops} ops, brings "
                         f"{e.n_kernels} kernels{none_run}, {e.n_classes} classes, {e.live_objects} live objects")
        if e.reason:
            lines.append(f"            {t(e.reason)}")
    lines.append("dependencies:")
    shown = 0
    for e, deps in entries:
        if not e.pack or e.result == 2:
            continue
        shown += 1
        if not deps:
            lines.append(f"  {t(e.pack):<20} none")
        for k, dep in enumerate(deps):
            kind = "op" if "." in dep else "pack"
            lines.append(f"  {t(e.pack) if k == 0 else '':<20} {dep} ({kind}): {_dependency(dep, entries)}")
    if shown == 0:
        lines.append("  (no pack)")
    cache = t(lib.loom_probe_cache_path())
    lines.append("quarantined packs (vetted loading, LOOM_PROBE=1; cache "
                 f"{cache or 'none: neither XDG_CACHE_HOME nor HOME is set'}):")
    good = bad = 0
    for i in range(lib.loom_probe_record_count()):
        r = _lib.struct_init(_lib.ProbeRecord)
        if lib.loom_probe_record_at(i, byref(r)) != 0:
            continue
        if not r.quarantined:
            good += 1
            continue
        bad += 1
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.probed_at))
        path = t(r.path) or "?"
        lines.append(f"  {path}\n            {t(r.reason)} (probed {when}); "
                     f"`loom doctor --forget {path.rsplit('/', 1)[-1]}` to retry")
    if bad == 0:
        lines.append("  (none)")
    if good:
        lines.append(f"  {good} pack file{'' if good == 1 else 's'} passed the probe")
    return "\n".join(lines) + "\n"
