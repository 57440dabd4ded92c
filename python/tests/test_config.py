# SPDX-License-Identifier: BSD-3-Clause
"""loom.init's options and the environment, the dispatch record, doctor."""
import warnings

import numpy as np

import loom
from conftest import run_python


def test_last_dispatch_is_a_dict():
    x = np.ones(3, np.float32)
    loom.ops.core.add(x, x)
    d = loom.last_dispatch()
    assert d["op"] == "core.add" and d["backend"] == "cpu" and d["fallback"] is False
    assert d["impl"] and d["text"].startswith("dispatch core.add")


def test_doctor_reports_the_packs():
    text = loom.doctor()
    for section in ("configuration:", "devices:", "plugin search directories, in order:", "files seen:",
                    "dependencies:"):
        assert section in text
    assert "pack vision" in text and "pack fbgemm" in text


def test_init_twice_warns_about_ignored_options():
    loom.init()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        loom.init(num_threads=3)
    assert any("ignored" in str(x.message) for x in w)


def test_init_options_reach_the_core():
    out = run_python("import loom\n"
                     "loom.init(num_threads=3, strict=True)\n"
                     "print(loom._lib.lib.loom_num_threads())\n"
                     "print([l for l in loom.doctor().splitlines() if 'LOOM_STRICT' in l][0])\n").stdout
    lines = out.splitlines()
    assert lines[0] == "3" and "LOOM_STRICT=1" in lines[1]


def test_environment_works_as_in_c():
    out = run_python("import loom\nloom.init()\nprint(loom._lib.lib.loom_num_threads())\n",
                     env={"LOOM_NUM_THREADS": "2"}).stdout
    assert out.strip() == "2"


def test_plugin_path_and_no_default_dirs():
    out = run_python("import loom\n"
                     "loom.init(plugin_path=['/nonexistent-dir'], no_default_dirs=True)\n"
                     "print(dir(loom.ops))\n").stdout
    assert out.strip() == "[]"


def test_bad_init_values_are_refused():
    out = run_python("import loom\n"
                     "try:\n    loom.init(num_threads=0)\nexcept ValueError as e:\n    print(e)\n").stdout
    assert "num_threads must be a positive int" in out
