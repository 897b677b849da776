"""Findings of session 13 (session 12's open leftovers, and fuzz_session12_ops.py's seeds of
session 12's code, mutated): each input that gave a number other than onnxruntime's, a crash,
an internal error or a multi-line error is now onnxruntime's number or a one-line coded
error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

from irforge.frontends.onnx import import_onnx

ROOT = Path(__file__).resolve().parents[2]

_CUT_UNDER_A_HIT = """
import os, sys
from pathlib import Path
import numpy as np, onnx
from onnx import TensorProto as T, helper
from irforge.backends.cpu import compile_model
from irforge.frontends.onnx import import_onnx

w = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float32)
graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", T.FLOAT, [4, 64])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [4, 64])], [onnx.numpy_helper.from_array(w, "w")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
x = np.ones((4, 64), np.float32)
cache = Path(sys.argv[1])
compile_model(import_onnx(model), threads=1, cache_dir=cache).close()
compiled = compile_model(import_onnx(model), threads=1, cache_dir=cache)
assert compiled.stats.program_cached
bins = list(cache.glob("p*.bin"))
assert bins
for path in bins:
    os.truncate(path, 0)  # another program cuts the entry under this process's hit
got = compiled({"x": x})["y"]
np.testing.assert_allclose(got, x @ w, rtol=1e-5, atol=1e-4)
print("same numbers")
"""


def test_a_cache_entry_cut_under_a_running_process_does_not_crash_it(tmp_path) -> None:
    """A program-cache hit mapped its `.bin` (privately): cut in place by another program
    after the load, the next run died of SIGBUS (truncation unmaps even a private mapping's
    copied pages). A hit now reads the region into its own memory; the run gives the same
    numbers. (In a child process: before the fix the signal would take pytest down.)"""
    done = subprocess.run([sys.executable, "-c", _CUT_UNDER_A_HIT, str(tmp_path / "cache")], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert done.returncode == 0 and "same numbers" in done.stdout, (done.returncode, done.stderr[-2000:])
