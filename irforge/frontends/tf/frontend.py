"""The TensorFlow frontend's entry in the frontend table: frozen GraphDef `.pb` / `.pbtxt`."""

from __future__ import annotations

import argparse

from irforge.frontends.registry import Frontend, register_frontend
from irforge.model import Model


def import_from_args(args: argparse.Namespace) -> Model:
    from irforge.frontends.tf.importer import INPUT_OPS, GraphImporter
    from irforge.frontends.tf.loader import load_graph
    from irforge.tools.convert_args import match_shapes

    graph_def = load_graph(args.input_model, True if getattr(args, "input_model_is_text", False) else None)
    names = [n.name for n in graph_def.node if n.op in INPUT_OPS]
    shapes = match_shapes(args.input, args.input_shape, names) if args.input_shape else {}
    return GraphImporter(graph_def, shapes, args.output).run()


def _add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--input_model_is_text", action="store_true", help="TensorFlow: the GraphDef is in text format (.pbtxt)")


FRONTEND = register_frontend(Frontend("tf", (".pb", ".pbtxt"), import_from_args, add_arguments=_add_arguments))
