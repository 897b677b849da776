"""Readers of OpenVINO's LSTMSequence, GRUSequence and RNNSequence (opset5): one nn op each,
inputs in the same order (the inverse of backends/ir_xml/emitters/recurrent.py)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from irforge.dialects.nn.recurrent import GRUSequence, LSTMSequence, RecurrentSequence, RNNSequence
from irforge.frontends.ir_xml.context import LayerContext, ir_layer_reader

OPS: dict[str, type[RecurrentSequence]] = {"LSTMSequence": LSTMSequence, "GRUSequence": GRUSequence, "RNNSequence": RNNSequence}
DEFAULT_ACTIVATIONS = {LSTMSequence: "sigmoid,tanh,tanh", GRUSequence: "sigmoid,tanh", RNNSequence: "tanh"}


@ir_layer_reader(*OPS)
def recurrent_sequence(ctx: LayerContext) -> Sequence[SSAValue]:
    cls = OPS[ctx.layer.type]
    if ctx.layer.version != "opset5":
        raise ctx.fail(f"{ctx.layer.type} of {ctx.layer.version} is not supported (only opset5's form)", fix="convert the model with a current ovc")
    expected = 4 + cls.STATES + 1
    if ctx.num_inputs != expected:
        raise ctx.fail(f"{ctx.layer.type} needs {expected} inputs, got {ctx.num_inputs}")
    activations = [a.strip().lower() for a in ctx.attr("activations", DEFAULT_ACTIVATIONS[cls]).split(",")]
    props: dict[str, object] = {
        "hidden_size": ctx.int("hidden_size"),
        "direction": ctx.attr("direction", "forward").lower(),
        "activations": ",".join(activations),
        "clip": ctx.float("clip", "0"),
    }
    for name in ("activations_alpha", "activations_beta"):
        values = ctx.floats(name, "")
        if values:
            props[name] = values
    if cls is GRUSequence:
        props["linear_before_reset"] = ctx.bool("linear_before_reset", "false")
    return ctx.add(cls, [ctx.input(i) for i in range(expected)], num_results=1 + cls.STATES, **props)
