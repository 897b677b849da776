"""`--version` for every irforge tool: irforge's version, and xDSL's it was built on."""

from __future__ import annotations

import argparse


def version_text(prog: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    import irforge

    try:
        xdsl = version("xdsl")
    except PackageNotFoundError:  # a source checkout without installed metadata
        xdsl = "unknown"
    return f"{prog} (irforge) {irforge.__version__}, built on xdsl {xdsl}"


def add_version(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action="version", version=version_text(parser.prog),
                        help="print irforge's version and exit")
