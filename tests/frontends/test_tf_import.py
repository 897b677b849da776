"""The TensorFlow importer: GraphDefs built with irforge's own schema (no TensorFlow), checked
against onnxruntime on twin ONNX graphs and against numpy, plus the layout contract."""

import subprocess
import sys

import numpy as np
import pytest
from google.protobuf import text_format

from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.tf import import_tf
from irforge.frontends.tf.schema import DT_FLOAT, DT_INT32, message_classes
from irforge.model import Model, load_model
from irforge.passes import apply_pipeline
from irforge.testing.tf_models import DualBuilder, keras_resnet, tf_tensor
from tests.helpers import ort_session_run

PIPELINE = "infer-shapes,canonicalize,convert-layout,fuse-linear-ops,fuse-grouped-conv,canonicalize"


def ops(model: Model, name: str) -> list:
    return [op for op in model.func.body.block.ops if op.name == name]


@pytest.mark.parametrize("flatten", [False, True], ids=["global_mean", "flatten_dense"])
def test_keras_cnn_matches_onnxruntime_with_one_transpose_at_the_input(flatten):
    graph, twin = keras_resnet(flatten=flatten)
    model = import_tf(graph)
    x = np.random.default_rng(0).standard_normal((1, 16, 16, 3)).astype(np.float32)
    (want,) = ort_session_run(twin, {"input_1": x})
    np.testing.assert_allclose(run(model, {"input_1": x})["prob"], want, rtol=1e-4, atol=1e-6)
    apply_pipeline(model.module, PIPELINE)
    permutes = ops(model, "nn.permute")
    assert len(permutes) == 1 and permutes[0].operands[0] == model.func.args[0]
    assert not ops(model, "nn.batch_norm") and len(ops(model, "nn.eltwise")) == 1  # the residual add
    np.testing.assert_allclose(run(model, {"input_1": x})["prob"], want, rtol=1e-4, atol=1e-6)


def single_op(op: str, x: np.ndarray, consts: list[np.ndarray], **attrs) -> np.ndarray:
    """Run one TensorFlow op on placeholder `x` and constant inputs through irforge."""
    b = DualBuilder()
    xin, _ = b.placeholder("x", list(x.shape))
    names = []
    for i, c in enumerate(consts):
        names.append(b.tf_node("Const", [], f"c{i}", value=tf_tensor(c), dtype=("type", DT_INT32 if c.dtype == np.int32 else DT_FLOAT)))
    b.tf_node(op, [xin, *names], "y", **attrs)
    model = import_tf(b.graph)
    return run(model, {"x": x})["y"]


X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5) - 50


def i32(*v: int) -> np.ndarray:
    return np.array(v, np.int32)


@pytest.mark.parametrize(
    "op, consts, attrs, expected",
    [
        ("StridedSlice", [i32(0, 1, 0, -1), i32(2, 3, 4, 0), i32(1, 1, 2, 1)], {"begin_mask": 1, "end_mask": 4, "shrink_axis_mask": 8}, X[:, 1:3, ::2, -1]),
        ("StridedSlice", [i32(1, 0), i32(0, 0), i32(-1, 1)], {"begin_mask": 1, "end_mask": 3}, X[::-1]),
        ("Slice", [i32(0, 1, 1, 0), i32(-1, 2, 2, 3)], {}, X[:, 1:3, 1:3, 0:3]),
        ("Transpose", [i32(0, 3, 1, 2)], {}, X.transpose(0, 3, 1, 2)),
        ("ExpandDims", [i32(-1)], {}, X[..., None]),
        ("Squeeze", [], {"squeeze_dims": [0]}, X[:1].squeeze(0)),
        ("Tile", [i32(1, 2, 1, 1)], {}, np.tile(X, (1, 2, 1, 1))),
        ("Pad", [i32(0, 0, 1, 2, 0, 0, 0, 1).reshape(4, 2)], {}, np.pad(X, [(0, 0), (1, 2), (0, 0), (0, 1)])),
        ("MirrorPad", [i32(0, 0, 1, 1, 2, 2, 0, 0).reshape(4, 2)], {"mode": "REFLECT"}, np.pad(X, [(0, 0), (1, 1), (2, 2), (0, 0)], mode="reflect")),
        ("GatherV2", [i32(3, 0), i32(2)], {}, np.take(X, [3, 0], axis=2)),
        ("Mean", [i32(1, 2)], {"keep_dims": True}, X.mean(axis=(1, 2), keepdims=True)),
        ("Max", [i32(-1)], {"keep_dims": False}, X.max(axis=-1)),
        ("Reshape", [i32(2, -1)], {}, X.reshape(2, -1)),
        ("SquaredDifference", [np.float32(3.5) * np.ones(5, np.float32)], {}, np.square(X - 3.5)),
        ("Rsqrt", [], {}, None),
    ],
)
def test_single_ops_match_numpy(op, consts, attrs, expected):
    x = np.abs(X) + 1 if op == "Rsqrt" else X[:1] if op == "Squeeze" else X
    got = single_op(op, x, consts, **attrs)
    expected = 1 / np.sqrt(x) if op == "Rsqrt" else expected
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_an_explicit_empty_list_attribute_squeezes_every_unit_axis():
    """Keras freezes Squeeze with `squeeze_dims` set to an empty list (every size-1 axis); the
    attribute kind check looked for a `func` list the vendored ListValue lacks (AttributeError
    on keras.applications EfficientNetB0 and ResNet50)."""
    b = DualBuilder()
    xin, _ = b.placeholder("x", [1, 3, 1, 5])
    b.tf_node("Squeeze", [xin], "y")
    next(n for n in b.graph.node if n.name == "y").attr["squeeze_dims"].list.SetInParent()
    x = X[:1, :, :1, :]
    np.testing.assert_array_equal(run(import_tf(b.graph), {"x": x})["y"], x.reshape(3, 5))


