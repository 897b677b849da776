"""nnet3 (`final.raw`, or `final.mdl` with a TransitionModel before and `<LeftContext>
<RightContext> <Priors>` after): `<Nnet3>`, its config lines (text in both encodings) up to a
blank line, `<NumComponents> n`, then `<ComponentName> name <Type> ... </Type>` each, `</Nnet3>`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irforge.frontends.kaldi.component import Component
from irforge.frontends.kaldi.nnet2 import read_components
from irforge.frontends.kaldi.tokens import KaldiReader

MAX_CONFIG_LINES = 1 << 20


@dataclass
class Nnet3:
    config_lines: list[tuple[int, str]]
    """(line number in the config, text)."""
    components: dict[str, Component]
    priors: np.ndarray | None


def read_nnet3(reader: KaldiReader, where: str) -> Nnet3:
    """The `<Nnet3>` (already consumed) and what follows it."""
    rest = reader.line()
    if rest.strip():
        raise reader.error(f"expected a line break after <Nnet3>, found '{rest[:40]}'")
    lines = []
    while True:
        text = reader.line()
        if not text.strip():
            break
        lines.append((len(lines) + 1, text))
        if len(lines) > MAX_CONFIG_LINES:
            raise reader.error("more than a million nnet3 config lines")
    reader.expect("<NumComponents>")
    count = reader.int()
    components = read_components(reader, count, where, named=True)
    reader.expect("</Nnet3>")
    priors = None
    if not reader.at_end() and reader.maybe("<LeftContext>"):
        reader.int()
        reader.expect("<RightContext>")
        reader.int()
        if reader.maybe("<Priors>"):
            priors = reader.vector()
    by_name = {}
    for c in components:
        if c.name in by_name:
            raise c.error("has the name of an earlier component", code="E507")
        by_name[c.name] = c
    return Nnet3(lines, by_name, priors)
