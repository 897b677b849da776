"""ir-convert's Caffe path: --input_model NET.caffemodel [--input_proto NET.prototxt] with
mo.py's --input/--input_shape/--batch applied to the net's inputs."""

from __future__ import annotations

import argparse

from irforge.frontends.caffe.importer import import_caffe, net_inputs
from irforge.frontends.caffe.loader import load_caffe
from irforge.model import Model
from irforge.tools.convert_args import match_shapes


def import_from_args(args: argparse.Namespace) -> Model:
    source = load_caffe(args.input_model, getattr(args, "input_proto", None))
    declared = net_inputs(source.net)
    names = list(declared)
    shapes = match_shapes(args.input, args.input_shape, names) if args.input_shape else {}
    if args.batch is not None:
        shapes = {n: [args.batch, *shapes.get(n, declared[n])[1:]] for n in names}
    return import_caffe(source, input_shapes=shapes)