def test_depth_space_round_trip_and_tf_order():
    x = np.arange(1 * 2 * 2 * 8, dtype=np.float32).reshape(1, 2, 2, 8)
    d2s = single_op("DepthToSpace", x, [], block_size=2)
    # TensorFlow: out[b, h*2 + i, w*2 + j, c] = in[b, h, w, (i*2 + j)*2 + c]
    want = x.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 3, 2, 4, 5).reshape(1, 4, 4, 2)
    np.testing.assert_array_equal(d2s, want)
    np.testing.assert_array_equal(single_op("SpaceToDepth", want, [], block_size=2), x)


def test_split_pack_unpack_and_shape_folding():
    # Split takes its axis first; Unpack's second output is "unpack:1"
    b = DualBuilder()
    x, _ = b.placeholder("x", [2, 6])
    b.tf_node("Const", [], "axis", value=tf_tensor(i32(1)), dtype=("type", DT_INT32))
    b.tf_node("Split", ["axis", x], "split", num_split=3)
    b.tf_node("Pack", ["split:2", "split"], "pack", axis=0)
    b.tf_node("Unpack", ["x"], "unpack", num=2, axis=0)
    b.tf_node("Shape", ["unpack:1"], "shape")  # folded: the Reshape needs it as a constant
    b.tf_node("Reshape", ["unpack", "shape"], "same")
    b.tf_node("AddV2", ["unpack:1", "same"], "sum")
    model = import_tf(b.graph, outputs=["pack", "sum"])
    x_val = np.arange(12, dtype=np.float32).reshape(2, 6)
    out = run(model, {"x": x_val})
    np.testing.assert_array_equal(out["pack"], np.stack([x_val[:, 4:6], x_val[:, 0:2]]))
    np.testing.assert_array_equal(out["sum"], x_val[0] + x_val[1])


def test_conv2d_backprop_input_matches_onnxruntime_conv_transpose():
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 5, 5, 4)).astype(np.float32)
    w = rng.standard_normal((3, 3, 6, 4)).astype(np.float32)  # [kh, kw, out channels, in channels]
    b = DualBuilder()
    xin, _ = b.placeholder("x", [1, 5, 5, 4])
    b.tf_node("Const", [], "sizes", value=tf_tensor(i32(1, 10, 10, 6)), dtype=("type", DT_INT32))
    b.tf_node("Const", [], "w", value=tf_tensor(w), dtype=("type", DT_FLOAT))
    b.tf_node("Conv2DBackpropInput", ["sizes", "w", xin], "y", strides=[1, 2, 2, 1], padding="SAME", data_format="NHWC")
    got = run(import_tf(b.graph), {"x": x})["y"]
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], output_shape=[10, 10], auto_pad="SAME_UPPER")
    graph = helper.make_graph(
        [helper.make_node("Transpose", ["xin"], ["x"], perm=[0, 3, 1, 2]), node, helper.make_node("Transpose", ["y"], ["out"], perm=[0, 2, 3, 1])],
        "g", [helper.make_tensor_value_info("xin", TensorProto.FLOAT, [1, 5, 5, 4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w.transpose(3, 2, 0, 1).copy(), "w")],
    )
    (want,) = ort_session_run(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), {"xin": x})
    assert got.shape == (1, 10, 10, 6)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def write_graph(tmp_path, graph, text=False):
    path = tmp_path / ("m.pbtxt" if text else "m.pb")
    if text:
        path.write_text(text_format.MessageToString(graph))
    else:
        path.write_bytes(graph.SerializeToString())
    return path


