"""Naming the TensorFlow loops irforge does not recognise, with what fits instead.

A frozen Keras LSTM / GRU / SimpleRNN is a loop: TF2 writes a `While` / `StatelessWhile`
node whose `body` function reads the sequence through `TensorList*` ops, TF1 writes the loop
inline as a frame of `Enter -> Merge -> Switch -> ... -> NextIteration` and `Exit` nodes
named by the Enter nodes' `frame_name`. `recurrent_loops.py` replaces the loops it
recognises as RNN layers; `describe_loops` names each one left, with the reason the match
gave, so the importer's one error lists them next to any other unsupported op.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

LOOP_OPS = frozenset(
    {"While", "StatelessWhile", "Enter", "Exit", "Merge", "Switch", "NextIteration", "LoopCond", "RefEnter", "RefExit", "RefMerge", "RefSwitch", "RefNextIteration"}
)
"""Control-flow ops that only loops (and TF1 conds, whose Switch/Merge are loop-free) use."""
TENSOR_LIST_PREFIX = "TensorList"
LOOP_FIX = (
    "irforge imports TF2 While loops whose cond and body use supported ops (no tensor lists) as "
    "OpenVINO Loop, and loops that are Keras LSTM, GRU (reset_after true or false) or SimpleRNN "
    "layers (sigmoid/tanh/relu, no mask) as LSTMSequence/GRUSequence/RNNSequence; build any "
    "other recurrent layer with unroll=True before freezing, or cut the loop out with "
    "--input/--output"
)


def is_loop_op(op: str) -> bool:
    return op in LOOP_OPS or op.startswith(TENSOR_LIST_PREFIX)


def describe_loops(graph_def: Any, reasons: Mapping[str, str] | None = None, imported: Collection[str] = ()) -> list[str]:
    """One line per loop: TF2 While nodes (with their body function), TF1 frames, each with
    the reason it is not a recognised RNN when there is one; not the While nodes in
    `imported` (those become nn.loop, extractors/control_flow.py)."""
    reasons = reasons or {}
    loops: list[str] = []
    frames: dict[str, str] = {}
    for node in graph_def.node:
        if node.op in ("While", "StatelessWhile") and node.name in imported:
            continue
        if node.op in ("While", "StatelessWhile"):
            body = node.attr["body"].func.name if "body" in node.attr else "?"
            loops.append(f"{node.op} '{node.name}' (body '{body}')")
        elif node.op in ("Enter", "RefEnter"):
            frame = node.attr["frame_name"].s.decode() if "frame_name" in node.attr else node.name.rsplit("/", 1)[0]
            frames.setdefault(frame, node.name)
    loops += [f"TF1 loop frame '{frame}'" for frame, first in frames.items()]
    loops = [f"{loop}: not an RNN layer, {reasons[loop]}" if loop in reasons else loop for loop in loops]
    if not loops and any(is_loop_op(node.op) and node.name not in imported for node in graph_def.node):
        # Switch/Merge without Enter: a TF1 cond, or a loop whose frame was cut
        scopes = sorted({node.name.rsplit("/", 1)[0] for node in graph_def.node if is_loop_op(node.op)})
        loops.append(f"control flow in {', '.join(scopes[:3])}{', ...' if len(scopes) > 3 else ''}")
    return loops
