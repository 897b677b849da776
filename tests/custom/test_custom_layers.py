"""Custom layers end to end: the examples in examples/custom_layers convert, run and export.

Extensions that replace built-in importers (Interp) run in a subprocess through the tools,
so they do not leak into the other tests of this process.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from irforge.backends.reference import run
from irforge.model import load_model
from tests.frontends.caffe.caffe_files import write_caffe
from tests.helpers import ort_session_run

EXAMPLES = Path(__file__).parents[2] / "examples" / "custom_layers"


def tool(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", f"irforge.tools.{name}", *args], capture_output=True, text=True, timeout=300)


# -- Proposal from a Caffe Python layer -----------------------------------------------------
PROPOSAL_NET = """
input: "scores"
input_shape { dim: 1 dim: 18 dim: 6 dim: 8 }
input: "deltas"
input_shape { dim: 1 dim: 36 dim: 6 dim: 8 }
input: "im_info"
input_shape { dim: 1 dim: 3 }
layer {
  name: "proposal" type: "Python"
  bottom: "scores" bottom: "deltas" bottom: "im_info" top: "rois"
  python_param { module: "rpn.proposal_layer" layer: "ProposalLayer" param_str: "'feat_stride': 16, 'post_nms_topn': 50" }
}
"""


def proposal_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "scores": rng.uniform(0, 1, (1, 18, 6, 8)).astype(np.float32),
        "deltas": (rng.standard_normal((1, 36, 6, 8)) * 0.2).astype(np.float32),
        "im_info": np.array([[96, 128, 1.0]], np.float32),
    }


def run_tool_model(tmp_path: Path, model: Path, extension: str, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`ir-run` with the extension, in its own process (extensions change global tables)."""
    args = []
    for name, array in inputs.items():
        np.save(tmp_path / f"{name}.npy", array)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    result = tool("ir_run", str(model), "--extensions", str(EXAMPLES / extension), *args, "--output", str(tmp_path / "out.npz"))
    assert result.returncode == 0, result.stderr
    return dict(np.load(tmp_path / "out.npz"))


def iou(a: np.ndarray, b: np.ndarray) -> float:
    inter = max(0, min(a[2], b[2]) - max(a[0], b[0]) + 1) * max(0, min(a[3], b[3]) - max(a[1], b[1]) + 1)
    area = lambda r: (r[2] - r[0] + 1) * (r[3] - r[1] + 1)  # noqa: E731
    return inter / (area(a) + area(b) - inter)


def test_proposal_python_layer_converts_and_its_boxes_obey_the_layer(tmp_path):
    model_path, _ = write_caffe(tmp_path, "rpn", PROPOSAL_NET, {})
    result = tool("ir_convert", "--input_model", str(model_path), "--extensions", str(EXAMPLES / "proposal_numpy.py"), "-o", str(tmp_path), "--emit", "mlir")
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "rpn.mlir").read_text()
    assert "frcnn.proposal" in text and "post_nms_topn = 50" in text  # feat_stride 16 is the default
    assert "-> tensor<50x5xf32>" in text  # [batch * post_nms_topn, 5]
    rois = run_tool_model(tmp_path, tmp_path / "rpn.mlir", "proposal_numpy.py", proposal_inputs())["rois"]
    boxes = rois[rois[:, 3] > 0, 1:]
    assert 10 <= len(boxes) <= 50 and (rois[:, 0] == 0).all()
    assert (boxes[:, 0] >= 0).all() and (boxes[:, 2] <= 127).all() and (boxes[:, 3] <= 95).all()
    assert max(iou(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :]) <= 0.7  # NMS held


def test_unknown_python_layer_names_the_module_and_ir_extgen(tmp_path):
    model_path, _ = write_caffe(tmp_path, "rpn", PROPOSAL_NET.replace("rpn.proposal_layer", "my.proposal_layer"), {})
    result = tool("ir_convert", "--input_model", str(model_path), "-o", str(tmp_path))
    assert result.returncode == 2
    line = result.stderr.strip()
    assert "\n" not in line and "my.proposal_layer.ProposalLayer" in line and "ir-extgen" in line


# -- ONNX: OpExtension and ConversionExtension -----------------------------------------------
def relu_family_model() -> onnx.ModelProto:
    nodes = [
        helper.make_node("MyRelu", ["x"], ["a"], name="my_relu", domain="com.example"),
        helper.make_node("ThresholdedRelu", ["a"], ["y"], name="thresholded", alpha=0.4),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])


