"""canonicalize and infer-shapes: what they remove, and that outputs do not change."""

import numpy as np
import pytest

from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import (
    Constant,
    Convolution,
    Eltwise,
    Identity,
    Permute,
    ReLU,
    Reshape,
    Tile,
)
from irforge.model import Model
from irforge.passes import apply_pipeline


def optimised(model: Model, spec: str) -> Model:
    clone = Model(model.module.clone(), model.store)
    apply_pipeline(clone.module, spec)
    return clone


def op_names(model: Model) -> list[str]:
    return [op.name for op in model.func.body.block.ops]


def assert_same_outputs(a: Model, b: Model, inputs: dict[str, np.ndarray]) -> None:
    out_a, out_b = run(a, inputs), run(b, inputs)
    assert out_a.keys() == out_b.keys()
    for name in out_a:
        np.testing.assert_allclose(out_b[name], out_a[name], rtol=1e-6, atol=1e-6)


def test_chain_of_no_ops_and_compositions_disappears():
    b = ModelBuilder()
    x = b.input("x", [2, 3, 4, 5])
    y = b.add(Identity, [x]).output
    y = b.add(Permute, [y], order=[0, 2, 3, 1]).output
    y = b.add(Permute, [y], order=[0, 3, 1, 2]).output
    y = b.add(Reshape, [y], shape=[6, 20]).output
    y = b.add(Reshape, [y], shape=[2, 3, 4, 5]).output
    y = b.add(ReLU, [y]).output
    b.output(y, "y")
    model = b.finish()
    after = optimised(model, "canonicalize")
    assert op_names(after) == ["nn.relu", "func.return"]
    assert_same_outputs(model, after, {"x": np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)})


def test_constant_subgraphs_fold_into_the_weight_store():
    b = ModelBuilder()
    x = b.input("x", [1, 2, 4, 4])
    w = b.constant(np.arange(36, dtype=np.float32).reshape(2, 2, 3, 3) / 36, "w")
    scale = b.constant(np.full((2, 1, 1, 1), 0.5, np.float32), "s")
    w2 = b.add(Eltwise, [w, scale], operation="mul", name="scaled").output
    tiled = b.add(Tile, [b.constant(np.array([1.0, -1.0], np.float32))], repeats=[16]).output
    y = b.add(Convolution, [x, w2], pads_begin=[1, 1], pads_end=[1, 1]).output
    b.output(y, "y")
    b.output(tiled, "t")
    model = b.finish()
    after = optimised(model, "canonicalize")
    assert op_names(after) == ["nn.constant", "nn.constant", "nn.convolution", "func.return"]
    constants = [op for op in after.func.body.block.ops if isinstance(op, Constant)]
    assert all(c.weight_name is not None for c in constants)  # 36 and 32 elements: stored
    assert "scaled" in after.store
    assert_same_outputs(model, after, {"x": np.ones((1, 2, 4, 4), np.float32)})


def test_dead_ops_are_removed_and_live_ones_kept():
    b = ModelBuilder()
    x = b.input("x", [4])
    b.add(ReLU, [x])  # unused
    kept = b.add(Permute, [x], order=[0]).output
    b.output(b.add(ReLU, [kept], negative_slope=0.1).output, "y")
    after = optimised(b.finish(), "canonicalize")
    assert op_names(after) == ["nn.relu", "func.return"]


def test_fold_constants_can_be_disabled():
    b = ModelBuilder()
    c = b.constant(np.ones(4, np.float32))
    b.output(b.add(ReLU, [c]).output, "y")
    after = optimised(b.finish(), "canonicalize{fold-constants=false}")
    assert op_names(after) == ["nn.constant", "nn.relu", "func.return"]


@pytest.mark.parametrize("seed", range(5))
def test_random_permute_reshape_chains_keep_outputs(seed):
    rng = np.random.default_rng(seed)
    shape = [2, 3, 4, 5]
    b = ModelBuilder()
    x = b.input("x", shape)
    y = x
    for _ in range(6):
        if rng.random() < 0.5:
            order = list(rng.permutation(4))
            y = b.add(Permute, [y], order=order).output
        else:
            dims = list(y.type.get_shape())
            y = b.add(Reshape, [y], shape=[dims[0], -1]).output
            y = b.add(Reshape, [y], shape=dims).output
    b.output(b.add(ReLU, [y]).output, "y")
    model = b.finish()
    after = optimised(model, "canonicalize")
    assert sum(op == "nn.permute" for op in op_names(after)) <= 1
    assert "nn.reshape" not in op_names(after)
    assert_same_outputs(model, after, {"x": rng.standard_normal(shape).astype(np.float32)})


def test_infer_shapes_retypes_results_and_signature():
    from xdsl.dialects.builtin import TensorType, f32

    from irforge.dialects.nn.base import DYN
    from irforge.model import parse_module

    module = parse_module(
        "func.func @main(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {\n"
        "  %y = nn.relu %x : (tensor<2x3xf32>) -> tensor<?x?xf32>\n"
        "  func.return %y : tensor<?x?xf32>\n}\n"
    )
    apply_pipeline(module, "infer-shapes")
    func = next(op for op in module.walk() if op.name == "func.func")
    assert list(func.function_type.outputs) == [TensorType(f32, [2, 3])]
    assert DYN not in func.function_type.outputs.data[0].get_shape()
