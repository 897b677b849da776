"""ONNX's backend node cases through the CPU backend: import -> compile -> run -> compare.

The cases run are those the importer supports whose tensors are all f32 and whose imported
ops all have CPU lowerings; each is compared with its expected outputs at the case's own
tolerances, on every data set. Known failures are listed with their reasons in
onnx_node_expected_failures.txt beside this file (strict xfail: a fixed case must leave
the list). `test_case_count` prints how many cases run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from xdsl.dialects.func import ReturnOp

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.lower import LOWERINGS
from irforge.dialects.nn.constant import Constant
from irforge.frontends.onnx.conformance import _array, graph_element_types, import_freezing, supported_cases
from irforge.frontends.onnx.importer import model_inputs
from irforge.model import Model
from tests.helpers import read_expected_failures

EXPECTED_FAILURES_FILE = Path(__file__).with_name("onnx_node_expected_failures.txt")


def expected_failures() -> dict[str, str]:
    return read_expected_failures(EXPECTED_FAILURES_FILE)


def data_sets(case) -> list[tuple[list[np.ndarray], list[np.ndarray]]]:  # type: ignore[no-untyped-def]
    return [([_array(v) for v in inputs], [_array(v) for v in outputs]) for inputs, outputs in case.data_sets]


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


def cpu_cases() -> list:  # type: ignore[type-arg]
    f32 = [c for c in supported_cases() if set(graph_element_types(c.model.graph)) <= {onnx.TensorProto.FLOAT}]
    return [c for c in f32 if (entry := imported(c)) is not None and has_cpu_kernels(entry[0])]


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