def test_op_and_conversion_extensions(tmp_path):
    path = tmp_path / "relus.onnx"
    onnx.save_model(relu_family_model(), str(path))
    result = tool("ir_convert", "--input_model", str(path), "--extensions", str(EXAMPLES / "relu_family.py"), "-o", str(tmp_path), "--emit", "mlir")
    assert result.returncode == 0, result.stderr
    model = load_model(tmp_path / "relus.mlir")
    names = [op.name for op in model.func.body.block.ops]
    assert "nn.relu" in names and names.count("nn.eltwise") == 2 and "nn.convert" in names
    x = np.random.default_rng(2).standard_normal((2, 8)).astype(np.float32)
    want = np.where(np.maximum(x, 0) > 0.4, np.maximum(x, 0), 0)
    np.testing.assert_array_equal(run(model, {"x": x})["y"], want)
    # the standard op alone against onnxruntime
    thresholded = helper.make_model(
        helper.make_graph([relu_family_model().graph.node[1]], "t", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])]),
        opset_imports=[helper.make_opsetid("", 13)],
    )
    np.testing.assert_array_equal(ort_session_run(thresholded, {"a": x})[0], np.where(x > 0.4, x, 0))


# -- Interp from Caffe and TensorFlow ---------------------------------------------------------
def interp_reference(x: np.ndarray, height: int, width: int) -> np.ndarray:
    """OpenCV's tutorial loop: align_corners bilinear sampling, pixel by pixel."""
    n, c, h, w = x.shape
    out = np.zeros((n, c, height, width), np.float32)
    rh, rw = (h - 1) / (height - 1), (w - 1) / (width - 1)
    for y in range(height):
        for xx in range(width):
            sy, sx = y * rh, xx * rw
            y0, x0 = int(sy), int(sx)
            y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
            fy, fx = sy - y0, sx - x0
            out[:, :, y, xx] = (x[:, :, y0, x0] * (1 - fy) * (1 - fx) + x[:, :, y0, x1] * (1 - fy) * fx
                                + x[:, :, y1, x0] * fy * (1 - fx) + x[:, :, y1, x1] * fy * fx)
    return out


def test_interp_from_caffe(tmp_path):
    net = 'input: "data"\ninput_shape { dim: 1 dim: 2 dim: 5 dim: 7 }\nlayer { name: "interp" type: "Interp" bottom: "data" top: "up" interp_param { height: 9 width: 13 } }\n'
    model_path, _ = write_caffe(tmp_path, "interp", net, {})
    x = np.random.default_rng(3).standard_normal((1, 2, 5, 7)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    result = tool("ir_convert", "--input_model", str(model_path), "--extensions", str(EXAMPLES / "interp.py"), "-o", str(tmp_path), "--emit", "mlir")
    assert result.returncode == 0, result.stderr
    assert "opencv_layers.interp" in (tmp_path / "interp.mlir").read_text()
    result = tool("ir_run", str(tmp_path / "interp.mlir"), "--extensions", str(EXAMPLES / "interp.py"),
                  "--input", f"data={tmp_path / 'x.npy'}", "--output", str(tmp_path / "out.npz"))
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["up"], interp_reference(x, 9, 13), rtol=1e-5, atol=1e-6)


def test_interp_from_tensorflow(tmp_path):
    from irforge.testing.tf_models import DualBuilder, tf_tensor
    from irforge.frontends.tf.schema import DT_INT32

    b = DualBuilder()
    b.placeholder("x", [1, 5, 7, 2])
    b.tf_node("Const", [], "size", value=tf_tensor(np.array([9, 13], np.int32)), dtype=("type", DT_INT32))
    b.tf_node("ResizeBilinear", ["x", "size"], "up", align_corners=True)
    (tmp_path / "m.pb").write_bytes(b.graph.SerializeToString())
    x = np.random.default_rng(4).standard_normal((1, 5, 7, 2)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    result = tool("ir_convert", "--input_model", str(tmp_path / "m.pb"), "--extensions", str(EXAMPLES / "interp.py"), "-o", str(tmp_path), "--emit", "mlir")
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "m.mlir").read_text()
    assert "opencv_layers.interp" in text and text.count("nn.permute") == 2
    result = tool("ir_run", str(tmp_path / "m.mlir"), "--extensions", str(EXAMPLES / "interp.py"),
                  "--input", f"x={tmp_path / 'x.npy'}", "--output", str(tmp_path / "out.npz"))
    assert result.returncode == 0, result.stderr
    want = interp_reference(x.transpose(0, 3, 1, 2), 9, 13).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["up"], want, rtol=1e-5, atol=1e-6)


