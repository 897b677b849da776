"""ir-convert's default pass pipeline, from its Model Optimizer-style flags.

    infer-shapes, canonicalize, [convert-layout (TensorFlow's NHWC graphs)],
    [cut (--output)], [set-shapes (--input_shape on .mlir input)], [preprocess (--mean_values,
    --scale_values, --reverse_input_channels)],
    fuse-linear-ops (unless --disable_fusing), fuse-grouped-conv, canonicalize,
    [compress-fp16 (--data_type FP16)]
"""

from __future__ import annotations

import argparse

DEFAULT_PIPELINE = "infer-shapes,canonicalize,fuse-linear-ops,fuse-grouped-conv,canonicalize"
"""The pipeline without any of the flags that add or drop passes."""


def quoted(text: str) -> str:
    """A pass option value: a string literal of the pipeline syntax."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def per_input(values: dict[str, list[float]]) -> str:
    """{'data': [1.0, 2.0]} -> 'data[1.0,2.0]' (key '' -> '[...]'), as parse_per_input_values reads."""
    return ",".join(f"{name}[{','.join(repr(v) for v in vs)}]" for name, vs in values.items())


def preprocess_stage(args: argparse.Namespace) -> str | None:
    options = []
    if args.mean_values:
        options.append(f"mean={quoted(per_input(args.mean_values))}")
    if args.scale_values:
        options.append(f"scale={quoted(per_input(args.scale_values))}")
    if args.reverse_input_channels:
        options.append("reverse-input-channels=true")
    return "preprocess{" + " ".join(options) + "}" if options else None


def set_shapes_stage(args: argparse.Namespace, framework: str) -> str | None:
    """Importers take --input_shape themselves; an .mlir model gets it from set-shapes."""
    if framework != "mlir" or not args.input_shape:
        return None
    names = args.input or [""] * len(args.input_shape)
    spec = ",".join(f"{n}[{','.join(map(str, s))}]" for n, s in zip(names, args.input_shape))
    return f"set-shapes{{shapes={quoted(spec)}}}"


def pipeline_for(args: argparse.Namespace, framework: str) -> str:
    stages: list[str | None] = ["infer-shapes", "canonicalize"]
    if framework == "tf":  # NHWC graphs: cancel the transposes around layout-sensitive ops
        stages.append("convert-layout")
    if args.output and framework != "tf":  # the TensorFlow importer cuts at --output itself
        stages.append(f"cut{{outputs={quoted(','.join(args.output))}}}")
    stages.append(set_shapes_stage(args, framework))
    stages.append(preprocess_stage(args))
    if not args.disable_fusing:
        stages.append("fuse-linear-ops")
    stages += ["fuse-grouped-conv", "canonicalize"]
    if args.data_type in ("FP16", "HALF"):
        stages.append("compress-fp16")
    return ",".join(s for s in stages if s)
