"""The ONNX frontend's entry in the frontend table: `.onnx`, mo.py's --input/--input_shape/--batch."""

from __future__ import annotations

import argparse

from irforge.frontends.registry import Frontend, register_frontend
from irforge.model import Model


def import_from_args(args: argparse.Namespace) -> Model:
    from irforge.frontends.onnx.importer import import_onnx, model_inputs
    from irforge.frontends.onnx.loader import load_onnx_file
    from irforge.tools.convert_args import match_shapes

    source = load_onnx_file(args.input_model)
    proto = source.proto
    names = model_inputs(proto)
    # `--input s.0,s.1`: the elements of a sequence input s (frontends/onnx/sequences.py)
    elements = [n for n in args.input or [] if n.rpartition(".")[0] in names and n.rpartition(".")[2].isdigit()]
    shapes = match_shapes(args.input, args.input_shape, [*names, *elements]) if args.input_shape else {}
    if args.batch is not None:
        shapes = {n: [args.batch, *shapes.get(n, input_dims(proto, n))[1:]] for n in names}
    return import_onnx(source, shapes)


def input_dims(proto, name: str) -> list[int]:  # type: ignore[no-untyped-def]
    from irforge.dialects.nn.base import DYN

    vi = next(v for v in proto.graph.input if v.name == name)
    return [d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else DYN for d in vi.type.tensor_type.shape.dim]


def _sniff(head: bytes) -> bool:
    # ModelProto starts with ir_version (field 1, varint): 0x08, then a small version number
    return len(head) > 2 and head[0] == 0x08 and 3 <= head[1] <= 20 and b"\x12" in head[2:4]


FRONTEND = register_frontend(Frontend("onnx", (".onnx",), import_from_args, sniff=_sniff))
