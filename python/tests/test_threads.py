# SPDX-License-Identifier: BSD-3-Clause
"""Calls release the GIL: 4 Python threads run loom ops at once, each with
its own results and its own dispatch record."""
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
    # while one thread is inside a long loom call, another runs Python code
    b = random_boxes(np.random.default_rng(6), 2000)
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)
    t = threading.Thread(target=count)
    t.start()
    before = len(ticks)
    for _ in range(5):
        loom.ops.vision.box_iou(b, b)
    after = len(ticks)
    done.set()
    t.join()
    assert after > before
