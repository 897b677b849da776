"""nnet2 (`final.mdl`): a TransitionModel, then `<Nnet> <NumComponents> n <Components>
<Type> <Field> value ... </Type> ... </Components> </Nnet>`, then the priors vector."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irforge.frontends.kaldi.component import Component, read_fields
from irforge.frontends.kaldi.tokens import KaldiReader

MAX_COMPONENTS = 1 << 16


@dataclass
class Nnet2:
    components: list[Component]
    priors: np.ndarray | None


def read_components(reader: KaldiReader, count: int, where: str, named: bool = False) -> list[Component]:
    """`count` components, each `[<ComponentName> name] <Type> ... </Type>` (nnet3 names them)."""
    if not 0 <= count <= MAX_COMPONENTS:
        raise reader.error(f"a model with {count} components")
    components = []
    for index in range(count):
        name = f"component{index}"
        if named:
            reader.expect("<ComponentName>")
            name = reader.word()
        kind = reader.token()
        if kind.startswith("</"):
            raise reader.error(f"expected component {index} of {count}, found {kind}")
        component = Component(kind, name, f"{where}, component {index} '{name}' {kind}")
        components.append(read_fields(reader, component, "</" + kind[1:]))
    return components


def read_nnet2(reader: KaldiReader, where: str) -> Nnet2:
    """The `<Nnet>` (already consumed) and the priors after it, if any."""
    reader.expect("<NumComponents>")
    count = reader.int()
    reader.expect("<Components>")
    components = read_components(reader, count, where)
    reader.expect("</Components>")
    reader.expect("</Nnet>")
    priors = None if reader.at_end() else reader.vector()
    return Nnet2(components, priors)
