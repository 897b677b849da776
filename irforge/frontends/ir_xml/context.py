"""The table from IR layer type to its reader, and what a reader sees of one layer.

A reader is a small function `(ctx: LayerContext) -> SSAValue | Sequence[SSAValue | None]`
giving one value per output port of the layer (None for an output nothing reads). Readers
take constant inputs (axes, shapes, pads) as values known at conversion time, as `nn` keeps
them as properties.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException

from irforge.errors import IrforgeError
from irforge.frontends.ir_xml.parse import IrLayer

if TYPE_CHECKING:
    from irforge.dialects.nn.base import NNOp
    from irforge.frontends.ir_xml.importer import IrImporter

Reader = Callable[["LayerContext"], "SSAValue | Sequence[SSAValue | None]"]
READERS: dict[str, Reader] = {}


def ir_layer_reader(*layer_types: str) -> Callable[[Reader], Reader]:
    """Register the decorated function as the reader of `layer_types`."""

    def register(fn: Reader) -> Reader:
        for layer_type in layer_types:
            READERS[layer_type] = fn
        return fn

    return register


class LayerContext:
    """One layer's inputs, attributes and consumers, and a builder of `nn` ops named after it."""

    def __init__(self, importer: IrImporter, layer: IrLayer, sources: list[tuple[int, int]]) -> None:
        self.importer = importer
        self.layer = layer
        self._sources = sources

    # -- inputs ------------------------------------------------------------------------
    @property
    def num_inputs(self) -> int:
        return len(self._sources)

    def source(self, index: int) -> tuple[int, int]:
        if index >= len(self._sources):
            raise self.fail(f"input #{index} is required")
        return self._sources[index]

    def input(self, index: int) -> SSAValue:
        return self.importer.value_at(self.source(index))

    def shape(self, index: int) -> tuple[int, ...]:
        pending = self.importer.pending.get(self.source(index))
        if pending is not None:
            return tuple(pending[0].shape)
        t = self.input(index).type
        assert isinstance(t, TensorType)
        return tuple(t.get_shape())

    def rank(self, index: int = 0) -> int:
        return len(self.shape(index))

    def const(self, index: int, what: str) -> np.ndarray:
        """The value of input `index`, which must be known at conversion time."""
        value = self.importer.constant_at(self.source(index))
        if value is None:
            raise self.fail(f"{what} (input #{index}) must be a constant", fix="constant-fold the model (e.g. with OpenVINO's ovc)")
        return value

    def const_ints(self, index: int, what: str) -> list[int]:
        return [int(v) for v in np.asarray(self.const(index, what)).reshape(-1)]

    def scalar(self, index: int, what: str) -> float:
        value = np.asarray(self.const(index, what))
        if value.size != 1:
            raise self.fail(f"{what} (input #{index}) must hold one value, got shape {list(value.shape)}")
        return float(value.reshape(-1)[0])

    def output_used(self, index: int) -> bool:
        return self.importer.is_used(self.layer, index)

    # -- attributes --------------------------------------------------------------------
    def attr(self, name: str, default: str | None = None) -> str:
        value = self.layer.data.get(name, default)
        if value is None:
            raise self.fail(f"attribute '{name}' is missing")
        return value

    def ints(self, name: str, default: str | None = None) -> list[int]:
        text = self.attr(name, default).strip()
        try:
            values = [int(v) for v in text.split(",")] if text else []
        except ValueError:
            values = None
        # out of int64, a value would fail deep in xDSL instead of here
        if values is None or any(not -(2**63) <= v < 2**63 for v in values):
            raise self.fail(f"attribute {name}={text!r} is not a list of 64-bit integers")
        return values

    def floats(self, name: str, default: str | None = None) -> list[float]:
        text = self.attr(name, default).strip()
        try:
            return [float(v) for v in text.split(",")] if text else []
        except ValueError:
            raise self.fail(f"attribute {name}='{text}' is not a list of numbers") from None

    def float(self, name: str, default: str | None = None) -> float:
        try:
            return float(self.attr(name, default))
        except ValueError:
            raise self.fail(f"attribute {name}='{self.attr(name, default)}' is not a number") from None

    def int(self, name: str, default: str | None = None) -> int:
        try:
            value = int(self.attr(name, default))
        except ValueError:
            value = None
        if value is None or not -(2**63) <= value < 2**63:
            raise self.fail(f"attribute {name}={self.attr(name, default)!r} is not a 64-bit integer")
        return value

    def bool(self, name: str, default: str | None = None) -> bool:
        text = self.attr(name, default).lower()
        if text not in ("true", "false", "1", "0"):
            raise self.fail(f"attribute {name}='{text}' is not true or false")
        return text in ("true", "1")

    # -- building ----------------------------------------------------------------------
    def add(self, cls: type[NNOp], operands: Sequence[SSAValue], *, num_results: int = 1, suffix: str = "", **props: object) -> list[SSAValue]:
        """Append an `nn` op named after the layer (plus `suffix` for helper ops)."""
        try:
            return self.importer.add(cls, operands, num_results=num_results, name=self.layer.name + suffix, **props)
        except VerifyException as e:
            raise self.fail(str(e).splitlines()[0]) from None

    def value(self, cls: type[NNOp], operands: Sequence[SSAValue], *, suffix: str = "", **props: object) -> SSAValue:
        return self.add(cls, operands, suffix=suffix, **props)[0]

    def constant(self, array: np.ndarray, suffix: str) -> SSAValue:
        return self.importer.constant(np.asarray(array), self.layer.name + suffix)

    def reshaped(self, index: int, dims: Sequence[int], suffix: str) -> SSAValue:
        """Input `index` in new (known) dims: a reshaped view of a Const (named as the Const,
        which is then not needed), else an nn.reshape."""
        from irforge.dialects.nn.shape import Reshape

        pending = self.importer.pending.get(self.source(index))
        if pending is not None:
            return self.importer.constant(pending[0].reshape(tuple(dims)), pending[1], pending[2])
        return self.value(Reshape, [self.input(index)], suffix=suffix, shape=list(dims), special_zero=False)

    def fail(self, message: str, fix: str | None = None) -> IrforgeError:
        return IrforgeError(message, where=self.layer.label, fix=fix, code="E640")
