"""Kaldi model files for tests, written by irforge's own writer in both encodings (no Kaldi).

`KaldiWriter` mirrors Kaldi's io-funcs / kaldi-matrix writers: binary files start with
`\\0B`, tokens end with a space, numbers are a size byte + raw little-endian value, matrices
`FM rows cols data`, vectors `FV dim data`, integer vectors a size byte + i32 count + data;
text matrices ` [\\n  a b \\n  c d ]`, vectors ` [ a b ]`. The model builders below return the
file bytes and a plain description (`Layer` lists, config lines) that tests compute
independently in numpy.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


class KaldiWriter:
    def __init__(self, binary: bool) -> None:
        self.binary = binary
        self.out = bytearray(b"\0B" if binary else b"")

    def bytes(self) -> bytes:
        return bytes(self.out)

    def raw(self, data: bytes | str) -> KaldiWriter:
        self.out += data.encode() if isinstance(data, str) else data
        return self

    def token(self, token: str) -> KaldiWriter:
        return self.raw(token + " ")

    def int(self, value: int) -> KaldiWriter:
        return self.raw(b"\x04" + struct.pack("<i", value) if self.binary else f"{value} ")

    def float(self, value: float) -> KaldiWriter:
        return self.raw(b"\x04" + struct.pack("<f", value) if self.binary else f"{float(np.float32(value))!r} ")

    def bool(self, value: bool) -> KaldiWriter:
        return self.raw(("T" if value else "F") + ("" if self.binary else " "))

    def matrix(self, m: np.ndarray) -> KaldiWriter:
        m = np.asarray(m, np.float32)
        if self.binary:
            self.token("FM").int(m.shape[0]).int(m.shape[1])
            return self.raw(m.astype("<f4").tobytes())
        if m.size == 0:
            return self.raw(" [ ]\n")
        rows = "".join("\n  " + "".join(f"{v!r} " for v in row.tolist()) for row in m)
        return self.raw(f" [{rows}]\n")

    def vector(self, v: np.ndarray) -> KaldiWriter:
        v = np.asarray(v, np.float32)
        if self.binary:
            self.token("FV").int(v.shape[0])
            return self.raw(v.astype("<f4").tobytes())
        return self.raw(" [ " + "".join(f"{x!r} " for x in v.tolist()) + "]\n")

    def int_vector(self, v: Sequence[int]) -> KaldiWriter:
        v = np.asarray(v, np.int32)
        if self.binary:
            return self.raw(b"\x04" + struct.pack("<i", len(v)) + v.astype("<i4").tobytes())
        return self.raw("[ " + "".join(f"{x} " for x in v.tolist()) + "]\n")

    def int_pair_vector(self, pairs: np.ndarray) -> KaldiWriter:
        pairs = np.asarray(pairs, np.int32).reshape(-1, 2)
        if self.binary:
            return self.raw(b"\x04" + struct.pack("<i", len(pairs)) + pairs.astype("<i4").tobytes())
        return self.raw("[ " + "".join(f"{a},{b} " for a, b in pairs.tolist()) + "]\n")

    def value(self, value: object) -> KaldiWriter:
        """A component field's value by its Python type (None: a bare token)."""
        if value is None:
            return self
        if isinstance(value, Pairs):
            return self.int_pair_vector(value.values)
        if isinstance(value, bool):
            return self.bool(value)
        if isinstance(value, int):
            return self.int(value)
        if isinstance(value, float):
            return self.float(value)
        if isinstance(value, Ints):
            return self.int_vector(value.values)
        array = np.asarray(value)
        return self.matrix(array) if array.ndim == 2 else self.vector(array)


@dataclass(frozen=True)
class Ints:
    """An integer vector field (`<Context>`, `<Sizes>`)."""

    values: tuple[int, ...]


@dataclass(frozen=True)
class Pairs:
    """An integer pair vector field (a ConvolutionModel's (time, height) `<Offsets>`)."""

    values: np.ndarray


@dataclass
class Layer:
    """One component: its Kaldi type token, output and input dims (nnet1), and fields in order."""

    kind: str
    fields: list[tuple[str, object]] = field(default_factory=list)
    dims: tuple[int, int] = (0, 0)
    nested: list[list[Layer]] = field(default_factory=list)
    name: str = ""
    options: list[tuple[str, object]] | None = None
    """nnet1: the `<Option> value` pairs before the data (default: the type's usual ones)."""

    def get(self, key: str) -> object:
        return dict(self.fields)[key]


