"""TensorFlow forms Keras 2/3 graphs use: Erfc and exact GELU, StridedSlice with every mask,
function calls, atrous convolution through SpaceToBatchND/BatchToSpaceND, Einsum."""

import math

import numpy as np
import pytest

from irforge.backends.reference import run
from irforge.frontends.tf import import_tf
from irforge.passes import apply_pipeline
from irforge.testing.tf_models import DualBuilder, function_node, tf_tensor
from tests.frontends.test_tf_import import i32, ops, single_op

X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5) - 50
PIPELINE = "infer-shapes,canonicalize,replace-subgraph,convert-layout,fuse-linear-ops,canonicalize"


def erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf)(x.astype(np.float64))


def test_erfc_and_exact_gelu_become_one_gelu():
    b = DualBuilder()
    x, _ = b.placeholder("x", [2, 7])
    half, _ = b.const(np.array(0.5, np.float32), "half", onnx=False)
    c, _ = b.const(np.array(0.7071067811865476, np.float32), "c", onnx=False)
    b.tf_node("Mul", [half, x], "hx")
    b.tf_node("Neg", [x], "neg")
    b.tf_node("Mul", ["neg", c], "scaled")
    b.tf_node("Erfc", ["scaled"], "erfc", T=("type", 1))
    b.tf_node("Mul", ["hx", "erfc"], "gelu")
    feed = np.linspace(-6, 6, 14, dtype=np.float32).reshape(2, 7)
    want = 0.5 * feed * (1 + erf(feed / np.sqrt(2)))
    model = import_tf(b.graph)
    np.testing.assert_allclose(run(model, {"x": feed})["gelu"], want, rtol=1e-5, atol=1e-6)
    apply_pipeline(model.module, PIPELINE)
    assert [op.name for op in model.func.body.block.ops] == ["nn.activation", "func.return"]
    np.testing.assert_allclose(run(model, {"x": feed})["gelu"], want, rtol=1e-5, atol=1e-6)
    only = import_tf(b.graph, outputs=["erfc"])
    np.testing.assert_allclose(run(only, {"x": feed})["erfc"], 1 - erf(-feed * 0.7071067811865476), atol=1e-6)


@pytest.mark.parametrize(
    "consts, attrs, expected",
    [
        ([i32(0, 1), i32(0, 3), i32(1, 1)], {"ellipsis_mask": 1}, X[..., 1:3]),
        ([i32(1, 0, 1), i32(2, 0, 3), i32(1, 1, 1)], {"ellipsis_mask": 2, "shrink_axis_mask": 1}, X[1, ..., 1:3]),
        ([i32(1, 0, 0), i32(2, 0, 0), i32(1, 1, 1)], {"ellipsis_mask": 2, "new_axis_mask": 4, "shrink_axis_mask": 1}, X[1, ..., None]),
        ([i32(0, 0, 2), i32(0, 0, 3), i32(1, 1, 1)], {"new_axis_mask": 1, "ellipsis_mask": 2, "shrink_axis_mask": 4}, X[None, ..., 2]),
        ([i32(0, 0, -1), i32(0, 2, 0), i32(1, 1, -2)], {"begin_mask": 1, "end_mask": 5, "new_axis_mask": 1}, X[None, :2, ::-2]),
        ([i32(0, 1), i32(0, 2), i32(1, 1)], {"new_axis_mask": 1}, X[None, 1:2]),
        ([i32(-1), i32(0), i32(1)], {"shrink_axis_mask": 1}, X[-1]),
        ([i32(0), i32(0), i32(1)], {"ellipsis_mask": 1}, X),
    ],
    ids=["ellipsis_first", "shrink_ellipsis", "shrink_ellipsis_new", "new_ellipsis_shrink", "new_axis_reverse", "new_then_slice", "shrink_last", "all"],
)
def test_strided_slice_every_mask(consts, attrs, expected):
    got = single_op("StridedSlice", X, consts, **attrs)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def add_function(graph, name: str, inputs: list[str], outputs: dict[str, str], body) -> None:
    """A library function: `body(f)` adds its nodes to `f.node_def`; outputs: arg -> tensor."""
    f = graph.library.function.add()
    f.signature.name = name
    for arg in inputs:
        f.signature.input_arg.add(name=arg, type=1)
    for arg, tensor in outputs.items():
        f.signature.output_arg.add(name=arg, type=1)
        f.ret[arg] = tensor
    body(f)




