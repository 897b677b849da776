"""The Caffe frontend's entry in the frontend table: --input_model NET.caffemodel
[--input_proto NET.prototxt], with mo.py's --input/--input_shape/--batch applied to the net's inputs."""

from __future__ import annotations

import argparse

from irforge.frontends.registry import Frontend, register_frontend
from irforge.model import Model


def import_from_args(args: argparse.Namespace) -> Model:
    from irforge.frontends.caffe.importer import import_caffe, net_inputs
    from irforge.frontends.caffe.loader import load_caffe
    from irforge.tools.convert_args import match_shapes

    source = load_caffe(args.input_model, getattr(args, "input_proto", None))
    declared = net_inputs(source.net)
    names = list(declared)
    shapes = match_shapes(args.input, args.input_shape, names) if args.input_shape else {}
    if args.batch is not None:
        shapes = {n: [args.batch, *shapes.get(n, declared[n])[1:]] for n in names}
    return import_caffe(source, input_shapes=shapes)


def _add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--input_proto", "-d", help="Caffe: the deploy prototxt (default: NET.prototxt beside NET.caffemodel)")


FRONTEND = register_frontend(Frontend("caffe", (".caffemodel", ".prototxt"), import_from_args, add_arguments=_add_arguments))