def rng_weights(rng: np.random.Generator, *shape: int, scale: float = 0.5) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# -- nnet1 ---------------------------------------------------------------------------------
NNET1_OPTIONS = {"<AffineTransform>": ("<LearnRateCoef>", "<BiasLearnRateCoef>", "<MaxNorm>"), "<AddShift>": ("<LearnRateCoef>",), "<Rescale>": ("<LearnRateCoef>",)}


def write_nnet1_components(w: KaldiWriter, layers: Sequence[Layer]) -> None:
    w.token("<Nnet>")
    if not w.binary:
        w.raw("\n")
    for layer in layers:
        w.token(layer.kind).int(layer.dims[0]).int(layer.dims[1])
        if not w.binary:
            w.raw("\n")
        options = layer.options if layer.options is not None else [(o, 1.0 if o != "<MaxNorm>" else 0.0) for o in NNET1_OPTIONS.get(layer.kind, ())]
        for option, value in options:
            w.token(option).value(value)
        if layer.kind == "<ParallelComponent>":
            w.token("<NestedNnetCount>").int(len(layer.nested))
            for i, nested in enumerate(layer.nested):
                w.token("<NestedNnet>").int(i + 1)
                write_nnet1_components(w, nested)
            w.token("</ParallelComponent>")
        for _, value in layer.fields:
            w.value(value)
        w.token("<!EndOfComponent>")
        if not w.binary:
            w.raw("\n")
    w.token("</Nnet>")


def write_nnet1(layers: Sequence[Layer], binary: bool) -> bytes:
    w = KaldiWriter(binary)
    write_nnet1_components(w, layers)
    return w.bytes()


def nnet1_model(seed: int = 0, feat: int = 5, hidden: int = 12, pdfs: int = 7) -> list[Layer]:
    """Splice +-2 -> AddShift -> Rescale -> Affine -> Sigmoid -> Affine -> Tanh -> Affine -> Softmax."""
    rng = np.random.default_rng(seed)
    spliced = feat * 5
    return [
        Layer("<Splice>", [("<Offsets>", Ints((-2, -1, 0, 1, 2)))], (spliced, feat)),
        Layer("<AddShift>", [("<Shift>", rng_weights(rng, spliced))], (spliced, spliced)),
        Layer("<Rescale>", [("<Scale>", 1.0 + rng_weights(rng, spliced, scale=0.2))], (spliced, spliced)),
        Layer("<AffineTransform>", [("<Linearity>", rng_weights(rng, hidden, spliced, scale=0.3)), ("<Bias>", rng_weights(rng, hidden))], (hidden, spliced)),
        Layer("<Sigmoid>", [], (hidden, hidden)),
        Layer("<AffineTransform>", [("<Linearity>", rng_weights(rng, hidden, hidden)), ("<Bias>", rng_weights(rng, hidden))], (hidden, hidden)),
        Layer("<Tanh>", [], (hidden, hidden)),
        Layer("<AffineTransform>", [("<Linearity>", rng_weights(rng, pdfs, hidden)), ("<Bias>", rng_weights(rng, pdfs))], (pdfs, hidden)),
        Layer("<Softmax>", [], (pdfs, pdfs)),
    ]


# -- the TransitionModel of .mdl files -------------------------------------------------------
def write_transition_model(w: KaldiWriter, pdfs: int) -> None:
    """A small 3-state topology for two phones and `pdfs` pdfs, as HmmTopology and
    TransitionModel write it (its content is skipped by the importer)."""
    w.token("<TransitionModel>").token("<Topology>")
    w.int_vector([1, 2]).int_vector([-1, 0, 0]).int(1).int(3)
    for state in range(3):
        w.int(state).int(2).int(state).float(0.75).int(state + 1).float(0.25)
    w.token("</Topology>").token("<Triples>").int(pdfs)
    for pdf in range(pdfs):
        w.int(1 + pdf % 2).int(pdf % 3).int(pdf)
    w.token("</Triples>").token("<LogProbs>").vector(np.log(np.full(2 * pdfs, 0.5))).token("</LogProbs>").token("</TransitionModel>")


