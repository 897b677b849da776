"""Reference kernels of the recurrent Sequence ops: one cell step at a time, the whole batch at
once, rows past their sequence length frozen (see irforge/dialects/nn/recurrent.py)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.recurrent import GRUSequence, LSTMSequence, RecurrentSequence, RNNSequence

Act = Callable[[np.ndarray], np.ndarray]
Cell = Callable[[np.ndarray, list[np.ndarray], int], list[np.ndarray]]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # the two-sided form never overflows exp
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


def activation(name: str, alpha: float, beta: float) -> Act:
    """The named activation of a recurrent cell, with its alpha and beta."""
    table: dict[str, Act] = {
        "sigmoid": _sigmoid,
        "tanh": np.tanh,
        "relu": lambda x: np.maximum(x, 0),
        "hardsigmoid": lambda x: np.clip(alpha * x + beta, 0, 1),
        "affine": lambda x: alpha * x + beta,
        "leakyrelu": lambda x: np.where(x >= 0, x, alpha * x),
        "thresholdedrelu": lambda x: np.where(x > alpha, x, 0),
        "scaledtanh": lambda x: alpha * np.tanh(beta * x),
        "elu": lambda x: np.where(x >= 0, x, alpha * (np.exp(np.minimum(x, 0)) - 1)),
        "softsign": lambda x: x / (1 + np.abs(x)),
        "softplus": lambda x: np.logaddexp(0, x),
    }
    fn = table[name]
    return lambda x: np.asarray(fn(x), x.dtype)


def activations(op: RecurrentSequence) -> list[Act]:
    names = op.activation_names()
    alphas = op.floats("activations_alpha") or (0.0,) * len(names)
    betas = op.floats("activations_beta") or (0.0,) * len(names)
    return [activation(n, a, b) for n, a, b in zip(names, alphas, betas)]


def clipper(op: RecurrentSequence) -> Act:
    limit = op.float_prop("clip")
    return (lambda x: np.clip(x, -limit, limit)) if limit > 0 else (lambda x: x)


def run_sequence(op: RecurrentSequence, x: np.ndarray, states: list[np.ndarray], lengths: np.ndarray, cell: Cell) -> list[np.ndarray]:
    """y and the final states: `cell(x_t, states, direction) -> new states` (h first) run per
    direction over each row's own length, y zero past it."""
    n, t, _ = x.shape
    d = op.num_directions()
    hidden = states[0].shape[-1]
    y = np.zeros((n, d, t, hidden), x.dtype)
    finals = [s.copy() for s in states]
    lengths = np.clip(lengths.astype(np.int64), 0, t)
    rows = np.arange(n)
    for direction in range(d):
        reverse = op.str_prop("direction") == "reverse" or direction == 1
        current = [s[:, direction].copy() for s in states]
        for step in range(t):
            valid = (step < lengths)[:, None]
            at = np.clip(lengths - 1 - step if reverse else np.full(n, step), 0, t - 1)
            new = cell(x[rows, at], current, direction)
            current = [np.where(valid, a, b) for a, b in zip(new, current)]
            y[rows, direction, at] = np.where(valid, new[0], y[rows, direction, at])
        for final, value in zip(finals, current):
            final[:, direction] = value
    return [y, *finals]


@kernel(LSTMSequence)
def lstm_sequence(op: LSTMSequence, x, h0, c0, lengths, w, r, b) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    f, g, h = activations(op)
    clip = clipper(op)

    def cell(xt: np.ndarray, state: list[np.ndarray], d: int) -> list[np.ndarray]:
        gates = clip(xt @ w[d].T + state[0] @ r[d].T + b[d])
        ft, it, ct, ot = np.split(gates, 4, axis=-1)
        c = f(ft) * state[1] + f(it) * g(ct)
        return [f(ot) * h(c), c]

    return run_sequence(op, x, [h0, c0], lengths, cell)


@kernel(GRUSequence)
def gru_sequence(op: GRUSequence, x, h0, lengths, w, r, b) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    f, g = activations(op)
    clip = clipper(op)
    before_reset = op.bool_prop("linear_before_reset")
    size = op.int_prop("hidden_size")

    def cell(xt: np.ndarray, state: list[np.ndarray], d: int) -> list[np.ndarray]:
        prev = state[0]
        wz, wr, wh = np.split(w[d], 3)
        rz, rr, rh = np.split(r[d], 3)
        bz, br, bh = b[d][:size], b[d][size : 2 * size], b[d][2 * size : 3 * size]
        z = f(clip(xt @ wz.T + prev @ rz.T + bz))
        reset = f(clip(xt @ wr.T + prev @ rr.T + br))
        if before_reset:
            candidate = g(clip(xt @ wh.T + bh + reset * (prev @ rh.T + b[d][3 * size :])))
        else:
            candidate = g(clip(xt @ wh.T + (reset * prev) @ rh.T + bh))
        return [(1 - z) * candidate + z * prev]

    return run_sequence(op, x, [h0], lengths, cell)


@kernel(RNNSequence)
def rnn_sequence(op: RNNSequence, x, h0, lengths, w, r, b) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    (f,) = activations(op)
    clip = clipper(op)

    def cell(xt: np.ndarray, state: list[np.ndarray], d: int) -> list[np.ndarray]:
        return [f(clip(xt @ w[d].T + state[0] @ r[d].T + b[d]))]

    return run_sequence(op, x, [h0], lengths, cell)
