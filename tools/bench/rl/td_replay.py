#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rl pack benchmarks: loom's replay buffer and TensorDict memmap against
torchrl and tensordict on the same data, in one run.

    .venv-rl/bin/python tools/bench/rl/td_replay.py [--build DIR] [--steps N] [--size-mb MB] [--skip-memmap]

Cases:
  prioritized  a PrioritizedSampler buffer (alpha 0.7, beta 0.5) of capacity
               1M, filled first, then steps of extend(256 items) +
               sample(256) + update_priority(256): loom's rl.replay_buffer
               (items gathered into an rl.tensordict), called through the C
               API as a C host calls it (and, for reference, through the
               Python package, whose per-call cost dominates), against
               torchrl's ReplayBuffer(LazyTensorStorage, PrioritizedSampler). Items:
               observation f32 [8], action i64 [1], reward f32 [1], done
               bool [1]. Unit: steps/s (x 256 items). Target >= 10x.
  memmap       a TensorDict of --size-mb (default 1024) MB in 1000 f32 leaves
               saved to a fresh directory and loaded back: loom's rl.td_save /
               from=load against TensorDict.memmap / load_memmap (both with
               2 threads) and torch.save / torch.load of the same tensors, on
               tmpfs (/dev/shm) and on disk ($TMPDIR or /var/tmp; --dir).
               No side fsyncs. Two loads: lazy (the files mapped, no byte
               read: loom map=private, load_memmap, torch.load(mmap=True))
               and to memory (a private copy of every byte: loom map=read,
               load_memmap + clone of each leaf, torch.load). Unit: GB/s of
               the save and of save + load, seconds of each phase, wall and
               CPU (the process's, every thread: the machine is shared, so
               wall time includes waiting for a core). The same run prints
               the machine's limits: write(2) of the same leaves into fresh
               files by one thread (the kernel's cost of the bytes, no
               format) and tools/bench/membw's memory read bandwidth.
               Targets >= 3x tensordict's memmap, >= 9x torch.save.

Timings: 2 threads on every side (torch.set_num_threads(2),
LOOM_NUM_THREADS=2); the page cache is not dropped between runs (all sides
write into it alike, and every load reads what the save left there). loom
runs in this process through the Python package (python/, ctypes over
libloom) from the build folder (--build, default build-release, else build).
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
THREADS = 2
CAPACITY = 1_000_000
BATCH = 256


def find_build(arg):
    for b in ([arg] if arg else []) + [os.environ.get("LOOM_BUILD_ROOT", ""), os.path.join(ROOT, "build-release"),
                                        os.path.join(ROOT, "build")]:
        if b and os.path.exists(os.path.join(b, "core", "libloom.so.0")) and \
                os.path.exists(os.path.join(b, "plugins", "rl", "rl.so")):
            return b
    sys.exit("td_replay: no build with core/libloom.so.0 and plugins/rl/rl.so (give --build)")


def setup_loom(build):
    os.environ["LOOM_LIBRARY"] = os.path.join(build, "core", "libloom.so.0")
    os.environ["LOOM_PLUGIN_PATH"] = os.path.join(build, "plugins", "rl")
    os.environ["LOOM_NUM_THREADS"] = str(THREADS)
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import loom
    loom.init()
    return loom


def tid(obj):
    """The id of an rl.tensordict (rl.td_id)."""
    return int(obj.td_id().numpy()[0])


def items(rng, n, torch):
    return {
        "observation": torch.from_numpy(rng.standard_normal((n, 8), dtype="float32")),
        "action": torch.from_numpy(rng.integers(0, 4, (n, 1))),
        "reward": torch.from_numpy(rng.standard_normal((n, 1), dtype="float32")),
        "done": torch.from_numpy(rng.random((n, 1)) < 0.01),
    }


