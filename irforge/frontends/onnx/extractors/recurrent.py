"""ONNX LSTM, GRU, RNN -> nn.lstm_sequence / gru_sequence / rnn_sequence (OpenVINO's form).

What changes on the way: the data goes batch first (layout 0 is transposed in and out), the
LSTM gate blocks of W, R and B are reordered from ONNX's i, o, f, c to f, i, c, o, the two
biases Wb and Rb are summed (GRU with linear_before_reset keeps the h gate's apart: [z, r,
Wbh, Rbh]), absent initial states become zeros and absent sequence lengths the full length,
and ONNX's packed activation_alpha/beta (consumed only by the functions that take them, with
ONNX's defaults) become one value per function. The reordering and summing are nn ops, so
they fold at import when the weights are initializers and stay in the graph when they are not.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Eltwise, Permute, Split
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.recurrent import GRUSequence, LSTMSequence, RecurrentSequence, RNNSequence
from irforge.errors import IrforgeError
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl

# name -> (alpha default, beta default); None: the function takes no such parameter
PARAMETERS: dict[str, tuple[float | None, float | None]] = {
    "sigmoid": (None, None), "tanh": (None, None), "relu": (None, None),
    "softsign": (None, None), "softplus": (None, None),
    "affine": (1.0, 0.0), "leakyrelu": (0.01, None), "thresholdedrelu": (1.0, None),
    "scaledtanh": (1.0, 1.0), "hardsigmoid": (0.2, 0.5), "elu": (1.0, None),
}  # fmt: skip
DEFAULTS = {LSTMSequence: ["Sigmoid", "Tanh", "Tanh"], GRUSequence: ["Sigmoid", "Tanh"], RNNSequence: ["Tanh"]}
LSTM_GATES = [2, 0, 3, 1]
"""ONNX's LSTM blocks i, o, f, c picked in OpenVINO's order f, i, c, o."""


def unsupported(ctx: NodeContext, what: str, fix: str, code: str) -> IrforgeError:
    return IrforgeError(what, where=ctx.where, fix=fix, code=code)


def unpack_activations(ctx: NodeContext, names: list[str]) -> list[tuple[str, float, float]]:
    """ONNX's activations with their alpha and beta, one triple per function."""
    alphas, betas = list(ctx.attr("activation_alpha", [])), list(ctx.attr("activation_beta", []))
    triples = []
    for original in names:
        name = original.lower()
        if name not in PARAMETERS:
            raise unsupported(ctx, f"activation '{original}' is not supported", f"use one of {', '.join(sorted(PARAMETERS))}", "E160")
        alpha_default, beta_default = PARAMETERS[name]
        alpha = (alphas.pop(0) if alphas else alpha_default) if alpha_default is not None else 0.0
        beta = (betas.pop(0) if betas else beta_default) if beta_default is not None else 0.0
        triples.append((name, float(alpha), float(beta)))
    return triples


def activation_props(ctx: NodeContext, cls: type[RecurrentSequence], directions: int) -> dict[str, object]:
    """activations / activations_alpha / activations_beta for the op (one list for both
    directions, as OpenVINO has)."""
    names = list(ctx.attr("activations", DEFAULTS[cls]))
    count = cls.ACTIVATION_COUNT
    if len(names) not in (count, count * directions):
        raise unsupported(ctx, f"activations has {len(names)} names, expected {count * directions}", "give one list of functions per direction", "E161")
    triples = unpack_activations(ctx, names)
    if len(triples) > count and triples[:count] != triples[count:]:
        raise unsupported(
            ctx, "bidirectional with different activations per direction is not supported (OpenVINO's Sequence ops share one list)",
            "use the same activations, alpha and beta for both directions", "E162",
        )
    triples = triples[:count]
    props: dict[str, object] = {"activations": ",".join(t[0] for t in triples)}
    if any(t[1] or t[2] for t in triples):
        props["activations_alpha"] = [t[1] for t in triples]
        props["activations_beta"] = [t[2] for t in triples]
    return props


def regroup(ctx: NodeContext, value: SSAValue, blocks: int, order: list[int], suffix: str) -> SSAValue:
    """Blocks of axis 1 (`blocks` equal ones) concatenated in `order`."""
    if order == list(range(blocks)):
        return value
    size = value.type.get_shape()[1] // blocks  # type: ignore[attr-defined]
    parts = ctx.add(Split, [value], num_results=blocks, suffix=f"{suffix}/split", axis=1, split_lengths=[size] * blocks)
    return ctx.value(Concat, [parts[i] for i in order], suffix=suffix, axis=1)