def test_stateful_partitioned_calls_are_inlined_nested_and_by_output_arg():
    rng = np.random.default_rng(2)
    scale, shift = rng.uniform(0.5, 1.5, 3).astype(np.float32), rng.uniform(-1, 1, 3).astype(np.float32)
    b = DualBuilder()
    b.placeholder("x", [1, 4, 4, 3])

    def inner(f):  # a FusedBatchNormV3 read through its output arg name, and Relu
        for n_, v in (("gamma", scale), ("beta", shift), ("mean", np.zeros(3, np.float32)), ("var", np.ones(3, np.float32))):
            function_node(f, "Const", n_, [], value=tf_tensor(v), dtype=("type", 1))
        function_node(f, "FusedBatchNormV3", "bn", ["t", "gamma:output:0", "beta:output:0", "mean:output:0", "var:output:0"], epsilon=1e-3, is_training=False)
        function_node(f, "Relu", "relu", ["bn:y:0"])
        function_node(f, "Neg", "neg", ["t"])

    def outer(f):  # calls `inner`, returns its two results swapped, plus one of its own
        call = function_node(f, "StatefulPartitionedCall", "call", ["u"])
        call.attr["f"].func.name = "inner"
        function_node(f, "Mul", "prod", ["call:output:1", "u"])

    add_function(b.graph, "inner", ["t"], {"relu_out": "relu:activations:0", "neg_out": "neg:y:0"}, inner)
    add_function(b.graph, "outer", ["u"], {"a": "call:output:1", "b": "call:output:0", "c": "prod:z:0"}, outer)
    top = b.tf_node("PartitionedCall", ["x"], "model")
    b.graph.node[-1].attr["f"].func.name = "outer"
    b.tf_node("Mul", ["model:1", "model:2"], "y")
    feed = rng.standard_normal((1, 4, 4, 3)).astype(np.float32)
    got = run(import_tf(b.graph, outputs=["y", top]), {"x": feed})
    np.testing.assert_allclose(got["y"], np.maximum(feed / np.sqrt(1 + 1e-3) * scale + shift, 0) * (-feed * feed), atol=1e-5)
    np.testing.assert_allclose(got["model"], -feed)


def test_call_of_a_missing_function_names_it():
    from irforge.errors import IrforgeError

    b = DualBuilder()
    b.placeholder("x", [1, 2])
    b.tf_node("StatefulPartitionedCall", ["x"], "call")
    b.graph.node[-1].attr["f"].func.name = "__inference_missing_12"
    with pytest.raises(IrforgeError, match="calls function '__inference_missing_12', which the graph's function library does not hold"):
        import_tf(b.graph)


