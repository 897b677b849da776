"""How big a constant folding may make: results over the budget stay the ops that make them.

A 64-byte ONNX model (ConstantOfShape [1000000000]) must not become a 1 GB .bin, nor a
MemoryError: importers and canonicalize fold an op only when each of its results, by its
declared static type, is at most `fold_limit()` bytes (64 MiB unless IRFORGE_FOLD_LIMIT_MB
says otherwise); otherwise the op is kept and computed when the model runs. Results whose
size is not known before evaluating are checked after, and a kernel that runs out of memory
counts as over budget.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from irforge.errors import IrforgeError

DEFAULT_LIMIT_MB = 64
FOLD_MAX_ITERATIONS = 4096
"""A constant loop is folded only if it stops within this many iterations (a trip count of
10**9 or a condition that stays true is left to run, and to be refused, at run time)."""


def fold_limit() -> int:
    """The largest result, in bytes, that constant folding may produce."""
    text = os.environ.get("IRFORGE_FOLD_LIMIT_MB", "")
    if not text:
        return DEFAULT_LIMIT_MB << 20
    try:
        megabytes = float(text)
        if not 0 <= megabytes < 2**40:
            raise ValueError
    except ValueError:
        raise IrforgeError(
            f"bad IRFORGE_FOLD_LIMIT_MB {text!r}",
            fix="give a size in MiB, e.g. IRFORGE_FOLD_LIMIT_MB=64",
            code="E001",
        ) from None
    return int(megabytes * (1 << 20))


def static_nbytes(t: Attribute) -> int | None:
    """Bytes of a tensor type with static shape, None when not known."""
    from irforge.weights.dtypes import from_xdsl

    if not isinstance(t, TensorType):
        return None
    shape = t.get_shape()
    if any(d < 0 for d in shape):
        return None
    try:
        itemsize = from_xdsl(t.element_type).itemsize
    except IrforgeError:
        return None
    return int(np.prod(shape, dtype=object)) * itemsize


def within_budget(result_types: Sequence[Attribute]) -> bool:
    """Whether results of these declared types may be folded (unknown sizes pass here and
    are checked by `fold_within_budget` after evaluating)."""
    limit = fold_limit()
    return all((n := static_nbytes(t)) is None or n <= limit for t in result_types)


def fold_within_budget(result_types: Sequence[Attribute], evaluate: Callable[[], list[np.ndarray]]) -> list[np.ndarray] | None:
    """The folded results, or None when they are (or would be) over the budget."""
    from irforge.backends.reference.kernels.control_flow import iteration_limit

    if not within_budget(result_types):
        return None
    try:
        # overflow to inf is IEEE's answer, not a user-facing warning of the conversion
        with iteration_limit(FOLD_MAX_ITERATIONS), np.errstate(all="ignore"):
            outputs = evaluate()
    except MemoryError:
        return None
    except IrforgeError as e:
        if e.code == "E879":  # a loop over the folding's iteration budget: it runs when the model runs
            return None
        raise
    if any(a.nbytes > fold_limit() for a in outputs):
        return None
    return outputs


def filled_size_ok(shape: Sequence[int], dtype: np.dtype) -> bool:
    """Whether a constant of `shape` filled with one value may be materialised."""
    return int(np.prod([int(d) for d in shape], dtype=object)) * np.dtype(dtype).itemsize <= fold_limit()
