"""INT8 rows of the wide zoo: a CNN and a BERT exported in f32, then quantised by
onnxruntime's quantizers as a user would: `quantize_static` in the QDQ format
(QuantizeLinear/DequantizeLinear pairs around f32 ops) and the QOperator format (QLinearConv,
QLinearMatMul, QLinearAdd...), per-tensor and per-channel weights, and `quantize_dynamic`
(DynamicQuantizeLinear, MatMulInteger, ConvInteger). Calibration: the row's inputs and noisy
copies of them. The row compares irforge with onnxruntime on the quantised file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np


def quantizer(kind: str, per_channel: bool = False) -> Callable[[Path, dict[str, np.ndarray]], None]:
    """`kind`: qdq, qop (static, QDQ or QOperator format) or dynamic."""

    def post(path: Path, feeds: dict[str, np.ndarray]) -> None:
        import onnx
        from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static

        source = path.with_suffix(".f32.onnx")
        path.rename(source)
        names = {i.name for i in onnx.load(str(source)).graph.input}
        feeds = {k: v for k, v in feeds.items() if k in names}
        if kind == "dynamic":
            quantize_dynamic(str(source), str(path), per_channel=per_channel, weight_type=QuantType.QInt8)
            return
        rng = np.random.default_rng(1)

        class Reader(CalibrationDataReader):
            def __init__(self) -> None:
                self.batches = [feeds] + [{k: (v + 0.3 * rng.standard_normal(v.shape).astype(v.dtype)) if v.dtype.kind == "f" else v
                                           for k, v in feeds.items()} for _ in range(7)]

            def get_next(self):  # type: ignore[no-untyped-def]
                return self.batches.pop() if self.batches else None

        if kind == "qop":
            # onnxruntime's recommended pre-processing (shape inference, constant folding):
            # without it the QOperator quantizer fails on a TorchScript CNN export whose
            # biases are Constant nodes ('NoneType' object has no attribute 'data_type')
            from onnxruntime.quantization.shape_inference import quant_pre_process

            prepared = path.with_suffix(".prep.onnx")
            quant_pre_process(str(source), str(prepared))
            source = prepared
        fmt = QuantFormat.QDQ if kind == "qdq" else QuantFormat.QOperator
        quantize_static(str(source), str(path), Reader(), quant_format=fmt, per_channel=per_channel,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)

    return post