def space_to_batch_np(x, block, pads):
    x = np.pad(x, [(0, 0), *pads, (0, 0)])
    n, h, w, c = x.shape
    bh, bw = block
    x = x.reshape(n, h // bh, bh, w // bw, bw, c).transpose(2, 4, 0, 1, 3, 5)
    return x.reshape(bh * bw * n, h // bh, w // bw, c)


def atrous_graph(size: int, depthwise: bool, pads, crops, rate: int = 2):
    """TensorFlow's with_space_to_batch form of a 3x3 convolution with dilation `rate`."""
    rng = np.random.default_rng(4)
    b = DualBuilder()
    b.placeholder("x", [1, size, size, 4])
    w = rng.standard_normal((3, 3, 4, 1 if depthwise else 5)).astype(np.float32)
    for name, value in (("block", i32(rate, rate)), ("pads", np.array(pads, np.int32)), ("crops", np.array(crops, np.int32))):
        b.tf_node("Const", [], name, value=tf_tensor(value), dtype=("type", 3))
    b.tf_node("Const", [], "w", value=tf_tensor(w), dtype=("type", 1))
    b.tf_node("Const", [], "bias", value=tf_tensor(np.arange(4 if depthwise else 5, dtype=np.float32)), dtype=("type", 1))
    b.tf_node("SpaceToBatchND", ["x", "block", "pads"], "s2b")
    op = "DepthwiseConv2dNative" if depthwise else "Conv2D"
    b.tf_node(op, ["s2b", "w"], "conv", strides=[1, 1, 1, 1], padding="VALID", data_format="NHWC")
    b.tf_node("BiasAdd", ["conv", "bias"], "biased", data_format="NHWC")
    b.tf_node("BatchToSpaceND", ["biased", "block", "crops"], "y")
    return b.graph, w


@pytest.mark.parametrize("size, pads, crops", [(8, [[2, 2], [2, 2]], [[0, 0], [0, 0]]), (7, [[2, 3], [2, 3]], [[0, 1], [0, 1]])])
@pytest.mark.parametrize("depthwise", [False, True], ids=["conv", "depthwise"])
def test_space_to_batch_convolution_folds_to_one_dilated_convolution(size, pads, crops, depthwise):
    graph, w = atrous_graph(size, depthwise, pads, crops)
    x = np.random.default_rng(5).standard_normal((1, size, size, 4)).astype(np.float32)
    folded = import_tf(graph)
    names = [op.name for op in folded.func.body.block.ops]
    assert names.count("nn.convolution") == 1 and "nn.reshape" not in names and "nn.pad" not in names
    [conv] = ops(folded, "nn.convolution")
    assert list(conv.dilations.get_values()) == [2, 2]
    # the ops alone (the fold disabled by reading the SpaceToBatchND twice) are the reference
    unfolded_graph, _ = atrous_graph(size, depthwise, pads, crops)
    unfolded_graph.node.add(name="s2b_again", op="Identity", input=["s2b"])
    unfolded = import_tf(unfolded_graph, outputs=["y"])
    assert ops(unfolded, "nn.convolution") and ops(unfolded, "nn.reshape")
    want = run(unfolded, {"x": x})["y"]
    assert want.shape == (1, size, size, 4 if depthwise else 5)
    np.testing.assert_allclose(run(folded, {"x": x})["y"], want, rtol=1e-5, atol=1e-5)
    # and the centre pixel against a direct dilated 3x3 sum
    c = size // 2
    patch = np.pad(x[0], [(2, 2), (2, 2), (0, 0)])[c : c + 5 : 2, c : c + 5 : 2]
    direct = (patch[..., None] * w).sum(axis=(0, 1)) if not depthwise else (patch * w[..., 0]).sum(axis=(0, 1))
    direct = (direct.sum(axis=0) if not depthwise else direct) + np.arange(want.shape[-1])
    np.testing.assert_allclose(want[0, c, c], direct, rtol=1e-4, atol=1e-4)


def test_space_to_batch_and_back_alone():
    x = np.random.default_rng(6).standard_normal((2, 5, 6, 3)).astype(np.float32)
    pads = [[1, 0], [0, 2]]
    b = DualBuilder()
    b.placeholder("x", [2, 5, 6, 3])
    b.tf_node("Const", [], "block", value=tf_tensor(i32(3, 2)), dtype=("type", 3))
    b.tf_node("Const", [], "pads", value=tf_tensor(np.array(pads, np.int32)), dtype=("type", 3))
    b.tf_node("Const", [], "crops", value=tf_tensor(np.array(pads, np.int32)), dtype=("type", 3))
    b.tf_node("SpaceToBatchND", ["x", "block", "pads"], "s2b")
    b.tf_node("BatchToSpaceND", ["s2b", "block", "crops"], "back")
    got = run(import_tf(b.graph, outputs=["s2b", "back"]), {"x": x})
    np.testing.assert_array_equal(got["s2b"], space_to_batch_np(x, (3, 2), pads))
    np.testing.assert_array_equal(got["back"], x)


def test_loops_are_refused_by_name_with_other_unsupported_ops():
    from irforge.errors import IrforgeError

    b = DualBuilder()
    b.placeholder("x", [1, 4])
    b.tf_node("Enter", ["x"], "lstm/while/Enter", frame_name="lstm/while/while_context")
    b.tf_node("Merge", ["lstm/while/Enter", "lstm/while/NextIteration"], "lstm/while/Merge")
    b.tf_node("Switch", ["lstm/while/Merge", "lstm/while/LoopCond"], "lstm/while/Switch")
    b.tf_node("Frobnicate", ["lstm/while/Switch:1"], "lstm/while/body")
    b.tf_node("NextIteration", ["lstm/while/body"], "lstm/while/NextIteration")
    b.tf_node("Exit", ["lstm/while/Switch"], "lstm/while/Exit")
    w = b.tf_node("While", ["x"], "gru/while")
    b.graph.node[-1].attr["body"].func.name = "gru_while_body_42"
    b.tf_node("TensorListFromTensor", ["x"], "gru/list")
    with pytest.raises(IrforgeError) as info:
        import_tf(b.graph, outputs=["lstm/while/Exit", w])
    text = f"{info.value.what}; {info.value.fix}"  # the rendered line may lose its middle
    assert "unsupported TensorFlow ops: Frobnicate x1 (lstm/while/body)" in text
    assert "While 'gru/while' (body 'gru_while_body_42')" in text
    assert "TF1 loop frame 'lstm/while/while_context'" in text and "unroll=True" in text
    assert info.value.code == "E363" and "TensorList" not in text.split("; and")[1]


@pytest.mark.parametrize("shift_form", ["keras3", "batch_normalization"])
def test_keras_layer_normalization_becomes_mvn(shift_form):
    """Keras 3: x * inv + (-mean * inv + beta); tf.nn.batch_normalization: x * inv + (beta -
    mean * inv); inv = rsqrt(var + eps) * gamma in both."""
    rng = np.random.default_rng(4)
    gamma, beta = rng.uniform(0.5, 1.5, 6).astype(np.float32), rng.uniform(-1, 1, 6).astype(np.float32)
    b = DualBuilder()
    b.placeholder("x", [2, 3, 6])
    axis = b.tf_node("Const", [], "axis", value=tf_tensor(i32(-1)), dtype=("type", 3))
    eps, _ = b.const(np.array(1e-3, np.float32), "eps", onnx=False)
    g, _ = b.const(gamma, "gamma", onnx=False)
    beta_, _ = b.const(beta, "beta", onnx=False)
    b.tf_node("Mean", ["x", axis], "mean", keep_dims=True)
    b.tf_node("StopGradient", ["mean"], "stop")
    b.tf_node("SquaredDifference", ["x", "stop"], "sqdiff")
    b.tf_node("Mean", ["sqdiff", axis], "variance", keep_dims=True)
    b.tf_node("AddV2", ["variance", eps], "add")
    b.tf_node("Rsqrt", ["add"], "rsqrt")
    b.tf_node("Mul", ["rsqrt", g], "inv")
    b.tf_node("Mul", ["x", "inv"], "scaled")
    if shift_form == "keras3":
        b.tf_node("Neg", ["mean"], "neg")
        b.tf_node("Mul", ["neg", "inv"], "neg_inv")
        b.tf_node("AddV2", ["neg_inv", beta_], "shift")
    else:
        b.tf_node("Mul", ["mean", "inv"], "mean_inv")
        b.tf_node("Sub", [beta_, "mean_inv"], "shift")
    b.tf_node("AddV2", ["scaled", "shift"], "ln")
    feed = rng.standard_normal((2, 3, 6)).astype(np.float32) * 3 + 1
    mean, var = feed.mean(-1, keepdims=True), feed.var(-1, keepdims=True)
    want = (feed - mean) / np.sqrt(var + 1e-3) * gamma + beta
    model = import_tf(b.graph)
    np.testing.assert_allclose(run(model, {"x": feed})["ln"], want, rtol=1e-5, atol=1e-5)
    apply_pipeline(model.module, PIPELINE)
    names = [op.name for op in model.func.body.block.ops]
    assert "nn.mvn" in names and "nn.reduce" not in names and "nn.power" not in names
    np.testing.assert_allclose(run(model, {"x": feed})["ln"], want, rtol=1e-5, atol=1e-5)