class CApi:
    """The loom calls of the timed loop straight through libloom's C API
    (ctypes, as a C host makes them: attributes built once, op handles looked
    up once, the sampled index tensor handed to update_priority as it is),
    so the figure is the buffer's, not the Python package's per-call cost."""

    def __init__(self, ctypes_mod):
        C = ctypes_mod
        self.C = C
        lib = C.CDLL(os.environ["LOOM_LIBRARY"])
        self.lib = lib

        class CallOptions(C.Structure):
            _fields_ = [("struct_size", C.c_uint32), ("object", C.c_void_p), ("backend", C.c_char_p),
                        ("stream", C.c_void_p), ("num_threads", C.c_int32)]
        self.CallOptions = CallOptions
        lib.loom_op_find.restype = C.c_void_p
        lib.loom_op_find.argtypes = [C.c_char_p]
        lib.loom_attrs_new.argtypes = [C.POINTER(C.c_void_p)]
        lib.loom_attrs_set_int.argtypes = [C.c_void_p, C.c_char_p, C.c_int64]
        lib.loom_op_run.argtypes = [C.c_void_p, C.c_void_p, C.c_int32, C.c_void_p, C.c_void_p, C.c_int32, C.c_void_p]
        lib.loom_tensor_wrap.argtypes = [C.POINTER(C.c_void_p), C.c_void_p, C.c_int32, C.c_int32,
                                         C.POINTER(C.c_int64), C.c_void_p, C.c_void_p]
        lib.loom_tensor_free.argtypes = [C.c_void_p]
        lib.loom_last_error.restype = C.c_char_p

    def op(self, name):
        h = self.lib.loom_op_find(name.encode())
        assert h, name
        return h

    def attrs(self, **kv):
        a = self.C.c_void_p()
        assert self.lib.loom_attrs_new(self.C.byref(a)) == 0
        for k, v in kv.items():
            assert self.lib.loom_attrs_set_int(a, k.encode(), int(v)) == 0
        return a

    def options(self, obj):
        return self.CallOptions(self.C.sizeof(self.CallOptions), obj._ptr, None, None, 0)

    def wrap_f32(self, t):
        out = self.C.c_void_p()
        shape = (self.C.c_int64 * 1)(t.numel())
        assert self.lib.loom_tensor_wrap(self.C.byref(out), t.data_ptr(), 1, 1, shape, None, None) == 0
        return out

    def run(self, op, inputs, attrs, n_out, opts):
        outs = (self.C.c_void_p * max(n_out, 1))()
        ins = (self.C.c_void_p * max(len(inputs), 1))(*inputs)
        st = self.lib.loom_op_run(op, ins, len(inputs), attrs, outs, n_out, self.C.byref(opts))
        if st != 0:
            raise RuntimeError(self.lib.loom_last_error().decode())
        return outs