# -- nnet2 ---------------------------------------------------------------------------------
def write_component(w: KaldiWriter, layer: Layer) -> None:
    w.token(layer.kind)
    for key, value in layer.fields:
        w.token(key).value(value)
    w.token("</" + layer.kind[1:])


def write_nnet2(layers: Sequence[Layer], priors: np.ndarray, binary: bool) -> bytes:
    w = KaldiWriter(binary)
    write_transition_model(w, len(priors))
    w.token("<Nnet>").token("<NumComponents>").int(len(layers)).token("<Components>")
    for layer in layers:
        write_component(w, layer)
    w.token("</Components>").token("</Nnet>").vector(priors)
    return w.bytes()


def nonlinear(kind: str, dim: int) -> Layer:
    """An nnet2/nnet3 NonlinearComponent with its (unused) statistics."""
    return Layer(kind, [("<Dim>", dim), ("<ValueSum>", np.zeros(dim)), ("<DerivSum>", np.zeros(dim)), ("<Count>", 0.0)])


def nnet2_model(seed: int = 0, feat: int = 6, pdfs: int = 9) -> tuple[list[Layer], np.ndarray]:
    """Splice +-2 -> FixedAffine (LDA) -> Affine -> Pnorm (p=2, groups of 4) -> Normalize ->
    Splice +-1 -> Affine -> Pnorm (p=3) -> Normalize -> Affine -> Softmax, and the priors."""
    rng = np.random.default_rng(seed)
    lda = 5 * feat
    layers = [
        Layer("<SpliceComponent>", [("<InputDim>", feat), ("<Context>", Ints((-2, -1, 0, 1, 2))), ("<ConstComponentDim>", 0)]),
        Layer("<FixedAffineComponent>", [("<LinearParams>", rng_weights(rng, lda, lda, scale=0.3)), ("<BiasParams>", rng_weights(rng, lda))]),
        Layer("<AffineComponentPreconditionedOnline>", [
            ("<LearningRate>", 0.001), ("<LinearParams>", rng_weights(rng, 16, lda, scale=0.3)), ("<BiasParams>", rng_weights(rng, 16)),
            ("<Rank>", 20), ("<UpdatePeriod>", 4), ("<NumSamplesHistory>", 2000.0), ("<Alpha>", 4.0), ("<MaxChangePerSample>", 0.075),
        ]),
        Layer("<PnormComponent>", [("<InputDim>", 16), ("<OutputDim>", 4), ("<P>", 2.0)]),
        nonlinear("<NormalizeComponent>", 4),
        Layer("<SpliceComponent>", [("<InputDim>", 4), ("<Context>", Ints((-1, 0, 1))), ("<ConstComponentDim>", 0)]),
        Layer("<AffineComponent>", [("<LearningRate>", 0.001), ("<LinearParams>", rng_weights(rng, 12, 12)), ("<BiasParams>", rng_weights(rng, 12)), ("<IsGradient>", False)]),
        Layer("<PnormComponent>", [("<InputDim>", 12), ("<OutputDim>", 6), ("<P>", 3.0)]),
        nonlinear("<NormalizeComponent>", 6),
        Layer("<AffineComponentPreconditionedOnline>", [("<LearningRate>", 0.001), ("<LinearParams>", rng_weights(rng, pdfs, 6)), ("<BiasParams>", rng_weights(rng, pdfs)), ("<Rank>", 20)]),
        nonlinear("<SoftmaxComponent>", pdfs),
    ]
    priors = rng.dirichlet(np.ones(pdfs)).astype(np.float32)
    return layers, priors


# -- nnet3 ---------------------------------------------------------------------------------
@dataclass
class Nnet3Spec:
    config: list[str]
    components: list[Layer]
    priors: np.ndarray | None = None


def write_nnet3(spec: Nnet3Spec, binary: bool, mdl: bool = False) -> bytes:
    w = KaldiWriter(binary)
    if mdl:
        write_transition_model(w, len(spec.priors) if spec.priors is not None else 1)
    w.token("<Nnet3>").raw("\n")
    for line in spec.config:
        w.raw(line + "\n")
    w.raw("\n").token("<NumComponents>").int(len(spec.components))
    if not binary:
        w.raw("\n")
    for layer in spec.components:
        w.token("<ComponentName>").token(layer.name)
        write_component(w, layer)
    w.token("</Nnet3>")
    if mdl:
        w.token("<LeftContext>").int(0).token("<RightContext>").int(0).token("<Priors>").vector(spec.priors if spec.priors is not None else np.zeros(0))
    return w.bytes()