def ir_convert(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "irforge.tools.ir_convert", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("text", [False, True], ids=["binary", "text"])
def test_ir_convert_reads_both_forms(tmp_path, text):
    graph, twin = keras_resnet()
    path = write_graph(tmp_path, graph, text)
    result = ir_convert("--input_model", str(path), "-o", str(tmp_path), "--emit", "mlir", "-n", "out")
    assert result.returncode == 0, result.stderr
    model = load_model(tmp_path / "out.mlir")
    assert len(ops(model, "nn.permute")) == 1
    x = np.random.default_rng(1).standard_normal((1, 16, 16, 3)).astype(np.float32)
    (want,) = ort_session_run(twin, {"input_1": x})
    np.testing.assert_allclose(run(model, {"input_1": x})["prob"], want, rtol=1e-4, atol=1e-6)


def test_errors(tmp_path):
    graph = message_classes()["GraphDef"]()
    graph.node.add(name="x", op="Placeholder").attr["dtype"].type = DT_FLOAT
    graph.node.add(name="a", op="Frobnicate", input=["x"])
    graph.node.add(name="b", op="Frobnicate", input=["a"])
    graph.node.add(name="c", op="Zap", input=["b"])
    with pytest.raises(IrforgeError, match=r"unsupported TensorFlow ops: Frobnicate x2 \(a, b\); Zap x1 \(c\)"):
        import_tf(graph)
    del graph.node[1:]
    graph.node.add(name="r", op="Relu", input=["x"])
    with pytest.raises(IrforgeError, match="input 'x' has no shape"):
        import_tf(graph)
    assert import_tf(graph, input_shapes={"x": [2]}).func.function_type.inputs.data[0].get_shape() == (2,)
    cyclic = message_classes()["GraphDef"]()
    cyclic.node.add(name="p", op="Relu", input=["q"])
    cyclic.node.add(name="q", op="Relu", input=["p"])
    cyclic.node.add(name="out", op="Relu", input=["q"])
    with pytest.raises(IrforgeError, match="has a cycle through nodes .*p, q"):
        import_tf(cyclic)
    bad = tmp_path / "bad.pb"
    bad.write_bytes(b"\x0a\xff\xff\xff")
    for args, message in (([str(bad)], "not a valid GraphDef"), ([str(tmp_path / "none.pb")], "not found")):
        result = ir_convert("--input_model", *args, "-o", str(tmp_path / "out"))
        assert result.returncode == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    (tmp_path / "bad.pbtxt").write_text("node { name: 'x' op: }")
    result = ir_convert("--input_model", str(tmp_path / "bad.pbtxt"), "-o", str(tmp_path / "out"))
    assert result.returncode == 2 and "not a valid text GraphDef" in result.stderr and "1:" in result.stderr


@pytest.mark.parametrize("flatten", [False, True], ids=["global_mean", "flatten_dense"])
def test_ir_convert_to_ir_xml_runs_in_openvino_without_inner_transposes(tmp_path, flatten):
    from tests.backends.ir_xml_support import assert_close, run_openvino

    graph, twin = keras_resnet(flatten=flatten)
    path = write_graph(tmp_path, graph)
    result = ir_convert("--input_model", str(path), "-o", str(tmp_path), "-n", "net")
    assert result.returncode == 0, result.stderr
    xml = (tmp_path / "net.xml").read_text()
    assert xml.count('type="Transpose"') == 1  # at the input only
    x = np.random.default_rng(5).standard_normal((1, 16, 16, 3)).astype(np.float32)
    (want,) = ort_session_run(twin, {"input_1": x})
    got = run_openvino(tmp_path / "net.xml", {"input_1": x})
    assert_close(got["prob"], want, rtol=1e-4)


def test_tf_instance_norm_idiom_becomes_mvn():
    """The guide's MVN example: Mean/StopGradient/SquaredDifference/Mean/Squeeze into an
    inference FusedBatchNorm, after a convolution, in NHWC."""
    b = DualBuilder(seed=7)
    x = b.placeholder("x", [1, 6, 5, 3])
    y, _ = b.conv(x, 3, 4, 3)
    axes = b.tf_node("Const", [], "axes", value=tf_tensor(i32(1, 2)), dtype=("type", DT_INT32))
    b.tf_node("Mean", [y, axes], "mean", keep_dims=True)
    b.tf_node("StopGradient", ["mean"], "stop")
    b.tf_node("SquaredDifference", [y, "stop"], "sqdiff")
    b.tf_node("Mean", ["sqdiff", axes], "variance", keep_dims=True)
    b.tf_node("Squeeze", ["mean"], "squeeze_mean", squeeze_dims=[0, 1, 2])
    b.tf_node("Squeeze", ["variance"], "squeeze_variance", squeeze_dims=[0, 1, 2])
    gamma, _ = b.const(np.array([1.5, 0.5, 2.0, 1.0], np.float32), "gamma")
    beta, _ = b.const(np.array([0.1, -0.2, 0.0, 0.3], np.float32), "beta")
    b.tf_node("FusedBatchNormV3", [y, gamma, beta, "squeeze_mean", "squeeze_variance"], "fbn", epsilon=1e-3, is_training=False)
    b.tf_node("Relu", ["fbn"], "out")
    model = import_tf(b.graph, outputs=["out"])
    feed = np.random.default_rng(8).standard_normal((1, 6, 5, 3)).astype(np.float32)
    conv = run(import_tf(b.graph, outputs=[y]), {"x": feed})[y]
    mean, var = conv.mean(axis=(1, 2), keepdims=True), conv.var(axis=(1, 2), keepdims=True)
    want = np.maximum((conv - mean) / np.sqrt(var + 1e-3) * [1.5, 0.5, 2.0, 1.0] + [0.1, -0.2, 0.0, 0.3], 0)
    np.testing.assert_allclose(run(model, {"x": feed})["out"], want, rtol=1e-4, atol=1e-5)
    apply_pipeline(model.module, "infer-shapes,canonicalize,replace-subgraph,convert-layout,fuse-linear-ops,canonicalize")
    names = [op.name for op in model.func.body.block.ops]
    assert "nn.mvn" in names and "nn.batch_norm" not in names and "nn.reduce" not in names
    assert names.count("nn.permute") == 2  # the input's and the output's, nothing inside
    np.testing.assert_allclose(run(model, {"x": feed})["out"], want, rtol=1e-4, atol=1e-5)


def test_mean_and_scale_values_apply_to_the_last_axis_of_nhwc_inputs(tmp_path):
    graph, twin = keras_resnet()
    path = write_graph(tmp_path, graph)
    result = ir_convert("--input_model", str(path), "-o", str(tmp_path), "--emit", "mlir", "-n", "pre",
                        "--mean_values", "[0.5,-1,2]", "--scale_values", "[2,4,0.5]", "--reverse_input_channels")
    assert result.returncode == 0, result.stderr
    x = np.random.default_rng(6).standard_normal((1, 16, 16, 3)).astype(np.float32)
    (want,) = ort_session_run(twin, {"input_1": ((x[..., ::-1] - [0.5, -1, 2]) / [2, 4, 0.5]).astype(np.float32)})  # reversed first
    np.testing.assert_allclose(run(load_model(tmp_path / "pre.mlir"), {"input_1": x})["prob"], want, rtol=1e-4, atol=1e-6)


def test_layout_flag_changes_the_interface(tmp_path):
    graph, twin = keras_resnet()
    path = write_graph(tmp_path, graph)
    result = ir_convert("--input_model", str(path), "-o", str(tmp_path), "--emit", "mlir", "-n", "nchw", "--layout", "nchw")
    assert result.returncode == 0, result.stderr
    model = load_model(tmp_path / "nchw.mlir")
    assert not ops(model, "nn.permute") and model.func.args[0].type.get_shape() == (1, 3, 16, 16)
    x = np.random.default_rng(9).standard_normal((1, 16, 16, 3)).astype(np.float32)
    (want,) = ort_session_run(twin, {"input_1": x})
    np.testing.assert_allclose(run(model, {"input_1": x.transpose(0, 3, 1, 2)})["prob"], want, rtol=1e-4, atol=1e-6)