def bias(ctx: NodeContext, cls: type[RecurrentSequence], directions: int, hidden: int, before_reset: bool, dtype: np.dtype) -> SSAValue:
    """B as the op takes it: Wb + Rb per gate (GRU linear_before_reset: [z, r, Wbh, Rbh])."""
    gates = cls.GATES
    if not ctx.has_input(3):
        return ctx.constant(np.zeros((directions, (gates + before_reset) * hidden), dtype), "/b")
    parts = ctx.add(Split, [ctx.input(3)], num_results=2, suffix="/b/halves", axis=1, split_lengths=[gates * hidden] * 2)
    if before_reset:
        wb = ctx.add(Split, [parts[0]], num_results=2, suffix="/b/wb", axis=1, split_lengths=[2 * hidden, hidden])
        rb = ctx.add(Split, [parts[1]], num_results=2, suffix="/b/rb", axis=1, split_lengths=[2 * hidden, hidden])
        zr = ctx.value(Eltwise, [wb[0], rb[0]], suffix="/b/zr", operation="sum")
        return ctx.value(Concat, [zr, wb[1], rb[1]], suffix="/b", axis=1)
    summed = ctx.value(Eltwise, [parts[0], parts[1]], suffix="/b/sum", operation="sum")
    return regroup(ctx, summed, 4, LSTM_GATES, "/b") if cls is LSTMSequence else summed


def initial_state(ctx: NodeContext, index: int, shape: tuple[int, int, int], layout: int, dtype: np.dtype, suffix: str) -> SSAValue:
    """Initial h or c as [N, D, H]: the input (transposed from layout 0), else zeros."""
    if ctx.has_input(index):
        value = ctx.input(index)
        return value if layout == 1 else ctx.value(Permute, [value], suffix=suffix, order=[1, 0, 2])
    return ctx.constant(np.zeros(shape, dtype), suffix)


def check_lstm_extras(ctx: NodeContext) -> None:
    if int(ctx.attr("input_forget", 0)):
        raise unsupported(ctx, "input_forget=1 is not supported (OpenVINO's LSTMSequence cannot couple the gates)", "export the LSTM without coupled input and forget gates", "E163")
    if ctx.has_input(7):
        peepholes = ctx.constant_input(7)
        if peepholes is None or np.any(peepholes):
            raise unsupported(ctx, "peepholes (input P) are not supported (OpenVINO's LSTMSequence-5 has none)", "export the LSTM without peepholes", "E164")


def recurrent(ctx: NodeContext, cls: type[RecurrentSequence]) -> list[SSAValue | None]:
    layout = int(ctx.attr("layout", 0))
    if layout not in (0, 1):
        raise unsupported(ctx, f"layout must be 0 or 1, got {layout}", "fix the model", "E165")
    direction = str(ctx.attr("direction", "forward"))
    directions = 2 if direction == "bidirectional" else 1
    x = ctx.input(0)
    if layout == 0:
        x = ctx.value(Permute, [x], suffix="/x", order=[1, 0, 2])
    n, t, _ = x.type.get_shape()  # type: ignore[attr-defined]
    hidden = int(ctx.attr("hidden_size", 0)) or ctx.input_shape(2)[-1]
    dtype = from_xdsl(ctx.input_type(0).element_type)
    before_reset = cls is GRUSequence and bool(ctx.attr("linear_before_reset", 0))
    if cls is LSTMSequence:
        check_lstm_extras(ctx)
    if n == DYN or t == DYN:
        raise unsupported(ctx, "the batch and sequence sizes must be static", "give the input shapes (--input_shape)", "E166")
    w, r = ctx.input(1), ctx.input(2)
    if cls is LSTMSequence:
        w, r = regroup(ctx, w, 4, LSTM_GATES, "/w"), regroup(ctx, r, 4, LSTM_GATES, "/r")
    lengths = ctx.input(4) if ctx.has_input(4) else ctx.constant(np.full(n, t, np.int32), "/sequence_lengths")
    states = [initial_state(ctx, 5, (n, directions, hidden), layout, dtype, "/initial_h")]
    if cls is LSTMSequence:
        states.append(initial_state(ctx, 6, (n, directions, hidden), layout, dtype, "/initial_c"))
    operands = [x, *states, lengths, w, r, bias(ctx, cls, directions, hidden, before_reset, dtype)]
    props = {"hidden_size": hidden, "direction": direction, "clip": float(ctx.attr("clip", 0.0)), **activation_props(ctx, cls, directions)}
    if cls is GRUSequence:
        props["linear_before_reset"] = before_reset
    results = ctx.add(cls, operands, num_results=1 + cls.STATES, suffix="/sequence", **props)
    y = None
    if ctx.output_used(0):
        y = ctx.value(Permute, [results[0]], order=[2, 1, 0, 3] if layout == 0 else [0, 2, 1, 3])
    finals = [
        (s if layout == 1 else ctx.value(Permute, [s], suffix=f"/Y_{'hc'[k]}", order=[1, 0, 2])) if ctx.output_used(1 + k) else None
        for k, s in enumerate(results[1:])
    ]
    return [y, *finals]


@onnx_extractor("LSTM")
def lstm(ctx: NodeContext) -> list[SSAValue | None]:
    return recurrent(ctx, LSTMSequence)


@onnx_extractor("GRU")
def gru(ctx: NodeContext) -> list[SSAValue | None]:
    return recurrent(ctx, GRUSequence)


@onnx_extractor("RNN")
def rnn(ctx: NodeContext) -> list[SSAValue | None]:
    return recurrent(ctx, RNNSequence)
