#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write python/loom/ops.pyi from the op schemas of the packs libloom loads.

    LOOM_LIBRARY=build/core/libloom.so.0 python3 python/tools/gen_ops_stub.py [--check]

Run it against the build tree (whose libloom loads the build tree's packs
only) after a schema changes; --check exits 1 when the file is out of date.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import loom  # noqa: E402
from loom import _schema, _stubgen  # noqa: E402

STUB = os.path.join(os.path.dirname(HERE), "loom", "ops.pyi")


def main():
    loom.init()
    text = _stubgen.render(_schema.all_ops())
    if "--check" in sys.argv[1:]:
        with open(STUB, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{STUB} is out of date: run {sys.argv[0]}", file=sys.stderr)
                return 1
        return 0
    with open(STUB, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {STUB}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
