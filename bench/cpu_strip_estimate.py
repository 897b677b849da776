"""What a row-block fusion of an expand 1x1 -> stride-2 depthwise pair could gain, measured
before building it: the pair (Conv 1x1 + ReLU -> depthwise 3x3 stride 2 + ReLU) compiled on the
whole plane against the same pair on a strip of `--rows` input rows, scaled by the strips in
the plane. On a strip the expansion's output (e.g. 8 rows x 112 x 96 channels: 344 KiB) stays
in L2 between the two phases, as a fused phase's row block would keep it; on the whole plane it
goes through L3 (MobileNetV2's 112x112 x 96: 4.7 MiB). Both in CPU time of the process, each
phase's minimum over rounds that alternate the two compilations.

Outside CI (the zoo venv):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_strip_estimate.py [--rows 8] [--rounds 60]

A ratio (strips / whole) near 1 says the pair is not bound by the round trip through L3, so
the fusion would not pay (docs/STATUS.md, session 16).
"""

from __future__ import annotations

import argparse
import ctypes
import tempfile
import time
from pathlib import Path

import numpy as np

CASES = [
    # (input channels, expanded channels, height = width): MobileNetV2's 112 -> 56 and 56 -> 28
    # pairs, MnasNet's 112x112 one, MobileNetV3's 56x56 one
    (16, 96, 112),
    (24, 144, 56),
    (16, 48, 112),
    (24, 72, 56),
]

_KERNEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def pair_model(cin: int, cexp: int, h: int, w: int):  # type: ignore[no-untyped-def]
    """The expand -> stride-2 depthwise pair on a [1, cin, h, w] input (ONNX) and its feeds."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((cexp, cin, 1, 1)) / np.sqrt(cin)).astype(np.float32)
    w2 = (rng.standard_normal((cexp, 1, 3, 3)) / 3).astype(np.float32)
    b1, b2 = (rng.standard_normal(cexp).astype(np.float32) * 0.1 for _ in range(2))
    oh, ow = (h - 1) // 2 + 1, (w - 1) // 2 + 1
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["e"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["e"], ["r"]),
             helper.make_node("Conv", ["r", "w2", "b2"], ["d"], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4, group=cexp),
             helper.make_node("Relu", ["d"], ["y"])]
    graph = helper.make_graph(nodes, "pair", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, h, w])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, cexp, oh, ow])],
                              [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    return proto, {"x": rng.standard_normal((1, cin, h, w)).astype(np.float32)}


def compiled_phases(proto, feeds, path: Path):  # type: ignore[no-untyped-def]
    """(compiled model, [(entry, table, tag)] of its phases), bound to `feeds`' arrays in place:
    the caller keeps `feeds` alive while it calls them."""
    import onnx

    from irforge.backends.cpu import compile_model
    from irforge.frontends.onnx import import_onnx
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    onnx.save(proto, str(path))
    model = import_onnx(str(path))
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    compiled = compile_model(model, threads=1, cache_dir=False)
    compiled(feeds)
    ex = compiled._executable
    return compiled, [(_KERNEL(ex.jit.address(p.function)), t.ctypes.data, p.tag or "other") for p, t in zip(ex.program.phases, ex.tables)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=8, help="input rows of a strip")
    ap.add_argument("--rounds", type=int, default=60)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="strip-estimate-") as tmp:
        for cin, cexp, hw in CASES:
            whole_model, whole_feeds = pair_model(cin, cexp, hw, hw)
            strip_model, strip_feeds = pair_model(cin, cexp, args.rows, hw)
            whole, whole_calls = compiled_phases(whole_model, whole_feeds, Path(tmp) / "whole.onnx")
            strip, strip_calls = compiled_phases(strip_model, strip_feeds, Path(tmp) / "strip.onnx")
            best = {id(c): float("inf") for c in whole_calls + strip_calls}
            for r in range(args.rounds):
                for calls in (whole_calls, strip_calls) if r % 2 == 0 else (strip_calls, whole_calls):
                    for call in calls:
                        fn, table, _ = call
                        t0 = time.process_time_ns()
                        fn(table, 0, 1)
                        best[id(call)] = min(best[id(call)], (time.process_time_ns() - t0) * 1e-6)
            scale = hw / args.rows
            w = [(tag, best[id(c)]) for c in whole_calls for tag in [c[2]]]
            s = [(tag, best[id(c)] * scale) for c in strip_calls for tag in [c[2]]]
            total_w, total_s = sum(t for _, t in w), sum(t for _, t in s)
            print(f"{cin}->{cexp} {hw}x{hw}: whole {' + '.join(f'{tag} {t:.3f}' for tag, t in w)} = {total_w:.3f} ms; "
                  f"strips of {args.rows} rows x {scale:g}: {' + '.join(f'{tag} {t:.3f}' for tag, t in s)} = {total_s:.3f} ms; "
                  f"strips / whole {total_s / total_w:.3f}", flush=True)
            whole.close()
            strip.close()


if __name__ == "__main__":
    main()
