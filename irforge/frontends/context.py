"""What an extractor of any framework uses to build `nn` ops for one node or layer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException

from irforge.errors import IrforgeError

if TYPE_CHECKING:
    from irforge.dialects.nn.base import NNOp
    from irforge.frontends.folding import FoldingBuilder


class BuildContext:
    """Builds ops named after the framework node `name` (helper ops add a `suffix`); a bad
    property becomes a one-line error that names the node (`where`)."""

    importer: FoldingBuilder
    name: str

    @property
    def where(self) -> str:
        raise NotImplementedError

    def add(self, cls: type[NNOp], operands: Sequence[SSAValue], *, num_results: int = 1, suffix: str = "", **props: object) -> list[SSAValue]:
        """Append an op (evaluated at once if its operands are constants); its results."""
        try:
            return self.importer.add(cls, operands, num_results=num_results, name=self.name + suffix, **props)
        except VerifyException as e:
            raise self.fail(str(e).splitlines()[0]) from None

    def value(self, cls: type[NNOp], operands: Sequence[SSAValue], *, suffix: str = "", **props: object) -> SSAValue:
        """The single result of `add(...)`."""
        return self.add(cls, operands, suffix=suffix, **props)[0]

    def constant(self, array: np.ndarray, suffix: str = "/const", bits: int = 0) -> SSAValue:
        """A constant named after the node; `bits` 4 stores int8 / uint8 values packed (i4 /
        u4) in an IR (see `irforge.builder.constant_op`)."""
        return self.importer.constant(np.asarray(array), self.name + suffix, bits)

    def filled(self, shape: Sequence[int], value: np.ndarray, suffix: str = "") -> SSAValue:
        """`shape` filled with the one element of `value` (a Tile when too big to fold)."""
        return self.importer.filled(shape, value, self.name + suffix)

    def fail(self, message: str, fix: str | None = None) -> IrforgeError:
        # E041: a node or layer whose attributes, inputs or shapes the importer cannot take
        fix = fix or "check the node's attributes and inputs against the framework's definition of the op"
        return IrforgeError(message, where=self.where, fix=fix, code="E041")
