"""Random chains of layers and linear ops for property-based tests of the fusion passes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st
from xdsl.ir import SSAValue

from irforge.builder import ModelBuilder
from irforge.dialects.nn import (
    BatchNormalization,
    Convolution,
    Deconvolution,
    Eltwise,
    Flatten,
    FullyConnected,
    MatMul,
    ReLU,
    ScaleShift,
)
from irforge.model import Model

SPATIAL_OPS = ("conv", "conv", "deconv", "bn", "scale_shift", "mul", "add", "sub", "relu")
FLAT_OPS = ("fc", "matmul", "bn", "scale_shift", "mul", "add", "relu")


def channels(value: SSAValue) -> int:
    return value.type.get_shape()[1]  # type: ignore[attr-defined]


def per_channel(rng: np.random.Generator, shape: list[int], axis: int, spatial_rank: int) -> np.ndarray:
    """A constant that varies along `axis` of `shape` only, in one of the broadcast forms
    frameworks use (full rank, trailing dims only, or a scalar)."""
    form = rng.integers(3)
    size = shape[axis]
    if form == 0:
        return rng.uniform(0.5, 1.5, ()).astype(np.float32)
    values = rng.uniform(-1.5, 1.5, size).astype(np.float32)
    if form == 1:
        full = [1] * len(shape)
        full[axis] = size
        return values.reshape(full)
    return values.reshape([size] + [1] * spatial_rank) if axis == 1 else values


def add_spatial(b: ModelBuilder, rng: np.random.Generator, kind: str, y: SSAValue) -> SSAValue:
    c = channels(y)
    shape = list(y.type.get_shape())  # type: ignore[attr-defined]
    if kind in ("conv", "deconv"):
        out = int(rng.choice([c, 2 * c, 3]))
        groups = [g for g in range(1, c + 1) if c % g == 0 and out % g == 0]
        group = int(rng.choice(groups))
        k = int(rng.choice([1, 3])) if shape[2] >= 3 else 1
        pad = int(rng.integers(0, k // 2 + 1))
        stride = int(rng.choice([1, 2])) if shape[2] > 4 else 1
        if kind == "conv":
            w = (rng.standard_normal((out, c // group, k, k)) / np.sqrt(c * k)).astype(np.float32)
        else:
            w = (rng.standard_normal((c, out // group, k, k)) / np.sqrt(c * k)).astype(np.float32)
            pad = 0
        operands = [y, b.constant(w, "w")]
        if rng.random() < 0.5:
            operands.append(b.constant(rng.uniform(-1, 1, out).astype(np.float32), "b"))
        cls = Convolution if kind == "conv" else Deconvolution
        return b.add(cls, operands, group=group, strides=[stride] * 2, pads_begin=[pad] * 2, pads_end=[pad] * 2).output
    return add_linear(b, rng, kind, y, 1, 2)


def add_linear(b: ModelBuilder, rng: np.random.Generator, kind: str, y: SSAValue, axis: int, spatial_rank: int) -> SSAValue:
    shape = list(y.type.get_shape())  # type: ignore[attr-defined]
    size = shape[axis]
    if kind == "bn":
        stats = [rng.uniform(0.5, 1.5, size), rng.uniform(-1, 1, size), rng.uniform(-1, 1, size), rng.uniform(0.5, 1.5, size)]
        operands = [b.constant(s.astype(np.float32), "bn") for s in stats]
        return b.add(BatchNormalization, [y, *operands], epsilon=1e-3).output
    if kind == "scale_shift":
        scale, shift = rng.uniform(-1.5, 1.5, size), rng.uniform(-1, 1, size)
        return b.add(ScaleShift, [y, b.constant(scale.astype(np.float32)), b.constant(shift.astype(np.float32))], axis=axis).output
    if kind == "relu":
        return b.add(ReLU, [y]).output
    const = b.constant(per_channel(rng, shape, axis, spatial_rank), "c")
    operation = {"mul": "mul", "add": "sum", "sub": "sub"}[kind]
    operands = [const, y] if operation != "sub" and rng.random() < 0.5 else [y, const]
    return b.add(Eltwise, operands, operation=operation).output


def add_flat(b: ModelBuilder, rng: np.random.Generator, kind: str, y: SSAValue) -> SSAValue:
    k = y.type.get_shape()[-1]  # type: ignore[attr-defined]
    out = int(rng.integers(2, 9))
    if kind == "fc":
        operands = [y, b.constant((rng.standard_normal((out, k)) / np.sqrt(k)).astype(np.float32), "fc")]
        if rng.random() < 0.5:
            operands.append(b.constant(rng.uniform(-1, 1, out).astype(np.float32)))
        return b.add(FullyConnected, operands).output
    if kind == "matmul":
        transpose = bool(rng.random() < 0.5)
        w = (rng.standard_normal((out, k) if transpose else (k, out)) / np.sqrt(k)).astype(np.float32)
        return b.add(MatMul, [y, b.constant(w, "mm")], transpose_b=transpose).output
    return add_linear(b, rng, kind, y, -1, 0)


@dataclass(frozen=True)
class Chain:
    """What a random model is made of (hypothesis shows this, not the model, on failure)."""

    seed: int
    channels: int
    size: int
    spatial: tuple[str, ...]
    flat: tuple[str, ...]

    def build(self) -> tuple[Model, dict[str, np.ndarray]]:
        return build_chain(self.seed, self.channels, self.size, self.spatial, self.flat)


chains = st.builds(
    Chain,
    seed=st.integers(0, 2**31 - 1),
    channels=st.sampled_from([1, 2, 3, 4]),
    size=st.sampled_from([3, 5, 8]),
    spatial=st.lists(st.sampled_from(SPATIAL_OPS), min_size=1, max_size=7).map(tuple),
    flat=st.lists(st.sampled_from(FLAT_OPS), max_size=4).map(tuple),
)
"""Random chains: x -> spatial ops (conv, deconv, bn, ...) -> flatten -> FC-side ops."""


def build_chain(
    seed: int, c: int, size: int, spatial: tuple[str, ...], flat: tuple[str, ...]
) -> tuple[Model, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    y = b.input("x", [1, c, size, size])
    for kind in spatial:
        y = add_spatial(b, rng, kind, y)
    if flat:
        y = b.add(Flatten, [y], axis=1).output
        for kind in flat:
            y = add_flat(b, rng, kind, y)
    b.output(y, "y")
    feed = {"x": rng.standard_normal((1, c, size, size)).astype(np.float32)}
    return b.finish(), feed
