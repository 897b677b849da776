"""If and Loop: their bodies run op by op with the reference kernels, once per branch taken
or per iteration. Constants in a body read the weight store of the module the op is in."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
from xdsl.ir import Block

from irforge.backends.reference.registry import evaluate, kernel
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.control_flow import If, Loop, Yield
from irforge.errors import IrforgeError
from irforge.model import store_of
from irforge.weights import WeightStore
from irforge.weights.dtypes import from_xdsl

DEFAULT_MAX_ITERATIONS = 100_000
"""A loop that runs more iterations than this (per execution of the nn.loop) is stopped with
E879. OpenVINO runs such a loop for as long as it takes; a runner that tests a converted model
is better served by a loud stop: a loop of 10**5 iterations is far past what inference models
do (decoders stop after a few thousand steps), and a trip count of 10**9 or a condition that
never turns false is a broken model, not a long job. `ir-run --max-iterations N` (0: none)
changes it; `iteration_limit` is the API."""

_limit: list[int | None] = [DEFAULT_MAX_ITERATIONS]


@contextmanager
def iteration_limit(limit: int | None) -> Iterator[None]:
    """Loops run inside this context stop with E879 after `limit` iterations (None: never)."""
    previous = _limit[0]
    _limit[0] = limit
    try:
        yield
    finally:
        _limit[0] = previous


def _too_long(op: Loop, what: str, limit: int) -> IrforgeError:
    return IrforgeError(f"{op.label} {what}, over the limit of {limit} iterations",
                        fix="check the trip count and the condition the model computes; if it really loops that long, "
                        "raise the limit with ir-run --max-iterations N (0: no limit)", code="E879")


def run_block(block: Block, args: Sequence[np.ndarray], store: WeightStore) -> list[np.ndarray]:
    """The values `block`'s nn.yield produces with its arguments bound to `args`."""
    values = dict(zip(block.args, args, strict=True))
    for op in block.ops:
        if isinstance(op, Yield):
            return [values[v] for v in op.values]
        if isinstance(op, Constant):
            values[op.output] = store[op.weight_name] if op.weight_name is not None else op.inline_array()
            continue
        values.update(zip(op.results, evaluate(op, [values[v] for v in op.operands])))
    raise IrforgeError("a body of nn.if / nn.loop has no nn.yield", code="E856")


def scalar(array: np.ndarray) -> object:
    return np.asarray(array).reshape(-1)[0].item()


@kernel(If)
def if_(op: If, condition: np.ndarray, *inputs: np.ndarray) -> list[np.ndarray]:
    region = op.then_region if bool(scalar(condition)) else op.else_region
    return run_block(region.blocks[0], inputs, store_of(op))


def _counted(block: Block) -> bool:
    """Whether the body yields its condition argument unchanged or a constant true (a plain
    counted loop: ONNX's pass-through, OpenVINO IR's body condition Result of a Constant)."""
    last = block.last_op
    if not isinstance(last, Yield) or len(block.args) < 2 or not last.values:
        return False
    condition = last.values[0]
    if condition is block.args[1]:
        return True
    owner = condition.owner
    return isinstance(owner, Constant) and owner.weight_name is None and bool(np.all(owner.inline_array()))


@kernel(Loop)
def loop(op: Loop, *operands: np.ndarray) -> list[np.ndarray]:
    given = list(operands)
    count = int(scalar(given.pop(0))) if op.trip_count is not None else None
    condition = bool(scalar(given.pop(0))) if op.initial_condition is not None else True
    n = op.num_carried
    carried, invariants = given[:n], given[n:]
    block, store = op.body.blocks[0], store_of(op)
    limit = _limit[0]
    if limit is not None and count is not None and count > limit and condition and _counted(block):
        raise _too_long(op, f"has a trip count of {count} and no condition that could end it sooner", limit)
    scans: list[list[np.ndarray]] = []
    i = 0
    while (count is None or i < count) and condition:
        if limit is not None and i == limit:
            raise _too_long(op, "is still running after " + (f"{i} of its {count} iterations" if count is not None else f"{i} iterations"), limit)
        out = run_block(block, [np.array(i, np.int64), np.array(condition), *carried, *invariants], store)
        condition, carried = bool(scalar(out[0])), out[1 : 1 + n]
        scans.append(out[1 + n :])
        i += 1
    stacked = []
    for k, result in enumerate(op.outputs[n:]):
        if scans:
            stacked.append(np.stack([s[k] for s in scans]))
        else:  # no iteration: an empty stack of the body's (known) per-iteration shape
            shape = [0 if d < 0 else d for d in result.type.get_shape()[1:]]  # type: ignore[attr-defined]
            stacked.append(np.zeros([0, *shape], from_xdsl(result.type.element_type)))  # type: ignore[attr-defined]
    return [*carried, *stacked]
