"""ir-convert's options after parsing: the spellings of ovc and mo.py brought to one form.

    ir-convert MODEL                  (ovc)   -> input_model
    --output_model D/N.xml            (ovc)   -> output_dir D, model_name N (emit by suffix)
    --compress_to_fp16[=True|False]   (ovc)   -> data_type FP16 / FP32
    --scale 255                       (mo.py) -> scale_values [255] for every input
    --input a[1,3,224,224]{f32},b[1,10]  (ovc and mo.py) -> input names + input_shape
                                               (+ element types, checked after the import)

Shared by ir-convert and `irforge.convert_model`, which both hold an `argparse.Namespace` of
ir-convert's parser.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from irforge.errors import IrforgeError
from irforge.tools.convert_args import parse_shapes

ELEMENT_TYPES = {
    "f32": np.float32, "fp32": np.float32, "float32": np.float32, "float": np.float32,
    "f16": np.float16, "fp16": np.float16, "float16": np.float16, "half": np.float16,
    "f64": np.float64, "float64": np.float64, "i64": np.int64, "int64": np.int64,
    "i32": np.int32, "int32": np.int32, "i8": np.int8, "int8": np.int8,
    "u8": np.uint8, "uint8": np.uint8, "boolean": np.bool_, "bool": np.bool_,
}


@dataclass(frozen=True)
class InputSpec:
    """One item of --input: `name`, `name[1,3,224,224]`, `name{f32}`, `[1,3]` (shape only)."""

    name: str
    shape: list[int] | None = None
    dtype: str | None = None


_ITEM = re.compile(r"^(?P<name>[^\[\]{}]*?)\s*(?:(?P<shape>\[[^\]]*\])|(?P<type>\{[^}]*\}))?\s*(?:(?P<shape2>\[[^\]]*\])|(?P<type2>\{[^}]*\}))?$")


def split_top_level(text: str) -> list[str]:
    """Split at commas outside [] and {}."""
    items, depth, current = [], 0, ""
    for ch in text:
        depth += ch in "[{"
        depth -= ch in "]}"
        if ch == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += ch
    items.append(current)
    return [i.strip() for i in items]


def parse_input_specs(text: str) -> list[InputSpec]:
    """`--input data`, `--input a,b`, `--input data[1,3,224,224]{f32},mask[1,10]{i64}`."""
    specs = []
    for item in split_top_level(text):
        if "->" in item:
            raise IrforgeError(
                f"--input '{item}' freezes an input to a value, which irforge does not do",
                fix="convert without the ->value part and feed the value at run time", code="E055",
            )
        match = _ITEM.match(item)
        if not item or match is None or (match["shape"] and match["shape2"]) or (match["type"] and match["type2"]):
            raise IrforgeError(
                f"bad --input item '{item}' in '{text}'",
                fix="write NAME, NAME[1,3,224,224], NAME[1,3,224,224]{f32}, several separated by commas",
                code="E055",
            )
        shape_text, type_text = match["shape"] or match["shape2"], match["type"] or match["type2"]
        dtype = type_text[1:-1].strip().lower() if type_text else None
        if dtype is not None and dtype not in ELEMENT_TYPES:
            raise IrforgeError(f"unknown element type '{{{dtype}}}' in --input '{item}'",
                               fix=f"use one of: {', '.join(ELEMENT_TYPES)}", code="E055")
        shape = parse_shapes(shape_text)[0] if shape_text else None
        if not match["name"] and shape is None:
            raise IrforgeError(f"bad --input item '{item}'", fix="give a name or a shape", code="E055")
        specs.append(InputSpec(match["name"].strip(), shape, dtype))
    return specs


def parse_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "1", "yes", "on"):
        return True
    if value in ("false", "0", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"'{text}' is not a boolean (True or False)")


def normalise_options(args: argparse.Namespace) -> None:
    """Bring ovc's and mo.py's alternative spellings to the fields the pipeline reads."""
    _model_path(args)
    _output_model(args)
    _compress(args)
    _scale(args)
    _inputs(args)


def _model_path(args: argparse.Namespace) -> None:
    positional = getattr(args, "model", None)
    if positional is not None and args.input_model is not None and positional != args.input_model:
        raise IrforgeError(f"two models given: '{positional}' and --input_model '{args.input_model}'",
                           fix="give the model once", code="E056")
    args.input_model = args.input_model or positional
    if not args.input_model:
        raise IrforgeError("no model given", fix="ir-convert MODEL (or --input_model MODEL)", code="E056")


def _output_model(args: argparse.Namespace) -> None:
    target = getattr(args, "output_model", None)
    if not target:
        return
    if args.model_name or args.output_dir not in (None, "."):
        raise IrforgeError("--output_model cannot be combined with --output_dir or --model_name",
                           fix="give the path of the .xml in --output_model alone", code="E056")
    path = Path(target)
    if path.suffix in (".xml", ".mlir"):
        args.output_dir, args.model_name = str(path.parent), path.stem
        args.emit = path.suffix[1:]
    elif path.suffix == "" or path.is_dir():  # ovc: a folder gets MODEL's name
        args.output_dir = str(path)
    else:
        raise IrforgeError(f"--output_model '{target}' is neither a .xml, a .mlir nor a folder",
                           fix="write --output_model DIR/NAME.xml", code="E056")


def _compress(args: argparse.Namespace) -> None:
    compress = getattr(args, "compress_to_fp16", None)
    if compress is None:
        return
    if args.data_type not in ("FP32", "FLOAT") and bool(compress) != (args.data_type in ("FP16", "HALF")):
        raise IrforgeError(f"--compress_to_fp16={compress} contradicts --data_type {args.data_type}",
                           fix="give one of them", code="E054")
    args.data_type = "FP16" if compress else "FP32"


def _scale(args: argparse.Namespace) -> None:
    scale = getattr(args, "scale", None)
    if scale is None:
        return
    if args.scale_values:
        raise IrforgeError("--scale and --scale_values cannot be combined",
                           fix="--scale is one value for every input; give per-channel values with --scale_values alone",
                           code="E054")
    if not scale or not np.isfinite(scale):
        raise IrforgeError(f"bad value for --scale: {scale}", fix="give a finite, non-zero number such as 255", code="E054")
    args.scale_values = {"": [float(scale)]}


def _inputs(args: argparse.Namespace) -> None:
    """--input items with shapes become --input_shape; element types are kept to check."""
    items = [i if isinstance(i, InputSpec) else InputSpec(str(i)) for i in (args.input or [])]
    shaped = [i for i in items if i.shape is not None]
    args.input_types = {i.name: i.dtype for i in items if i.dtype is not None}
    if shaped:
        if args.input_shape:
            raise IrforgeError("--input gives shapes and --input_shape too", fix="give the shapes in one of them", code="E054")
        if len(shaped) != len(items):
            unshaped = ", ".join(i.name for i in items if i.shape is None)
            raise IrforgeError(f"--input gives shapes for some inputs but not for {unshaped}",
                               fix="give every --input item a shape, or none", code="E054")
        args.input_shape = [i.shape for i in items]
    if any(not i.name for i in items):
        if len(items) > 1:
            raise IrforgeError("--input items without a name", fix="name each input: a[1,3],b[1,10]", code="E054")
        items = []  # `--input [1,3,224,224]`: the shape of the only input
    args.input = [i.name for i in items]
