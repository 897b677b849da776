"""What every importer shares: a model builder that evaluates ops on constants at once.

Frameworks compute shapes in the graph (Shape -> Gather -> Concat -> Reshape) and build
weights with ops (ConstantOfShape, Fill). An importer that folds while it builds sees those
values as constants, which extractors need (a Reshape's target, a Pad's pads), and never
emits the shape arithmetic at all.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from irforge.backends.reference import evaluate
from irforge.builder import ModelBuilder
from irforge.dialects.nn.base import NNOp, build
from irforge.dialects.nn.quantize import is_weight_decompression
from irforge.dialects.nn.shape import Tile
from irforge.errors import IrforgeError
from irforge.fold_budget import filled_size_ok, fold_within_budget
from irforge.weights.dtypes import dtype_name


class FoldingBuilder:
    """Appends `nn` ops to a model, evaluating those whose operands are all known."""

    def __init__(self) -> None:
        self.builder = ModelBuilder()
        self.constants: dict[SSAValue, np.ndarray] = {}

    def constant_value(self, value: SSAValue) -> np.ndarray | None:
        return self.constants.get(value)

    def constant(self, array: np.ndarray, name: str, bits: int = 0) -> SSAValue:
        check_dtype(array.dtype, name)
        value = self.builder.constant(array, name, bits)
        self.constants[value] = array
        return value

    def add(self, cls: type[NNOp], operands: Sequence[SSAValue], *, num_results: int = 1, name: str, **props: object) -> list[SSAValue]:
        """Append an op and return its results; evaluate it at once if all operands are constants."""
        op = build(cls, operands, num_results=num_results, name=name, **props)
        known = [self.constants.get(v) for v in operands]
        if operands and all(k is not None for k in known) and not is_weight_decompression(op):
            outputs = fold_within_budget(op.result_types, lambda: evaluate(op, known))  # type: ignore[arg-type]
            if outputs is not None:
                op.drop_all_references()
                if len(outputs) == 1:
                    return [self.constant(outputs[0], name)]
                return [self.constant(array, f"{name}:{i}") for i, array in enumerate(outputs)]
        self.builder.block.add_op(op)
        return list(op.results)

    def filled(self, shape: Sequence[int], value: np.ndarray, name: str) -> SSAValue:
        """A tensor of `shape` holding the one element of `value` everywhere: a constant when
        within the folding budget, else a Tile of that element (computed when the model runs)."""
        value = np.asarray(value).reshape(())
        dims = [int(d) for d in shape]
        if any(d < 0 for d in dims):
            raise IrforgeError(
                f"shape {dims} of {name!r} has a negative dimension",
                fix="give a shape of sizes >= 0",
                code="E013",
            )
        if filled_size_ok(dims, value.dtype):
            return self.constant(np.full(dims, value, value.dtype), name)
        element = self.constant(value.reshape([1] * len(dims)), f"{name}/value")
        return self.add(Tile, [element], name=name, repeats=dims)[0]


def check_dtype(dtype: np.dtype, name: str) -> None:
    try:
        dtype_name(dtype)
    except IrforgeError:
        raise IrforgeError(
            f"tensor '{name}' has element type {dtype}, which irforge does not support",
            fix="convert the model to float32/float16/int32/int64/bool tensors",
            code="E042",
        ) from None
