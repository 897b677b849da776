"""TensorFlow loops seen one way, whichever form freezing left them in.

A TF2 `While` / `StatelessWhile` node names a `body` and a `cond` function of its library;
its inputs are the loop variables' initial values, the body's results their next values,
and `while:k` the final value of variable k. Freezing with `lower_control_flow=True` (the
default of `convert_variables_to_constants_v2`) writes the same loop inline as a TF1 frame:

    init_k -> Enter -> Merge_k -> Switch_k(LoopCond) --:1--> body ... -> NextIteration -> Merge_k
                                                   \\--:0--> Exit_k   (final value)

and loop-invariant tensors enter through `Enter(is_constant=true)`. `LoopView` gives both
forms the same face: per variable its initial value (an outer reference), its next value (a
reference in the body scope) and its exit (the outer reference its final value has), plus
the body and cond scopes in which references resolve to nodes, to loop variables or to
outer tensors. `recurrent_loops.py` matches the body against the Keras RNN cells.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from irforge.frontends.tf.functions import MULTI_OUTPUT_ARGS

PASS_THROUGH = ("Identity", "Snapshot", "StopGradient")


class NotALoopForm(Exception):
    """The loop's nodes do not have the shape of a TF1 frame or a TF2 While (the message says
    what is off)."""


@dataclass
class Scope:
    """The nodes of a loop body or condition. `leaves` maps a node or argument name to
    ("var", k) for loop variable k or ("outer", ref) for a loop-invariant outer tensor."""

    nodes: dict[str, Any]
    leaves: dict[str, tuple[str, Any]]
    function_style: bool
    """References are written `node:output_arg:index` (a FunctionDef body), else `node:k`."""

    def parse(self, ref: str) -> tuple[str, int]:
        """(node or argument name, output number) of a data reference."""
        parts = ref.split(":")
        if len(parts) == 1:
            return parts[0], 0
        if not self.function_style or len(parts) == 2:
            return parts[0], int(parts[-1])
        node = self.nodes.get(parts[0])
        names = MULTI_OUTPUT_ARGS.get(node.op, ()) if node is not None else ()
        return parts[0], (names.index(parts[1]) if parts[1] in names else 0) + int(parts[2])

    def data_inputs(self, node: Any) -> list[str]:
        return [i for i in node.input if not i.startswith("^")]

    def skip_identities(self, ref: str) -> tuple[str, int]:
        name, port = self.parse(ref)
        while name not in self.leaves and name in self.nodes and self.nodes[name].op in PASS_THROUGH:
            name, port = self.parse(self.data_inputs(self.nodes[name])[0])
        return name, port


@dataclass
class LoopVar:
    init: str
    next: str
    exit: tuple[str, int] | None
    """The outer (node, output) that holds the final value, if the loop exposes one."""


@dataclass
class LoopView:
    name: str
    label: str
    """How errors name the loop: `While 'n' (body 'f')` or `TF1 loop frame 'f'`."""
    vars: list[LoopVar]
    body: Scope
    cond: Scope
    cond_ref: str
    members: set[str] = field(default_factory=set)
    """Outer graph nodes that are the loop (removed when it is replaced)."""


def producer(ref: str) -> tuple[str, int]:
    parts = ref.lstrip("^").split(":")
    return parts[0], int(parts[1]) if len(parts) > 1 else 0


def while_loops(graph_def: Any) -> list[LoopView]:
    """A view of every TF2 While / StatelessWhile node."""
    library = {f.signature.name: f for f in graph_def.library.function}
    views = []
    for node in graph_def.node:
        if node.op not in ("While", "StatelessWhile"):
            continue
        body_name, cond_name = node.attr["body"].func.name, node.attr["cond"].func.name
        label = f"{node.op} '{node.name}' (body '{body_name}')"
        if body_name not in library or cond_name not in library:
            views.append(LoopView(node.name, label, [], Scope({}, {}, True), Scope({}, {}, True), "", {node.name}))
            continue
        body, cond = library[body_name], library[cond_name]
        inits = [i for i in node.input if not i.startswith("^")]
        rets = [body.ret[arg.name] for arg in body.signature.output_arg]
        loop_vars = [LoopVar(init, rets[k] if k < len(rets) else "", (node.name, k)) for k, init in enumerate(inits)]
        views.append(
            LoopView(
                node.name, label, loop_vars, _function_scope(body), _function_scope(cond),
                cond.ret[cond.signature.output_arg[0].name] if cond.signature.output_arg else "", {node.name},
            )
        )
    return views


def _function_scope(function: Any) -> Scope:
    leaves: dict[str, tuple[str, Any]] = {arg.name: ("var", k) for k, arg in enumerate(function.signature.input_arg)}
    return Scope({n.name: n for n in function.node_def}, leaves, True)


def frame_loops(graph_def: Any) -> list[LoopView]:
    """A view of every TF1 loop frame (the nodes from its Enters up to its Exits)."""
    nodes = {n.name: n for n in graph_def.node}
    consumers: dict[str, list[str]] = defaultdict(list)
    for n in graph_def.node:
        for i in n.input:
            consumers[producer(i)[0]].append(n.name)
    frames: dict[str, list[Any]] = defaultdict(list)
    for n in graph_def.node:
        if n.op in ("Enter", "RefEnter"):
            frames[n.attr["frame_name"].s.decode() if "frame_name" in n.attr else n.name.rsplit("/", 1)[0]].append(n)
    views = []
    for frame, enters in frames.items():
        members = _frame_members(enters, nodes, consumers)
        label = f"TF1 loop frame '{frame}'"
        try:
            views.append(_frame_view(frame, label, enters, members, nodes, consumers))
        except NotALoopForm:
            views.append(LoopView(frame, label, [], Scope({}, {}, False), Scope({}, {}, False), "", members))
    return views


def _frame_members(enters: list[Any], nodes: dict[str, Any], consumers: dict[str, list[str]]) -> set[str]:
    """Every node reachable from the frame's Enters (data and control edges), Exits included."""
    members: set[str] = set()
    stack = [e.name for e in enters]
    while stack:
        name = stack.pop()
        if name in members:
            continue
        members.add(name)
        if nodes[name].op not in ("Exit", "RefExit"):
            stack.extend(consumers[name])
    return members


