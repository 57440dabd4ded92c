#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden .npy files of tests/data/files/ with real NumPy, and one
safetensors file with the reference safetensors library.

tests/files/test_npy.c and test_safetensors.c load each file and check the
values listed here, so a change to a fixture needs the same change there. Run
from the repository root in the project venv (numpy, ml_dtypes, safetensors):

    .venv/bin/python tools/gen_npy_fixtures.py

The files are tiny (a few hundred bytes each) and are committed; the tests
need no Python.
"""
import io
import os
import sys

import numpy as np
import ml_dtypes
from safetensors.numpy import save_file

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "files")


def save(name, array, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, array, allow_pickle=False)
    else:
        np.lib.format.write_array(buf, array, version=version, allow_pickle=False)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(buf.getvalue())


def main():
    os.makedirs(OUT, exist_ok=True)
    # f32 (2, 3): -1.0, -0.5, 0.0, 0.5, 1.0, 1.5
    save("f32_2x3.npy", (np.arange(6, dtype="<f4") * 0.5 - 1.0).reshape(2, 3))
    # f64 (3, 4) stored in Fortran order; C-order values 0..11
    save("f64_fortran_3x4.npy", np.asfortranarray(np.arange(12, dtype="<f8").reshape(3, 4)))
    # big-endian i64: -2 .. 2
    save("i64_be.npy", np.arange(5, dtype=">i8") - 2)
    # big-endian i16 (2, 3) in Fortran order: C-order values -3 .. 2
    save("i16_be_fortran_2x3.npy", np.asfortranarray((np.arange(6, dtype=">i2") - 3).reshape(2, 3)))
    # c64: 1+2j, -3.5+0.25j ; c128 big-endian: 1e300-1j
    save("c64.npy", np.array([1 + 2j, -3.5 + 0.25j], dtype="<c8"))
    save("c128_be.npy", np.array([1e300 - 1j], dtype=">c16"))
    # f16: 1, -2, 0.5, 65504
    save("f16.npy", np.array([1, -2, 0.5, 65504], dtype="<f2"))
    # bool: True, False, True ; u8 0-d scalar 7 ; i8: -128, 127
    save("bool.npy", np.array([True, False, True]))
    save("u8_scalar.npy", np.array(7, dtype=np.uint8))
    save("i8.npy", np.array([-128, 127], dtype=np.int8))
    # empty f32 (0, 3)
    save("f32_empty_0x3.npy", np.zeros((0, 3), dtype="<f4"))
    # ml_dtypes writes '<V2' / '<V1': bf16 1, -2, 0.5 (0x3f80 0xc000 0x3f00);
    # f8e4m3fn 1, -2, 0.5, 448 (0x38 0xc0 0x30 0x7e)
    save("bf16_ml_dtypes.npy", np.array([1, -2, 0.5], dtype=ml_dtypes.bfloat16))
    save("f8e4m3_ml_dtypes.npy", np.array([1, -2, 0.5, 448], dtype=ml_dtypes.float8_e4m3fn))
    # format versions 2.0 and 3.0 of i32 (2, 2): 1, 2, 3, 4
    save("i32_v2.npy", np.array([[1, 2], [3, 4]], dtype="<i4"), version=(2, 0))
    save("i32_v3.npy", np.array([[1, 2], [3, 4]], dtype="<i4"), version=(3, 0))
    # safetensors written by the reference library (which orders tensors by
    # alignment, then name): weight f32 (2, 3) = 0, 0.25 .. 1.25;
    # bias i64 = -1, 2; mask u8 = 1, 0, 1; metadata {"format": "pt"}
    save_file({"weight": (np.arange(6, dtype="<f4") * 0.25).reshape(2, 3),
               "bias": np.array([-1, 2], dtype="<i8"),
               "mask": np.array([1, 0, 1], dtype=np.uint8)},
              os.path.join(OUT, "reference.safetensors"), metadata={"format": "pt"})
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"wrote {len(os.listdir(OUT))} files, {total} bytes, numpy {np.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
