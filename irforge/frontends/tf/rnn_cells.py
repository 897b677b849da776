"""Recognising a loop as a Keras LSTM, GRU or SimpleRNN, by what its body computes.

The loop variables are sorted by what they do: loop-invariant ones (weights, the sequence
list), counters (start at 0, add 1; the cond bounds them), the output list (a
TensorListReserve the body writes the step's output into, at the time counter for
`return_sequences`, at 0 for the last output only) and the states. The states' next values,
as `loop_algebra` terms, must then be one of (with X the step's input, H and C the states,
A(...) an affine form of exactly X and H, f g h activations):

    LSTM   C' = f(A_f) * C + f(A_i) * g(A_c)          H' = f(A_o) * h(C')
    GRU    H' = f(A_z) * H + (1 - f(A_z)) * g(HH)     with, for r = f(A_r),
           HH = X Wh + (r * H) Rh + bh                (reset_after=False)
           HH = (X Wh + bwh) + r * (H Rh + brh)       (reset_after=True: linear_before_reset)
    RNN    H' = f(A)

in any operand order. The weights come out in OpenVINO's gate order (LSTM f, i, c, o from
Keras' i, f, c, o; GRU z, r, h as Keras), as `[gates*H, I]` / `[gates*H, H]` blocks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from irforge.frontends.tf.loop_algebra import ACTIVATIONS, Affine, Const, Evaluator, Expr, NotACell, Step, Term, Var, fold_outer
from irforge.frontends.tf.loop_view import LoopView, producer

ACTIVATION_NAMES = frozenset(ACTIVATIONS.values())


@dataclass
class RecurrentLoop:
    """A loop recognised as one recurrent layer over a whole sequence."""

    cell: str
    """lstm, gru or rnn."""
    activations: list[str]
    linear_before_reset: bool
    w: np.ndarray
    r: np.ndarray
    b: np.ndarray
    sequence: str
    """The outer tensor the steps are read from, time major [T, N, I]."""
    initial: list[str]
    """Outer tensors of the initial states, h (and c), [N, H] each."""
    finals: list[tuple[str, int] | None]
    """The loop's exits of the final h (and c)."""
    output: tuple[str, int] | None
    """The exit of the output list, if the body writes one."""
    output_mode: str
    """sequence (each step's output at its index) or last (every step at index 0)."""
    trip_count: int

    @property
    def hidden(self) -> int:
        return int(self.r.shape[1])


def orders(term: Term, op: str) -> Iterator[tuple[Term, Term]]:
    """Both operand orders of a binary `op` expression (nothing for anything else)."""
    if isinstance(term, Expr) and term.op == op and len(term.args) == 2:
        yield term.args
        yield term.args[::-1]


def activation(term: Term) -> tuple[str, Term] | None:
    if isinstance(term, Expr) and term.op in ACTIVATION_NAMES:
        return term.op, term.args[0]
    return None


def gate(term: Term, sources: tuple[Term, ...]) -> tuple[str, Affine] | None:
    """(activation, affine form) when `term` is an activation of an affine form of exactly
    `sources`."""
    found = activation(term)
    if found is None or not isinstance(found[1], Affine) or not same_sources(found[1], sources):
        return None
    return found[0], found[1]


def same_sources(form: Affine, sources: tuple[Term, ...]) -> bool:
    return len(form.terms) == len(sources) and all(form.weight(s) is not None for s in sources)


def blocks(forms: list[Affine], source: Term) -> np.ndarray:
    """The forms' weights of `source`, transposed to [out, in] and stacked gate after gate."""
    return np.concatenate([f.weight(source).T for f in forms], axis=0).astype(np.float32)  # type: ignore[union-attr]


