"""fuse-linear-ops: outputs do not change, and what could fuse has fused."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from irforge.backends.reference import run
from irforge.backends.reference.interpreter import constant_value, evaluate
from irforge.builder import ModelBuilder
from irforge.dialects.nn import (
    BatchNormalization,
    Constant,
    Convolution,
    Eltwise,
    FullyConnected,
    ScaleShift,
)
from irforge.model import Model, input_names
from irforge.passes import apply_pipeline
from irforge.passes.patterns.affine import linear_step
from irforge.passes.patterns.fuse_into_layers import layer_of, only_user
from tests.passes.random_chains import chains

LAYERS = (Convolution, FullyConnected)


def optimised(model: Model, spec: str) -> Model:
    clone = Model(model.module.clone(), model.store)
    apply_pipeline(clone.module, spec)
    return clone


def largest_value(model: Model, feed: dict[str, np.ndarray]) -> float:
    """The largest magnitude any value of `model` takes on `feed`.

    Folding a chain into one layer rounds at the magnitude of the values it removes, so an
    output that cancels down from them (0.06 out of values near 1) carries their f32 rounding:
    errors are measured against this, not against the output alone."""
    values: dict = {arg: feed[name] for name, arg in zip(input_names(model.func), model.func.args, strict=True)}
    largest = max(float(np.abs(v).max()) for v in feed.values())
    for op in model.func.body.block.ops:
        if isinstance(op, Constant):
            values[op.output] = constant_value(op, model.store)
        elif op.results:
            outs = evaluate(op, [values[v] for v in op.operands])
            values.update(zip(op.results, outs))
            largest = max([largest, *(float(np.abs(o).max(initial=0.0)) for o in outs)])
    return largest


def assert_close(a: Model, b: Model, feed: dict[str, np.ndarray], rtol: float = 1e-5) -> None:
    want, got = run(a, feed), run(b, feed)
    scale = max(largest_value(a, feed), 1e-6)
    for name in want:
        err = float(np.abs(got[name] - want[name]).max()) / scale
        assert err <= rtol, f"{name}: error {err:.2e} of the largest value"


def leftovers(model: Model) -> list[str]:
    """Linear ops left where a layer right before them could have absorbed them."""
    found = []
    for op in model.func.body.block.ops:
        if isinstance(op, BatchNormalization):
            found.append(op.name)
        step_input = op.operands[0] if isinstance(op, ScaleShift) else None
        step = linear_step(op)
        if step is not None:
            step_input = step.input
        if step_input is not None and only_user(step_input) is op and layer_of(step_input.owner) is not None:
            found.append(f"{op.name} after {step_input.owner.name}")
    return found


def linear_chain_lengths(model: Model) -> list[int]:
    """Lengths of runs of consecutive linear ops (ScaleShift or eltwise with a constant)."""
    lengths = []
    for op in model.func.body.block.ops:
        if linear_step(op) is None and not isinstance(op, ScaleShift):
            continue
        length, x = 1, op.operands[0] if isinstance(op, ScaleShift) else linear_step(op).input
        while (step := linear_step(x.owner)) is not None or isinstance(x.owner, ScaleShift):
            length += 1
            x = step.input if step is not None else x.owner.operands[0]
        lengths.append(length)
    return lengths


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains)
def test_random_chains_keep_outputs_and_fuse(chain):
    model, feed = chain.build()
    after = optimised(model, "fuse-linear-ops")
    assert_close(model, after, feed)
    assert leftovers(after) == []
    assert all(n == 1 for n in linear_chain_lengths(after))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains)
def test_backward_only_keeps_outputs(chain):
    model, feed = chain.build()
    after = optimised(model, "fuse-linear-ops{forward=false}")
    assert_close(model, after, feed)
    assert leftovers(after) == []


def conv_bn_model(pads: int, group: int) -> Model:
    rng = np.random.default_rng(group + 10 * pads)
    b = ModelBuilder()
    x = b.input("x", [2, 4, 6, 6])
    w = b.constant(rng.standard_normal((8, 4 // group, 3, 3)).astype(np.float32), "w")
    y = b.add(Convolution, [x, w], group=group, pads_begin=[pads] * 2, pads_end=[pads] * 2).output
    stats = [rng.uniform(0.5, 1.5, 8), rng.uniform(-1, 1, 8), rng.uniform(-1, 1, 8), rng.uniform(0.5, 1.5, 8)]
    y = b.add(BatchNormalization, [y, *(b.constant(s.astype(np.float32)) for s in stats)]).output
    b.output(y, "y")
    return b.finish()


@pytest.mark.parametrize("group", [1, 2, 4])
def test_conv_bn_fuses_into_new_weights_without_touching_old_ones(group):
    model = conv_bn_model(1, group)
    before = {name: model.store[name].copy() for name in model.store}
    after = optimised(model, "fuse-linear-ops")
    assert [op.name for op in after.func.body.block.ops] == ["nn.constant", "nn.constant", "nn.convolution", "func.return"]
    for name, array in before.items():
        np.testing.assert_array_equal(model.store[name], array)
    assert_close(model, after, {"x": np.random.default_rng(1).standard_normal((2, 4, 6, 6)).astype(np.float32)})


def test_mean_before_padded_conv_is_not_fused_forward():
    b = ModelBuilder()
    x = b.input("x", [1, 2, 5, 5])
    y = b.add(Eltwise, [x, b.constant(np.array([[[1.0]], [[-2.0]]], np.float32))], operation="sum").output
    w = b.constant(np.ones((3, 2, 3, 3), np.float32))
    y = b.add(Convolution, [y, w], pads_begin=[1, 1], pads_end=[1, 1]).output
    b.output(y, "y")
    model = b.finish()
    after = optimised(model, "fuse-linear-ops")
    assert [op.name for op in after.func.body.block.ops].count("nn.eltwise") == 1
    assert_close(model, after, {"x": np.zeros((1, 2, 5, 5), np.float32)})
