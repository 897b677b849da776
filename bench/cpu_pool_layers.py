"""Inception-v3's (and DenseNet-121's) pooling layers one at a time, irforge's phases next to onnxruntime's whole
`session.run`, one thread, called alternately in one process (min of 60); with
`MODULE.ATTR=VALUE` arguments also a variant compiled with those module constants (e.g.
`irforge.backends.cpu.codegen.pool.ROW_AVG=False`: the general kernel). Outside CI:

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_pool_layers.py [M.A=V ...]

Each output is checked against onnxruntime first. The onnxruntime side includes the input and
output copies of `session.run`: its ratios flatter irforge; variant / default ones do not.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).parent))
from cpu_conv_layers import compile_with, phases_call  # noqa: E402
from irforge.frontends.onnx import import_onnx  # noqa: E402
from irforge.passes import apply_pipeline  # noqa: E402
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE  # noqa: E402

changes = []
for item in sys.argv[1:]:
    target, value = item.split("=", 1)
    module, attr = target.rsplit(".", 1)
    changes.append((module, attr, eval(value)))  # a bench's own command line: a Python expression
# (name, channels, input size, kernel, stride, pad, kind: 0 average without the pads counted,
# 1 max, 2 average with them)
CASES = [("inc 35 avg 192", 192, 35, 3, 1, 1, 0), ("inc 35 avg 256", 256, 35, 3, 1, 1, 0), ("inc 17 avg 768", 768, 17, 3, 1, 1, 0),
         ("inc 8 avg 1280", 1280, 8, 3, 1, 1, 0), ("inc 147 max s2", 64, 147, 3, 2, 0, 1), ("incl pad 35", 192, 35, 3, 1, 1, 2),
         ("densenet 56 avg 2x2 s2", 256, 56, 2, 2, 0, 0), ("densenet 28 avg 2x2 s2", 512, 28, 2, 2, 0, 0),
         ("densenet 14 avg 2x2 s2", 1024, 14, 2, 2, 0, 0)]
opts = ort.SessionOptions()
opts.intra_op_num_threads = 1
for name, c, s, k, st, p, kind in CASES:
    o = (s + 2 * p - k) // st + 1
    if kind == 1:
        node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[k, k], strides=[st, st], pads=[p] * 4)
    else:
        node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[k, k], strides=[st, st], pads=[p] * 4, count_include_pad=1 if kind == 2 else 0)
    g = helper.make_graph([node], "p", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, s, s])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, o, o])])
    proto = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    path = str(Path(tempfile.mkdtemp()) / "pool.onnx")
    onnx.save(proto, path)
    model = import_onnx(path)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    x = np.random.default_rng(0).standard_normal((1, c, s, s)).astype(np.float32)
    feeds = {"x": x}
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    ref = sess.run(None, feeds)[0]
    e = compile_with(model, [])
    np.testing.assert_allclose(e(feeds)["y"], ref, rtol=1e-5, atol=1e-5)
    calls = {"ir": phases_call(e, feeds), "ort": lambda: sess.run(None, feeds)}
    if changes:
        v = compile_with(model, changes)
        np.testing.assert_allclose(v(feeds)["y"], ref, rtol=1e-5, atol=1e-5)
        calls["var"] = phases_call(v, feeds)
    best = {k2: 1e9 for k2 in calls}
    for _ in range(60):
        for k2, f in calls.items():
            t0 = time.perf_counter()
            f()
            best[k2] = min(best[k2], time.perf_counter() - t0)
    print(f"{name:16} ir {best['ir']*1e3:.3f} ort {best['ort']*1e3:.3f} ms ir/ort {best['ir']/best['ort']:.2f}" +
          (f"  var {best['var']*1e3:.3f} var/ir {best['var']/best['ir']:.3f}" if changes else ""))
