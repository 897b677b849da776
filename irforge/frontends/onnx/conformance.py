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
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from irforge.errors import IrforgeError, NotConstantError
from irforge.frontends.onnx.registry import DEFAULT_DOMAINS, find_extractor
from irforge.frontends.onnx.sequences import flatten_expected
from irforge.weights.dtypes import dtype_name


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
    """The ops of the graph and of its subgraphs (If branches and Loop bodies fold at import)."""
    for node in graph.node:
        yield (node.domain if node.domain not in DEFAULT_DOMAINS else "", node.op_type)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from graph_ops(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                yield ("", "<subgraph>")


def graph_element_types(graph: onnx.GraphProto) -> Iterator[int]:
    """ONNX element types of the graph's (and its subgraphs') inputs, outputs, initializers
    and Cast targets."""
    for vi in (*graph.input, *graph.output, *graph.value_info):
        # sequences and optionals of tensors are import-time lists (sequences.py); maps have
        # no tensor element type irforge could hold
        yield tensor_element_type(vi.type)
    for tensor in graph.initializer:
        yield tensor.data_type
    for node in graph.node:
        for attr in node.attribute:
            if node.op_type == "Cast" and attr.name == "to":
                yield attr.i
            elif attr.type == onnx.AttributeProto.TENSOR:
                yield attr.t.data_type
            elif attr.type == onnx.AttributeProto.GRAPH:
                yield from graph_element_types(attr.g)


def tensor_element_type(type_: onnx.TypeProto) -> int:
    """The element type of a tensor, or of the tensors of a sequence / optional."""
    which = type_.WhichOneof("value")
    if which == "tensor_type":
        return type_.tensor_type.elem_type
    if which == "sequence_type":
        return tensor_element_type(type_.sequence_type.elem_type)
    if which == "optional_type":
        return tensor_element_type(type_.optional_type.elem_type)
    return onnx.TensorProto.UNDEFINED


FOUR_BIT_TYPES = (onnx.TensorProto.INT4, onnx.TensorProto.UINT4)


def four_bit_inputs(graph: onnx.GraphProto) -> set[str]:
    """Graph inputs of a packed 4-bit type: irforge reads INT4 / UINT4 only as constants, so
    a case's 4-bit inputs are frozen to their values (`import_freezing`)."""
    return {vi.name for vi in graph.input if tensor_element_type(vi.type) in FOUR_BIT_TYPES}


def has_supported_types(graph: onnx.GraphProto) -> bool:
    held_as_constants = {vi.name for vi in graph.input} & four_bit_inputs(graph)
    others = [vi for vi in (*graph.input, *graph.output, *graph.value_info) if vi.name not in held_as_constants]
    types = {tensor_element_type(vi.type) for vi in others}
    types |= {t.data_type for t in graph.initializer if t.data_type not in FOUR_BIT_TYPES}
    rest = onnx.GraphProto()
    rest.node.extend(graph.node)  # Cast targets and attribute tensors
    types |= set(graph_element_types(rest))
    for elem_type in types:
        try:
            dtype_name(np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type)))
        except (IrforgeError, TypeError, KeyError, ValueError):
            return False
    return True


def has_supported_ops_of(graph: onnx.GraphProto) -> bool:
    import irforge.frontends.onnx.extractors  # noqa: F401

    return all(op != "<subgraph>" and find_extractor(d, op) is not None for d, op in graph_ops(graph))


def has_supported_ops(case) -> bool:  # type: ignore[no-untyped-def]
    return has_supported_ops_of(case.model.graph)


def supported_cases() -> list:  # type: ignore[type-arg]
    """Cases whose ops all have extractors and whose tensors have element types irforge has."""
    return [c for c in node_cases() if has_supported_ops(c) and has_supported_types(c.model.graph)]


def unsupported_type_cases() -> list:  # type: ignore[type-arg]
    """Cases of supported ops left out for an element type irforge lacks (bfloat16, float8, int4, ...)."""
    return [c for c in node_cases() if has_supported_ops(c) and not has_supported_types(c.model.graph)]


def _freeze(model: onnx.ModelProto, values: dict[str, np.ndarray]) -> onnx.ModelProto:
    """A copy of `model` whose inputs named in `values` are initializers with those values."""
    frozen = onnx.ModelProto()
    frozen.CopyFrom(model)
    keep = [vi for vi in frozen.graph.input if vi.name not in values]
    frozen.graph.initializer.extend(numpy_helper.from_array(v, name) for name, v in values.items())
    del frozen.graph.input[:]
    frozen.graph.input.extend(keep)
    return frozen


def _array(value: object) -> np.ndarray:
    """A case's input or output as an array; a sequence stays a list of arrays and an empty
    optional None (`sequences.bind_structured_inputs` / `flatten_expected` take those)."""
    if value is None:
        return value  # type: ignore[return-value]
    if isinstance(value, list):
        return [_array(v) for v in value]  # type: ignore[return-value]
    return numpy_helper.to_array(value) if isinstance(value, onnx.TensorProto) else np.asarray(value)


