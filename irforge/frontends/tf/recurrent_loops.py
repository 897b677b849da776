"""Keras LSTM / GRU / SimpleRNN loops of a GraphDef replaced by one recurrent node each.

Before importing, every TF2 While and TF1 loop frame (`loop_view.py`) is matched against
the Keras cells (`rnn_cells.py`). A recognised loop becomes

    <loop>/irforge_w, /irforge_r, /irforge_b    Const (OpenVINO gate order)
    <loop>/irforge_sequence                     IrforgeRecurrentSequence(x [T,N,I], h0[, c0], w, r, b)
        :0  the outputs, time major: [T, N, H] (output_mode sequence) or [1, N, H] (last)
        :1  final h [N, H]        :2  final c (LSTM)

whose extractor (`extractors/recurrent.py`) builds nn.lstm_sequence / gru_sequence /
rnn_sequence. The loop's nodes go; the TensorListStack that read its output list becomes an
Identity of :0, and readers of its final states read :1 / :2. Nodes that fed only the loop
(the TensorList makers, the trip count's Range and Max, `unused_control_flow_input`
placeholders of lowered control flow) go too. Loops that are not recognised stay, with the
reason, for the importer's one error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irforge.frontends.tf.loop_algebra import NotACell
from irforge.frontends.tf.loop_view import LoopView, frame_loops, producer, while_loops
from irforge.frontends.tf.rnn_cells import RecurrentLoop, match_recurrent
from irforge.frontends.tf.schema import DT_FLOAT

RECURRENT_OP = "IrforgeRecurrentSequence"
LOWERING_PLACEHOLDER = "unused_control_flow_input"


def fold_recurrent_loops(graph_def: Any) -> tuple[Any, dict[str, str]]:
    """The GraphDef with recognised loops replaced, and {loop label: why not} for the rest."""
    views = [*while_loops(graph_def), *frame_loops(graph_def)]
    if not views:
        return graph_def, {}
    outer = {n.name: n for n in graph_def.node}
    refused: dict[str, str] = {}
    matched: list[tuple[LoopView, RecurrentLoop]] = []
    for view in views:
        try:
            loop = match_recurrent(view, outer)
            _check_exits(view, loop, graph_def)
            matched.append((view, loop))
        except NotACell as e:
            refused[view.label] = str(e)
    if not matched:
        return graph_def, refused
    return _rewrite(graph_def, matched), refused


def _check_exits(view: LoopView, loop: RecurrentLoop, graph_def: Any) -> None:
    """Only the final states and the output list (through TensorListStack) may be read."""
    allowed = {e for e in loop.finals if e is not None}
    for node in graph_def.node:
        if node.name in view.members:
            continue
        for ref in node.input:
            if ref.startswith("^"):
                continue
            key = producer(ref)
            if loop.output is not None and key == loop.output:
                if node.op != "TensorListStack":
                    raise NotACell(f"its output list is read by {node.op} '{node.name}', not by TensorListStack")
                continue
            if any(var.exit == key for var in view.vars) and key not in allowed:
                raise NotACell(f"'{node.name}' reads a loop variable that is not a recurrent state")


def _rewrite(graph_def: Any, matched: list[tuple[LoopView, RecurrentLoop]]) -> Any:
    removed: set[str] = set()
    renamed: dict[tuple[str, int], str] = {}
    stacks: dict[tuple[str, int], str] = {}
    added = []
    for view, loop in matched:
        removed |= view.members
        base = view.name + "/irforge_"
        node_class = type(graph_def.node[0])  # the caller's protobuf classes (TensorFlow's own, or irforge's)
        weights = [_const(node_class, base + k, v) for k, v in (("w", loop.w), ("r", loop.r), ("b", loop.b))]
        sequence = node_class(name=base + "sequence", op=RECURRENT_OP)
        sequence.input.extend([loop.sequence, *loop.initial, *(w.name for w in weights)])
        sequence.attr["cell"].s = loop.cell.encode()
        sequence.attr["activations"].s = ",".join(loop.activations).encode()
        sequence.attr["linear_before_reset"].b = loop.linear_before_reset
        sequence.attr["output_mode"].s = loop.output_mode.encode()
        sequence.attr["trip_count"].i = loop.trip_count
        added += [*weights, sequence]
        for k, final in enumerate(loop.finals):
            if final is not None:
                renamed[final] = f"{sequence.name}:{k + 1}"
        if loop.output is not None:
            stacks[loop.output] = sequence.name
    consumed_before = _consumed(graph_def.node)
    flat = type(graph_def)()
    flat.versions.CopyFrom(graph_def.versions)
    flat.library.CopyFrom(graph_def.library)
    for node in graph_def.node:
        if node.name in removed:
            continue
        copy = flat.node.add()
        copy.CopyFrom(node)
        data = [i for i in node.input if not i.startswith("^")]
        if node.op == "TensorListStack" and producer(data[0]) in stacks:
            copy.op = "Identity"
            del copy.input[:]
            copy.input.append(stacks[producer(data[0])])
            for key in list(copy.attr):
                if key != "T":
                    del copy.attr[key]
            copy.attr["T"].type = DT_FLOAT
            continue
        del copy.input[:]
        for ref in node.input:
            if ref.startswith("^"):
                if ref[1:] not in removed:
                    copy.input.append(ref)
            else:
                copy.input.append(renamed.get(producer(ref), ref))
    flat.node.extend(added)
    _prune(flat, consumed_before)
    return flat


def _const(node_class: Any, name: str, value: np.ndarray) -> Any:
    node = node_class(name=name, op="Const")
    node.attr["dtype"].type = DT_FLOAT
    tensor = node.attr["value"].tensor
    tensor.dtype = DT_FLOAT
    for d in value.shape:
        tensor.tensor_shape.dim.add(size=int(d))
    tensor.tensor_content = np.ascontiguousarray(value, np.float32).tobytes()
    return node


def _consumed(nodes: Any) -> set[str]:
    return {producer(i)[0] for n in nodes for i in n.input}


def _prune(graph_def: Any, consumed_before: set[str]) -> None:
    """Drop, until none is left, nodes that had readers and have none now (they fed only
    the loops), and the placeholders control-flow lowering leaves unread."""
    while True:
        consumed = _consumed(graph_def.node)
        dead = {
            n.name for n in graph_def.node
            if n.name not in consumed and (n.name in consumed_before or (n.op == "Placeholder" and n.name.startswith(LOWERING_PLACEHOLDER)))
        }
        if not dead:
            return
        keep = [n for n in graph_def.node if n.name not in dead]
        del graph_def.node[:]
        graph_def.node.extend(keep)
        for n in graph_def.node:
            inputs = [i for i in n.input if not (i.startswith("^") and i[1:] in dead)]
            if len(inputs) != len(n.input):
                del n.input[:]
                n.input.extend(inputs)

