"""nn.constant: inline values and weight-store references, the textual form, the verifier,
and models whose constants go through a weights file."""

import numpy as np
import pytest
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    f16,
    f32,
    i1,
    i64,
)
from xdsl.utils.exceptions import VerifyException

from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Constant, Eltwise
from irforge.dialects.nn.constant import INLINE_LIMIT
from irforge.errors import IrforgeError
from irforge.model import load_model, parse_module, print_module, save_model
from irforge.weights import WeightStore
from tests.helpers import assert_round_trip, rand


def function(body: str, result_type: str) -> str:
    return f"func.func @f() -> {result_type} {{\n{body}\n  func.return %c : {result_type}\n}}\n"


def parse_constant(text: str, result_type: str) -> Constant:
    module = parse_module(function(f"  %c = {text}", result_type))
    return next(op for op in module.walk() if isinstance(op, Constant))


INLINE_ARRAYS = [
    np.array([[0.5, -1.25, 3.0e-8], [1e20, -0.0, 7.0]], np.float32),
    np.array([-(2**63), -1, 0, 2**63 - 1], np.int64),
    np.array([[True, False, True]]),
    np.array([1.5, -65504.0, 6e-8, 0.1], np.float16),
    np.array([1, -2, 3], np.int32),
    np.array(2.5, np.float32),  # rank 0
    np.array(7, np.int64),
    np.array(False),
    np.zeros((0, 3), np.float32),
    np.arange(6, dtype=np.float32).reshape(2, 3).T,  # not C-contiguous
    rand(16, seed=1),  # every bit kept through the text
    np.array([0.5, np.inf, -np.inf, np.nan, -0.0], np.float32),
    np.array([np.nan, -np.inf], np.float16),
    np.full((2, 2), -np.inf, np.float32),
]


@pytest.mark.parametrize("array", INLINE_ARRAYS, ids=[f"{a.dtype}{list(a.shape)}" for a in INLINE_ARRAYS])
def test_inline_constant_round_trip(array):
    op = Constant.inline(array, name="k")
    op.verify()
    assert op.output.type == TensorType(op.output.type.element_type, list(array.shape))
    got = op.inline_array()
    assert got.dtype == array.dtype and got.shape == array.shape
    assert got.tobytes() == array.tobytes()
    assert not got.flags.writeable
    # through the text
    b = ModelBuilder()
    b.output(b.constant(array), "y")
    model = b.finish()
    assert_round_trip(model)
    parsed = parse_module(print_module(model.module))
    (const,) = [o for o in parsed.walk() if isinstance(o, Constant)]
    assert const.inline_array().tobytes() == got.tobytes()
    np.testing.assert_array_equal(run(model, {})["y"], array)


@pytest.mark.parametrize(
    "text, result_type, expected",
    [
        ("nn.constant dense<1.0> : tensor<2x3xf32>", "tensor<2x3xf32>", np.ones((2, 3), np.float32)),
        ("nn.constant dense<-2> : tensor<4xi64>", "tensor<4xi64>", np.full(4, -2, np.int64)),
        ("nn.constant dense<true> : tensor<2x2xi1>", "tensor<2x2xi1>", np.ones((2, 2), bool)),
        ("nn.constant dense<5.000000e-01> : tensor<3xf16>", "tensor<3xf16>", np.full(3, 0.5, np.float16)),
        ("nn.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>", "tensor<2x2xi64>", np.array([[1, 2], [3, 4]])),
        ("nn.constant dense<[true, false]> : tensor<2xi1>", "tensor<2xi1>", np.array([True, False])),
        ("nn.constant dense<3.0> : tensor<f32>", "tensor<f32>", np.array(3.0, np.float32)),
        ('nn.constant dense<[2.5e-01, 4.0]> : tensor<2xf32> {name = "c0"}', "tensor<2xf32>", np.array([0.25, 4.0], np.float32)),
        ('nn.constant dense<"0x0000803F0000807F"> : tensor<2xf32>', "tensor<2xf32>", np.array([1.0, np.inf], np.float32)),
    ],
)
def test_parse_inline_constant(text, result_type, expected):
    op = parse_constant(text, result_type)
    got = op.inline_array()
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    assert op.weight is None and op.weight_name is None