def import_freezing(model: onnx.ModelProto, feeds: dict[str, np.ndarray]):  # type: ignore[no-untyped-def]
    """Import `model`; inputs that conversion needs as constants are frozen to their feeds.

    Returns the model and the feeds left to pass at run time."""
    from irforge.frontends.onnx.importer import import_onnx
    from irforge.frontends.onnx.sequences import bind_structured_inputs

    model, feeds = bind_structured_inputs(model, feeds)  # sequence inputs: one tensor input per element
    frozen: dict[str, np.ndarray] = {k: v for k, v in feeds.items() if k in four_bit_inputs(model.graph)}
    while True:
        try:
            model_ir = import_onnx(_freeze(model, frozen) if frozen else model)
            return model_ir, {k: v for k, v in feeds.items() if k not in frozen}
        except NotConstantError as e:
            if e.tensor in feeds and e.tensor not in frozen:
                frozen[e.tensor] = feeds[e.tensor]
                continue
            # computed from inputs: freeze the integer ones, which carry shapes and indices
            integers = {k: v for k, v in feeds.items() if np.issubdtype(v.dtype, np.integer)}
            if set(integers) <= set(frozen):
                raise
            frozen.update(integers)


def run_case(case, execute=None) -> Outcome:  # type: ignore[no-untyped-def]
    """Every data set of `case` through the import and `execute(model, feeds)` (default: the
    reference interpreter; ir-conformance passes a backend's)."""
    from irforge.backends.reference import run
    from irforge.frontends.onnx.importer import model_inputs

    execute = execute or run
    names = model_inputs(case.model)
    for inputs, expected in case.data_sets:
        inputs, expected = [_array(v) for v in inputs], flatten_expected([_array(v) for v in expected])
        try:
            model, feeds = import_freezing(case.model, dict(zip(names, inputs)))
        except IrforgeError as e:
            return Outcome(False, f"import: {e}")
        with np.errstate(all="ignore"):
            outputs = list(execute(model, feeds).values())
        for i, (got, want) in enumerate(zip(outputs, expected, strict=True)):
            if got.shape != want.shape or got.dtype != want.dtype:
                return Outcome(False, f"output {i}: {got.dtype}{list(got.shape)} != {want.dtype}{list(want.shape)}")
            try:
                np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)
            except AssertionError as e:
                return Outcome(False, f"output {i}: " + " ".join(str(e).split())[:300])
    return Outcome(True)


DATA_MODEL_KINDS = ("simple", "pytorch-operator", "pytorch-converted")


@dataclass(frozen=True)
class DataModel:
    """A model of onnx/backend/test/data with its test data sets (inputs and outputs)."""

    name: str
    path: Path

    @property
    def model(self) -> onnx.ModelProto:
        return onnx.load(str(self.path / "model.onnx"))

    def data_sets(self) -> Iterator[tuple[list[np.ndarray], list[np.ndarray]]]:
        for directory in sorted(self.path.glob("test_data_set_*")):
            yield tuple(  # type: ignore[misc]
                [numpy_helper.to_array(onnx.load_tensor(str(p))) for p in sorted(directory.glob(f"{kind}_*.pb"))]
                for kind in ("input", "output")
            )


def supported_data_models() -> list[DataModel]:
    """The shipped small models (simple, pytorch-operator, pytorch-converted) irforge supports."""
    root = Path(onnx.__file__).parent / "backend" / "test" / "data"
    found = []
    for kind in DATA_MODEL_KINDS:
        for path in sorted((root / kind).iterdir()):
            entry = DataModel(f"{kind}/{path.name}", path)
            graph = entry.model.graph
            if has_supported_ops_of(graph) and has_supported_types(graph):
                found.append(entry)
    return found


def run_data_model(entry: DataModel, rtol: float = 1e-3, atol: float = 1e-7) -> Outcome:
    """Import and run on every data set; onnx's backend runner uses these tolerances."""
    from types import SimpleNamespace

    case = SimpleNamespace(name=entry.name, model=entry.model, rtol=rtol, atol=atol, data_sets=list(entry.data_sets()))
    return run_case(case)


def safe_run_case(case) -> Outcome:  # type: ignore[no-untyped-def]
    try:
        return run_case(case)
    except Exception as e:  # the report goes on; pytest runs run_case itself to show tracebacks
        return Outcome(False, f"{type(e).__name__}: {e}")


def safe_run_data_model(entry: DataModel) -> Outcome:
    try:
        return run_data_model(entry)
    except Exception as e:  # as safe_run_case
        return Outcome(False, f"{type(e).__name__}: {e}")


def main() -> None:
    import irforge.frontends.onnx.extractors  # noqa: F401
    from irforge.frontends.onnx.registry import EXTRACTORS

    models = supported_data_models()
    model_failures = [(m.name, o.message) for m in models if not (o := safe_run_data_model(m)).passed]
    for name, message in model_failures:
        print(f"FAIL {name}: {message}")
    print(f"data models (simple, pytorch-operator, pytorch-converted) run: {len(models)}, passed: {len(models) - len(model_failures)}")
    cases = supported_cases()
    failures = [(c.name, o.message) for c in cases if not (o := safe_run_case(c)).passed]
    for name, message in failures:
        print(f"FAIL {name}: {message}")
    print(
        f"supported ops: {len(EXTRACTORS)}, node cases run: {len(cases)}, passed: {len(cases) - len(failures)} "
        f"(not run: {len(unsupported_type_cases())} cases of supported ops with unsupported element types, "
        f"{len(node_cases()) - len(cases) - len(unsupported_type_cases())} cases with unsupported ops)"
    )


if __name__ == "__main__":
    main()
