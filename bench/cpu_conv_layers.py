"""ResNet-50's distinct convolutions one at a time (Conv + bias + ReLU), irforge next to
onnxruntime, one thread, called alternately in one process: per layer the minimum and median
time, GFLOP/s (direct-convolution flops) and the ratio irforge / onnxruntime; and, with
`--ab MODULE.ATTR=VALUE` (repeatable), irforge's default against a variant compiled with that module
constant changed (e.g. `irforge.backends.cpu.codegen.gemm.NC_PANELS=4`), alternating too.

Outside CI (the zoo venv; the machine may be shared: read ratios, record `uptime`):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_conv_layers.py [--rounds 40] [--only 1x1] [--ab M.A=V]

`--depthwise` / `--pointwise` run EfficientNet's / MobileNet's depthwise and 1x1 shapes instead
(`--large`: 1x1 layers over planes too large to pack whole, `--lraspp`: LR-ASPP's large planes),
`--act swish|hswish` puts that activation after each convolution. The onnxruntime side is a
whole `session.run` (input/output copies: ~0.07 ms for an 800 KB tensor), which flatters
irforge's ratio on layers under ~0.5 ms; variant / default A/Bs are not affected.

The peak to compare GFLOP/s with is 2 FMA x 8 lanes x 2 flops per cycle: ~100 GFLOP/s at
this EPYC host's ~3.1 GHz (12 independent FMA chains measured 76 at load 2.9; the best
GEMMs here reach 96).
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

# (name, C_in, C_out, kernel, stride, input size): every distinct convolution of ResNet-50
# (torchvision v1.5: the stride on the 3x3), with the number of times it occurs
LAYERS = [
    ("stem 7x7 s2", 3, 64, 7, 2, 224, 1),
    ("56 1x1 64->64", 64, 64, 1, 1, 56, 1),
    ("56 3x3 64", 64, 64, 3, 1, 56, 3),
    ("56 1x1 64->256", 64, 256, 1, 1, 56, 4),
    ("56 1x1 256->64", 256, 64, 1, 1, 56, 2),
    ("56 1x1 256->128", 256, 128, 1, 1, 56, 1),
    ("56 3x3 128 s2", 128, 128, 3, 2, 56, 1),
    ("56 1x1 256->512 s2", 256, 512, 1, 2, 56, 1),
    ("28 1x1 128->512", 128, 512, 1, 1, 28, 4),
    ("28 1x1 512->128", 512, 128, 1, 1, 28, 3),
    ("28 3x3 128", 128, 128, 3, 1, 28, 3),
    ("28 1x1 512->256", 512, 256, 1, 1, 28, 1),
    ("28 3x3 256 s2", 256, 256, 3, 2, 28, 1),
    ("28 1x1 512->1024 s2", 512, 1024, 1, 2, 28, 1),
    ("14 1x1 256->1024", 256, 1024, 1, 1, 14, 6),
    ("14 1x1 1024->256", 1024, 256, 1, 1, 14, 5),
    ("14 3x3 256", 256, 256, 3, 1, 14, 5),
    ("14 1x1 1024->512", 1024, 512, 1, 1, 14, 1),
    ("14 3x3 512 s2", 512, 512, 3, 2, 14, 1),
    ("14 1x1 1024->2048 s2", 1024, 2048, 1, 2, 14, 1),
    ("7 1x1 512->2048", 512, 2048, 1, 1, 7, 3),
    ("7 1x1 2048->512", 2048, 512, 1, 1, 7, 2),
    ("7 3x3 512", 512, 512, 3, 1, 7, 2),
]
EXTRA = [
    # (`--extra`) other models' shapes, not in the ResNet-50 total: ResNeXt-50's grouped 3x3
    # (32 groups), RegNetY-800MF's (groups of 16 channels), Inception-v3's 1x7 / 7x1
    ("resnext 56 3x3 g32", 128, 128, 3, 1, 56, 0, 32, None),
    ("resnext 28 3x3 g32 s2", 512, 512, 3, 2, 56, 0, 32, None),
    ("resnext 56>28 256 g32 s2", 256, 256, 3, 2, 56, 0, 32, None),
    ("resnext 28 256 g32", 256, 256, 3, 1, 28, 0, 32, None),
    ("resnext 28>14 512 g32 s2", 512, 512, 3, 2, 28, 0, 32, None),
    ("resnext 14 512 g32", 512, 512, 3, 1, 14, 0, 32, None),
    ("resnext 14>7 1024 g32 s2", 1024, 1024, 3, 2, 14, 0, 32, None),
    ("resnext 7 1024 g32", 1024, 1024, 3, 1, 7, 0, 32, None),
    ("resnext 1x1 56 256->128", 256, 128, 1, 1, 56, 0, 1, None),
    ("resnext 1x1 56 128->256", 128, 256, 1, 1, 56, 0, 1, None),
    ("resnext 1x1 28 512->256", 512, 256, 1, 1, 28, 0, 1, None),
    ("resnext 1x1 28 256->512", 256, 512, 1, 1, 28, 0, 1, None),
    ("resnext 1x1 14 1024->512", 1024, 512, 1, 1, 14, 0, 1, None),
    ("resnext 1x1 14 512->1024", 512, 1024, 1, 1, 14, 0, 1, None),
    ("resnext 1x1 7 2048->1024", 2048, 1024, 1, 1, 7, 0, 1, None),
    ("resnext 1x1 7 1024->2048", 1024, 2048, 1, 1, 7, 0, 1, None),
    ("regnet 28 3x3 g9", 144, 144, 3, 1, 28, 0, 9, None),
    ("regnet 14 3x3 g20", 320, 320, 3, 1, 14, 0, 20, None),
    ("inception 17 1x7", 128, 128, 1, 1, 17, 0, 1, (1, 7)),
    ("inception 17 7x1", 128, 192, 1, 1, 17, 0, 1, (7, 1)),
]
DEPTHWISE = [
    # (`--depthwise`) EfficientNet-B0's / MobileNetV3's depthwise shapes (groups = channels)
    ("dw 112 3x3 32", 32, 32, 3, 1, 112, 0, 32, None),
    ("dw 112 3x3 96 s2", 96, 96, 3, 2, 112, 0, 96, None),
    ("dw 56 3x3 144", 144, 144, 3, 1, 56, 0, 144, None),
    ("dw 56 5x5 144 s2", 144, 144, 5, 2, 56, 0, 144, None),
    ("dw 28 5x5 240", 240, 240, 5, 1, 28, 0, 240, None),
    ("dw 28 3x3 240 s2", 240, 240, 3, 2, 28, 0, 240, None),
    ("dw 14 3x3 480", 480, 480, 3, 1, 14, 0, 480, None),
    ("dw 14 5x5 672", 672, 672, 5, 1, 14, 0, 672, None),
    ("dw 14 5x5 672 s2", 672, 672, 5, 2, 14, 0, 672, None),
    ("dw 7 5x5 1152", 1152, 1152, 5, 1, 7, 0, 1152, None),
    ("dw 7 3x3 1152", 1152, 1152, 3, 1, 7, 0, 1152, None),
    # MobileNetV2's / MnasNet's other shapes
    ("dw 56 3x3 144 s2", 144, 144, 3, 2, 56, 0, 144, None),
    ("dw 28 3x3 192", 192, 192, 3, 1, 28, 0, 192, None),
    ("dw 28 5x5 120", 120, 120, 5, 1, 28, 0, 120, None),
    ("dw 14 3x3 576 s2", 576, 576, 3, 2, 14, 0, 576, None),
    ("dw 7 3x3 960", 960, 960, 3, 1, 7, 0, 960, None),
]

POINTWISE = [
    # (`--pointwise`) EfficientNet-B0's 1x1 expansions (Swish after them) and projections
    ("pw 112 16->16", 16, 16, 1, 1, 112, 0),
    ("pw 112 16->64", 16, 64, 1, 1, 112, 0),
    ("pw 112 32->16", 32, 16, 1, 1, 112, 0),
    ("pw 112 16->96", 16, 96, 1, 1, 112, 0),
    ("pw 56 24->144", 24, 144, 1, 1, 56, 0),
    ("pw 112 16->48", 16, 48, 1, 1, 112, 0),  # MnasNet's
    ("pw 56 24->72", 24, 72, 1, 1, 56, 0),  # MobileNetV3's
    ("pw 28 40->120", 40, 120, 1, 1, 28, 0),
    ("pw 28 40->240", 40, 240, 1, 1, 28, 0),
    ("pw 14 80->480", 80, 480, 1, 1, 14, 0),
    ("pw 14 112->672", 112, 672, 1, 1, 14, 0),
    ("pw 7 192->1152", 192, 1152, 1, 1, 7, 0),
    ("pw 56 144->24", 144, 24, 1, 1, 56, 0),
    ("pw 14 672->112", 672, 112, 1, 1, 14, 0),
    ("pw 7 1152->192", 1152, 192, 1, 1, 7, 0),
]

LRASPP = [
    # (`--lraspp`) LR-ASPP MobileNetV3-Large's layers on its 520x520 input's large planes
    ("lr 260 1x1 16->16", 16, 16, 1, 1, 260, 0),
    ("lr 260 1x1 16->64", 16, 64, 1, 1, 260, 0),
    ("lr 260 dw 3x3 16", 16, 16, 3, 1, 260, 0, 16, None),
    ("lr 260 dw 3x3 64 s2", 64, 64, 3, 2, 260, 0, 64, None),
    ("lr 130 1x1 64->24", 64, 24, 1, 1, 130, 0),
    ("lr 130 1x1 24->72", 24, 72, 1, 1, 130, 0),
    ("lr 130 dw 3x3 72", 72, 72, 3, 1, 130, 0, 72, None),
    ("lr 130 1x1 72->24", 72, 24, 1, 1, 130, 0),
    ("lr 65 1x1 40->120", 40, 120, 1, 1, 65, 0),
    ("lr 130 dw 5x5 72 s2", 72, 72, 5, 2, 130, 0, 72, None),
    ("lr 65 dw 5x5 120", 120, 120, 5, 1, 65, 0, 120, None),
    ("lr 65 dw 3x3 240 s2", 240, 240, 3, 2, 65, 0, 240, None),
    ("lr 33 dw 3x3 200", 200, 200, 3, 1, 33, 0, 200, None),
    ("lr 33 dw 3x3 672", 672, 672, 3, 1, 33, 0, 672, None),
    ("lr 33 dw 5x5 672 d2", 672, 672, 5, 1, 33, 0, 672, None, 2),
    ("lr 33 dw 5x5 960 d2", 960, 960, 5, 1, 33, 0, 960, None, 2),
    ("lr 33 1x1 160->960", 160, 960, 1, 1, 33, 0),
    ("lr 33 1x1 960->160", 960, 160, 1, 1, 33, 0),
]

LARGE = [
    # (`--large`) 1x1 layers over planes too large to pack whole (over `linear.PACK_UNALIGNED_MAX`
    # positions): ResNet / FCN / DeepLab stages at 1024 px (256 x 256: rows 256 KiB apart) and
    # a 250 x 250 plane (rows unaligned); 128 x 128, 120 x 120 (read in place) and 64 x 64 as controls
    ("big 256 1x1 64->64", 64, 64, 1, 1, 256, 0),
    ("big 256 1x1 64->256", 64, 256, 1, 1, 256, 0),
    ("big 256 1x1 256->64", 256, 64, 1, 1, 256, 0),
    ("big 256 1x1 256->256", 256, 256, 1, 1, 256, 0),
    ("big 250 1x1 128->128", 128, 128, 1, 1, 250, 0),
    ("big 160 1x1 128->128", 128, 128, 1, 1, 160, 0),
    ("big 128 1x1 256->256", 256, 256, 1, 1, 128, 0),
    ("big 120 1x1 256->256", 256, 256, 1, 1, 120, 0),
    ("big 64 1x1 256->256", 256, 256, 1, 1, 64, 0),
]

ACTIVATION = "relu"
"""the activation after each convolution (`--act`): relu, swish (Sigmoid * x: onnxruntime
runs it as QuickGelu) or hswish (HardSwish)"""


def _activation(name: str):  # type: ignore[no-untyped-def]
    from onnx import helper

    if ACTIVATION == "swish":
        return [helper.make_node("Sigmoid", ["c"], ["s"]), helper.make_node("Mul", ["c", "s"], [name])]
    if ACTIVATION == "hswish":
        return [helper.make_node("HardSwish", ["c"], [name])]
    return [helper.make_node("Relu", ["c"], [name])]


def conv_model(cin: int, cout: int, k: int, stride: int, size: int, group: int = 1, window: tuple[int, int] | None = None,  # type: ignore[no-untyped-def]
               dilation: int = 1):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    kh, kw = window or (k, k)
    pads = [dilation * (kh // 2), dilation * (kw // 2)] * 2
    oh, ow = ((size + 2 * dilation * (kk // 2) - dilation * (kk - 1) - 1) // stride + 1 for kk in (kh, kw))
    w = (rng.standard_normal((cout, cin // group, kh, kw)) / np.sqrt(cin // group * kh * kw)).astype(np.float32)
    b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[kh, kw], strides=[stride] * 2, pads=pads, group=group,
                          dilations=[dilation] * 2),
         *_activation("y")],
        "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, cout, oh, ow])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(proto)
    flops = 2 * cout * cin // group * kh * kw * oh * ow
    return proto, {"x": rng.standard_normal((1, cin, size, size)).astype(np.float32)}, flops


_KERNEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def phases_call(compiled, feeds):  # type: ignore[no-untyped-def]
    """A callable running the compiled model's phases only (no input/output copies)."""
    compiled(feeds)
    ex = compiled._executable
    calls = [(_KERNEL(ex.jit.address(p.function)), t.ctypes.data) for p, t in zip(ex.program.phases, ex.tables)]

    def run() -> None:
        for fn, table in calls:
            fn(table, 0, 1)
    return run


