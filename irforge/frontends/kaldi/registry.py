"""The table from Kaldi component type to its extractor, and the context an extractor works in.

An extractor is a small function `(ctx: ComponentContext) -> SSAValue`: it reads the
component's fields and turns the value `ctx.input` (frames x features, one row per frame)
into the component's output. Keys are Kaldi's type tokens with their brackets, the same for
every format that writes the type (`<AffineComponent>` in nnet2 and nnet3, `<AffineTransform>`
in nnet1). Extensions register more with `@kaldi_extractor("<MyComponent>")`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irforge.dialects.nn import Gather
from irforge.frontends.context import BuildContext
from irforge.frontends.kaldi.component import Component

if TYPE_CHECKING:
    from irforge.frontends.folding import FoldingBuilder

Extractor = Callable[["ComponentContext"], SSAValue]

EXTRACTORS: dict[str, Extractor] = {}


def kaldi_extractor(*kinds: str) -> Callable[[Extractor], Extractor]:
    """Register the decorated function as the extractor of the component types `kinds`."""

    def register(fn: Extractor) -> Extractor:
        for kind in kinds:
            EXTRACTORS[kind] = fn
        return fn

    return register


class ComponentContext(BuildContext):
    """What an extractor sees: the component, its input value and the model builder."""

    def __init__(self, importer: FoldingBuilder, component: Component, input: SSAValue, valid_splice: bool = False) -> None:
        self.importer = importer
        self.component = component
        self.name = component.name
        self.input = input
        self.valid_splice = valid_splice
        """Whether splicing shrinks the frames (nnet2: the input is padded by the model's
        context) instead of clamping frame indices (nnet1)."""

    @property
    def where(self) -> str:
        return self.component.where

    @property
    def shape(self) -> tuple[int, int]:
        t = self.input.type
        assert isinstance(t, TensorType)
        rows, dim = t.get_shape()
        return int(rows), int(dim)

    def check_dim(self, expected: int, what: str = "input") -> None:
        if self.shape[1] != expected:
            raise self.component.error(
                f"expects {expected} {what} features but gets {self.shape[1]}",
                fix="check the components' dimensions in the model", code="E508",
            )

    def frames(self, value: SSAValue, indices: np.ndarray, suffix: str) -> SSAValue:
        """The rows `indices` of `value` (a Gather on the frame axis)."""
        return self.value(Gather, [value, self.constant(np.asarray(indices, np.int32), suffix + "/frames")], suffix=suffix, axis=0)
