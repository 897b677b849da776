"""A loop body evaluated symbolically, so that an RNN cell is recognised by what it computes.

Every tensor of the body becomes a term: a loop variable (`Var`), the step's input read from
the sequence list (`Step`), a loop-invariant outer tensor (`Outer`), a constant (`Const`,
folded with numpy), an affine form `sum_k source_k @ W_k + b` (`Affine`: a MatMul of a
term, or of a concatenation of terms (`Joined`), with a constant, sums of such, their column
slices and splits), or a nonlinear
expression (`Expr`: activations, products, `1 - x`, sums of non-affine terms, comparisons).
Keras' `implementation=1` and `2` cells, BiasAdd against AddV2, Squeeze of a batch-1 row
and the order of the operands then all give the same terms, which `rnn_cells.py` matches.
A node the algebra has no rule for stops the match with `NotACell` naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from irforge.frontends.tf.loader import numpy_dtype, tensor_to_array
from irforge.frontends.tf.loop_view import PASS_THROUGH, LoopView, Scope, producer


class NotACell(Exception):
    """The loop is not a recognised RNN cell; the message says where it differs."""


class Term:
    pass


@dataclass(eq=False)
class Var(Term):
    index: int


@dataclass(eq=False)
class Step(Term):
    sequence: str
    """The outer tensor the sequence list was made from (TensorListFromTensor's input)."""
    width: int | None = None
    """The step's feature count, when the list's element shape says it."""


@dataclass(eq=False)
class Joined(Term):
    """Terms concatenated along their last axis (TF1 cells multiply concat([x, h]) by one
    kernel)."""

    parts: tuple[Term, ...]


@dataclass(eq=False)
class Outer(Term):
    ref: str


@dataclass(eq=False)
class Const(Term):
    value: np.ndarray


@dataclass(eq=False)
class Affine(Term):
    terms: list[tuple[Term, np.ndarray]]
    """(source, W [in, out]) pairs, one per distinct source."""
    bias: np.ndarray

    def weight(self, source: Term) -> np.ndarray | None:
        return next((w for s, w in self.terms if s is source), None)

    def sources(self) -> list[Term]:
        return [s for s, _ in self.terms]

    def columns(self, start: int, stop: int) -> Affine:
        return Affine([(s, w[:, start:stop]) for s, w in self.terms], self.bias[start:stop])


@dataclass(eq=False)
class Expr(Term):
    op: str
    args: tuple[Term, ...]


ACTIVATIONS = {"Sigmoid": "sigmoid", "Tanh": "tanh", "Relu": "relu"}
NUMPY_ACTIVATIONS = {"Sigmoid": lambda v: 1 / (1 + np.exp(-v)), "Tanh": np.tanh, "Relu": lambda v: np.maximum(v, 0)}


def plus(a: Term, b: Term) -> Term:
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value + b.value)
    if isinstance(b, Affine) and isinstance(a, Const):
        a, b = b, a
    if isinstance(a, Affine) and isinstance(b, Const) and b.value.size in (1, a.bias.size):
        return Affine(a.terms, a.bias + b.value.reshape(-1))  # a bias, or a scalar (forget_bias)
    if isinstance(a, Affine) and isinstance(b, Affine) and a.bias.size == b.bias.size:
        terms = list(a.terms)
        for source, w in b.terms:
            same = next((k for k, (s, _) in enumerate(terms) if s is source), None)
            if same is None:
                terms.append((source, w))
            else:
                terms[same] = (source, terms[same][1] + w)
        return Affine(terms, a.bias + b.bias)
    return Expr("add", (a, b))