def compile_with(model, changes: list[tuple[str, str, object]]):  # type: ignore[no-untyped-def]
    from irforge.backends.cpu import compile_model

    saved = []
    for module_name, attr, value in changes:
        module = importlib.import_module(module_name)
        saved.append((module, attr, getattr(module, attr)))
        setattr(module, attr, value)
    try:
        return compile_model(model, threads=1, cache_dir=False)
    finally:
        for module, attr, old in reversed(saved):
            setattr(module, attr, old)


def parse_ab(items: list[str]) -> list[tuple[str, str, object]]:
    """`--ab MODULE.ATTR=VALUE` items as (module, attribute, value) changes for `compile_with`."""
    change = []
    for item in items:
        target, value = item.split("=", 1)
        module, attr = target.rsplit(".", 1)
        change.append((module, attr, eval(value)))  # a bench's own command line: a Python expression
    return change


def layer_engines(proto, feeds, path: Path, change, opts):  # type: ignore[no-untyped-def]
    """One layer's model `proto` saved at `path`, compiled by irforge (and, with `change`, as
    the variant) and run by onnxruntime: (compiled engines, phase-only callables by label),
    every engine's output checked against onnxruntime's first."""
    import onnx
    import onnxruntime as ort

    from irforge.frontends.onnx import import_onnx
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    onnx.save(proto, str(path))
    model = import_onnx(str(path))
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    engines = {"irforge": compile_with(model, [])}
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    reference = session.run(None, feeds)[0]
    calls = {"irforge": phases_call(engines["irforge"], feeds), "ort": lambda: session.run(None, feeds)}
    if change:
        engines["variant"] = compile_with(model, change)
        np.testing.assert_allclose(engines["variant"](feeds)["y"], reference, rtol=1e-3, atol=1e-3)
        calls["variant"] = phases_call(engines["variant"], feeds)
    np.testing.assert_allclose(engines["irforge"](feeds)["y"], reference, rtol=1e-3, atol=1e-3)
    return engines, calls


