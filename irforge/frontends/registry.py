"""The table of framework importers: one door for ir-convert, ir-run and the Python API.

A frontend claims file suffixes (and may sniff the first bytes of a file whose suffix says
nothing), adds its own command-line flags, and imports a model from the shared options: an
`argparse.Namespace` with ir-convert's fields (`input_model`, `input`, `input_shape`, `batch`,
`output`, ...) plus its own. The table imports none of its plug-ins; each frontend's small
`frontend.py` registers itself, and `irforge.frontends.plugins` imports them all. The heavy
importer modules are imported only when a model of that framework is read.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from irforge.errors import IrforgeError
from irforge.model import Model

Importer = Callable[[argparse.Namespace], Model]
"""Imports `options.input_model` with the shared and the frontend's own options."""


@dataclass(frozen=True)
class Frontend:
    name: str
    """What --framework calls it."""
    suffixes: tuple[str, ...]
    """File suffixes it claims, lower case with the dot (".onnx")."""
    import_model: Importer
    sniff: Callable[[bytes], bool] | None = None
    """Whether the first bytes of a file are this framework's, for files with another suffix."""
    add_arguments: Callable[[argparse._ArgumentGroup], None] | None = None
    """Adds the frontend's own flags to ir-convert's parser (every default must be falsy or
    a value that means "not given")."""
    converts: bool = True
    """False for formats that are already irforge's or OpenVINO's IR (no conversion pipeline)."""


FRONTENDS: dict[str, Frontend] = {}


def register_frontend(frontend: Frontend) -> Frontend:
    FRONTENDS[frontend.name] = frontend
    return frontend


def _known() -> str:
    return ", ".join(sorted(FRONTENDS))


def frontend_named(name: str) -> Frontend:
    if name not in FRONTENDS:
        raise IrforgeError(f"unknown framework '{name}'", fix=f"use one of: {_known()}", code="E003")
    return FRONTENDS[name]


def frontend_for(path: str, framework: str | None = None) -> Frontend:
    """The frontend named by `framework`, else the one claiming the file's suffix, else the one
    whose sniff recognises its first bytes."""
    if framework:
        return frontend_named(framework)
    name = Path(path).name.lower()
    by_suffix = [f for f in FRONTENDS.values() if any(name.endswith(s) for s in f.suffixes)]
    if by_suffix:  # the longest claim wins: "-symbol.json" over ".json"
        return max(by_suffix, key=lambda f: max(len(s) for s in f.suffixes if name.endswith(s)))
    head = _head(path)
    for frontend in FRONTENDS.values():
        if frontend.sniff is not None and head and frontend.sniff(head):
            return frontend
    raise IrforgeError(
        f"cannot tell the framework of '{path}' from its name or its first bytes",
        fix=f"pass --framework ({_known()})",
        code="E003",
    )


def _head(path: str, size: int = 256) -> bytes:
    if not Path(path).is_file():  # opening a FIFO would block until a writer comes
        return b""
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except OSError:
        return b""