@dataclass
class Evaluator:
    """Terms of the references of one scope (body or cond) of `view`."""

    view: LoopView
    scope: Scope
    outer_nodes: dict[str, Any]
    invariant: set[int] = field(default_factory=set)
    memo: dict[tuple[str, int], Term] = field(default_factory=dict)
    vars: dict[int, Term] = field(default_factory=dict)
    steps: dict[str, Step] = field(default_factory=dict)
    step_index: Term | None = None
    """The loop variable the sequence is read at (the time counter)."""

    def term(self, ref: str) -> Term:
        key = self.scope.parse(ref)
        if key not in self.memo:
            self.memo[key] = self._evaluate(*key)
        return self.memo[key]

    def var(self, k: int) -> Term:
        if k not in self.vars:
            self.vars[k] = self.outer(self.view.vars[k].init) if k in self.invariant else Var(k)
        return self.vars[k]

    def outer(self, ref: str) -> Term:
        value = fold_outer(self.outer_nodes, ref)
        return Const(value) if value is not None else Outer(ref)

    def _evaluate(self, name: str, port: int) -> Term:
        leaf = self.scope.leaves.get(name)
        if leaf is not None:
            return self.var(leaf[1]) if leaf[0] == "var" else self.outer(leaf[1])
        node = self.scope.nodes.get(name)
        if node is None:
            raise NotACell(f"the body reads '{name}', which is not in it")
        rule = RULES.get(node.op)
        if rule is None:
            raise NotACell(f"its body has a {node.op} node ('{name}') no RNN cell has")
        return rule(self, node, port)

    def args(self, node: Any, count: int | None = None) -> list[Term]:
        """The terms of `node`'s data inputs; with `count`, a node with another number of them
        is not a cell (a corrupt graph) rather than a failed unpacking."""
        refs = self.scope.data_inputs(node)
        if count is not None and len(refs) != count:
            raise NotACell(f"{node.op} '{node.name}' has {len(refs)} inputs, not {count}")
        return [self.term(i) for i in refs]

    def width(self, term: Term) -> int | None:
        """The last-axis size of a step or a loop variable, when the graph states it."""
        if isinstance(term, Step):
            return term.width
        if isinstance(term, Var):
            init = fold_outer(self.outer_nodes, self.view.vars[term.index].init)
            return int(init.shape[-1]) if init is not None and init.ndim == 2 else None
        return None

    def constant(self, node: Any, index: int, what: str) -> np.ndarray:
        value = self.term(self.scope.data_inputs(node)[index])
        if not isinstance(value, Const):
            raise NotACell(f"{what} of {node.op} '{node.name}' is not a constant")
        return value.value


def fold_outer(nodes: dict[str, Any], ref: str, depth: int = 0) -> np.ndarray | None:
    """The value of an outer tensor built from constants by a few ops (weights read through
    Identity, the trip count's Max over a Range), else None."""
    name, port = producer(ref)
    node = nodes.get(name)
    if node is None or port != 0 or depth > 16:
        return None
    if node.op == "Const":
        return tensor_to_array(node.attr["value"].tensor, f"TensorFlow node '{name}'")
    data = [i for i in node.input if not i.startswith("^")]
    if node.op in (*PASS_THROUGH, "Cast"):
        return fold_outer(nodes, data[0], depth + 1)
    values = [fold_outer(nodes, i, depth + 1) for i in data]
    if any(v is None for v in values):
        return None
    if node.op == "Range":
        return np.arange(*(v.reshape(()) for v in values))
    if node.op in ("Max", "Min"):
        keep = bool(node.attr["keep_dims"].b)
        reduce = np.max if node.op == "Max" else np.min
        return reduce(values[0], axis=tuple(int(a) for a in values[1].reshape(-1)), keepdims=keep)
    return None


# -- rules: one per op type, (evaluator, node, output number) -> term ------------------------
Rule = Callable[[Evaluator, Any, int], Term]


def _pass_through(ev: Evaluator, node: Any, port: int) -> Term:
    refs, k = ev.scope.data_inputs(node), port if node.op == "IdentityN" else 0
    if k >= len(refs):
        raise NotACell(f"{node.op} '{node.name}' has no input #{k}")
    return ev.term(refs[k])


def _const(ev: Evaluator, node: Any, port: int) -> Term:
    return Const(tensor_to_array(node.attr["value"].tensor, f"TensorFlow node '{node.name}'"))


def _activation(ev: Evaluator, node: Any, port: int) -> Term:
    (x,) = ev.args(node, 1)
    return Const(NUMPY_ACTIVATIONS[node.op](x.value)) if isinstance(x, Const) else Expr(ACTIVATIONS[node.op], (x,))


