"""Emitters of the recurrent Sequence ops: one opset5 LSTMSequence / GRUSequence / RNNSequence
layer each, operands in the same order (the nn ops mirror them), states batch first.

OpenVINO's opset lists sigmoid, tanh, relu and hardsigmoid for its cells, but its CPU plugin
refuses hardsigmoid ("Unsupported activation function", 2026.4); a cell with anything but
sigmoid, tanh and relu is refused by name rather than written as a model OpenVINO rejects.
"""

from __future__ import annotations

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.graph import PortType, fmt_bool, fmt_float
from irforge.dialects.nn.recurrent import GRUSequence, LSTMSequence, RecurrentSequence, RNNSequence
from irforge.errors import IrforgeError

OPENVINO_ACTIVATIONS = frozenset({"sigmoid", "tanh", "relu"})
LAYER_TYPES = {LSTMSequence: "LSTMSequence", GRUSequence: "GRUSequence", RNNSequence: "RNNSequence"}


def recurrent_data(ctx: EmitContext, op: RecurrentSequence) -> dict[str, str]:
    names = op.activation_names()
    for name in names:
        if name not in OPENVINO_ACTIVATIONS:
            raise IrforgeError(
                f"activation '{name}' of {op.name} has no OpenVINO equivalent",
                where=f"layer '{ctx.name(op)}'",
                fix=f"use {', '.join(sorted(OPENVINO_ACTIVATIONS))}, or run the model with ir-run --device ref|cpu",
                code="E660",
            )
    return {
        "hidden_size": str(op.int_prop("hidden_size")),
        "activations": ",".join(names),
        "activations_alpha": ",".join(fmt_float(v) for v in op.floats("activations_alpha")),
        "activations_beta": ",".join(fmt_float(v) for v in op.floats("activations_beta")),
        "clip": fmt_float(op.float_prop("clip")),
        "direction": op.str_prop("direction"),
    }


@ir_xml_emitter(LSTMSequence, GRUSequence, RNNSequence)
def recurrent_sequence(ctx: EmitContext, op: RecurrentSequence, inputs: list[Port]) -> list[Port]:
    data = recurrent_data(ctx, op)
    if isinstance(op, GRUSequence):
        data["linear_before_reset"] = fmt_bool(op.bool_prop("linear_before_reset"))
    outputs = [PortType.of(r.type) for r in op.results]
    return ctx.layer(LAYER_TYPES[type(op)], inputs, outputs, name=ctx.name(op), data=data, version="opset5")