@pytest.mark.parametrize(
    "name, printed",
    [
        ("conv1_w", "@conv1_w"),
        ("conv1.weight", "@conv1.weight"),
        ("layer1.0.conv1.weight", "@layer1.0.conv1.weight"),
        ("0.weight", '@"0.weight"'),
        ("onnx::Conv_12", '@"onnx::Conv_12"'),
        ("/model/conv/Conv_output_0", '@"/model/conv/Conv_output_0"'),
    ],
)
def test_weight_reference_round_trip(name, printed):
    op = Constant.reference(name, TensorType(f32, [64, 3, 7, 7]), name="conv1")
    op.verify()
    text = str(op)
    assert text == f'%0 = nn.constant {printed} {{name = "conv1"}} : tensor<64x3x7x7xf32>'
    parsed = parse_constant(text.removeprefix("%0 = "), "tensor<64x3x7x7xf32>")
    assert parsed.weight_name == name
    assert parsed.weight == SymbolRefAttr(name)
    assert parsed.layer_name == StringAttr("conv1")
    assert parsed.output.type == TensorType(f32, [64, 3, 7, 7])


@pytest.mark.parametrize(
    "properties, result_type, message",
    [
        ({}, TensorType(f32, [2]), "nn.constant: exactly one of a weight reference or an inline value is needed"),
        (
            {"weight": SymbolRefAttr("w"), "value": DenseIntOrFPElementsAttr.from_list(TensorType(f32, [2]), [1.0])},
            TensorType(f32, [2]),
            "exactly one of a weight reference or an inline value is needed",
        ),
        (
            {"value": DenseIntOrFPElementsAttr.from_list(TensorType(f32, [2]), [1.0, 2.0])},
            TensorType(f32, [3]),
            r"result #0 has type tensor<3xf32> but the operands imply tensor<2xf32>",
        ),
        (
            {"value": DenseIntOrFPElementsAttr.from_list(TensorType(i64, [2]), [1, 2])},
            TensorType(f32, [2]),
            "result #0 has type tensor<2xf32> but the operands imply tensor<2xi64>",
        ),
        (
            {"weight": SymbolRefAttr("w")},
            TensorType(f32, [DYNAMIC_INDEX, 4]),
            r"a constant needs a static shape, got tensor<\?x4xf32>",
        ),
    ],
)
def test_constant_rejects(properties, result_type, message):
    op = Constant.create(properties=properties, result_types=[result_type])
    with pytest.raises(VerifyException, match=message):
        op.verify()


def test_parse_rejects_other_attributes():
    with pytest.raises(IrforgeError, match="expected '@weight' or a dense"):
        parse_constant("nn.constant 1.0 : f32", "f32")
    with pytest.raises(IrforgeError, match="exactly one of a weight reference or an inline value"):
        parse_constant("nn.constant @w {value = dense<1.0> : tensor<2xf32>} : tensor<2xf32>", "tensor<2xf32>")


def test_builder_keeps_small_constants_inline_and_stores_large_ones():
    b = ModelBuilder()
    small = b.constant(np.ones(INLINE_LIMIT, np.float32), "small")
    large = b.constant(np.ones(INLINE_LIMIT + 1, np.float32), "large")
    assert small.owner.value is not None and small.owner.weight is None
    assert large.owner.weight_name == "large" and "large" in b.store


# -- models with a weights file ------------------------------------------------------------


def model_with_weights() -> tuple[ModelBuilder, dict[str, np.ndarray]]:
    b = ModelBuilder()
    x = b.input("x", (2, 3, 4, 5))
    weight = rand(3, 4, 5, seed=2)
    mask = rand(4, 5, seed=3) > 0
    w = b.constant(weight, "block.0.weight")
    h = b.constant(rand(5, seed=4).astype(np.float16), "half")
    i = b.constant(np.arange(20, dtype=np.int64).reshape(4, 5), "ids")
    m = b.constant(mask, "mask")
    s = b.constant(np.array(0.5, np.float32), "scale")
    y = b.add(Eltwise, [x, w], operation="mul").output
    y = b.add(Eltwise, [y, s], operation="sum").output
    b.output(y, "y")
    b.output(h, "h")
    b.output(i, "i")
    b.output(m, "m")
    return b, {"x": rand(2, 3, 4, 5, seed=1)}