def _matmul(ev: Evaluator, node: Any, port: int) -> Term:
    a, b = ev.args(node, 2)
    if node.attr["transpose_a"].b or not isinstance(b, Const) or b.value.ndim != 2 or isinstance(a, (Const, Affine)):
        raise NotACell(f"MatMul '{node.name}' is not a term times a constant matrix")
    w = b.value.T if node.attr["transpose_b"].b else b.value
    if not isinstance(a, Joined):
        return Affine([(a, w)], np.zeros(w.shape[1], w.dtype))
    widths = [ev.width(part) for part in a.parts]
    if widths.count(None) > 1 or any(isinstance(part, (Const, Affine, Joined)) for part in a.parts):
        raise NotACell(f"MatMul '{node.name}' multiplies a concatenation whose parts' sizes are unknown")
    if None in widths:
        widths[widths.index(None)] = w.shape[0] - sum(v for v in widths if v is not None)
    rows = np.cumsum([0, *widths])
    if rows[-1] != w.shape[0]:
        raise NotACell(f"MatMul '{node.name}' multiplies a concatenation of {rows[-1]} features by {w.shape[0]} rows")
    return Affine([(part, w[rows[k] : rows[k + 1]]) for k, part in enumerate(a.parts)], np.zeros(w.shape[1], w.dtype))


def _concat(ev: Evaluator, node: Any, port: int) -> Term:
    data = ev.scope.data_inputs(node)
    parts = [ev.term(ref) for ref in data[:-1]]
    axis = int(ev.constant(node, len(data) - 1, "the axis").reshape(()))
    if all(isinstance(p, Const) for p in parts):
        return Const(np.concatenate([p.value for p in parts], axis=axis))  # type: ignore[union-attr]
    if axis not in (1, -1):
        raise NotACell(f"ConcatV2 '{node.name}' does not join features (axis {axis})")
    return Joined(tuple(parts))


def _add(ev: Evaluator, node: Any, port: int) -> Term:
    a, b = ev.args(node, 2)
    return plus(a, b)


def _sub(ev: Evaluator, node: Any, port: int) -> Term:
    a, b = ev.args(node, 2)
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value - b.value)
    if isinstance(a, Const) and a.value.size == 1 and float(a.value.reshape(())) == 1.0:
        return Expr("one_minus", (b,))
    return Expr("sub", (a, b))


def _mul(ev: Evaluator, node: Any, port: int) -> Term:
    a, b = ev.args(node, 2)
    return Const(a.value * b.value) if isinstance(a, Const) and isinstance(b, Const) else Expr("mul", (a, b))


def columns(value: Term, start: int, stop: int) -> Term | None:
    """Columns start:stop of an affine form, or of an activation of one (element-wise
    activations commute with taking columns: TF1's GRUCell splits sigmoid(r|u))."""
    if isinstance(value, Affine):
        return value.columns(start, stop)
    if isinstance(value, Expr) and value.op in ACTIVATIONS.values() and isinstance(value.args[0], Affine):
        return Expr(value.op, (value.args[0].columns(start, stop),))
    return None


def gate_width(value: Term) -> int:
    """The column count of an affine form (or an activation of one), 0 if not one."""
    inner = value.args[0] if isinstance(value, Expr) and value.op in ACTIVATIONS.values() else value
    return inner.bias.size if isinstance(inner, Affine) else 0


def _column_split(ev: Evaluator, node: Any, port: int, value: Term, axis: int, sizes: list[int]) -> Term:
    start = sum(sizes[:port])
    if isinstance(value, Const):
        return Const(np.split(value.value, np.cumsum(sizes)[:-1], axis=axis)[port])
    part = columns(value, start, start + sizes[port]) if axis in (1, -1) else None
    if part is None:
        raise NotACell(f"{node.op} '{node.name}' does not split the columns of a gate matrix")
    return part


