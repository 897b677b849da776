"""If and Loop: their bodies run op by op with the reference kernels, once per branch taken
or per iteration. Constants in a body read the weight store of the module the op is in."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import Block

from irforge.backends.reference.registry import evaluate, kernel
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.control_flow import If, Loop, Yield
from irforge.errors import IrforgeError
from irforge.model import store_of
from irforge.weights import WeightStore
from irforge.weights.dtypes import from_xdsl

MAX_ITERATIONS = 1 << 31
"""A while-loop that has not stopped after this many iterations is taken as endless."""


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


@kernel(Loop)
def loop(op: Loop, *operands: np.ndarray) -> list[np.ndarray]:
    given = list(operands)
    count = int(scalar(given.pop(0))) if op.trip_count is not None else MAX_ITERATIONS
    condition = bool(scalar(given.pop(0))) if op.initial_condition is not None else True
    n = op.num_carried
    carried, invariants = given[:n], given[n:]
    block, store = op.body.blocks[0], store_of(op)
    scans: list[list[np.ndarray]] = []
    i = 0
    while i < count and condition:
        out = run_block(block, [np.array(i, np.int64), np.array(condition), *carried, *invariants], store)
        condition, carried = bool(scalar(out[0])), out[1 : 1 + n]
        scans.append(out[1 + n :])
        i += 1
    if i == MAX_ITERATIONS:
        raise IrforgeError(f"loop '{op.label}' did not stop after {MAX_ITERATIONS} iterations", code="E856")
    stacked = []
    for k, result in enumerate(op.outputs[n:]):
        if scans:
            stacked.append(np.stack([s[k] for s in scans]))
        else:  # no iteration: an empty stack of the body's (known) per-iteration shape
            shape = [0 if d < 0 else d for d in result.type.get_shape()[1:]]  # type: ignore[attr-defined]
            stacked.append(np.zeros([0, *shape], from_xdsl(result.type.element_type)))  # type: ignore[attr-defined]
    return [*carried, *stacked]
