"""Findings of session 12 (the wrong numbers session 11 left open, and fuzz_session11_ops.py's
seeds of session 11's code, mutated): each input that gave a number other than onnxruntime's,
an internal error or a multi-line error is now onnxruntime's number or a one-line coded error."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx


def _model(nodes: list, inputs: list, inits: list | None = None, opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", T.FLOAT, None)], inits or [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _gather(elements: bool, index_type: int) -> onnx.ModelProto:
    """Gather (axis 1) or GatherElements (axis 1) of a [2, 5, 3] tensor by run-time indices."""
    op = "GatherElements" if elements else "Gather"
    shape = [2, 4, 3] if elements else [2, 3]
    return _model([helper.make_node(op, ["x", "i"], ["y"], axis=1)],
                  [helper.make_tensor_value_info("x", T.FLOAT, [2, 5, 3]), helper.make_tensor_value_info("i", index_type, shape)])


@pytest.mark.parametrize("elements", [False, True])
@pytest.mark.parametrize(("index_type", "dtype"), [(T.INT64, np.int64), (T.INT32, np.int32)])
@pytest.mark.parametrize("bad", [5, -6, 1 << 40])
def test_native_gather_of_an_index_out_of_range_is_e880(tmp_path, elements: bool, index_type: int, dtype, bad: int) -> None:
    """The native Gather / GatherElements kernels gave 0 for an index outside [-5, 5) where the
    reference and onnxruntime raise: a silent number on cpu. The kernel now sets a check word
    and the executable raises the reference's error after the run (Gather's E858,
    GatherElements' E880); in-range indices (negative
    ones from the end) still give onnxruntime's numbers, and the next run with good indices
    is not reported."""
    from irforge.backends.cpu import compile_model
    from irforge.backends.reference import run

    if index_type == T.INT32 and bad == 1 << 40:
        bad = -(1 << 31)
    proto = _gather(elements, index_type)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 3)).astype(np.float32)
    shape = (2, 4, 3) if elements else (2, 3)
    good = rng.integers(-5, 5, shape).astype(dtype)
    compiled = compile_model(import_onnx(proto), threads=2, cache_dir=tmp_path / "cache")
    try:
        from tests.helpers import ort_session_run

        (want,) = ort_session_run(proto, {"x": x, "i": good})
        np.testing.assert_array_equal(compiled({"x": x, "i": good})["y"], want)
        wrong = good.copy()
        wrong.flat[-2] = bad
        with pytest.raises(IrforgeError) as caught:
            compiled({"x": x, "i": wrong})
        with pytest.raises(IrforgeError) as expected:
            run(import_onnx(proto), {"x": x, "i": wrong})
        assert caught.value.code == expected.value.code == ("E880" if elements else "E858")
        text = f"index {bad} is out of range for a dim of size 5" if elements else f"indices must be in [-5, 4] for axis 1 (index {bad})"
        assert text in str(caught.value), caught.value
        np.testing.assert_array_equal(compiled({"x": x, "i": good})["y"], want)
    finally:
        compiled.close()


def test_native_gather_error_survives_the_program_cache(tmp_path) -> None:
    """A cached program (no lowering) still has the check word and its message."""
    from irforge.backends.cpu import compile_model

    proto = _gather(False, T.INT64)
    x = np.ones((2, 5, 3), np.float32)
    for _ in range(2):  # the second compile is a program-cache hit
        compiled = compile_model(import_onnx(proto), threads=1, cache_dir=tmp_path / "cache")
        try:
            with pytest.raises(IrforgeError, match=r"\(index 7\)") as caught:
                compiled({"x": x, "i": np.array([[0, 1, 7], [0, 0, 0]], np.int64)})
            assert caught.value.code == "E858"
        finally:
            compiled.close()
