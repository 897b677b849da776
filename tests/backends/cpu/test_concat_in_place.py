"""A Concat's inputs stored by their producers in their slice of its output (`ops.movement.
concat`, `CONCAT_IN_PLACE`; session 12): no copy where the slices are contiguous. Checked
against onnxruntime on ref and cpu (arena NaN-filled), 1 and 2 threads: producers of several
kinds (convolution, pooling, element-wise, MatMul, Resize), later slices written before
earlier ones (a kernel writing past its slice would clobber its neighbour), sizes that are
no multiple of a vector, a nested Concat, and the inputs that must stay copies: one read
again after the Concat, a model input, a constant, one value twice, batch 2 on the channel
axis."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.ops import movement
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import ort_session_run

RNG = np.random.default_rng(0)


def weight(name: str, *shape: int) -> object:
    return numpy_helper.from_array((RNG.standard_normal(shape) * 0.3).astype(np.float32), name)


def conv_model(batch: int = 1):  # type: ignore[no-untyped-def]
    """Inception-like: three branches on a 7x7 plane concatenated on channels; the branch
    of the last slice is computed first, then the first, then the middle one."""
    nodes = [
        helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("Conv", ["x", "w1"], ["a"], kernel_shape=[1, 1]),
        helper.make_node("Conv", ["x", "w3", "b3"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Concat", ["a", "r", "p"], ["y0"], axis=1),
        helper.make_node("Sigmoid", ["y0"], ["y"]),
    ]
    inits = [weight("w1", 5, 6, 1, 1), weight("w3", 3, 6, 3, 3), weight("b3", 3)]
    return _model(nodes, inits, {"x": (batch, 6, 7, 7)}, {"y": (batch, 14, 7, 7)})


def token_model():  # type: ignore[no-untyped-def]
    """[1, S, D] sequences concatenated on S (axis 1, after a size-1 axis): a MatMul's, an
    Add's and a Resize's results; the later slices are computed first."""
    nodes = [
        helper.make_node("Resize", ["x", "", "scales"], ["u"], mode="nearest"),  # [1, 6, 10]
        helper.make_node("Add", ["x", "x"], ["d"]),  # [1, 3, 10]
        helper.make_node("MatMul", ["x", "wm"], ["m"]),  # [1, 3, 10]
        helper.make_node("Concat", ["m", "d", "u"], ["y0"], axis=-2),
        helper.make_node("Neg", ["y0"], ["y"]),
    ]
    inits = [weight("wm", 10, 10), numpy_helper.from_array(np.array([1, 2, 1], np.float32), "scales")]
    return _model(nodes, inits, {"x": (1, 3, 10)}, {"y": (1, 12, 10)})


def refused_model():  # type: ignore[no-untyped-def]
    """Inputs that must stay copies: `a` is read again after the Concat, `x` is the model's
    input, `k` a constant, `b` is concatenated twice (its first use may be in place, its
    second is a copy of it); `n` (a nested Concat's output) is in place, its own inputs too.
    The MatMul's result is stored over the Concat's output, where `a`, stored in its slice,
    would be lost before the last Add reads it."""
    nodes = [
        helper.make_node("Abs", ["x"], ["a"]),
        helper.make_node("Exp", ["x"], ["b"]),
        helper.make_node("Sin", ["x"], ["s"]),
        helper.make_node("Cos", ["x"], ["c"]),
        helper.make_node("Concat", ["s", "c"], ["n"], axis=1),
        helper.make_node("Concat", ["a", "x", "k", "b", "b", "n"], ["y0"], axis=1),
        helper.make_node("Sigmoid", ["y0"], ["g"]),
        helper.make_node("MatMul", ["g", "wr"], ["m"]),
        helper.make_node("Add", ["m", "y0"], ["r"]),  # stored over y0 (`fusion.residual_in_place`)
        helper.make_node("ReduceSum", ["r", "axes"], ["t"], keepdims=1),
        helper.make_node("Add", ["t", "a"], ["y"]),
    ]
    inits = [weight("k", 1, 2, 5), weight("wr", 5, 5), numpy_helper.from_array(np.array([1], np.int64), "axes")]
    return _model(nodes, inits, {"x": (1, 3, 5)}, {"y": (1, 3, 5)})


def _model(nodes, inits, inputs, outputs):  # type: ignore[no-untyped-def]
    graph = helper.make_graph(nodes, "concat", [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in inputs.items()],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in outputs.items()], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("make,in_place,saved", [
    (conv_model, True, 1),
    (token_model, True, 1),
    (lambda: conv_model(batch=2), False, 0),  # channels of 2 images: no contiguous slices
    (refused_model, True, 1),  # the nested Concat has no phase; the top one copies 4 of its 6 inputs
])
def test_concat_in_place_matches_onnxruntime(make, in_place, saved, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    proto = make()
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in proto.graph.input}
    feeds = {n: RNG.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    want = ort_session_run(proto, feeds)[0]
    model = import_onnx(proto)
    np.testing.assert_allclose(run(model, feeds)["y"], want, rtol=1e-5, atol=1e-5)
    phases = {}
    for on in (False, True):
        monkeypatch.setattr(movement, "CONCAT_IN_PLACE", on)
        for threads in (1, 2):
            compiled = compile_model(model, threads=threads, cache_dir=False)
            program = compiled._executable.program
            phases[on] = len(program.phases)
            assert any(b.parent is not None for b in program.buffers) == (on and in_place)
            np.testing.assert_allclose(compiled(feeds)["y"], want, rtol=1e-5, atol=1e-5)
            matches_reference(compiled, model, feeds, rtol=1e-5, atol=1e-5)
    assert phases[True] == phases[False] - saved


def test_refused_inputs_are_copies() -> None:
    """In `refused_model`, the top Concat's `a`, `x`, `k` and the second `b` are copied;
    the first `b` and `n` (with `s` and `c` inside it) are stored in place."""
    compiled = compile_model(import_onnx(refused_model()), threads=1, cache_dir=False)
    program = compiled._executable.program
    copy = next(p for p in program.phases if p.function.endswith(("_blocks", "_copy")))
    # the blocks kernel's table, then a, x, k, b (in place: read back from its slice), the output
    assert [b.kind for b in copy.args] == ["const", "arena", "input", "const", "arena", "arena"]
    assert [b.parent is copy.args[-1] for b in copy.args] == [False, False, False, False, True, False]
    nested = [b for b in program.buffers if b.parent is not None and b.parent.parent is not None]
    assert len(nested) == 2  # s and c, inside n, inside the output
    compiled.close()
