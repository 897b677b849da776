"""4-bit weights in the IR (outside CI): .bin sizes of irforge's IR against OpenVINO's own
converter (`ovc`, here `openvino.convert_model` + `save_model`) and against the f32 model, and
the numbers of OpenVINO on irforge's IR (and of ref / cpu) against onnxruntime.

The models: an MLP (x [4, K] -> MatMul K x H -> Relu -> MatMul H x O) with random weights,
built with onnx.helper and quantized by onnxruntime's weight-only 4-bit quantizer
(`onnxruntime.quantization.matmul_nbits_quantizer`, block 32, symmetric and asymmetric) in
both its formats: QOperator (com.microsoft MatMulNBits) and QDQ (opset 21's blocked
DequantizeLinear of INT4 / UINT4 weights). onnxruntime runs each as ONNX defines it (graph
optimizations off: with them on it fuses QDQ into MatMulNBits, which rounds activations).

The quantizer needs `onnx_ir` (the zoo venv has it), OpenVINO the main venv: the models are
made by the zoo venv's python (IRFORGE_ZOO_PYTHON, default /work/zoo-venv/bin/python) when
this python cannot import the quantizer.

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/compressed_weights_size.py [--k 1024 --hidden 1024 --out 256]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FORMATS = (("nbits", "QOperator"), ("qdq", "QDQ"))


def float_mlp(k: int, hidden: int, out: int) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((k, hidden)) / np.sqrt(k)).astype(np.float32)
    w2 = (rng.standard_normal((hidden, out)) / np.sqrt(hidden)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["y"])]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, out])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def make_models(directory: Path, k: int, hidden: int, out: int) -> None:
    """f32.onnx and {nbits,qdq}_{sym,asym}.onnx in `directory` (needs the quantizer)."""
    from onnxruntime.quantization import QuantFormat
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    onnx.save(float_mlp(k, hidden, out), directory / "f32.onnx")
    for name, fmt in FORMATS:
        for symmetric in (False, True):
            quantizer = MatMulNBitsQuantizer(float_mlp(k, hidden, out), block_size=32, is_symmetric=symmetric, quant_format=getattr(QuantFormat, fmt))
            quantizer.process()
            onnx.save(quantizer.model.model, directory / f"{name}_{'sym' if symmetric else 'asym'}.onnx")


def ensure_models(directory: Path, k: int, hidden: int, out: int) -> None:
    try:
        make_models(directory, k, hidden, out)
    except ImportError:
        zoo = os.environ.get("IRFORGE_ZOO_PYTHON", "/work/zoo-venv/bin/python")
        args = [zoo, __file__, "--make", str(directory), "--k", str(k), "--hidden", str(hidden), "--out", str(out)]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def measure(directory: Path, name: str, feeds: dict[str, np.ndarray]) -> str:
    import onnxruntime as ort
    import openvino as ov

    from irforge.backends.cpu import compile_model
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.backends.reference import run
    from irforge.api import convert_model

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(str(directory / f"{name}.onnx"), options).run(None, feeds)[0]
    model = convert_model(str(directory / f"{name}.onnx"))  # ir-convert's pipeline
    ref = np.abs(run(model, feeds)["y"] - want).max()
    compiled = compile_model(model, threads=2, cache_dir=False)
    cpu = np.abs(compiled(feeds)["y"] - want).max()
    compiled.close()
    sizes = []
    for data_type, fp16 in (("FP32", False), ("FP16", True)):
        xml, bin_path = write_ir_xml(model, directory / f"irforge_{name}_{data_type}.xml", data_type)
        if not fp16:
            core = ov.Core()
            got = core.compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(feeds)[0]
            openvino = np.abs(got - want).max()
        ov_xml = directory / f"ovc_{name}_{data_type}.xml"
        ov.save_model(ov.convert_model(str(directory / f"{name}.onnx")), str(ov_xml), compress_to_fp16=fp16)
        sizes += [bin_path.stat().st_size, ov_xml.with_suffix(".bin").stat().st_size]
    return (f"| {name} | {sizes[0]} | {sizes[1]} | {sizes[2]} | {sizes[3]} | {ref:.1e} | {cpu:.1e} | {openvino:.1e} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=1024)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--out", type=int, default=256)
    parser.add_argument("--make", help="only write the models into this folder (run by the zoo venv)")
    args = parser.parse_args()
    if args.make:
        make_models(Path(args.make), args.k, args.hidden, args.out)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        ensure_models(directory, args.k, args.hidden, args.out)
        feeds = {"x": np.random.default_rng(1).standard_normal((4, args.k)).astype(np.float32)}
        print(f"MLP {args.k} x {args.hidden} x {args.out}, block 32; .bin bytes; max |diff| from onnxruntime (optimizations off)")
        print("| model | irforge FP32 | ovc FP32 | irforge FP16 | ovc FP16 | ref | cpu | OpenVINO on irforge FP32 IR |")
        print("|---|---|---|---|---|---|---|---|")
        for name in ("f32", *(f"{n}_{s}" for n, _ in FORMATS for s in ("asym", "sym"))):
            print(measure(directory, name, feeds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
