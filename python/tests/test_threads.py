# SPDX-License-Identifier: BSD-3-Clause
"""Calls release the GIL: 4 Python threads run loom ops at once, each with
its own results and its own dispatch record."""
import ctypes
import threading

import numpy as np

import loom
from conftest import random_boxes


def test_four_threads_at_once():
    rng = np.random.default_rng(5)
    inputs = [(random_boxes(rng, 300), rng.random(300).astype(np.float32)) for _ in range(4)]
    want = [loom.ops.vision.nms(b, s, iou_threshold=0.5) for b, s in inputs]
    start = threading.Barrier(4)
    errors, records = [], [None] * 4

    def work(i):
        try:
            start.wait()
            b, s = inputs[i]
            for _ in range(50):
                np.testing.assert_array_equal(loom.ops.vision.nms(b, s, iou_threshold=0.5), want[i])
                iou = loom.ops.vision.box_iou(b, b)
                assert iou.shape == (300, 300)
            records[i] = loom.last_dispatch()["op"]
        except BaseException as e:          # noqa: reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert records == ["vision.box_iou"] * 4


def test_gil_is_released_during_a_call():
    # another thread runs Python code while this one is inside one long loom call:
    # with the GIL held for the call, none of its timestamps could fall inside it
    import time
    assert not loom._lib.lib._func_flags_ & ctypes._FUNCFLAG_PYTHONAPI      # CDLL, not PyDLL
    b = random_boxes(np.random.default_rng(6), 3000)
    stamps = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            stamps.append(time.perf_counter())
    t = threading.Thread(target=tick)
    t.start()
    time.sleep(0.01)
    inside = 0
    for _ in range(5):
        start = time.perf_counter()
        loom.ops.vision.box_iou(b, b)
        end = time.perf_counter()
        if end - start > 0.005:
            inside += sum(1 for s in stamps[-100000:] if start + 0.001 < s < end - 0.001)
    done.set()
    t.join()
    assert inside > 0