def _frame_view(frame: str, label: str, enters: list[Any], members: set[str], nodes: dict[str, Any], consumers: dict[str, list[str]]) -> LoopView:
    leaves: dict[str, tuple[str, Any]] = {}
    loop_vars: list[LoopVar] = []
    for enter in enters:
        if enter.attr["is_constant"].b:
            leaves[enter.name] = ("outer", enter.input[0])
            continue
        merges = [c for c in consumers[enter.name] if nodes[c].op in ("Merge", "RefMerge")]
        if len(merges) != 1:
            raise NotALoopForm(f"Enter '{enter.name}' feeds {len(merges)} Merges")
        merge = nodes[merges[0]]
        back = [producer(i)[0] for i in merge.input if producer(i)[0] != enter.name and not i.startswith("^")]
        switches = [c for c in consumers[merge.name] if nodes[c].op in ("Switch", "RefSwitch") and producer(nodes[c].input[0])[0] == merge.name]
        if len(back) != 1 or nodes[back[0]].op not in ("NextIteration", "RefNextIteration") or len(switches) != 1:
            raise NotALoopForm(f"Merge '{merge.name}' is not a loop variable's")
        k = len(loop_vars)
        leaves[merge.name] = leaves[switches[0]] = ("var", k)
        exits = [c for c in consumers[switches[0]] if nodes[c].op in ("Exit", "RefExit")]
        loop_vars.append(LoopVar(enter.input[0], nodes[back[0]].input[0], (exits[0], 0) if exits else None))
    conds = [n for n in members if nodes[n].op == "LoopCond"]
    if len(conds) != 1:
        raise NotALoopForm(f"the frame has {len(conds)} LoopCond nodes")
    scope = Scope({n: nodes[n] for n in members}, leaves, False)
    return LoopView(frame, label, loop_vars, scope, scope, nodes[conds[0]].input[0], members)
