"""irforge's own textual IR in the frontend table: `NAME.mlir` + `NAME.weights`."""

from __future__ import annotations

import argparse

from irforge.frontends.registry import Frontend, register_frontend
from irforge.model import Model, load_model


def import_from_args(args: argparse.Namespace) -> Model:
    return load_model(args.input_model, getattr(args, "weights", None))


FRONTEND = register_frontend(Frontend("mlir", (".mlir",), import_from_args, converts=False))
