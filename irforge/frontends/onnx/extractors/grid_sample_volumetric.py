"""ONNX GridSample-20's volumetric (5-D) form as a composition of existing nn ops.

OpenVINO's GridSample-9 samples 4-D images only, so x [N, C, D, H, W] sampled at grid
[N, Do, Ho, Wo, 3] = (x, y, z) in [-1, 1] is written out as onnxruntime computes it (the
same steps as nn.grid_sample's 4-D reference kernel, one more axis), in float32:

    p_a = denormalise(grid[..., a], size_a)            per axis a of (W, H, D)
    outside = any axis's p_a beyond its borders
    border:      p_a = clip(p_a, 0, size_a - 1)  where outside   (linear only)
    reflection:  p_a = reflect(p_a, borders)     where outside   (linear only)
    nearest:     one tap at round_half_even(p_a)
    linear:      8 taps floor(p_a) + {0, 1}, weights (1 - t_a) or t_a, t_a = p_a - floor(p_a)
    each tap:    reflection reflects it, then it is clamped into the image; zeros padding
                 multiplies a tap outside the image by 0
    value of a tap: GatherND(x as [N, D, H, W, C], [z, y, x], batch_dims=1)

Cubic is 4-D only in ONNX (E189). The IR gets Gather/Eltwise/Select/Floor/Round/Convert/
Concat/GatherND/Transpose layers: OpenVINO runs it, ref runs it, cpu runs the GatherNDs as
host steps.
"""

from __future__ import annotations

import itertools

import numpy as np
from xdsl.dialects.builtin import f32, i64
from xdsl.ir import SSAValue

from irforge.dialects.nn import Activation, Concat, Convert, Eltwise, Gather, GatherND, Permute, Select, Unsqueeze
from irforge.frontends.onnx.registry import NodeContext


class _Builder:
    """nn ops with unique name suffixes under the GridSample node's name."""

    def __init__(self, ctx: NodeContext) -> None:
        self.ctx, self.count = ctx, 0

    def _suffix(self, what: str) -> str:
        self.count += 1
        return f"/{what}{self.count}"

    def const(self, value: float) -> SSAValue:
        return self.ctx.constant(np.array(value, np.float32), self._suffix("c"))

    def ew(self, operation: str, a: SSAValue, b: SSAValue | float) -> SSAValue:
        rhs = self.const(b) if isinstance(b, (int, float)) else b
        return self.ctx.value(Eltwise, [a, rhs], suffix=self._suffix(operation), operation=operation)

    def act(self, kind: str, a: SSAValue) -> SSAValue:
        return self.ctx.value(Activation, [a], suffix=self._suffix(kind), kind=kind)

    def where(self, condition: SSAValue, then: SSAValue, otherwise: SSAValue) -> SSAValue:
        return self.ctx.value(Select, [condition, then, otherwise], suffix=self._suffix("select"))

    def clip(self, a: SSAValue, low: float, high: float) -> SSAValue:
        return self.ew("min", self.ew("max", a, low), high)

    def reflect(self, x: SSAValue, low: float, high: float) -> SSAValue:
        """x reflected at the borders low and high until it lies between them."""
        span = high - low
        if span <= 0:  # one pixel with align_corners: every coordinate is that pixel
            return self.ew("sum", self.ew("mul", x, 0.0), low)
        below, above = self.ew("less", x, self.const(low)), self.ew("greater", x, self.const(high))
        dist = self.where(below, self.ew("sub", self.const(low), x), self.ew("sub", x, high))
        folds = self.act("floor", self.ew("div", dist, span))  # dist >= 0 where it is used: floor = trunc
        rest = self.ew("sub", dist, self.ew("mul", folds, span))
        half = self.ew("mul", folds, 0.5)
        even = self.ew("equal", self.act("floor", half), half)
        from_low, from_high = self.ew("sum", self.const(low), rest), self.ew("sub", self.const(high), rest)
        return self.where(below, self.where(even, from_low, from_high), self.where(above, self.where(even, from_high, from_low), x))


