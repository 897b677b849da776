"""nnet1 (`final.nnet`): `<Nnet>`, then per component `<Type> out in <data> <!EndOfComponent>`,
then `</Nnet>`.

A component's body is positional: optional `<Option> value` pairs (`<LearnRateCoef>`, ...),
then its data in a fixed order, which `BODIES` names per type. A type without a body reader
is skipped to its `<!EndOfComponent>` so that every unsupported type is listed in one error.
"""

from __future__ import annotations

import numpy as np

from irforge.errors import IrforgeError
from irforge.frontends.kaldi.component import Component, Scalar, binary_scalar
from irforge.frontends.kaldi.tokens import KaldiReader

END = "<!EndOfComponent>"

BODIES: dict[str, tuple[tuple[str, str], ...]] = {
    "<AffineTransform>": (("<Linearity>", "matrix"), ("<Bias>", "vector")),
    "<LinearTransform>": (("<Linearity>", "matrix"),),
    "<AddShift>": (("<Shift>", "vector"),),
    "<Rescale>": (("<Scale>", "vector"),),
    "<Splice>": (("<Offsets>", "ints"),),
    "<Copy>": (("<Indices>", "ints"),),
    "<Sigmoid>": (),
    "<Tanh>": (),
    "<Softmax>": (),
    "<LengthNormComponent>": (),
    "<LstmProjected>": (
        ("<GifoX>", "matrix"), ("<GifoR>", "matrix"), ("<Bias>", "vector"),
        ("<PeepholeI>", "vector"), ("<PeepholeF>", "vector"), ("<PeepholeO>", "vector"), ("<RM>", "matrix"),
    ),
    "<Dropout>": (),
}
"""The positional data of each nnet1 component type after its options: (field, kind)."""

OPTIONS = frozenset({
    "<LearnRateCoef>", "<BiasLearnRateCoef>", "<MaxNorm>", "<DropoutRate>", "<DropoutRetention>",
    "<CellDim>", "<CellClip>", "<DiffClip>", "<CellDiffClip>", "<GradClip>", "<ClipGradient>",
})  # fmt: skip
"""The `<Option> value` pairs before a component's data (nnet1 files before 2015 have no
`<!EndOfComponent>`, so the next component's type must not be taken for an option)."""


def read_nnet1(reader: KaldiReader, where: str, nested: bool = False) -> list[Component]:
    """The components of one `<Nnet> ... </Nnet>` (the opening token already consumed); at
    the top level the file may end without `</Nnet>`, as Kaldi's reader allows."""
    components: list[Component] = []
    while True:
        if reader.at_end():
            if nested or not components:
                raise reader.error("the file ends before </Nnet>")
            return components
        kind = reader.token()
        if kind == "</Nnet>":
            return components
        if kind == "<Nnet>":
            continue
        index = len(components)
        component = Component(kind, f"{kind[1:-1]}{index}", f"{where}, component {index} {kind}")
        component.dims = (reader.int(), reader.int())
        component.fields["<OutputDim>"] = [Scalar(str(component.dims[0]))]
        if kind == "<ParallelComponent>":
            component.nested = _parallel(reader, component.where)
        elif kind in BODIES:
            _body(reader, component)
        else:
            _skip(reader, component)
        reader.maybe(END)
        components.append(component)


def _body(reader: KaldiReader, component: Component) -> None:
    while reader.peek_byte() == b"<" and reader.peek_token() in OPTIONS:
        key = reader.token()
        component.fields[key] = [binary_scalar(reader) if reader.binary else Scalar(reader.word())]
    for key, kind in BODIES[component.kind]:
        if kind == "matrix":
            value = reader.matrix()
        elif kind == "vector":
            value = reader.vector()
        else:
            if reader.maybe("<BuildVector>"):
                value = _build_vector(reader)
            elif reader.binary and reader.next_is_array():  # 2013-era nnet1 wrote them as float vectors
                value = np.rint(reader.vector()).astype(np.int64)
            else:
                value = reader.int_vector()
            if component.kind == "<Copy>":
                value = value - 1  # the file counts features from 1
        component.fields[key] = [value]


def _build_vector(reader: KaldiReader) -> np.ndarray:
    """`<BuildVector> -2:2 5 </BuildVector>`: integers and inclusive ranges a:b or a:step:b."""
    values: list[int] = []
    while True:
        word = reader.word()
        if word == "</BuildVector>":
            return np.array(values, np.int64)
        try:
            parts = [int(p) for p in word.split(":")]
        except ValueError:
            raise reader.error(f"bad <BuildVector> entry '{word[:40]}'") from None
        if len(parts) == 1:
            values.append(parts[0])
        elif len(parts) in (2, 3) and len(values) < 1 << 20:
            start, step, stop = (parts[0], 1, parts[1]) if len(parts) == 2 else parts
            if step == 0 or abs(stop - start) > 1 << 20:
                raise reader.error(f"bad <BuildVector> range '{word}'")
            values.extend(range(start, stop + (1 if step > 0 else -1), step))
        else:
            raise reader.error(f"bad <BuildVector> entry '{word[:40]}'")


def _skip(reader: KaldiReader, component: Component) -> None:
    """Skip an unsupported component's data to its `<!EndOfComponent>` (so that all of them
    are listed in one error); without one, the first is reported alone."""
    end = reader.data.find(END.encode(), reader.pos)
    if end < 0:
        raise IrforgeError(
            f"unsupported Kaldi components: {component.kind} x1", where=component.where,
            fix='register an extractor with @irforge.frontends.kaldi.kaldi_extractor("<Type>") in an --extensions file', code="E510",
        )
    reader.pos = end


def _parallel(reader: KaldiReader, where: str) -> list[list[Component]]:
    reader.expect("<NestedNnetCount>")
    count = reader.int()
    if not 0 < count < 1 << 16:
        raise reader.error(f"ParallelComponent with {count} nested nets")
    nested = []
    for i in range(count):
        reader.expect("<NestedNnet>")
        reader.int()
        reader.expect("<Nnet>")
        nested.append(read_nnet1(reader, f"{where}, nested net {i}", nested=True))
    start = reader.pos
    got = reader.word() if not reader.at_end() else "the end of the file"
    if got != "</ParallelComponent>":
        reader.pos = start
        raise reader.error(
            f"Expected token </ParallelComponent>, has {got[:40]}", code="E506",
            fix="the ParallelComponent is incomplete; check that the model is a true Kaldi nnet1 model (Model Optimizer FAQ #95)",
        )
    return nested
