"""nn.if / nn.loop built in Python: shape inference (sizes that differ between branches or
change over iterations are dynamic), verifier rejections, and the reference kernels against
numpy (zero iterations, a while-loop stopping on its own condition, nested ops)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32, i1
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Concat, Eltwise, Reduce
from irforge.dialects.nn.base import DYN, build
from irforge.dialects.nn.control_flow import BOOL, INDEX, Yield, build_if, build_loop
from tests.helpers import rand


def yielding(block: Block, *ops) -> Block:  # type: ignore[no-untyped-def]
    for op in ops:
        block.add_op(op)
    return block


def test_if_merges_branch_shapes_and_runs_the_branch_taken():
    b = ModelBuilder()
    c, x = b.input("c", [], np.bool_), b.input("x", [2, 3])
    then = Block(arg_types=[x.type])
    yielding(then, Yield(then.args[0]))
    other = Block(arg_types=[x.type])
    cat = build(Concat, [other.args[0], other.args[0]], axis=0)
    yielding(other, cat, Yield(cat.results[0]))
    op = build_if(c, [x], then, other, "pick")
    assert op.results[0].type == TensorType(f32, [DYN, 3])
    b.block.add_op(op)
    b.output(op.results[0], "y")
    model = b.finish()
    feeds = {"x": rand(2, 3, seed=1)}
    np.testing.assert_array_equal(run(model, {**feeds, "c": np.array(True)})["y"], feeds["x"])
    np.testing.assert_array_equal(run(model, {**feeds, "c": np.array(False)})["y"], np.concatenate([feeds["x"]] * 2))


def while_loop(growing: bool):  # type: ignore[no-untyped-def]
    """acc = x; while sum(acc) < limit: acc = acc * 2 (or acc ++ acc); scan sum(acc)."""
    b = ModelBuilder()
    x, limit, start = b.input("x", [2]), b.input("limit", []), b.input("go", [], np.bool_)
    acc_type = TensorType(f32, [DYN] if growing else [2])
    body = Block(arg_types=[INDEX, BOOL, acc_type, limit.type])
    acc, lim = body.args[2], body.args[3]
    step = build(Concat, [acc, acc], axis=0) if growing else build(Eltwise, [acc, acc], operation="sum")
    total = build(Reduce, [step.results[0]], operation="sum", axes=[0], keep_dims=False)
    more = build(Eltwise, [total.results[0], lim], operation="less")
    yielding(body, step, total, more, Yield(more.results[0], step.results[0], total.results[0]))
    op = build_loop(None, start, [x, limit], 1, body, "grow")
    b.block.add_op(op)
    b.output(op.results[0], "acc")
    b.output(op.results[1], "sums")
    return b.finish(), op


@pytest.mark.parametrize("growing", [False, True])
def test_while_loop_stops_on_its_condition(growing):
    model, op = while_loop(growing)
    assert op.results[0].type == TensorType(f32, [DYN] if growing else [2])
    assert op.results[1].type == TensorType(f32, [DYN])
    x = np.array([1.0, 2.0], np.float32)
    out = run(model, {"x": x, "limit": np.array(40.0, np.float32), "go": np.array(True)})
    acc, sums = x, []
    while True:
        acc = np.concatenate([acc, acc]) if growing else acc * 2
        sums.append(acc.sum())
        if not acc.sum() < 40:
            break
    np.testing.assert_array_equal(out["acc"], acc)
    np.testing.assert_array_equal(out["sums"], np.array(sums, np.float32))
    none = run(model, {"x": x, "limit": np.array(40.0, np.float32), "go": np.array(False)})
    np.testing.assert_array_equal(none["acc"], x)
    assert none["sums"].shape == (0,)


def test_loop_body_with_a_static_argument_for_a_growing_value_is_rejected():
    b = ModelBuilder()
    x, n = b.input("x", [2]), b.input("n", [], np.int64)
    body = Block(arg_types=[INDEX, BOOL, x.type])
    cat = build(Concat, [body.args[2], body.args[2]], axis=0)
    yielding(body, cat, Yield(body.args[1], cat.results[0]))
    with pytest.raises(VerifyException, match=r"carried value #0 has type tensor<2xf32>, expected tensor<\?xf32>"):
        build_loop(n, None, [x], 1, body, "bad")


def test_if_condition_must_be_one_bool():
    b = ModelBuilder()
    c, x = b.input("c", [2], np.bool_), b.input("x", [2])
    blocks = [Block(arg_types=[x.type]) for _ in range(2)]
    for block in blocks:
        block.add_op(Yield(block.args[0]))
    with pytest.raises(VerifyException, match="the condition must be one i1 value"):
        build_if(c, [x], blocks[0], blocks[1], "bad")
    assert BOOL.element_type == i1
