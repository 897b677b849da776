"""ONNX's backend node cases through the CPU backend: import -> compile -> run -> compare.

The cases run are those the importer supports whose tensors are all f32 and whose imported
ops all have CPU lowerings, and those of f32, i64 and bool tensors whose ops all run on the
host (host steps, data-dependent shapes) or natively on f32, i64 and bool values; each is
compared with its expected outputs at the case's own tolerances, on every data set. Known failures are listed with their reasons in
onnx_node_expected_failures.txt beside this file (strict xfail: a fixed case must leave
the list). `test_case_count` prints how many cases run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from xdsl.dialects.builtin import TensorType, f32, i1, i64
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Operation

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.host_steps import HOST_STEP_OPS
from irforge.backends.cpu.lower import LOWERINGS
from irforge.backends.segments import has_data_dependent_shapes, touches_dynamic
from irforge.dialects.nn.constant import Constant
from irforge.frontends.onnx.conformance import _array, graph_element_types, import_freezing, supported_cases
from irforge.frontends.onnx.importer import model_inputs
from irforge.frontends.onnx.sequences import flatten_expected
from irforge.model import Model
from tests.helpers import read_expected_failures

EXPECTED_FAILURES_FILE = Path(__file__).with_name("onnx_node_expected_failures.txt")


def expected_failures() -> dict[str, str]:
    return read_expected_failures(EXPECTED_FAILURES_FILE)


def data_sets(case) -> list[tuple[list[np.ndarray], list[np.ndarray]]]:  # type: ignore[no-untyped-def]
    return [([_array(v) for v in inputs], flatten_expected([_array(v) for v in outputs])) for inputs, outputs in case.data_sets]


def imported(case) -> tuple[Model, dict[str, np.ndarray]] | None:  # type: ignore[no-untyped-def]
    """The case's model imported with its first data set's frozen inputs; None if it fails
    to import (the reference conformance test reports those)."""
    import irforge.backends.cpu.ops  # noqa: F401  (registers the lowerings)

    inputs, _ = data_sets(case)[0]
    try:
        return import_freezing(case.model, dict(zip(model_inputs(case.model), inputs)))
    except Exception:  # noqa: BLE001
        return None


def has_cpu_kernels(model: Model) -> bool:
    return all(isinstance(op, Constant | ReturnOp) or type(op) in LOWERINGS for op in model.func.body.block.ops)


def runs_on_host_or_natively(model: Model) -> bool:
    """Every op touches a data-dependent dim (a host segment), is a host step (its reference
    kernel, any element type), or is lowered natively on f32, i64 and bool values only (the
    index arithmetic of compositions: loss targets, KV-cache write positions, masks)."""

    def native_types(op: Operation) -> bool:
        return all(isinstance(v.type, TensorType) and v.type.element_type in (f32, i64, i1) for v in (*op.operands, *op.results))

    return all(
        isinstance(op, Constant | ReturnOp) or touches_dynamic(op) or type(op) in HOST_STEP_OPS
        or (type(op) in LOWERINGS and native_types(op))
        for op in model.func.body.block.ops
    )  # fmt: skip


def cpu_cases() -> list:  # type: ignore[type-arg]
    """f32 cases whose ops all lower; and f32/i64/bool cases whose ops lower on those types,
    have data-dependent shapes (NonZero, NonMaxSuppression, TopK of a run-time k: segments)
    or are host steps (indexing, box and recurrent ops)."""
    chosen = []
    for case in supported_cases():
        types = set(graph_element_types(case.model.graph))
        if not types <= {onnx.TensorProto.FLOAT, onnx.TensorProto.INT64, onnx.TensorProto.BOOL}:
            continue
        entry = imported(case)
        if entry is None:
            continue
        model = entry[0]
        if types <= {onnx.TensorProto.FLOAT} and has_cpu_kernels(model):
            chosen.append(case)
        elif has_cpu_kernels(model) and runs_on_host_or_natively(model):  # i64/bool index arithmetic, or inputs frozen into constants
            chosen.append(case)
        elif has_data_dependent_shapes(model):  # segments: every op runs, natively or on the host
            chosen.append(case)
        elif runs_on_host_or_natively(model) and any(type(op) in HOST_STEP_OPS for op in model.func.body.block.ops):
            chosen.append(case)
    return chosen


XFAIL = expected_failures()
CASES = cpu_cases()


def test_expected_failures_name_real_cases() -> None:
    assert not set(XFAIL) - {c.name for c in CASES}, f"stale entries: {sorted(set(XFAIL) - {c.name for c in CASES})}"


def test_case_count(capsys) -> None:  # type: ignore[no-untyped-def]
    with capsys.disabled():
        print(f"\nONNX node cases on the CPU backend: {len(CASES)} run, {len(CASES) - len(XFAIL)} expected to pass, "
              f"{len(XFAIL)} expected failures")
    assert len(CASES) > 250


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=XFAIL[c.name])) if c.name in XFAIL else c for c in CASES],
    ids=lambda c: c.name,
)
def test_node_case_on_cpu(case, cache_dir) -> None:  # type: ignore[no-untyped-def]
    names = model_inputs(case.model)
    for inputs, expected in data_sets(case):
        model, feeds = import_freezing(case.model, dict(zip(names, inputs)))
        compiled = compile_model(model, threads=1, cache_dir=cache_dir)
        try:
            outputs = list(compiled(feeds).values())
        finally:
            compiled.close()
        for i, (got, want) in enumerate(zip(outputs, expected, strict=True)):
            assert got.shape == want.shape and got.dtype == want.dtype, f"output {i}: {got.dtype}{list(got.shape)}"
            np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol, err_msg=f"output {i}")