def grid_sample_volumetric(ctx: NodeContext, mode: str, padding: str, align: bool) -> SSAValue:
    if mode == "bicubic":
        raise ctx.fail("GridSample mode cubic on a rank-5 input: ONNX defines cubic for 4-D input only", fix="use linear or nearest")
    b = _Builder(ctx)
    x, grid = ctx.input(0), ctx.input(1)
    if ctx.input_type(0).element_type != f32 or ctx.input_type(1).element_type != f32:
        raise ctx.fail("GridSample of a rank-5 input is composed in float32: input and grid must be float32", fix="cast them to float32")
    sizes = ctx.input_shape(0)[2:]  # D, H, W
    if any(s < 0 for s in sizes):
        raise ctx.fail(f"GridSample of a rank-5 input needs static D, H, W, got {list(sizes)}", fix="give the input shapes (--input_shape)")
    image = ctx.value(Permute, [x], suffix="/image", order=[0, 2, 3, 4, 1])  # [N, D, H, W, C]
    # coordinates in (z, y, x) order, the GatherND index order; grid holds (x, y, z)
    coords, borders = [], []
    for axis, size in enumerate(sizes):
        g = ctx.value(Gather, [grid, ctx.constant(np.array(2 - axis, np.int64), f"/axis{axis}")], suffix=f"/g{axis}", axis=4)
        if align:
            p = b.ew("mul", b.ew("div", b.ew("sum", g, 1.0), 2.0), float(size - 1))
        else:
            p = b.ew("div", b.ew("sub", b.ew("mul", b.ew("sum", g, 1.0), float(size)), 1.0), 2.0)
        coords.append(p)
        borders.append((0.0, size - 1.0) if align else (-0.5, size - 0.5))
    if mode == "nearest":  # onnxruntime reads the rounded coordinate (nearbyint: half to even)
        taps = [([b.act("round", p) for p in coords], None)]
    else:
        outside = None
        for p, (low, high) in zip(coords, borders) if padding != "zeros" else ():  # (zeros reads no coordinate padding)
            out = b.ew("or", b.ew("less", p, b.const(low)), b.ew("greater", p, b.const(high)))
            outside = out if outside is None else b.ew("or", outside, out)
        if padding == "border":
            coords = [b.where(outside, b.clip(p, 0.0, size - 1.0), p) for p, size in zip(coords, sizes)]  # type: ignore[arg-type]
        elif padding == "reflection":
            coords = [b.where(outside, b.reflect(p, low, high), p) for p, (low, high) in zip(coords, borders)]  # type: ignore[arg-type]
        floors = [b.act("floor", p) for p in coords]
        fracs = [b.ew("sub", p, f) for p, f in zip(coords, floors)]
        taps = []
        for offsets in itertools.product((0, 1), repeat=3):
            points = [b.ew("sum", f, float(o)) if o else f for f, o in zip(floors, offsets)]
            weight = None
            for t, o in zip(fracs, offsets):
                w = t if o else b.ew("sub", b.const(1.0), t)
                weight = w if weight is None else b.ew("mul", weight, w)
            taps.append((points, weight))
    total = None
    for points, weight in taps:
        value = _read(ctx, b, image, points, sizes, borders, padding)
        if weight is not None:
            value = b.ew("mul", value, ctx.value(Unsqueeze, [weight], suffix=b._suffix("w"), axes=[4]))
        total = value if total is None else b.ew("sum", total, value)
    assert total is not None
    return ctx.value(Permute, [total], order=[0, 4, 1, 2, 3])


def _read(ctx: NodeContext, b: _Builder, image: SSAValue, points: list[SSAValue], sizes, borders, padding: str) -> SSAValue:  # type: ignore[no-untyped-def]
    """image [N, D, H, W, C] at the integer-valued float coordinates `points` (z, y, x),
    padded as onnxruntime pads a pixel: [N, Do, Ho, Wo, C]."""
    inside = None
    indices = []
    for p, size, (low, high) in zip(points, sizes, borders):
        if padding == "reflection":
            p = _trunc(b, b.reflect(p, low, high))
        if padding == "zeros":
            ok = b.ew("and", b.ew("greater_equal", p, b.const(0.0)), b.ew("less", p, b.const(float(size))))
            inside = ok if inside is None else b.ew("and", inside, ok)
        clamped = b.clip(p, 0.0, size - 1.0)
        index = ctx.value(Convert, [clamped], suffix=b._suffix("index"), destination_type=i64)
        indices.append(ctx.value(Unsqueeze, [index], suffix=b._suffix("unsq"), axes=[4]))
    index = ctx.value(Concat, indices, suffix=b._suffix("indices"), axis=4)
    value = ctx.value(GatherND, [image, index], suffix=b._suffix("gather"), batch_dims=1)
    if inside is not None:
        mask = ctx.value(Convert, [ctx.value(Unsqueeze, [inside], suffix=b._suffix("unsq"), axes=[4])], suffix=b._suffix("mask"), destination_type=f32)
        value = b.ew("mul", value, mask)
    return value


def _trunc(b: _Builder, p: SSAValue) -> SSAValue:
    """p rounded toward zero (the reference's astype(int64) of a reflected tap), in float."""
    return b.where(b.ew("less", p, b.const(0.0)), b.act("ceil", p), b.act("floor", p))