def test_custom_op_is_one_ir_xml_layer_of_its_extension(tmp_path):
    model_path, _ = write_caffe(tmp_path, "rpn", PROPOSAL_NET, {})
    script = (
        "import sys; from irforge.extensions import load_extension; load_extension(sys.argv[1]);"
        "from irforge.frontends.caffe import import_caffe; from irforge.backends.ir_xml.writer import write_ir_xml;"
        "write_ir_xml(import_caffe(sys.argv[2]), sys.argv[3])"
    )
    result = subprocess.run([sys.executable, "-c", script, str(EXAMPLES / "proposal_numpy.py"), str(model_path), str(tmp_path / "rpn.xml")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "rpn.xml").read_text()
    assert 'type="Proposal" version="frcnn"' in text and 'post_nms_topn="50"' in text


# -- every example on every device ------------------------------------------------------------
def identity_model() -> onnx.ModelProto:
    node = helper.make_node("CustomIdentity", ["x"], ["y"], name="identity", domain="com.example")
    relu = helper.make_node("Relu", ["y"], ["z"], name="relu")
    graph = helper.make_graph(
        [node, relu], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 5, 7])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3, 5, 7])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])


@pytest.mark.parametrize("example, device", [(e, d) for e in ("identity", "interp", "proposal_numpy") for d in ("cpu", "gpu")])
def test_examples_run_the_same_on_every_device(tmp_path, example, device):
    """ref is the numpy forward; cpu runs the identity's native kernel (the others' forward as
    a host step); gpu its OpenCL kernel (the others fall back to the CPU, HETERO)."""
    extension = f"{example}.py"
    if example == "identity":
        onnx.save_model(identity_model(), str(tmp_path / "m.onnx"))
        model_file, feeds = tmp_path / "m.onnx", {"x": np.random.default_rng(1).standard_normal((2, 3, 5, 7)).astype(np.float32)}
    elif example == "interp":
        net = 'input: "data"\ninput_shape { dim: 1 dim: 2 dim: 5 dim: 7 }\nlayer { name: "interp" type: "Interp" bottom: "data" top: "up" interp_param { height: 9 width: 13 } }\n'
        model_file, _ = write_caffe(tmp_path, "m", net, {})
        feeds = {"data": np.random.default_rng(3).standard_normal((1, 2, 5, 7)).astype(np.float32)}
    else:
        model_file, _ = write_caffe(tmp_path, "m", PROPOSAL_NET, {})
        feeds = proposal_inputs()
    result = tool("ir_convert", "--input_model", str(model_file), "--extensions", str(EXAMPLES / extension), "-o", str(tmp_path), "-n", "out")
    assert result.returncode == 0, result.stderr
    ref = run_tool_model(tmp_path, tmp_path / "out.xml", extension, feeds)
    args = []
    for name, array in feeds.items():
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    got = tool("ir_run", str(tmp_path / "out.xml"), "--extensions", str(EXAMPLES / extension), "--device", device, *args, "--output", str(tmp_path / "dev.npz"))
    assert got.returncode == 0, got.stderr
    for name, want in ref.items():
        np.testing.assert_allclose(np.load(tmp_path / "dev.npz")[name], want, rtol=1e-5, atol=1e-6)
    if example == "identity":
        np.testing.assert_array_equal(ref["z"], np.maximum(feeds["x"], 0))


def test_forward_errors_on_the_cpu_backend_surface_after_the_run():
    import irforge
    from irforge.builder import ModelBuilder
    from irforge.custom import CustomOp
    from irforge.errors import IrforgeError

    class Fragile(CustomOp):
        extension = "test_fragile"
        op = "fragile"

        def forward(self, x: np.ndarray) -> np.ndarray:
            if (x < 0).any():
                raise ValueError("negative input")
            return np.sqrt(x)

    b = ModelBuilder()
    b.output(b.add(Fragile.op_class, [b.input("x", [4])]).results[0], "y")
    compiled = irforge.compile(b.finish(), device="cpu", cache_dir=False)
    np.testing.assert_allclose(compiled({"x": np.array([0, 1, 4, 9], np.float32)})["y"], [0, 1, 2, 3])
    with pytest.raises(IrforgeError, match="the forward of test_fragile.fragile failed: ValueError: negative input"):
        compiled({"x": np.array([-1, 1, 4, 9], np.float32)})
    np.testing.assert_allclose(compiled({"x": np.array([16, 1, 4, 9], np.float32)})["y"], [4, 1, 2, 3])