def batch_norm(name: str, rng: np.random.Generator, dim: int, block: int | None = None) -> Layer:
    block = block or dim
    return Layer("<BatchNormComponent>", [
        ("<Dim>", dim), ("<BlockDim>", block), ("<Epsilon>", 0.001), ("<TargetRms>", 1.0), ("<TestMode>", False),
        ("<Count>", 100.0), ("<StatsMean>", rng_weights(rng, block)), ("<StatsVar>", (0.5 + rng.random(block)).astype(np.float32)),
    ], name=name)  # fmt: skip


def tdnn_model(seed: int = 0, feat: int = 4, hidden: int = 10, pdfs: int = 8) -> Nnet3Spec:
    """LDA (FixedAffine over Offsets -2..2) -> three TDNN layers (Affine, ReLU, BatchNorm) with
    Append(Offset(...)) splicing -> Affine -> LogSoftmax."""
    rng = np.random.default_rng(seed)
    lda = 5 * feat
    config = [
        f"input-node name=input dim={feat}",
        "component-node name=lda component=lda input=Append(Offset(input, -2), Offset(input, -1), input, Offset(input, 1), Offset(input, 2))",
        "component-node name=tdnn1.affine component=tdnn1.affine input=lda",
        "component-node name=tdnn1.relu component=tdnn1.relu input=tdnn1.affine",
        "component-node name=tdnn1.batchnorm component=tdnn1.batchnorm input=tdnn1.relu",
        "component-node name=tdnn2.affine component=tdnn2.affine input=Append(Offset(tdnn1.batchnorm, -1), tdnn1.batchnorm, Offset(tdnn1.batchnorm, 1))",
        "component-node name=tdnn2.relu component=tdnn2.relu input=tdnn2.affine",
        "component-node name=tdnn2.batchnorm component=tdnn2.batchnorm input=tdnn2.relu",
        "component-node name=tdnn3.affine component=tdnn3.affine input=Append(Offset(tdnn2.batchnorm, -3), tdnn2.batchnorm, Offset(tdnn2.batchnorm, 3))",
        "component-node name=tdnn3.relu component=tdnn3.relu input=tdnn3.affine",
        "component-node name=tdnn3.batchnorm component=tdnn3.batchnorm input=tdnn3.relu",
        "component-node name=output.affine component=output.affine input=tdnn3.batchnorm",
        "component-node name=output.log-softmax component=output.log-softmax input=output.affine",
        "output-node name=output input=output.log-softmax objective=linear",
    ]
    layers = [Layer("<FixedAffineComponent>", [("<LinearParams>", rng_weights(rng, lda, lda, scale=0.3)), ("<BiasParams>", rng_weights(rng, lda))], name="lda")]
    fan_in = lda
    for i, next_splice in ((1, 3), (2, 3), (3, 1)):
        layers += [
            Layer("<NaturalGradientAffineComponent>", [
                ("<MaxChange>", 0.75), ("<LearningRate>", 0.001), ("<LinearParams>", rng_weights(rng, hidden, fan_in, scale=0.3)),
                ("<BiasParams>", rng_weights(rng, hidden)), ("<RankIn>", 20), ("<RankOut>", 80), ("<UpdatePeriod>", 4),
                ("<NumSamplesHistory>", 2000.0), ("<Alpha>", 4.0), ("<IsGradient>", False),
            ], name=f"tdnn{i}.affine"),  # fmt: skip
            Layer("<RectifiedLinearComponent>", nonlinear("", hidden).fields, name=f"tdnn{i}.relu"),
            batch_norm(f"tdnn{i}.batchnorm", rng, hidden, block=hidden // 2 if i == 2 else None),
        ]
        fan_in = hidden * next_splice
    layers += [
        Layer("<NaturalGradientAffineComponent>", [("<LearningRate>", 0.001), ("<LinearParams>", rng_weights(rng, pdfs, hidden)), ("<BiasParams>", rng_weights(rng, pdfs))], name="output.affine"),
        Layer("<LogSoftmaxComponent>", nonlinear("", pdfs).fields, name="output.log-softmax"),
    ]
    return Nnet3Spec(config, layers, rng.dirichlet(np.ones(pdfs)).astype(np.float32))


def tdnnf_model(seed: int = 0, feat: int = 4, hidden: int = 8, bottleneck: int = 3, pdfs: int = 5) -> Nnet3Spec:
    """A factorized TDNN (tdnnf-layer) block: TdnnComponents with their own time offsets (no
    bias in the linear half), ReLU, BatchNorm, GeneralDropout, a scaled bypass (Sum/Scale),
    a NoOp, then Affine -> LogSoftmax."""
    rng = np.random.default_rng(seed)
    config = [
        f"input-node name=input dim={feat}",
        "component-node name=tdnn1.affine component=tdnn1.affine input=input",
        "component-node name=tdnn1.relu component=tdnn1.relu input=tdnn1.affine",
        "component-node name=tdnnf2.linear component=tdnnf2.linear input=tdnn1.relu",
        "component-node name=tdnnf2.affine component=tdnnf2.affine input=tdnnf2.linear",
        "component-node name=tdnnf2.relu component=tdnnf2.relu input=tdnnf2.affine",
        "component-node name=tdnnf2.batchnorm component=tdnnf2.batchnorm input=tdnnf2.relu",
        "component-node name=tdnnf2.dropout component=tdnnf2.dropout input=tdnnf2.batchnorm",
        "component-node name=tdnnf2.noop component=tdnnf2.noop input=Sum(Scale(0.66, tdnn1.relu), tdnnf2.dropout)",
        "component-node name=output.affine component=output.affine input=tdnnf2.noop",
        "component-node name=output.log-softmax component=output.log-softmax input=output.affine",
        "output-node name=output input=output.log-softmax objective=linear",
    ]

    def tdnn(name: str, offsets: tuple[int, ...], n_in: int, n_out: int, bias: bool) -> Layer:
        return Layer("<TdnnComponent>", [
            ("<MaxChange>", 0.75), ("<LearningRate>", 0.001), ("<TimeOffsets>", Ints(offsets)),
            ("<LinearParams>", rng_weights(rng, n_out, n_in * len(offsets), scale=0.4)),
            ("<BiasParams>", rng_weights(rng, n_out) if bias else np.zeros(0, np.float32)),
            ("<OrthonormalConstraint>", 0.0), ("<UseNaturalGradient>", True), ("<RankIn>", 20), ("<RankOut>", 80),
        ], name=name)  # fmt: skip

    layers = [
        tdnn("tdnn1.affine", (-1, 0, 1), feat, hidden, True),
        Layer("<RectifiedLinearComponent>", nonlinear("", hidden).fields, name="tdnn1.relu"),
        tdnn("tdnnf2.linear", (-3, 0), hidden, bottleneck, False),
        tdnn("tdnnf2.affine", (0, 3), bottleneck, hidden, True),
        Layer("<RectifiedLinearComponent>", nonlinear("", hidden).fields, name="tdnnf2.relu"),
        batch_norm("tdnnf2.batchnorm", rng, hidden),
        Layer("<GeneralDropoutComponent>", [("<Dim>", hidden), ("<BlockDim>", hidden), ("<TimePeriod>", 0), ("<DropoutProportion>", 0.5), ("<Continuous>", True)], name="tdnnf2.dropout"),
        Layer("<NoOpComponent>", [("<Dim>", hidden)], name="tdnnf2.noop"),
        Layer("<NaturalGradientAffineComponent>", [("<LinearParams>", rng_weights(rng, pdfs, hidden)), ("<BiasParams>", rng_weights(rng, pdfs))], name="output.affine"),
        Layer("<LogSoftmaxComponent>", nonlinear("", pdfs).fields, name="output.log-softmax"),
    ]
    return Nnet3Spec(config, layers, rng.dirichlet(np.ones(pdfs)).astype(np.float32))


def lstm_nnet1_model(seed: int = 0, feat: int = 4, cell: int = 5, proj: int = 3, pdfs: int = 6) -> list[Layer]:
    """Splice +-1 -> LstmProjected (cell clip 1.5, so clipping shows) -> Affine -> Softmax."""
    rng = np.random.default_rng(seed)
    spliced = 3 * feat
    lstm = Layer("<LstmProjected>", [
        ("<GifoX>", rng_weights(rng, 4 * cell, spliced)), ("<GifoR>", rng_weights(rng, 4 * cell, proj)), ("<Bias>", rng_weights(rng, 4 * cell)),
        ("<PeepholeI>", rng_weights(rng, cell)), ("<PeepholeF>", rng_weights(rng, cell)), ("<PeepholeO>", rng_weights(rng, cell)),
        ("<RM>", rng_weights(rng, proj, cell, scale=1.0)),
    ], (proj, spliced), options=[
        ("<CellDim>", cell), ("<LearnRateCoef>", 1.0), ("<BiasLearnRateCoef>", 1.0), ("<CellClip>", 1.5),
        ("<DiffClip>", 1.0), ("<CellDiffClip>", 0.0), ("<GradClip>", 250.0),
    ])  # fmt: skip
    return [
        Layer("<Splice>", [("<Offsets>", Ints((-1, 0, 1)))], (spliced, feat)),
        lstm,
        Layer("<AffineTransform>", [("<Linearity>", rng_weights(rng, pdfs, proj)), ("<Bias>", rng_weights(rng, pdfs))], (pdfs, proj)),
        Layer("<Softmax>", [], (pdfs, pdfs)),
    ]


def lstm_nnet3_model(seed: int = 0, feat: int = 4, cell: int = 5, proj: int = 3, pdfs: int = 6) -> Nnet3Spec:
    """An nnet3 LSTMP layer as Kaldi's xconfig `lstmp-layer` writes it: W_all over
    Append(input, IfDefined(Offset(r, -1))), LstmNonlinearity over Append(gates,
    IfDefined(Offset(c, -1))), dim-range nodes for c and m, BackpropTruncation, projection."""
    rng = np.random.default_rng(seed)
    config = [
        f"input-node name=input dim={feat}",
        "component-node name=lstm1.W_all component=lstm1.W_all input=Append(input, IfDefined(Offset(lstm1.r_trunc, -1)))",
        "component-node name=lstm1.lstm_nonlin component=lstm1.lstm_nonlin input=Append(lstm1.W_all, IfDefined(Offset(lstm1.c_trunc, -1)))",
        f"dim-range-node name=lstm1.m input-node=lstm1.lstm_nonlin dim-offset={cell} dim={cell}",
        f"dim-range-node name=lstm1.c input-node=lstm1.lstm_nonlin dim-offset=0 dim={cell}",
        "component-node name=lstm1.cm_trunc component=lstm1.cm_trunc input=Append(lstm1.c, lstm1.m)",
        f"dim-range-node name=lstm1.c_trunc input-node=lstm1.cm_trunc dim-offset=0 dim={cell}",
        f"dim-range-node name=lstm1.m_trunc input-node=lstm1.cm_trunc dim-offset={cell} dim={cell}",
        "component-node name=lstm1.W_rp component=lstm1.W_rp input=lstm1.m_trunc",
        f"dim-range-node name=lstm1.r_trunc input-node=lstm1.W_rp dim-offset=0 dim={proj}",
        "component-node name=output.affine component=output.affine input=lstm1.W_rp",
        "component-node name=output.log-softmax component=output.log-softmax input=output.affine",
        "output-node name=output input=output.log-softmax objective=linear",
    ]
    layers = [
        Layer("<NaturalGradientAffineComponent>", [("<LinearParams>", rng_weights(rng, 4 * cell, feat + proj)), ("<BiasParams>", rng_weights(rng, 4 * cell))], name="lstm1.W_all"),
        Layer("<LstmNonlinearityComponent>", [
            ("<MaxChange>", 0.75), ("<LearningRate>", 0.001), ("<Params>", rng_weights(rng, 3, cell)),
            ("<ValueAvg>", np.zeros((5, cell), np.float32)), ("<DerivAvg>", np.zeros((5, cell), np.float32)),
            ("<SelfRepairConfig>", np.full(10, 0.1, np.float32)), ("<SelfRepairProb>", np.zeros(5, np.float32)), ("<Count>", 0.0),
        ], name="lstm1.lstm_nonlin"),  # fmt: skip
        Layer("<BackpropTruncationComponent>", [("<Dim>", 2 * cell), ("<Scale>", 1.0), ("<ClippingThreshold>", 30.0), ("<ZeroingThreshold>", 15.0), ("<ZeroingInterval>", 20), ("<RecurrenceInterval>", 1)], name="lstm1.cm_trunc"),
        Layer("<NaturalGradientAffineComponent>", [("<LinearParams>", rng_weights(rng, 2 * proj, cell)), ("<BiasParams>", np.zeros(2 * proj, np.float32))], name="lstm1.W_rp"),
        Layer("<NaturalGradientAffineComponent>", [("<LinearParams>", rng_weights(rng, pdfs, 2 * proj)), ("<BiasParams>", rng_weights(rng, pdfs))], name="output.affine"),
        Layer("<LogSoftmaxComponent>", nonlinear("", pdfs).fields, name="output.log-softmax"),
    ]
    return Nnet3Spec(config, layers, rng.dirichlet(np.ones(pdfs)).astype(np.float32))


def cnn_pool_model(seed: int = 0, feat: int = 12, pdfs: int = 5) -> Nnet3Spec:
    """Append(Offset(input, -1), input, Offset(input, 1)) read as [3 frames, 4 heights, 3
    channels] -> max pooling (2, 2, 3) at steps (1, 2, 3) -> Affine -> Softmax."""
    rng = np.random.default_rng(seed)
    config = [
        f"input-node name=input dim={feat}",
        "component-node name=pool component=pool input=Append(Offset(input, -1), input, Offset(input, 1))",
        "component-node name=out component=out input=pool",
        "component-node name=softmax component=softmax input=out",
        "output-node name=output input=softmax",
    ]
    pool = Layer("<MaxpoolingComponent>", [
        ("<InputXDim>", 3), ("<InputYDim>", 4), ("<InputZDim>", 3), ("<PoolXSize>", 2), ("<PoolYSize>", 2), ("<PoolZSize>", 3),
        ("<PoolXStep>", 1), ("<PoolYStep>", 2), ("<PoolZStep>", 3),
    ], name="pool")  # fmt: skip
    layers = [
        pool,
        Layer("<AffineComponent>", [("<LinearParams>", rng_weights(rng, pdfs, 4)), ("<BiasParams>", rng_weights(rng, pdfs))], name="out"),
        Layer("<SoftmaxComponent>", nonlinear("", pdfs).fields, name="softmax"),
    ]
    return Nnet3Spec(config, layers)


def cnn_tdnn_model(seed: int = 0, height: int = 6, filters_in: int = 2, filters_out: int = 3, pdfs: int = 5) -> Nnet3Spec:
    """TimeHeightConvolution (time offsets -1..1, height offsets -1..1, height subsampling 2,
    zero-padded heights) -> ReLU -> Affine -> LogSoftmax."""
    rng = np.random.default_rng(seed)
    offsets = np.array([(dt, dh) for dt in (-1, 0, 1) for dh in (-1, 0, 1)], np.int64)
    h_out = height // 2
    config = [
        f"input-node name=input dim={height * filters_in}",
        "component-node name=conv1 component=conv1 input=input",
        "component-node name=relu1 component=relu1 input=conv1",
        "component-node name=out component=out input=relu1",
        "component-node name=log-softmax component=log-softmax input=out",
        "output-node name=output input=log-softmax",
    ]
    conv = Layer("<TimeHeightConvolutionComponent>", [
        ("<MaxChange>", 0.75), ("<LearningRate>", 0.001), ("<Model>", None), ("<ConvolutionModel>", None),
        ("<NumFiltersIn>", filters_in), ("<NumFiltersOut>", filters_out), ("<HeightIn>", height), ("<HeightOut>", h_out),
        ("<HeightSubsampleOut>", 2), ("<Offsets>", Pairs(offsets)), ("<RequiredTimeOffsets>", Ints((-1, 0, 1))), ("</ConvolutionModel>", None),
        ("<LinearParams>", rng_weights(rng, filters_out, len(offsets) * filters_in)), ("<BiasParams>", rng_weights(rng, filters_out)),
        ("<MaxMemoryMb>", 200.0), ("<UseNaturalGradient>", True),
    ], name="conv1")  # fmt: skip
    layers = [
        conv,
        Layer("<RectifiedLinearComponent>", nonlinear("", h_out * filters_out).fields, name="relu1"),
        Layer("<AffineComponent>", [("<LinearParams>", rng_weights(rng, pdfs, h_out * filters_out)), ("<BiasParams>", rng_weights(rng, pdfs))], name="out"),
        Layer("<LogSoftmaxComponent>", nonlinear("", pdfs).fields, name="log-softmax"),
    ]
    return Nnet3Spec(config, layers)