def test_save_and_load_model_with_weights(tmp_path):
    b, inputs = model_with_weights()
    model = b.finish()
    assert set(model.store) == {"block.0.weight", "ids", "mask"}
    want = run(model, inputs)
    save_model(model, tmp_path / "net.mlir")
    text = (tmp_path / "net.mlir").read_text()
    assert "nn.constant @block.0.weight : tensor<3x4x5xf32>" in text
    assert "nn.constant @mask : tensor<4x5xi1>" in text
    assert "nn.constant dense<5.000000e-01> : tensor<f32>" in text
    assert (tmp_path / "net.weights").is_file()
    loaded = load_model(tmp_path / "net.mlir")
    assert set(loaded.store) == {"block.0.weight", "ids", "mask"}
    got = run(loaded, inputs)
    for name, value in want.items():
        assert got[name].dtype == value.dtype and got[name].shape == value.shape
        np.testing.assert_array_equal(got[name], value)


def test_model_without_weights_writes_no_weights_file(tmp_path):
    b = ModelBuilder()
    x = b.input("x", (3,))
    b.output(b.add(Eltwise, [x, b.constant(np.array([1.0, 2.0, 3.0], np.float32))], operation="sub").output, "y")
    save_model(b.finish(), tmp_path / "small.mlir")
    assert not (tmp_path / "small.weights").exists()
    loaded = load_model(tmp_path / "small.mlir")
    np.testing.assert_array_equal(run(loaded, {"x": np.zeros(3, np.float32)})["y"], [-1.0, -2.0, -3.0])


@pytest.mark.parametrize(
    "declared, message",
    [
        ("tensor<4x6xi64>", r"weight '@ids' is int64\[4, 5\] in the weights file but the IR declares tensor<4x6xi64>"),
        ("tensor<4x5xi32>", "but the IR declares tensor<4x5xi32>"),
        ("tensor<20xi64>", "but the IR declares tensor<20xi64>"),
    ],
)
def test_declared_type_must_match_the_weights_file(tmp_path, declared, message):
    b, _ = model_with_weights()
    path = tmp_path / "net.mlir"
    save_model(b.finish(), path)
    text = path.read_text()
    assert text.count("tensor<4x5xi64>") == 3  # the constant, the signature, the return
    path.write_text(text.replace("tensor<4x5xi64>", declared))
    with pytest.raises(IrforgeError, match=message):
        load_model(path)


def test_missing_weight_is_reported(tmp_path):
    b, _ = model_with_weights()
    save_model(b.finish(), tmp_path / "net.mlir")
    store = WeightStore()
    store.add(np.zeros(3, np.float32), "other")
    store.save(tmp_path / "other.weights")
    with pytest.raises(IrforgeError, match="weight '@block.0.weight' is not in the weights file"):
        load_model(tmp_path / "net.mlir", tmp_path / "other.weights")
    (tmp_path / "net.weights").unlink()
    with pytest.raises(IrforgeError, match="weights file .* not found"):
        load_model(tmp_path / "net.mlir")


def test_constant_types_used_by_ops():
    """A rank-0 constant broadcasts like a numpy scalar (it is not a 1-element vector)."""
    b = ModelBuilder()
    x = b.input("x", ())
    y = b.add(Eltwise, [x, b.constant(np.array(2.0, np.float32))], operation="mul")
    assert y.output.type == TensorType(f32, [])
    b.output(y.output, "y")
    np.testing.assert_array_equal(run(b.finish(), {"x": np.array(4.0, np.float32)})["y"], np.array(8.0))


def test_inline_element_types():
    for array, element in [
        (np.zeros(2, np.float16), f16),
        (np.zeros(2, np.float32), f32),
        (np.zeros(2, np.int64), i64),
        (np.zeros(2, bool), i1),
    ]:
        assert Constant.inline(array).output.type == TensorType(element, [2])
