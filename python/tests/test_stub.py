# SPDX-License-Identifier: BSD-3-Clause
"""loom/ops.pyi is what python/tools/gen_ops_stub.py makes from the build
tree's schemas, and py.typed ships with it."""
import ast
import os

import loom
from loom import _schema, _stubgen
from conftest import PYTHON_DIR


def test_stub_is_up_to_date():
    path = os.path.join(PYTHON_DIR, "loom", "ops.pyi")
    with open(path, encoding="utf-8") as f:
        committed = f.read()
    loom.init()
    assert committed == _stubgen.render(_schema.all_ops()), \
        "loom/ops.pyi is stale: run LOOM_LIBRARY=build/core/libloom.so.0 python3 python/tools/gen_ops_stub.py"


def test_stub_parses_and_lists_every_op():
    with open(os.path.join(PYTHON_DIR, "loom", "ops.pyi"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    classes = {n.name: {m.name for m in n.body if isinstance(m, ast.FunctionDef)}
               for n in tree.body if isinstance(n, ast.ClassDef)}
    for op in _schema.all_ops():
        assert op.short_name in classes[op.domain]
    assert os.path.exists(os.path.join(PYTHON_DIR, "loom", "py.typed"))
