"""Custom layers in OpenVINO's own runtime: irforge.openvino_extensions turns CustomOps into
openvino.Op classes, and OpenVINO reads, compiles and runs the IR irforge wrote."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import irforge
from irforge.errors import IrforgeError

ov = pytest.importorskip("openvino")
EXAMPLE = Path(__file__).parents[2] / "examples" / "custom_layers" / "thresholded_relu2.py"

MANY_KINDS = '''
import numpy as np
from irforge.custom import Attr, CustomOp, op_extension

class PadScale(CustomOp):
    """y = concat(x * scale, zeros) along the last axis, `extra` columns, when `enabled`."""
    extension = "ov_bridge_test"
    op = "pad_scale"
    ir_type = "PadScaleLayer"
    attrs = {"scale": Attr(float, 1.0), "extra": Attr(int, 0), "enabled": Attr(bool, True),
             "mode": Attr(str, "zeros"), "axes": Attr("ints", [0]), "weights": Attr("floats", [0.0])}

    def infer(self, shapes, dtypes):
        return [((*shapes[0][:-1], shapes[0][-1] + self.extra), dtypes[0])]

    def forward(self, x):
        assert self.mode == "zeros" and list(self.axes) == [3] and np.allclose(self.weights, [0.5, 1.5])
        y = x * self.scale if self.enabled else x
        return np.concatenate([y, np.zeros((*x.shape[:-1], self.extra), x.dtype)], axis=-1)

op_extension("onnx", "PadScale", PadScale, domain="com.example")
'''


def onnx_model(op: str, **attrs) -> onnx.ModelProto:  # type: ignore[no-untyped-def]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node(op, ["r"], ["t"], domain="com.example", **attrs),
             helper.make_node("Sigmoid", ["t"], ["y"])]
    return helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                             opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])


def openvino_run(xml: Path, extension, x: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    core = ov.Core()
    for op_class in irforge.openvino_extensions(extension):
        core.add_extension(op_class)
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return compiled(x)[0]


def test_example_ir_runs_in_openvino(tmp_path):
    model = irforge.convert_model(onnx_model("ThresholdedRelu2", alpha=0.5), extensions=[EXAMPLE])
    irforge.save_model(model, tmp_path / "m.xml", compress_to_fp16=False)
    assert 'type="ThresholdedRelu2" version="example_ext"' in (tmp_path / "m.xml").read_text()
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float32)
    r = np.maximum(x, 0)
    want = 1 / (1 + np.exp(-np.where(r > 0.5, r, 0)))  # alpha=0.5 read from the IR, not the default 1.0
    np.testing.assert_allclose(openvino_run(tmp_path / "m.xml", EXAMPLE, x), want, rtol=1e-6, atol=1e-7)


def test_every_attribute_kind_and_infer_reach_openvino(tmp_path):
    extension = tmp_path / "pad_scale.py"
    extension.write_text(MANY_KINDS)
    model = irforge.convert_model(onnx_model("PadScale", scale=2.0, extra=2, enabled=True, mode="zeros", axes=[3], weights=[0.5, 1.5]),
                                  extensions=[extension])
    irforge.save_model(model, tmp_path / "p.xml", compress_to_fp16=False)
    x = np.random.default_rng(1).standard_normal((1, 3, 4, 4)).astype(np.float32)
    got = openvino_run(tmp_path / "p.xml", extension, x)
    assert got.shape == (1, 3, 4, 6)  # from infer
    np.testing.assert_allclose(got, irforge.compile(model, device="ref")(x)[0], rtol=1e-6, atol=1e-7)


def test_an_extension_without_custom_ops_is_an_error():
    relu_family = EXAMPLE.parent / "relu_family.py"
    with pytest.raises(IrforgeError, match="declares no CustomOp") as info:
        irforge.openvino_extensions(relu_family)
    assert info.value.code == "E991"


BAD_KERNEL = '''
import numpy as np
from irforge.custom import Attr, CustomOp, OpenCLKernel, op_extension
SRC = "__kernel void thr(__global const float* x, __global float* y, const float alpha) { y[get_global_id(0)] = x[get_global_id(0)] > alpha ? x[get_global_id(0)] : 0.0f; }"
class Thr(CustomOp):
    extension = "bad_kernel_ext"
    op = "thr"
    attrs = {"alpha": Attr(float, 1.0)}
    opencl = OpenCLKernel(source=SRC, entry="thr", global_size=lambda op, shapes: (int(np.prod(shapes[0])),)%s)
    def forward(self, x):
        return np.where(x > self.alpha, x, 0).astype(x.dtype)
op_extension("onnx", "Thr", Thr, domain="com.example")
'''


@pytest.mark.parametrize("scalars, message", [("", "passes OpenCL kernel .thr. 2 buffers and 0 scalars"), (", scalars=lambda op: [1]", "gives 1 \\(a 32-bit int\\)")])
def test_wrong_opencl_signature_is_the_extensions_error(tmp_path, scalars, message):
    import re

    extension = tmp_path / "bad.py"
    extension.write_text(BAD_KERNEL % scalars)
    onnx.save(onnx_model("Thr", alpha=0.5), str(tmp_path / "thr.onnx"))
    result = subprocess.run([sys.executable, "-m", "irforge.tools.ir_run", str(tmp_path / "thr.onnx"), "--extensions", str(extension),
                             "--device", "gpu"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "error[E993]" in result.stderr and re.search(message, result.stderr), result.stderr
