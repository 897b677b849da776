"""The table from MXNet op name to its extractor, and the context an extractor works in.

An extractor is a small function `(ctx: NodeContext) -> SSAValue | Sequence[SSAValue]`
returning the node's outputs. It reads the node's inputs (values, or the arrays of weight
nodes), its string attributes through `ctx.attrs` (typed, with MXNet's defaults) and builds
`nn` ops. Extensions register more with `@mxnet_extractor("MyOp")`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irforge.errors import IrforgeError
from irforge.frontends.context import BuildContext
from irforge.frontends.mxnet.symbol import Attrs, Node

if TYPE_CHECKING:
    from irforge.frontends.mxnet.importer import SymbolImporter

Extractor = Callable[["NodeContext"], "SSAValue | Sequence[SSAValue]"]

EXTRACTORS: dict[str, Extractor] = {}

IGNORED_INPUTS: dict[str, frozenset[int]] = {}
"""Inputs an op reads only while training (SoftmaxOutput's label): never model inputs."""
WEIGHT_INPUTS: dict[str, frozenset[int]] = {}
"""Inputs an op reads as weights: a node there without an array in the .params is missing
weights, not a model input."""


def mxnet_extractor(*ops: str, ignored_inputs: Sequence[int] = (), weights: Sequence[int] = ()) -> Callable[[Extractor], Extractor]:
    """Register the decorated function as the extractor of the MXNet ops `ops`;
    `ignored_inputs` are input positions it never reads (labels of loss layers), `weights`
    those it reads from the .params."""

    def register(fn: Extractor) -> Extractor:
        for op in ops:
            EXTRACTORS[op] = fn
            IGNORED_INPUTS[op] = frozenset(ignored_inputs)
            WEIGHT_INPUTS[op] = frozenset(weights)
        return fn

    return register


class NodeContext(BuildContext):
    """What an extractor sees of one MXNet node: inputs, attributes, weights, a builder."""

    def __init__(self, importer: SymbolImporter, node: Node) -> None:
        self.importer = importer
        self.node = node
        self.name = node.name
        self.op = node.op
        self.attrs: Attrs = node.attrs

    @property
    def where(self) -> str:
        return f"MXNet node '{self.name}' ({self.op})"

    def fail(self, message: str, fix: str | None = None) -> IrforgeError:
        return IrforgeError(message, where=self.where, fix=fix, code="E412")

    # -- inputs ----------------------------------------------------------------------------
    @property
    def num_inputs(self) -> int:
        return len(self.node.inputs)

    def input(self, index: int) -> SSAValue:
        if index >= self.num_inputs:
            raise self.fail(f"needs at least {index + 1} inputs, has {self.num_inputs}")
        return self.importer.value(self.node.inputs[index], self)

    def inputs(self) -> list[SSAValue]:
        return [self.input(i) for i in range(self.num_inputs)]

    def shape(self, index: int = 0, rank: int | None = None) -> tuple[int, ...]:
        """The static shape of input `index`; with `rank`, a one-line error for another rank."""
        t = self.input(index).type
        assert isinstance(t, TensorType)
        shape = tuple(t.get_shape())
        if rank is not None and len(shape) != rank:
            raise self.fail(f"input #{index} has rank {len(shape)} (shape {list(shape)}), this layer needs rank {rank}")
        return shape

    def array(self, index: int, shape: Sequence[int] | None = None) -> np.ndarray:
        """Input `index` as a float32 weight array from the .params (reshaped to `shape`)."""
        if index >= self.num_inputs:
            raise self.fail(f"needs at least {index + 1} inputs, has {self.num_inputs}")
        array = self.importer.weight_of(self.node.inputs[index], self)
        if shape is not None:
            if array.size != int(np.prod(shape)):
                raise IrforgeError(
                    f"weight '{self.importer.node_name(self.node.inputs[index])}' has shape {list(array.shape)}, "
                    f"this node needs {list(shape)}",
                    where=self.where,
                    fix="give the .params file saved with this symbol file",
                    code="E404",
                )
            array = array.reshape(tuple(shape))
        return array

    def named_array(self, name: str, shape: Sequence[int]) -> np.ndarray:
        """The float32 weight `name` of the .params that no input names (an aux state of a
        0.8 file), checked against `shape`."""
        array = self.importer.named_weight(name)
        if array is None:
            raise IrforgeError(f"the weights have no array for {name}", where=self.where, fix="give the .params file saved with this symbol file", code="E406")
        if array.size != int(np.prod(shape)):
            raise IrforgeError(f"weight '{name}' has shape {list(array.shape)}, this node needs {list(shape)}", where=self.where, code="E404")
        return array.reshape(tuple(shape))

    def weight(self, index: int, shape: Sequence[int] | None = None, suffix: str = "/weights") -> SSAValue:
        """Input `index` as a constant, checked (and reshaped) to `shape`."""
        return self.constant(self.array(index, shape), suffix)
