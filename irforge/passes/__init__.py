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


def _fuse_linear_ops() -> type[ModulePass]:
    from irforge.passes.fuse_linear_ops import FuseLinearOpsPass

    return FuseLinearOpsPass


def _set_shapes() -> type[ModulePass]:
    from irforge.passes.set_shapes import SetShapesPass

    return SetShapesPass


def _compress_fp16() -> type[ModulePass]:
    from irforge.passes.compress_fp16 import CompressFp16Pass

    return CompressFp16Pass


def _convert_layout() -> type[ModulePass]:
    from irforge.passes.convert_layout import ConvertLayoutPass

    return ConvertLayoutPass


def _cut() -> type[ModulePass]:
    from irforge.passes.cut import CutPass

    return CutPass


def _fuse_grouped_conv() -> type[ModulePass]:
    from irforge.passes.fuse_grouped_conv import FuseGroupedConvPass

    return FuseGroupedConvPass


def _preprocess() -> type[ModulePass]:
    from irforge.passes.preprocess import PreprocessPass

    return PreprocessPass


def _replace_subgraph() -> type[ModulePass]:
    from irforge.passes.replace_subgraph import ReplaceSubgraphPass

    return ReplaceSubgraphPass


def _merge_pad() -> type[ModulePass]:
    from irforge.passes.merge_pad import MergePadPass

    return MergePadPass


def _cse() -> type[ModulePass]:
    from irforge.passes.cse import CSEPass

    return CSEPass


def _permute_to_reshape() -> type[ModulePass]:
    from irforge.passes.permute_to_reshape import PermuteToReshapePass

    return PermuteToReshapePass


def _flatten_concats() -> type[ModulePass]:
    from irforge.passes.flatten_concats import FlattenConcatsPass

    return FlattenConcatsPass


def _channels_first_mlp() -> type[ModulePass]:
    from irforge.passes.channels_first_mlp import ChannelsFirstMlpPass

    return ChannelsFirstMlpPass


def _dequantize_weights() -> type[ModulePass]:
    from irforge.passes.dequantize_weights import DequantizeWeightsPass

    return DequantizeWeightsPass


def _flip_layout_regions() -> type[ModulePass]:
    from irforge.passes.flip_layout_regions import FlipLayoutRegionsPass

    return FlipLayoutRegionsPass


def _heads_in_weights() -> type[ModulePass]:
    from irforge.passes.heads_in_weights import HeadsInWeightsPass

    return HeadsInWeightsPass


def _unflatten_matmul() -> type[ModulePass]:
    from irforge.passes.unflatten_matmul import UnflattenMatMulPass

    return UnflattenMatMulPass


def _widen_f16() -> type[ModulePass]:
    from irforge.passes.widen_f16 import WidenF16Pass

    return WidenF16Pass


BUILTIN_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "canonicalize": _canonicalize,
    "channels-first-mlp": _channels_first_mlp,
    "compress-fp16": _compress_fp16,
    "convert-layout": _convert_layout,
    "cse": _cse,
    "cut": _cut,
    "dequantize-weights": _dequantize_weights,
    "flatten-concats": _flatten_concats,
    "flip-layout-regions": _flip_layout_regions,
    "fuse-grouped-conv": _fuse_grouped_conv,
    "fuse-linear-ops": _fuse_linear_ops,
    "heads-in-weights": _heads_in_weights,
    "infer-shapes": _infer_shapes,
    "merge-pad": _merge_pad,
    "permute-to-reshape": _permute_to_reshape,
    "preprocess": _preprocess,
    "replace-subgraph": _replace_subgraph,
    "set-shapes": _set_shapes,
    "unflatten-matmul": _unflatten_matmul,
    "widen-f16": _widen_f16,
}


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Built-in passes and those registered by loaded extensions."""
    from irforge.extensions import extension_passes

    return {**BUILTIN_PASSES, **extension_passes()}


def parse_pipeline(spec: str, callback=None):  # type: ignore[no-untyped-def]
    """The xDSL `PassPipeline` of the comma-separated `spec`; `callback(previous, module,
    following)` runs between passes. A bad pipeline raises a one-line `IrforgeError`."""
    from xdsl.passes import PassPipeline

    from irforge.passes.pipeline_errors import PIPELINE_ERRORS, bad_pipeline

    try:
        return PassPipeline.parse_spec(all_passes(), spec, callback)
    except PIPELINE_ERRORS as e:
        raise bad_pipeline(spec, e, sorted(all_passes())) from None


def apply_pipeline(module: ModuleOp, spec: str, ctx: Context | None = None, verify_each: bool = True) -> None:
    """Apply the comma-separated pass pipeline `spec` to `module`, verifying after each pass
    (`verify_each=False`: once, after the last; a backend's fixed pipeline of built-in passes,
    where each verify of a ResNet-50 took ~0.03 s of a 3 s compile).

    A bad pipeline, or a pass that finds the IR invalid, raises a one-line `IrforgeError`.
    """
    from xdsl.utils.exceptions import DiagnosticException

    from irforge.errors import IrforgeError
    from irforge.model import first_line, make_context

    def verify(previous: ModulePass | None, op: ModuleOp, following: ModulePass | None) -> None:
        op.verify()

    pipeline = parse_pipeline(spec, verify if verify_each else None)
    try:
        pipeline.apply(ctx or make_context(), module)
        if not verify_each:
            module.verify()
    except DiagnosticException as e:
        raise IrforgeError(f"invalid IR: {first_line(str(e))}", code="E741") from None