def match_lstm(body: Evaluator, step: Step, h_var: Term, c_var: Term, h_next: Term, c_next: Term) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray] | None:
    out = None
    for a, b in orders(h_next, "mul"):
        squashed = activation(b)
        if squashed is not None and squashed[1] is c_next and gate(a, (step, h_var)):
            out = gate(a, (step, h_var)), squashed[0]
            break
    if out is None:
        return None
    (f_name, o_form), h_name = out
    for kept, fresh in orders(c_next, "add"):
        forget = next((gate(g, (step, h_var)) for g, v in orders(kept, "mul") if v is c_var and gate(g, (step, h_var))), None)
        pairs = [(gate(a, (step, h_var)), gate(b, (step, h_var))) for a, b in orders(fresh, "mul")]
        pairs = [(i, c) for i, c in pairs if i and c and i[0] == f_name]
        if forget is None or not pairs or forget[0] != f_name:
            continue
        (_, i_form), (g_name, c_form) = pairs[0]
        forms = [forget[1], i_form, c_form, o_form]
        bias = np.concatenate([f.bias for f in forms]).astype(np.float32)
        return [f_name, g_name, h_name], blocks(forms, step), blocks(forms, h_var), bias
    return None


def match_gru(body: Evaluator, step: Step, h_var: Term, h_next: Term) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, bool] | None:
    for kept, fresh in orders(h_next, "add"):
        z = next((g for g, v in orders(kept, "mul") if v is h_var and gate(g, (step, h_var))), None)
        if z is None:
            continue
        candidate = next((c for k, c in orders(fresh, "mul") if isinstance(k, Expr) and k.op == "one_minus" and k.args[0] is z), None)
        found = activation(candidate) if candidate is not None else None
        if found is None:
            continue
        f_name, z_form = gate(z, (step, h_var))  # type: ignore[misc]
        g_name, inner = found
        split = candidate_forms(step, h_var, inner, f_name)
        if split is None:
            continue
        r_form, parts, before_reset = split
        w = np.concatenate([blocks([z_form, r_form], step), parts[0].weight(step).T.astype(np.float32)])
        r = np.concatenate([blocks([z_form, r_form], h_var), parts[1].weight(parts[2]).T.astype(np.float32)])  # type: ignore[union-attr]
        biases = [z_form.bias, r_form.bias] + ([parts[0].bias, parts[1].bias] if before_reset else [parts[0].bias])
        return [f_name, g_name], w, r, np.concatenate(biases).astype(np.float32), before_reset
    return None


def candidate_forms(step: Step, h_var: Term, inner: Term, f_name: str) -> tuple[Affine, tuple[Affine, Affine, Term], bool] | None:
    """For the candidate's pre-activation: the reset gate's form, (input form, recurrent form,
    the recurrent form's source) and whether the reset applies after the recurrent matmul."""
    if isinstance(inner, Affine) and len(inner.terms) == 2 and inner.weight(step) is not None:
        reset_h = next(s for s in inner.sources() if s is not step)
        for r_gate, v in orders(reset_h, "mul"):
            found = gate(r_gate, (step, h_var))
            if v is h_var and found and found[0] == f_name:
                return found[1], (inner, inner, reset_h), False
    for x_form, reset in orders(inner, "add"):
        if not isinstance(x_form, Affine) or not same_sources(x_form, (step,)):
            continue
        for r_gate, h_form in orders(reset, "mul"):
            found = gate(r_gate, (step, h_var))
            if found and found[0] == f_name and isinstance(h_form, Affine) and same_sources(h_form, (h_var,)):
                return found[1], (x_form, h_form, h_var), True
    return None


