"""The OpenVINO IR frontend's entry in the frontend table: `NAME.xml` + `NAME.bin`."""

from __future__ import annotations

import argparse

from irforge.frontends.registry import Frontend, register_frontend
from irforge.model import Model


def import_from_args(args: argparse.Namespace) -> Model:
    from irforge.frontends.ir_xml import read_ir_xml

    return read_ir_xml(args.input_model)


FRONTEND = register_frontend(Frontend("ir", (".xml",), import_from_args, converts=False))
