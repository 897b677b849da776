"""ONNX's own backend node tests through irforge: import -> reference interpreter -> compare.

The `onnx` wheel builds its 1,884 node cases (model, inputs, expected outputs, tolerances)
offline. A case runs when every op of its graph has an extractor. Integer inputs that the
importer needs as constants (a Reshape's shape fed as a graph input) are frozen to the data
set's values, as mo.py's --freeze_placeholder_with_value would.

    python -m irforge.frontends.onnx.conformance   # prints the summary line
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import numpy as np
import onnx
from onnx import numpy_helper

from irforge.errors import IrforgeError
from irforge.frontends.onnx.registry import DEFAULT_DOMAINS, find_extractor


@dataclass(frozen=True)
class Outcome:
    passed: bool
    message: str = ""


@cache
def node_cases() -> tuple:  # type: ignore[type-arg]
    """All ONNX backend node test cases (built by the onnx package, about 4-8 s)."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return tuple(collect_testcases(None))


def graph_ops(graph: onnx.GraphProto) -> Iterator[tuple[str, str]]:
    for node in graph.node:
        yield (node.domain if node.domain not in DEFAULT_DOMAINS else "", node.op_type)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield ("", "<subgraph>")


def is_supported(case) -> bool:  # type: ignore[no-untyped-def]
    import irforge.frontends.onnx.extractors  # noqa: F401

    return all(op != "<subgraph>" and find_extractor(d, op) is not None for d, op in graph_ops(case.model.graph))


def supported_cases() -> list:  # type: ignore[type-arg]
    return [c for c in node_cases() if is_supported(c)]


def _freeze(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> onnx.ModelProto:
    """A copy of `model` whose integer inputs are initializers with the given values."""
    frozen = onnx.ModelProto()
    frozen.CopyFrom(model)
    keep = []
    for vi in frozen.graph.input:
        value = inputs.get(vi.name)
        if value is not None and np.issubdtype(value.dtype, np.integer):
            frozen.graph.initializer.append(numpy_helper.from_array(value, vi.name))
        else:
            keep.append(vi)
    del frozen.graph.input[:]
    frozen.graph.input.extend(keep)
    return frozen


def run_case(case) -> Outcome:  # type: ignore[no-untyped-def]
    from irforge.backends.reference import run
    from irforge.frontends.onnx.importer import import_onnx, model_inputs

    names = model_inputs(case.model)
    for inputs, expected in case.data_sets:
        feeds = dict(zip(names, inputs))
        try:
            model = import_onnx(case.model)
        except IrforgeError as e:
            if "known at conversion time" not in str(e):
                return Outcome(False, f"import: {e}")
            model = import_onnx(_freeze(case.model, feeds))
            feeds = {k: v for k, v in feeds.items() if not np.issubdtype(v.dtype, np.integer)}
        with np.errstate(all="ignore"):
            outputs = list(run(model, feeds).values())
        for i, (got, want) in enumerate(zip(outputs, expected, strict=True)):
            want = np.asarray(want)
            if got.shape != want.shape or got.dtype != want.dtype:
                return Outcome(False, f"output {i}: {got.dtype}{list(got.shape)} != {want.dtype}{list(want.shape)}")
            try:
                np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)
            except AssertionError as e:
                return Outcome(False, f"output {i}: " + " ".join(str(e).split())[:300])
    return Outcome(True)


def safe_run_case(case) -> Outcome:  # type: ignore[no-untyped-def]
    try:
        return run_case(case)
    except Exception as e:  # the report goes on; pytest runs run_case itself to show tracebacks
        return Outcome(False, f"{type(e).__name__}: {e}")


def main() -> None:
    import irforge.frontends.onnx.extractors  # noqa: F401
    from irforge.frontends.onnx.registry import EXTRACTORS

    cases = supported_cases()
    failures = [(c.name, o.message) for c in cases if not (o := safe_run_case(c)).passed]
    for name, message in failures:
        print(f"FAIL {name}: {message}")
    print(f"supported ops: {len(EXTRACTORS)}, node cases run: {len(cases)}, passed: {len(cases) - len(failures)}")


if __name__ == "__main__":
    main()