def _split(ev: Evaluator, node: Any, port: int) -> Term:
    axis = int(ev.constant(node, 0, "the axis").reshape(()))
    value = ev.term(ev.scope.data_inputs(node)[1])
    width = value.value.shape[axis] if isinstance(value, Const) else gate_width(value)
    count = int(node.attr["num_split"].i)
    return _column_split(ev, node, port, value, axis, [width // count] * count)


def _split_v(ev: Evaluator, node: Any, port: int) -> Term:
    value = ev.term(ev.scope.data_inputs(node)[0])
    sizes = [int(s) for s in ev.constant(node, 1, "the sizes")]
    axis = int(ev.constant(node, 2, "the axis").reshape(()))
    if -1 in sizes:
        width = value.value.shape[axis] if isinstance(value, Const) else gate_width(value)
        sizes[sizes.index(-1)] = width - (sum(sizes) + 1)
    return _column_split(ev, node, port, value, axis, sizes)


def _strided_slice(ev: Evaluator, node: Any, port: int) -> Term:
    value = ev.term(ev.scope.data_inputs(node)[0])
    begin, end, strides = (ev.constant(node, i, "the bounds").astype(np.int64) for i in (1, 2, 3))
    masks = {m: int(node.attr[m].i) for m in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")}
    if masks["ellipsis_mask"] or masks["new_axis_mask"]:
        raise NotACell(f"StridedSlice '{node.name}' has an ellipsis or new axis")
    index = tuple(
        int(b) if masks["shrink_axis_mask"] >> k & 1
        else slice(None if masks["begin_mask"] >> k & 1 else int(b), None if masks["end_mask"] >> k & 1 else int(e), int(s))
        for k, (b, e, s) in enumerate(zip(begin, end, strides))
    )
    if isinstance(value, Const):
        return Const(value.value[index])
    full_rows = index[0] == slice(None, None, 1) if index else False
    if gate_width(value) and len(index) == 2 and full_rows and isinstance(index[1], slice) and index[1].step == 1:
        start, stop, _ = index[1].indices(gate_width(value))
        return columns(value, start, stop)  # type: ignore[return-value]
    raise NotACell(f"StridedSlice '{node.name}' is not a column slice of a gate matrix")


def _squeeze(ev: Evaluator, node: Any, port: int) -> Term:
    (value,) = ev.args(node, 1)
    axes = [int(a) for a in node.attr["squeeze_dims"].list.i]
    if isinstance(value, Const):
        return Const(np.squeeze(value.value, axis=tuple(axes) or None))
    if isinstance(value, Affine) and axes in ([], [0]):
        return value  # a batch-1 row of gates: the same numbers, broadcast back where added
    raise NotACell(f"Squeeze '{node.name}' drops more than the batch axis")


def _const_only(fn: Callable[..., np.ndarray]) -> Rule:
    def rule(ev: Evaluator, node: Any, port: int) -> Term:
        values = ev.args(node, fn.__code__.co_argcount - 1)  # (node, the inputs...)
        if not all(isinstance(v, Const) for v in values):
            raise NotACell(f"{node.op} '{node.name}' works on loop data, which no RNN cell does")
        return Const(fn(node, *(v.value for v in values)))  # type: ignore[union-attr]

    return rule


def _list_item(ev: Evaluator, node: Any, port: int) -> Term:
    data = ev.scope.data_inputs(node)
    source, index = ev.term(data[0]), ev.term(data[1])
    if not isinstance(source, Outer) or not isinstance(index, Var):
        raise NotACell(f"TensorListGetItem '{node.name}' does not read a loop-invariant list at a loop counter")
    maker = ev.outer_nodes.get(producer(source.ref)[0])
    if maker is None or maker.op != "TensorListFromTensor":
        raise NotACell(f"TensorListGetItem '{node.name}' reads a list not made by TensorListFromTensor")
    shape = fold_outer(ev.outer_nodes, maker.input[1]) if len(maker.input) > 1 else None
    width = int(shape.reshape(-1)[-1]) if shape is not None and shape.size and shape.reshape(-1)[-1] > 0 else None
    step = ev.steps.setdefault(source.ref, Step(maker.input[0], width))
    if ev.step_index is not None and ev.step_index is not index:
        raise NotACell("the sequence is read at two different indices")
    ev.step_index = index
    return step


def _compare(ev: Evaluator, node: Any, port: int) -> Term:
    return Expr({"Less": "less", "LogicalAnd": "and"}[node.op], tuple(ev.args(node, 2)))


RULES: dict[str, Rule] = {
    **{op: _pass_through for op in (*PASS_THROUGH, "IdentityN")},
    "Const": _const,
    **{op: _activation for op in ACTIVATIONS},
    "MatMul": _matmul,
    "ConcatV2": _concat,
    **{op: _add for op in ("Add", "AddV2", "BiasAdd")},
    "Sub": _sub,
    "Mul": _mul,
    "Split": _split,
    "SplitV": _split_v,
    "StridedSlice": _strided_slice,
    "Squeeze": _squeeze,
    "Reshape": _const_only(lambda node, x, shape: x.reshape(shape)),
    "ExpandDims": _const_only(lambda node, x, axis: np.expand_dims(x, int(axis.reshape(())))),
    "Transpose": _const_only(lambda node, x, perm: np.transpose(x, perm)),
    "Cast": _const_only(lambda node, x: x.astype(numpy_dtype(node.attr["DstT"].type, f"TensorFlow node '{node.name}'"))),
    "TensorListGetItem": _list_item,
    "Less": _compare,
    "LogicalAnd": _compare,
}
