"""Kaldi acoustic model -> `nn` module of a whole utterance.

The input is one utterance, `[T, D]` (T frames from --input_shape); the output holds the
posteriors of all T frames, as Kaldi's nnet-forward / nnet3-compute give them. Splicing reads
frames by index (Gathers): nnet1 clamps each Splice's frame indices to [0, T-1] (Kaldi repeats
the edge frames); nnet2 and nnet3 pad the input once by the model's left/right context with
the edge frames, then each splice or Offset reads the frames it needs (`nnet3_graph.py`).
`--remove_output_softmax` drops a softmax at the output, `--counts` subtracts log priors
(before a final softmax, after a final log-softmax) as the Model Optimizer does
(`postprocess.py`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Gather, Slice
from irforge.errors import IrforgeError
from irforge.frontends.folding import FoldingBuilder
from irforge.frontends.kaldi.component import Component
from irforge.frontends.kaldi.loader import KaldiModel, load_kaldi, priors_of
from irforge.frontends.kaldi.registry import EXTRACTORS, ComponentContext
from irforge.model import Model

EXTENSION_HINT = 'register an extractor with @irforge.frontends.kaldi.kaldi_extractor("<Type>") in an --extensions file'


def import_kaldi(
    path: str, frames: int | None = None, input_shapes: dict[str, list[int]] | None = None,
    counts: np.ndarray | None = None, remove_output_softmax: bool = False, counts_from_model: bool = False,
) -> Model:  # fmt: skip
    """The whole-utterance model of the Kaldi file `path` for utterances of `frames` frames
    (or the [T, D] shapes of nnet3's input nodes by name). `counts` are log priors to subtract
    at the output; `counts_from_model` takes them from the priors a `.mdl` stores (mo's
    `--counts ""`)."""
    from irforge.frontends.kaldi.nnet3_graph import build_nnet3
    from irforge.frontends.kaldi.postprocess import counts_to_log_priors, finish_output

    model = load_kaldi(path)
    check_supported(model)
    if counts_from_model:
        priors = priors_of(model)
        if priors is None or priors.size == 0:
            raise IrforgeError(
                "Model file does not contain Priors tag with counts values", where=path,
                fix="use a separate counts file: --counts FILE", code="E505",
            )
        counts = counts_to_log_priors(priors)
    builder = FoldingBuilder()
    if model.format == "nnet3":
        assert model.nnet3 is not None
        output = build_nnet3(builder, model.nnet3, model.path, frames, input_shapes or {})
    else:
        components = model.nnet1 if model.nnet1 is not None else model.nnet2.components  # type: ignore[union-attr]
        dim = input_dim(components, model.path)
        shape = input_shape_for("input", frames, input_shapes or {}, dim, model.path)
        x = builder.builder.input("input", shape)
        if model.format == "nnet1":
            output = run_nnet1(builder, components, x)
        else:
            output = run_nnet2(builder, components, x)
    output = finish_output(builder, output, counts, remove_output_softmax, model.path)
    builder.builder.output(output, "output")
    return builder.builder.finish()


def input_shape_for(name: str, frames: int | None, shapes: dict[str, list[int]], dim: int, path: str) -> list[int]:
    shape = shapes.get(name, [frames, dim] if frames else None)
    if shape is None:
        raise IrforgeError(
            f"a Kaldi model needs the number of frames of its input '{name}'", where=path,
            fix=f"give the utterance as --input_shape [T,{dim}] (T frames of {dim} features)" if name == "input"
            else f"name every input and its shape: --input input,{name} --input_shape [T,D],[N,{dim}]", code="E504",
        )
    if len(shape) != 2 or shape[1] != dim or shape[0] < 1:
        raise IrforgeError(
            f"--input_shape {shape} does not fit the Kaldi input '{name}' of {dim} features", where=path,
            fix=f"give [T,{dim}]", code="E504",
        )
    return shape


def all_components(components: Iterable[Component]) -> Iterable[Component]:
    for c in components:
        yield c
        for nested in c.nested:
            yield from all_components(nested)


def check_supported(model: KaldiModel) -> None:
    """Every component type without an extractor, listed together."""
    if model.nnet3 is not None:
        components: Iterable[Component] = model.nnet3.components.values()
    else:
        components = all_components(model.nnet1 if model.nnet1 is not None else model.nnet2.components)  # type: ignore[union-attr]
    missing = Counter(c.kind for c in components if c.kind not in EXTRACTORS and c.kind != "<ParallelComponent>")
    if missing:
        listed = ", ".join(f"{k} x{n}" for k, n in sorted(missing.items()))
        raise IrforgeError(f"unsupported Kaldi components: {listed}", where=model.path, fix=EXTENSION_HINT, code="E510")


def input_dim(components: Sequence[Component], path: str) -> int:
    if not components:
        raise IrforgeError("the Kaldi model has no components", where=path, code="E502")
    first = components[0]
    if first.dims is not None:
        return first.dims[1]
    for key in ("<InputDim>", "<Dim>"):
        if first.has(key):
            return first.int(key)
    if first.has("<LinearParams>"):
        return int(first.array("<LinearParams>", 2).shape[1])
    raise first.error("does not say its input dim; the model's input size is unknown", code="E508")


def apply(builder: FoldingBuilder, component: Component, x: SSAValue, valid_splice: bool = False) -> SSAValue:
    return EXTRACTORS[component.kind](ComponentContext(builder, component, x, valid_splice))


def dim_of(value: SSAValue) -> int:
    t = value.type
    assert isinstance(t, TensorType)
    return int(t.get_shape()[-1])


def run_nnet1(builder: FoldingBuilder, components: Sequence[Component], x: SSAValue) -> SSAValue:
    for c in components:
        assert c.dims is not None
        out_dim, in_dim = c.dims
        if dim_of(x) != in_dim:
            raise c.error(f"has input dim {in_dim} but the previous component gives {dim_of(x)}", code="E508")
        x = parallel(builder, c, x) if c.kind == "<ParallelComponent>" else apply(builder, c, x)
        if dim_of(x) != out_dim:
            raise c.error(f"declares output dim {out_dim} but computes {dim_of(x)}", code="E508")
    return x


def parallel(builder: FoldingBuilder, component: Component, x: SSAValue) -> SSAValue:
    """nnet1 ParallelComponent: consecutive column ranges of the input through the nested
    nets, their outputs concatenated."""
    ctx = ComponentContext(builder, component, x)
    outputs, start = [], 0
    for i, nested in enumerate(component.nested):
        width = input_dim(nested, component.where) if nested else 0
        part = ctx.value(Slice, [x], suffix=f"/in{i}", begins=[start], ends=[start + width], axes=[1])
        outputs.append(run_nnet1(builder, nested, part))
        start += width
    if start != dim_of(x):
        raise component.error(f"nested nets read {start} features of {dim_of(x)}", code="E508")
    return ctx.value(Concat, outputs, axis=1) if len(outputs) > 1 else outputs[0]


def nnet2_context(components: Sequence[Component]) -> tuple[int, int]:
    """Frames of left and right context the splices of an nnet2 model consume."""
    left = right = 0
    for c in components:
        if c.kind == "<SpliceComponent>":
            context = c.array("<Context>", 1) if c.has("<Context>") else np.array([-c.int("<LeftContext>"), c.int("<RightContext>")])
            left, right = left - int(context.min()), right + int(context.max())
    return left, right


MAX_CONTEXT = 65536
"""Splice context frames (left + right) beyond this are refused: no real nnet2 model has them."""


def run_nnet2(builder: FoldingBuilder, components: Sequence[Component], x: SSAValue) -> SSAValue:
    frames = int(x.type.get_shape()[0])  # type: ignore[attr-defined]
    left, right = nnet2_context(components)
    if left + right > MAX_CONTEXT:  # a corrupt <LeftContext> of 10**9 would gather 10**9 frames
        raise IrforgeError(f"Kaldi component <SpliceComponent>: a context of {left} + {right} frames is larger than {MAX_CONTEXT}",
                           fix="check the model's <Context> / <LeftContext> / <RightContext>", code="E508")
    if left or right:
        indices = np.clip(np.arange(-left, frames + right), 0, frames - 1).astype(np.int32)
        x = builder.add(Gather, [x, builder.constant(indices, "input_context/frames")], name="input_context", axis=0)[0]
    for c in components:
        x = apply(builder, c, x, valid_splice=True)
    return x