def bench_prioritized(loom, torch, steps):
    import numpy as np
    from tensordict import TensorDict
    from torchrl.data import LazyTensorStorage, PrioritizedSampler, ReplayBuffer

    rng = np.random.default_rng(0)
    fill = [items(rng, 65536, torch) for _ in range(CAPACITY // 65536 + 1)]
    batches = [items(rng, BATCH, torch) for _ in range(16)]
    prios = [torch.from_numpy(rng.random(BATCH, dtype="float32") * 4) for _ in range(16)]

    # torchrl
    rb = ReplayBuffer(storage=LazyTensorStorage(CAPACITY),
                      sampler=PrioritizedSampler(CAPACITY, alpha=0.7, beta=0.5), batch_size=BATCH)
    for f in fill:
        rb.extend(TensorDict(f, batch_size=[len(f["reward"])]))
    tds = [TensorDict(b, batch_size=[BATCH]) for b in batches]
    t0 = time.perf_counter()
    for i in range(steps):
        rb.extend(tds[i % 16])
        sample, info = rb.sample(BATCH, return_info=True)
        rb.update_priority(info["index"], prios[i % 16])
    t_ref = time.perf_counter() - t0

    # loom
    lrb = loom.Object("rl.replay_buffer", max_size=CAPACITY, sampler="prioritized", alpha=0.7, beta=0.5, seed=1)
    src = loom.Object("rl.tensordict", batch_size=[65536])
    for f in fill:
        n = len(f["reward"])
        if n != 65536:
            src = loom.Object("rl.tensordict", batch_size=[n])
        for k, v in f.items():
            src.td_set(v, key=k)
        lrb.rb_extend(source=tid(src))
    srcs = []
    for b in batches:
        s = loom.Object("rl.tensordict", batch_size=[BATCH])
        for k, v in b.items():
            s.td_set(v, key=k)
        srcs.append((s, tid(s)))
    dest = loom.Object("rl.tensordict")
    dest_id = tid(dest)
    import ctypes
    api = CApi(ctypes)
    op_extend, op_sample, op_update = api.op("rl.rb_extend"), api.op("rl.rb_sample"), api.op("rl.rb_update_priority")
    extend_attrs = [api.attrs(source=sid) for _, sid in srcs]
    sample_attrs = api.attrs(batch_size=BATCH, dest=dest_id)
    prio_t = [api.wrap_f32(p) for p in prios]
    opts = api.options(lrb)
    free = api.lib.loom_tensor_free
    t0 = time.perf_counter()
    for i in range(steps):
        free(api.run(op_extend, [], extend_attrs[i % 16], 1, opts)[0])
        index, weight = api.run(op_sample, [], sample_attrs, 2, opts)
        api.run(op_update, [index, prio_t[i % 16]], None, 0, opts)
        free(index)
        free(weight)
    t_loom = time.perf_counter() - t0
    # the same loop through the Python package (loom.Object methods), for reference
    t0 = time.perf_counter()
    for i in range(steps // 4):
        lrb.rb_extend(source=srcs[i % 16][1])
        index, weight = lrb.rb_sample(batch_size=BATCH, dest=dest_id)
        lrb.rb_update_priority(index, prios[i % 16])
    t_pkg = (time.perf_counter() - t0) / (steps // 4) * steps
    print(f"prioritized extend+sample+update_priority, capacity {CAPACITY}, batch {BATCH}, {steps} steps, "
          f"{THREADS} threads:")
    print(f"  loom    {steps / t_loom:10.0f} steps/s  ({t_loom / steps * 1e6:7.1f} us/step, "
          f"{steps * BATCH / t_loom:10.0f} items/s; C API calls)")
    print(f"  loom    {steps / t_pkg:10.0f} steps/s  ({t_pkg / steps * 1e6:7.1f} us/step; through the Python package, "
          f"{t_ref / t_pkg:.2f}x)")
    print(f"  torchrl {steps / t_ref:10.0f} steps/s  ({t_ref / steps * 1e6:7.1f} us/step)")
    print(f"  ratio   {t_ref / t_loom:10.2f} x  (target >= 10x)")


def timed(fn):
    """(wall s, process CPU s of every thread) of fn(), and its result."""
    w0, c0 = time.perf_counter(), time.process_time()
    r = fn()
    return time.perf_counter() - w0, time.process_time() - c0, r


def memmap_sides(loom, torch, leaves):
    """Per side: save(path), load lazily(path), load into private memory(path).

    Durability is the same on every side: no side calls fsync (loom's
    rl.td_save writes each leaf with write(2) from the tensor's memory;
    tensordict's memmap copies into a shared mapping of each file; torch.save
    writes one zip); when save returns the bytes are in the page cache.
    Lazy load maps the files (tensordict's load_memmap, loom's from=load with
    map=private, torch.load(mmap=True)); load to memory leaves a private copy
    of every byte in the process (torch.load; loom's map=read, a read(2) of
    each leaf; tensordict's load_memmap and a clone of every leaf)."""
    from tensordict import TensorDict

    td = TensorDict(leaves, batch_size=[256])
    ltd = loom.Object("rl.tensordict", batch_size=[256])
    for k, v in leaves.items():
        ltd.td_set(v, key=k)

    def td_mem(p):
        back = TensorDict.load_memmap(p)
        return {k: v.clone() for k, v in back.items()}

    return (
        ("loom", lambda p: ltd.td_save(path=p), lambda p: loom.Object("rl.tensordict", from_="load", path=p),
         lambda p: loom.Object("rl.tensordict", from_="load", path=p, map="read")),
        ("tensordict", lambda p: td.memmap(p, num_threads=THREADS), TensorDict.load_memmap, td_mem),
        ("torch.save", lambda p: torch.save(leaves, p), lambda p: torch.load(p, mmap=True), torch.load),
    )


def write_floor(leaves, d):
    """The kernel's own cost of writing these bytes: one open(O_EXCL) /
    write(2) / close per leaf into a fresh directory, one thread, no
    format work; (wall s, CPU s)."""
    os.mkdir(d)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC

    def run():
        for k, v in leaves.items():
            fd = os.open(os.path.join(d, k + ".memmap"), flags, 0o644)
            os.write(fd, memoryview(v.numpy()).cast("B"))
            os.close(fd)
    w, c, _ = timed(run)
    shutil.rmtree(d)
    return w, c


def memory_bandwidth(build):
    """tools/bench/membw's line (2 threads, 1 GiB read), when it was built."""
    exe = os.path.join(build, "tools", "bench", "membw")
    if not os.path.exists(exe):
        return "membw: not built"
    return os.popen(f"'{exe}' --threads {THREADS} --mib 1024 --passes 3 2>/dev/null").read().strip()


def bench_memmap(loom, torch, size_mb, base_dir, repeat, build):
    import numpy as np

    n_leaves = 1000
    per = size_mb * (1 << 20) // n_leaves // 4 // 256 * 256
    rng = np.random.default_rng(1)
    leaves = {f"leaf{i:04d}": torch.from_numpy(rng.standard_normal((256, per // 256), dtype="float32"))
              for i in range(n_leaves)}
    gb = sum(v.numel() * 4 for v in leaves.values()) / 1e9
    results = {}
    base = tempfile.mkdtemp(prefix="loom-bench-td-", dir=base_dir)
    try:
        for rep in range(repeat):
            # the sides take turns within each repetition (the machine's load shifts)
            for name, save, lazy, mem in memmap_sides(loom, torch, leaves):
                p = os.path.join(base, f"{name}-{rep}")
                row = [timed(lambda: save(p))[:2]]
                for load in (lazy, mem):
                    w, c, back = timed(lambda: load(p))
                    row.append((w, c))
                    if hasattr(back, "close"):
                        back.close()
                    del back
                results.setdefault(name, []).append(row)
                shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
            results.setdefault("floor", []).append(write_floor(leaves, os.path.join(base, f"floor-{rep}")))
    finally:
        shutil.rmtree(base, ignore_errors=True)

    def med(rows, phase, what):
        v = sorted(r[phase][what] for r in rows)
        return v[len(v) // 2]

    fs = os.popen(f"stat -f -c %T {base_dir}").read().strip()
    print(f"TensorDict memmap save + load, {gb:.2f} GB in {n_leaves} f32 leaves, {THREADS} threads, "
          f"in {base_dir} ({fs}), median of {repeat}; wall s (CPU s of the process, every thread):")
    floor = results.pop("floor")
    fw, fc = sorted(r[0] for r in floor)[len(floor) // 2], sorted(r[1] for r in floor)[len(floor) // 2]
    print(f"  machine: write(2) of the leaves into fresh files, 1 thread: {gb / fw:6.2f} GB/s {fw:7.3f} s ({fc:6.3f}); "
          f"{memory_bandwidth(build)}")
    tot = {}
    for name, rows in results.items():
        s, lz, lm = ((med(rows, i, 0), med(rows, i, 1)) for i in range(3))
        tot[name] = (s[0] + lz[0], s[0] + lm[0], s[1] + lz[1], s[1] + lm[1])
        print(f"  {name:11s} save {gb / s[0]:6.2f} GB/s {s[0]:7.3f} s ({s[1]:6.3f})  load lazy {lz[0]:7.4f} s "
              f"({lz[1]:6.4f})  load to memory {lm[0]:7.3f} s ({lm[1]:6.3f})  "
              f"save+load {gb / tot[name][0]:6.2f} / {gb / tot[name][1]:6.2f} GB/s")
    for ref, target in (("tensordict", 3), ("torch.save", 9)):
        r, o = tot[ref], tot["loom"]
        print(f"  ratio vs {ref:10s} save+load lazy {r[0] / o[0]:6.2f} x, to memory {r[1] / o[1]:6.2f} x; "
              f"by CPU s {r[2] / o[2]:6.2f} x, {r[3] / o[3]:6.2f} x (target >= {target}x)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build")
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--skip-memmap", action="store_true")
    ap.add_argument("--dir", action="append", help="where the memmap case writes (repeatable; default /dev/shm "
                    "when it is a tmpfs, and $TMPDIR or /var/tmp)")
    ap.add_argument("--repeat", type=int, default=3, help="memmap repetitions per directory (the median is shown)")
    ap.add_argument("--skip-prioritized", action="store_true")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(THREADS)
    build = find_build(args.build)
    loom = setup_loom(build)
    if not args.skip_prioritized:
        bench_prioritized(loom, torch, args.steps)
    if not args.skip_memmap:
        dirs = args.dir or [d for d in ("/dev/shm",) if os.path.isdir(d)] + \
            [os.environ.get("TMPDIR", "/var/tmp")]
        for d in dirs:
            bench_memmap(loom, torch, args.size_mb, d, args.repeat, build)


if __name__ == "__main__":
    main()