def match_recurrent(view: LoopView, outer_nodes: dict[str, object]) -> RecurrentLoop:
    """The loop as a recurrent layer, or NotACell saying where it is not one."""
    if not view.vars or not view.cond_ref:
        raise NotACell("its nodes do not form a loop irforge can read")
    invariant = {k for k, v in enumerate(view.vars) if view.body.leaves.get(view.body.skip_identities(v.next)[0]) == ("var", k)}
    body = Evaluator(view, view.body, outer_nodes, invariant)  # type: ignore[arg-type]
    counters, lists, states = [], [], []
    for k, var in enumerate(view.vars):
        if k in invariant:
            continue
        maker = outer_nodes.get(producer(var.init)[0])
        if maker is not None and maker.op == "TensorListReserve":  # type: ignore[attr-defined]
            lists.append(k)
        elif any(a is body.var(k) and isinstance(c, Const) and c.value.size == 1 and c.value.reshape(()) == 1 for a, c in orders(body.term(var.next), "add")):
            start = fold_outer(outer_nodes, var.init)  # type: ignore[arg-type]
            if start is None or start.size != 1 or int(start.reshape(())) != 0:
                raise NotACell(f"loop variable {k} counts from a value other than 0")
            counters.append(k)
        else:
            states.append(k)
    if len(lists) > 1 or len(states) not in (1, 2):
        raise NotACell(f"it carries {len(states)} states and {len(lists)} output lists (an RNN layer: 1 or 2 states, at most 1 list)")
    nexts = [body.term(view.vars[k].next) for k in states]
    if len(body.steps) != 1 or not isinstance(body.step_index, Var) or body.step_index.index not in counters:
        raise NotACell("it does not read one sequence element per step at a loop counter")
    step = next(iter(body.steps.values()))
    cell = _cell(body, step, states, nexts)
    output, mode = _output_list(view, body, lists, cell[-1])
    trip = _trip_count(view, outer_nodes, invariant, counters)
    kind, names, w, r, b, before_reset, order = cell[:7]
    return RecurrentLoop(
        kind, names, before_reset, w, r, b, step.sequence,
        [view.vars[states[k]].init for k in order], [view.vars[states[k]].exit for k in order], output, mode, trip,
    )


def _cell(body: Evaluator, step: Step, states: list[int], nexts: list[Term]) -> tuple:  # type: ignore[type-arg]
    """(kind, activations, w, r, b, linear_before_reset, state order h[, c], the h output)."""
    if len(states) == 2:
        for h, c in ((0, 1), (1, 0)):
            found = match_lstm(body, step, body.var(states[h]), body.var(states[c]), nexts[h], nexts[c])
            if found:
                return ("lstm", *found, False, [h, c], nexts[h])
        raise NotACell("its two states do not compute an LSTM cell (c' = f*c + i*g, h' = o*h(c'))")
    h_var, h_next = body.var(states[0]), nexts[0]
    found_rnn = gate(h_next, (step, h_var))
    if found_rnn:
        form = found_rnn[1]
        return ("rnn", [found_rnn[0]], blocks([form], step), blocks([form], h_var), form.bias.astype(np.float32), False, [0], h_next)
    found_gru = match_gru(body, step, h_var, h_next)
    if found_gru:
        return ("gru", *found_gru, [0], h_next)
    raise NotACell("its state does not compute a GRU (h' = z*h + (1-z)*g(...)) or SimpleRNN (h' = f(x W + h R + b)) cell with sigmoid/tanh/relu")


def _output_list(view: LoopView, body: Evaluator, lists: list[int], h_next: Term) -> tuple[tuple[str, int] | None, str]:
    if not lists:
        return None, "last"
    var = view.vars[lists[0]]
    name, _ = view.body.skip_identities(var.next)
    node = view.body.nodes.get(name)
    if node is None or node.op != "TensorListSetItem":
        raise NotACell("its output list is not written by TensorListSetItem")
    target, index, item = (body.term(i) for i in view.body.data_inputs(node)[:3])
    if target is not body.var(lists[0]) or item is not h_next:
        raise NotACell("the body writes something other than the new state h into its output list")
    if index is body.step_index:
        return var.exit, "sequence"
    if isinstance(index, Const) and index.value.size == 1 and int(index.value.reshape(())) == 0:
        return var.exit, "last"
    raise NotACell("the body writes its output list at an index other than the step's or 0")


def _trip_count(view: LoopView, outer_nodes: dict[str, object], invariant: set[int], counters: list[int]) -> int:
    cond = Evaluator(view, view.cond, outer_nodes, invariant)  # type: ignore[arg-type]
    bounds, pending = [], [cond.term(view.cond_ref)]
    while pending:
        term = pending.pop()
        if isinstance(term, Expr) and term.op == "and":
            pending.extend(term.args)
        elif isinstance(term, Expr) and term.op == "less" and isinstance(term.args[0], Var) and term.args[0].index in counters and isinstance(term.args[1], Const):
            bounds.append(int(term.args[1].value.reshape(())))
        else:
            raise NotACell("its condition is not `counter < constant` (and ...)")
    if not bounds:
        raise NotACell("its trip count is not a constant")
    return min(bounds)
