#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Where each call ran and why: a loop over a few ops, printing the dispatch
record after each (loom.last_dispatch(), the LOOM_VERBOSE=2 line as a dict).
Try it with LOOM_BACKENDS=... to see the policy at work.

    LOOM_LIBRARY=build/core/libloom.so.0 PYTHONPATH=python python3 examples/python/dispatch_record.py
"""
import numpy as np

import loom

rng = np.random.default_rng(0)
xy = rng.random((64, 2)).astype(np.float32) * 100
boxes = np.concatenate([xy, xy + 10], axis=1)
a = rng.standard_normal((64, 32)).astype(np.float32)
calls = [
    ("vision.box_iou", lambda: loom.ops.vision.box_iou(boxes, boxes)),
    ("vision.nms", lambda: loom.ops.vision.nms(boxes, rng.random(64).astype(np.float32), iou_threshold=0.5)),
    ("core.matmul f32", lambda: loom.ops.core.matmul(a, a.T.copy())),
    ("core.matmul f64", lambda: loom.ops.core.matmul(a.astype(np.float64), a.T.astype(np.float64))),
    ("core.add i64", lambda: loom.ops.core.add(np.arange(8), np.arange(8))),
]
for what, call in calls:
    call()
    d = loom.last_dispatch()
    print(f"{what:<16} -> {d['backend']} ({d['impl']}){' after a fallback' if d['fallback'] else ''}")
    print(f"{'':<16}    {d['text']}")