def report_line(name: str, width: int, count: int, flops: int, times: dict[str, list[float]],
                totals: dict[str, float], change) -> str:  # type: ignore[no-untyped-def]
    """One layer's row (minimum times, GF/s, ratios); adds its weighted minima to `totals`."""
    lo = {label: min(t) for label, t in times.items()}
    med = {label: statistics.median(t) for label, t in times.items()}
    for label in totals:
        totals[label] += lo.get(label, 0.0) * count
    line = (f"{name:{width}} {count:2d} {lo['irforge'] * 1e3:7.3f} {flops / lo['irforge'] / 1e9:5.1f} "
            f"{lo['ort'] * 1e3:7.3f} {flops / lo['ort'] / 1e9:5.1f} {lo['irforge'] / lo['ort']:6.2f}")
    if change:
        line += f"  {lo['variant'] * 1e3:9.3f}  {lo['variant'] / lo['irforge']:6.3f} (median {med['variant'] / med['irforge']:.3f})"
    return line


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--only", default="", help="substring of the layer names to run")
    ap.add_argument("--extra", action="store_true", help="also other models' layer shapes (EXTRA)")
    ap.add_argument("--act", default="relu", choices=["relu", "swish", "hswish"], help="the activation after each convolution")
    ap.add_argument("--pointwise", action="store_true", help="EfficientNet's 1x1 shapes only (POINTWISE)")
    ap.add_argument("--depthwise", action="store_true", help="depthwise shapes only (DEPTHWISE)")
    ap.add_argument("--lraspp", action="store_true", help="LR-ASPP's large-plane shapes only (LRASPP)")
    ap.add_argument("--large", action="store_true", help="1x1 layers over planes too large to pack whole only (LARGE)")
    ap.add_argument("--ab", action="append", default=[], help="MODULE.ATTR=VALUE (repeatable): a variant compiled with these")
    args = ap.parse_args()
    global ACTIVATION
    ACTIVATION = args.act
    import onnxruntime as ort

    change = parse_ab(args.ab)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    totals = {"irforge": 0.0, "ort": 0.0, "variant": 0.0}
    print(f"{'layer':22} {'x':>2} {'ir ms':>7} {'GF/s':>5} {'ort ms':>7} {'GF/s':>5} {'ir/ort':>6}" + ("  variant ms  var/ir" if change else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for name, cin, cout, k, stride, size, count, *shape in (LARGE if args.large else LRASPP if args.lraspp else DEPTHWISE if args.depthwise else POINTWISE if args.pointwise else LAYERS + (EXTRA if args.extra else [])):
            if args.only not in name:
                continue
            proto, feeds, flops = conv_model(cin, cout, k, stride, size, *shape)
            engines, calls = layer_engines(proto, feeds, Path(tmp) / "conv.onnx", change, opts)
            times: dict[str, list[float]] = {label: [] for label in calls}
            for _ in range(args.rounds):
                for label, call in calls.items():
                    t0 = time.perf_counter()
                    call()
                    times[label].append(time.perf_counter() - t0)
            print(report_line(name, 22, count, flops, times, totals, change), flush=True)
            for compiled in engines.values():
                compiled.close()
    print(f"weighted by occurrences (min times): irforge {totals['irforge'] * 1e3:.1f} ms, onnxruntime {totals['ort'] * 1e3:.1f} ms"
          + (f", variant {totals['variant'] * 1e3:.1f} ms" if change else ""))


if __name__ == "__main__":
    main()
