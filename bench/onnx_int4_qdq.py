"""INT4 QDQ check (outside CI): a small MLP quantised by onnxruntime's own weight-only
4-bit quantizer (`MatMulNBitsQuantizer`, named `MatMul4BitsQuantizer` in older releases) in
the QDQ format: opset-21 DequantizeLinear with `block_size` and INT4 / UINT4 weights and zero
points feeding MatMul. Compares irforge (reference interpreter, CPU backend, OpenVINO on the
written IR) with onnxruntime on the quantised file, run as ONNX defines it (graph
optimizations off). With its optimizations on, onnxruntime fuses DequantizeLinear + MatMul
into its MatMulNBits kernel, which differs from the definition by up to ~1e-2 here (it rounds
activations); the last column shows that difference, for information.

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/onnx_int4_qdq.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


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


def int4_qdq(model: onnx.ModelProto, block: int, symmetric: bool) -> onnx.ModelProto:
    from onnxruntime.quantization import QuantFormat

    try:
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer as Quantizer
    except ImportError:
        from onnxruntime.quantization.matmul_4bits_quantizer import MatMul4BitsQuantizer as Quantizer  # type: ignore[no-redef]
    quantizer = Quantizer(model, block_size=block, is_symmetric=symmetric, quant_format=QuantFormat.QDQ)
    quantizer.process()
    return quantizer.model.model


def main() -> int:
    import onnxruntime as ort

    from irforge.backends.cpu import compile_model
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.backends.reference import run
    from irforge.frontends.onnx.importer import import_onnx
    from tests.backends.ir_xml_support import run_openvino

    worst = 0.0
    print(f"{'model':<34} {'4-bit types':<12} {'ref':>9} {'cpu':>9} {'openvino':>9} {'ort fused':>9}")
    for k, hidden, out, block, symmetric in ((64, 96, 10, 32, False), (64, 96, 10, 32, True), (80, 48, 8, 32, False)):
        model = int4_qdq(float_mlp(k, hidden, out), block, symmetric)
        types = sorted({TensorProto.DataType.Name(t.data_type) for t in model.graph.initializer if t.data_type in (TensorProto.INT4, TensorProto.UINT4)})
        blocked = [n for n in model.graph.node if n.op_type == "DequantizeLinear" and any(a.name == "block_size" for a in n.attribute)]
        assert blocked and types, "the quantizer wrote no blocked 4-bit DequantizeLinear"
        feeds = {"x": np.random.default_rng(1).standard_normal((4, k)).astype(np.float32)}
        plain = ort.SessionOptions()
        plain.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        (want,) = ort.InferenceSession(model.SerializeToString(), plain, providers=["CPUExecutionProvider"]).run(None, feeds)
        (fused,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
        converted = import_onnx(model)
        errors = [float(np.max(np.abs(run(converted, feeds)["y"] - want)))]
        with tempfile.TemporaryDirectory() as folder:
            compiled = compile_model(converted, threads=2, cache_dir=Path(folder))
            try:
                errors.append(float(np.max(np.abs(compiled(feeds)["y"] - want))))
            finally:
                compiled.close()
            xml, _ = write_ir_xml(converted, Path(folder) / "int4.xml")
            errors.append(float(np.max(np.abs(run_openvino(xml, feeds)["y"] - want))))
        worst = max(worst, *errors)
        name = f"mlp k={k} block={block} {'sym' if symmetric else 'asym'}"
        print(f"{name:<34} {','.join(types):<12} " + " ".join(f"{e:9.2e}" for e in errors) + f" {float(np.max(np.abs(fused - want))):9.2e}")
    print(f"worst max abs difference to onnxruntime: {worst:.2e}")
    return 0 if worst < 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main())
