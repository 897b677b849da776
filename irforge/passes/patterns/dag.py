"""DAG patterns: a small declarative language for matching a rooted DAG of `nn` ops.

A pattern describes the value a root op computes, operand by operand:

    SWISH = P("eltwise", operation="mul", operands=[Any("x"), P("activation", kind="sigmoid", operands=[Same("x")])])
    found = match(SWISH, op)          # a Match, or None
    found["x"]                        # the SSA value bound to x

- `P(op, operands=[...], alias=None, **props)`: the result of an op (`"eltwise"`, `"nn.eltwise"`
  or the op class) whose properties equal the values given (a callable is a predicate on the
  property's Python value) and whose operands match the sub-patterns, in order; commutative
  element-wise operations (sum, mul, max, min, squared_diff) also try the swapped order. The
  op's result is bound to `alias`, so `Same(alias)` can refer to it.
- `Any(name)`: any value, bound to `name`. `Same(name)`: the value bound to `name`. Both
  bind a name seen for the first time, so the order of operands does not matter; a name met
  twice must be the same SSA value.
- `Const(value=None, alias=None)`: the result of an `nn.constant`; with `value`, every
  element must equal it within `rtol`/`atol`. Its array is `Match.constants[alias]`.
- `OneOf(*alternatives)`: any of the alternatives (tried in order, with backtracking).

A match is accepted only if no matched op other than the root has a result used outside
the match: an inner value with an outside consumer would have to be computed anyway, so the
sub-graph is not replaced. Constants are exempt (they are shared freely).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Union

import numpy as np
from xdsl.ir import Operation, OpResult, SSAValue

from irforge.backends.reference import constant_value
from irforge.dialects.nn.base import NNOp
from irforge.dialects.nn.constant import Constant
from irforge.model import store_of

COMMUTATIVE = frozenset({"sum", "mul", "max", "min", "squared_diff"})
"""Element-wise operations whose operands may come in either order."""


@dataclass(frozen=True)
class P:
    """The result `port` of an op of type `op` with the given properties and operands."""

    op: str | type[NNOp]
    operands: Sequence[Pattern] | None = None
    alias: str | None = None
    port: int = 0
    props: dict[str, object] = field(default_factory=dict)

    def __init__(
        self,
        op: str | type[NNOp],
        operands: Sequence[Pattern] | None = None,
        alias: str | None = None,
        port: int = 0,
        **props: object,
    ) -> None:
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "operands", None if operands is None else tuple(operands))
        object.__setattr__(self, "alias", alias)
        object.__setattr__(self, "port", port)
        object.__setattr__(self, "props", props)

    def op_name(self) -> str:
        if isinstance(self.op, str):
            return self.op if self.op.startswith("nn.") or "." in self.op else f"nn.{self.op}"
        return str(self.op.name)


@dataclass(frozen=True)
class Any:
    """Any value, bound to `name`."""

    name: str


@dataclass(frozen=True)
class Same:
    """The value bound to `name` (by `Any` or a `P` alias)."""

    name: str


@dataclass(frozen=True)
class Const:
    """An `nn.constant`, optionally equal (every element) to `value` within tolerance."""

    value: float | None = None
    alias: str | None = None
    rtol: float = 1e-5
    atol: float = 1e-7


@dataclass(frozen=True)
class OneOf:
    """Any of the alternatives."""

    alternatives: tuple[Pattern, ...]

    def __init__(self, *alternatives: Pattern) -> None:
        object.__setattr__(self, "alternatives", alternatives)


Pattern = Union[P, Any, Same, Const, OneOf]


@dataclass(frozen=True)
class Match:
    """What a pattern bound: values by name, matched ops by alias, constants by alias."""

    root: Operation
    values: dict[str, SSAValue]
    ops: dict[str, Operation]
    constants: dict[str, np.ndarray]
    matched: tuple[Operation, ...]
    """Every op the pattern matched, the root first (constants excluded)."""

    def __getitem__(self, name: str) -> SSAValue:
        return self.values[name]

    def op(self, alias: str) -> Operation:
        return self.ops[alias]


@dataclass(frozen=True)
class _State:
    values: dict[str, SSAValue] = field(default_factory=dict)
    ops: dict[str, Operation] = field(default_factory=dict)
    constants: dict[str, np.ndarray] = field(default_factory=dict)
    matched: tuple[Operation, ...] = ()

    def bind(self, name: str, value: SSAValue) -> _State | None:
        bound = self.values.get(name)
        if bound is not None:
            return self if bound is value else None
        return replace(self, values={**self.values, name: value})


def _props_match(op: NNOp, props: dict[str, object]) -> bool:
    for prop, want in props.items():
        have = op.property_value(prop)
        if callable(want):
            if not want(have):
                return False
        elif isinstance(have, tuple) and isinstance(want, (list, tuple)):
            if have != tuple(want):
                return False
        elif have != want:
            return False
    return True


def _operand_orders(op: NNOp, patterns: Sequence[Pattern]) -> Iterator[Sequence[Pattern]]:
    yield patterns
    operation = op.property_value("operation") if op.name == "nn.eltwise" else None
    if operation in COMMUTATIVE and len(patterns) == 2:
        yield (patterns[1], patterns[0])


def _match_operands(
    values: Sequence[SSAValue], patterns: Sequence[Pattern], state: _State
) -> Iterator[_State]:
    if not patterns:
        yield state
        return
    for first in _match(patterns[0], values[0], state):
        yield from _match_operands(values[1:], patterns[1:], first)


def _match_op(pattern: P, value: SSAValue, state: _State) -> Iterator[_State]:
    op = value.owner
    if not isinstance(value, OpResult) or not isinstance(op, NNOp) or value.index != pattern.port:
        return
    if op.name != pattern.op_name() or op in state.matched or not _props_match(op, pattern.props):
        return
    state = replace(state, matched=(*state.matched, op))
    if pattern.alias is not None:
        bound = state.bind(pattern.alias, value)
        if bound is None:
            return
        state = replace(bound, ops={**bound.ops, pattern.alias: op})
    if pattern.operands is None:
        yield state
        return
    if len(pattern.operands) != len(op.operands):
        return
    for order in _operand_orders(op, pattern.operands):
        yield from _match_operands(op.operands, order, state)


def _match_const(pattern: Const, value: SSAValue, state: _State) -> Iterator[_State]:
    owner = value.owner
    if not isinstance(owner, Constant):
        return
    array = constant_value(owner, store_of(owner))
    if pattern.value is not None:
        if array.dtype.kind != "f" or not np.allclose(array, pattern.value, rtol=pattern.rtol, atol=pattern.atol):
            return
    if pattern.alias is not None:
        bound = state.bind(pattern.alias, value)
        if bound is None:
            return
        state = replace(bound, constants={**bound.constants, pattern.alias: np.asarray(array)})
    yield state


def _match(pattern: Pattern, value: SSAValue, state: _State) -> Iterator[_State]:
    if isinstance(pattern, P):
        yield from _match_op(pattern, value, state)
    elif isinstance(pattern, (Any, Same)):
        bound = state.bind(pattern.name, value)
        if bound is not None:
            yield bound
    elif isinstance(pattern, Const):
        yield from _match_const(pattern, value, state)
    else:
        for alternative in pattern.alternatives:
            yield from _match(alternative, value, state)


def self_contained(matched: Sequence[Operation]) -> bool:
    """Whether every result of the matched ops but the root (the first) is used only by them."""
    inside = set(matched)
    return all(use.operation in inside for op in matched[1:] for r in op.results for use in r.uses)


def root_names(pattern: Pattern) -> frozenset[str] | None:
    """The op names a pattern's root can have (None: any value)."""
    if isinstance(pattern, P):
        return frozenset({pattern.op_name()})
    if isinstance(pattern, OneOf):
        names = [root_names(a) for a in pattern.alternatives]
        return None if any(n is None for n in names) else frozenset().union(*names)  # type: ignore[arg-type]
    return None


def match(pattern: P | OneOf, root: Operation, accept: Callable[[Match], bool] | None = None) -> Match | None:
    """The first match of `pattern` with its value computed by `root` (and `accept`ed)."""
    if (isinstance(pattern, P) and root.name != pattern.op_name()) or not root.results:
        return None  # the common case, decided before building any state
    for state in _match(pattern, root.results[0], _State()):
        if not state.matched or state.matched[0] is not root or not self_contained(state.matched):
            continue
        found = Match(root, state.values, state.ops, state.constants, state.matched)
        if accept is None or accept(found):
            return found
    return None
