"""The recurrent node a recognised Keras loop became (`recurrent_loops.py`), and ReverseV2
(Keras' `go_backwards` reverses the sequence before its loop).

IrforgeRecurrentSequence(x [T, N, I], h0 [N, H][, c0], w [G*H, I], r [G*H, H], b) runs the
cell forward over the T steps as nn.lstm_sequence / gru_sequence / rnn_sequence (batch
first, one direction): x is transposed to [N, T, I], the states and weights get the
direction axis, and the results go back to the loop's forms: the outputs time major
([T, N, H], or the last step alone as [1, N, H]) and the final states [N, H].
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Permute, Reshape, Slice, Unsqueeze
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.recurrent import GRUSequence, LSTMSequence, RNNSequence
from irforge.frontends.tf.recurrent_loops import RECURRENT_OP
from irforge.frontends.tf.registry import NodeContext, tf_extractor

CELLS = {"lstm": LSTMSequence, "gru": GRUSequence, "rnn": RNNSequence}
START = np.iinfo(np.int64).min


@tf_extractor(RECURRENT_OP)
def recurrent_sequence(ctx: NodeContext) -> list[SSAValue]:
    cls = CELLS[ctx.attr("cell")]
    t, n, _ = ctx.input_shape(0)
    trip = int(ctx.attr("trip_count"))
    if DYN in (t, n):
        raise ctx.fail("the recurrent layer's batch and sequence sizes must be static", fix="give the input shape with --input_shape")
    if trip != t:
        raise ctx.fail(f"the loop runs {trip} steps over a sequence of {t}", fix="freeze the layer with the sequence length it runs over")
    x = ctx.value(Permute, [ctx.input(0)], suffix="/x", order=[1, 0, 2])
    states = [ctx.value(Unsqueeze, [ctx.input(1 + k)], suffix=f"/initial_{'hc'[k]}", axes=[1]) for k in range(cls.STATES)]
    w, r, b = (ctx.value(Unsqueeze, [ctx.input(1 + cls.STATES + k)], suffix=f"/{name}", axes=[0]) for k, name in enumerate("wrb"))
    hidden = ctx.input_shape(2 + cls.STATES)[1]
    lengths = ctx.constant(np.full(n, t, np.int32), "/sequence_lengths")
    props: dict[str, object] = {"hidden_size": hidden, "activations": ctx.attr("activations")}
    if cls is GRUSequence:
        props["linear_before_reset"] = bool(ctx.attr("linear_before_reset"))
    results = ctx.add(cls, [x, *states, lengths, w, r, b], num_results=1 + cls.STATES, suffix="/sequence", **props)
    finals = [ctx.value(Reshape, [s], suffix=f"/final_{'hc'[k]}", shape=[n, hidden]) for k, s in enumerate(results[1:])]
    if ctx.attr("output_mode") == "last":
        outputs = ctx.value(Reshape, [results[1]], suffix="/last", shape=[1, n, hidden])
    else:  # y [N, 1, T, H] -> [T, N, H]
        y = ctx.value(Reshape, [results[0]], suffix="/y", shape=[n, t, hidden])
        outputs = ctx.value(Permute, [y], order=[1, 0, 2])
    return [outputs, *finals]


@tf_extractor("ReverseV2")
def reverse(ctx: NodeContext) -> SSAValue:
    rank = len(ctx.input_shape(0))
    axes = sorted({a % rank for a in ctx.ints_input(1, "axis")})
    if not axes:
        return ctx.input(0)
    return ctx.value(Slice, [ctx.input(0)], begins=[-1] * len(axes), ends=[START] * len(axes), axes=axes, steps=[-1] * len(axes))
