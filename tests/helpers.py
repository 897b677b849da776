"""Shared test utilities: one-op models on the reference interpreter and on onnxruntime."""

from __future__ import annotations

from collections.abc import Sequence

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn.base import NNOp
from irforge.model import Model, make_context, parse_module, print_module


def one_op_model(
    cls: type[NNOp],
    inputs: Sequence[np.ndarray],
    constants: Sequence[np.ndarray] = (),
    num_results: int = 1,
    **props: object,
) -> Model:
    """A model whose function applies one `cls` op to `inputs` (args) and `constants`."""
    b = ModelBuilder()
    args = [b.input(f"x{i}", x.shape, x.dtype) for i, x in enumerate(inputs)]
    consts = [b.constant(c, f"c{i}") for i, c in enumerate(constants)]
    op = b.add(cls, [*args, *consts], num_results=num_results, **props)
    for i, r in enumerate(op.results):
        b.output(r, f"y{i}")
    return b.finish()


def run_op(
    cls: type[NNOp],
    inputs: Sequence[np.ndarray],
    constants: Sequence[np.ndarray] = (),
    num_results: int = 1,
    **props: object,
) -> list[np.ndarray]:
    """Reference outputs of one `cls` op; also checks the printed IR parses back identically."""
    model = one_op_model(cls, inputs, constants, num_results, **props)
    assert_round_trip(model)
    out = run(model, {f"x{i}": x for i, x in enumerate(inputs)})
    results = [out[f"y{i}"] for i in range(num_results)]
    for r, result in zip(results, model.func.function_type.outputs):
        assert list(r.shape) == list(result.get_shape()), "kernel shape differs from inferred shape"
    return results


def assert_round_trip(model: Model) -> None:
    text = print_module(model.module)
    assert print_module(parse_module(text, make_context())) == text


def onnx_run(
    op_type: str,
    inputs: Sequence[np.ndarray],
    initializers: Sequence[np.ndarray] = (),
    num_outputs: int = 1,
    opset: int = 17,
    **attrs: object,
) -> list[np.ndarray]:
    """Outputs of a one-node ONNX model in onnxruntime (inputs first, then initializers)."""
    names = [f"x{i}" for i in range(len(inputs))] + [f"c{i}" for i in range(len(initializers))]
    node = helper.make_node(op_type, names, [f"y{i}" for i in range(num_outputs)], **attrs)
    graph = helper.make_graph(
        [node],
        "one_op",
        [
            helper.make_tensor_value_info(f"x{i}", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
            for i, x in enumerate(inputs)
        ],
        [helper.make_empty_tensor_value_info(f"y{i}") for i in range(num_outputs)],
        [numpy_helper.from_array(c, f"c{i}") for i, c in enumerate(initializers)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, {f"x{i}": x for i, x in enumerate(inputs)})


def rand(*shape: int, seed: int = 0, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)


def ort_session_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Outputs of a whole ONNX model in onnxruntime (graph optimisations off)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def read_expected_failures(path: Path) -> dict[str, str]:
    """`case_name: reason` lines of an expected-failures file (# starts a comment line)."""
    entries = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, reason = line.partition(":")
            entries[name.strip()] = reason.strip()
    return entries


def winograd_phase_tags() -> list[str]:
    """The phase tags of one Winograd layer: input transform, GEMMs, output transform, and
    around them the non-finite guard's scan and fix-up where `winograd.NONFINITE_GUARD` is on."""
    from irforge.backends.cpu.ops import winograd

    guard = ["winograd"] * winograd.NONFINITE_GUARD
    return [*guard, "winograd", "conv3x3", "winograd", *guard]
