"""The pass registry: every irforge pass by its command-line name.

A pipeline is a comma-separated list of names with options, as in mlir-opt/xdsl-opt:
`infer-shapes,canonicalize`. Extensions add passes with `irforge.extensions.register_pass`.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


def _infer_shapes() -> type[ModulePass]:
    from irforge.passes.infer_shapes import InferShapesPass

    return InferShapesPass


def _canonicalize() -> type[ModulePass]:
    from irforge.passes.canonicalize import CanonicalizePass

    return CanonicalizePass


BUILTIN_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "canonicalize": _canonicalize,
    "infer-shapes": _infer_shapes,
}


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Built-in passes and those registered by loaded extensions."""
    from irforge.extensions import extension_passes

    return {**BUILTIN_PASSES, **extension_passes()}


def apply_pipeline(module: ModuleOp, spec: str, ctx: Context | None = None) -> None:
    """Apply the comma-separated pass pipeline `spec` to `module`, verifying after each pass."""
    from xdsl.passes import PassPipeline

    from irforge.model import make_context

    def verify(previous: object, op: ModuleOp, following: object) -> None:
        op.verify()

    pipeline = PassPipeline.parse_spec(all_passes(), spec, verify)
    pipeline.apply(ctx or make_context(), module)
