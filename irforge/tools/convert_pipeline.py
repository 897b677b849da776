"""ir-convert's default pass pipeline, from its Model Optimizer-style flags.

    infer-shapes, canonicalize,
    [cut (--output; --input names that are layers, not model inputs)], [set-shapes
    (--input_shape on .mlir input, or of those cut points)], [preprocess (--mean_values,
    --scale_values, --reverse_input_channels)],
    replace-subgraph [{config=--transformations_config}], unflatten-matmul,
    convert-layout (NHWC graphs of every framework; {interface=...} for --layout),
    fuse-linear-ops (unless --disable_fusing), fuse-grouped-conv, canonicalize,
    merge-pad, flatten-concats, permute-to-reshape, flip-layout-regions, heads-in-weights, cse,
    canonicalize,
    [compress-fp16 (--data_type FP16)]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from xdsl.dialects.func import FuncOp

from irforge.errors import IrforgeError

LEAN_IR = "merge-pad,flatten-concats,permute-to-reshape,flip-layout-regions,heads-in-weights,cse,canonicalize"
"""The passes that make the IR as lean as ovc's, after the fusions."""
DEFAULT_PIPELINE = f"infer-shapes,canonicalize,replace-subgraph,unflatten-matmul,convert-layout,fuse-linear-ops,fuse-grouped-conv,canonicalize,{LEAN_IR}"
"""The pipeline without any of the flags that add or drop passes."""


def quoted(text: str) -> str:
    """A pass option value: a string literal of the pipeline syntax."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def per_input(values: dict[str, list[float]]) -> str:
    """{'data': [1.0, 2.0]} -> 'data[1.0,2.0]' (key '' -> '[...]'), as parse_per_input_values reads."""
    return ",".join(f"{name}[{','.join(repr(v) for v in vs)}]" for name, vs in values.items())


def preprocess_stage(args: argparse.Namespace, framework: str = "") -> str | None:
    options = []
    if args.mean_values:
        options.append(f"mean={quoted(per_input(args.mean_values))}")
    if args.scale_values:
        options.append(f"scale={quoted(per_input(args.scale_values))}")
    if args.reverse_input_channels:
        options.append("reverse-input-channels=true")
    if options and framework == "tf":  # TensorFlow inputs are NHWC
        options.append("channels-last=true")
    return "preprocess{" + " ".join(options) + "}" if options else None


def cut_points(names: Sequence[str], func: FuncOp) -> list[str]:
    """The --input names that are not model inputs: layers to cut at, as mo.py's `--input node`
    (also node:port and port:node). A name that is neither is an error."""
    from irforge.model import input_names
    from irforge.passes.cut import layers_by_name, resolve

    inputs = input_names(func)
    points = [n for n in names if n not in inputs]
    layers = layers_by_name(func) if points else {}
    for point in points:
        try:
            resolve(point, layers, "input")
        except IrforgeError:
            raise IrforgeError(
                f"--input names '{point}', which the model does not have as an input or a layer",
                fix=f"its inputs are: {', '.join(inputs)}; a layer to cut at is named node, node:port or port:node",
                code="E044",
            ) from None
    return points


def cut_stage(args: argparse.Namespace, framework: str, cut_inputs: Sequence[str]) -> str | None:
    options = []
    if cut_inputs:  # as in mo.py, the inputs are then exactly those --input names
        options.append(f"inputs={quoted(','.join(args.input))}")
    if args.output and framework not in ("tf", "mxnet"):  # those importers cut at --output themselves
        options.append(f"outputs={quoted(','.join(args.output))}")
    return "cut{" + " ".join(options) + "}" if options else None


def set_shapes_stage(args: argparse.Namespace, framework: str, cut_inputs: Sequence[str]) -> str | None:
    """Importers take --input_shape for model inputs themselves; an .mlir model, and the new
    inputs of cut points, get it from set-shapes (after the cut)."""
    if not args.input_shape:
        return None
    if framework == "mlir":
        pairs = list(zip(args.input or [""] * len(args.input_shape), args.input_shape))
    else:
        pairs = [(n, s) for n, s in zip(args.input, args.input_shape) if n in cut_inputs]
    if not pairs:
        return None
    spec = ",".join(f"{n}[{','.join(map(str, s))}]" for n, s in pairs)
    return f"set-shapes{{shapes={quoted(spec)}}}"


def replace_subgraph_stage(args: argparse.Namespace) -> str:
    if args.transformations_config:
        return f"replace-subgraph{{config={quoted(args.transformations_config)}}}"
    return "replace-subgraph"


def layout_stage(args: argparse.Namespace, framework: str) -> str | None:
    """convert-layout for every framework (TensorFlow's NHWC graphs, and ONNX models exported
    from NHWC code with Transposes around every Conv), and to give the model's 4-D inputs
    and outputs the --layout asked for (TensorFlow's are NHWC, the others' NCHW)."""
    native = "nhwc" if framework == "tf" else "nchw"
    wanted = getattr(args, "layout", None) or native
    if wanted != native:
        return f'convert-layout{{interface="{native}->{wanted}"}}'
    return "convert-layout"


def pipeline_for(args: argparse.Namespace, framework: str, cut_inputs: Sequence[str] = ()) -> str:
    """The pipeline for the flags; `cut_inputs` are the --input names to cut at (cut_points)."""
    stages: list[str | None] = ["infer-shapes", "canonicalize"]
    stages.append(cut_stage(args, framework, cut_inputs))
    stages.append(set_shapes_stage(args, framework, cut_inputs))
    stages.append(preprocess_stage(args, framework))
    stages.append(replace_subgraph_stage(args))
    stages.append("unflatten-matmul")  # before convert-layout: an NHWC Dense without its Reshapes
    # after the sub-graph replacements, whose patterns are those of the graph as written
    stages.append(layout_stage(args, framework))
    if not args.disable_fusing:
        stages.append("fuse-linear-ops")
    stages += ["fuse-grouped-conv", "canonicalize", LEAN_IR]
    if args.data_type in ("FP16", "HALF"):
        stages.append("compress-fp16")
    return ",".join(s for s in stages if s)
