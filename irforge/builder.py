"""Building models in Python: what frontends, tests and examples use to make `nn` modules."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, TensorType, i64
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region, SSAValue

from irforge.dialects.nn.base import OpT, build
from irforge.dialects.nn.constant import INLINE_LIMIT, Constant
from irforge.errors import IrforgeError, quoted
from irforge.model import Model
from irforge.weights import WeightStore
from irforge.weights.dtypes import to_xdsl


def constant_op(array: np.ndarray, store: WeightStore, name_hint: str, bits: int = 0) -> Constant:
    """An `nn.constant` for `array`: inline when small, else a new entry of `store`; `bits`
    4 marks int8 / uint8 values of the 4-bit range, stored packed (i4 / u4) in an IR."""
    array = np.asarray(array)
    if array.size <= INLINE_LIMIT:
        op = Constant.inline(array)
    else:
        weight = store.add(array, name_hint)
        op = Constant.reference(weight, TensorType(to_xdsl(array.dtype), list(array.shape)))
    if bits:
        op.properties["bits"] = IntegerAttr(bits, i64)
    return op


MAX_INPUT_BYTES = 1 << 50
"""A declared input larger than 1 PiB (a dim of 2**63-1, which OpenVINO reads as dynamic, or
dims whose product overflows int64 sizes) is a corrupt or mistyped shape, not a model."""


def check_input_extent(name: str, shape: Sequence[int], itemsize: int) -> None:
    static = [int(d) for d in shape if int(d) >= 0]
    if any(d > MAX_INPUT_BYTES for d in static) or math.prod(static) * itemsize > MAX_INPUT_BYTES:
        raise IrforgeError(
            f"input {quoted(name)} of shape {[int(d) for d in shape]} would hold more than 1 PiB",
            fix="give its real shape with --input_shape",
            code="E014",
        )


class ModelBuilder:
    """Appends `nn` ops to one function; `finish()` returns the `Model`."""

    def __init__(self, store: WeightStore | None = None) -> None:
        self.store = store if store is not None else WeightStore()
        self.block = Block()
        self._input_names: list[str] = []
        self._outputs: list[tuple[SSAValue, str]] = []

    def input(self, name: str, shape: Sequence[int], dtype: np.dtype | type = np.float32) -> SSAValue:
        check_input_extent(name, shape, np.dtype(dtype).itemsize)
        self._input_names.append(name)
        t = TensorType(to_xdsl(np.dtype(dtype)), list(shape))
        return self.block.insert_arg(t, len(self.block.args))

    def constant(self, array: np.ndarray, name: str = "const", bits: int = 0) -> SSAValue:
        """A constant: inline when small, otherwise a new weight-store entry (`bits`: see
        `constant_op`)."""
        op = constant_op(array, self.store, name, bits)
        self.block.add_op(op)
        return op.output

    def add(
        self,
        cls: type[OpT],
        operands: Sequence[SSAValue],
        *,
        num_results: int = 1,
        name: str | None = None,
        **props: object,
    ) -> OpT:
        op = build(cls, operands, num_results=num_results, name=name, **props)
        self.block.add_op(op)
        return op

    def output(self, value: SSAValue, name: str) -> None:
        self._outputs.append((value, name))

    def finish(self, func_name: str = "main") -> Model:
        values = [v for v, _ in self._outputs]
        self.block.add_op(ReturnOp(*values))
        func = FuncOp(
            func_name,
            ([a.type for a in self.block.args], [v.type for v in values]),
            Region(self.block),
            arg_attrs=_name_attrs(self._input_names),
            res_attrs=_name_attrs([n for _, n in self._outputs]),
        )
        return Model(ModuleOp([func]), self.store)


def _name_attrs(names: Sequence[str]) -> ArrayAttr[DictionaryAttr]:
    return ArrayAttr([DictionaryAttr({"nn.name": StringAttr(n)}) for n in names])
