"""MXNet data movement: Reshape (special codes 0, -1, -2, -3, -4 and reverse), transpose,
expand_dims, squeeze, Concat, SliceChannel, slice_axis, slice, Pad, Crop, Dropout and the
identities (BlockGrad, _copy, ...)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Identity, Pad, Permute, Reshape, Slice, Split, Squeeze, Unsqueeze
from irforge.dialects.nn.base import product
from irforge.frontends.mxnet.registry import NodeContext, mxnet_extractor

INT_MAX = 2**31 - 1


def reshape_codes(ctx: NodeContext, source: Sequence[int], codes: Sequence[int]) -> list[int]:
    """MXNet's Reshape shape inference: 0 copies a dim, -1 infers one, -2 copies the rest,
    -3 merges two dims, -4 splits one into the next two codes (one may be -1)."""
    out: list[int] = []
    infer = -1
    src = 0
    i = 0

    def take() -> int:
        nonlocal src
        if src >= len(source):
            raise ctx.fail(f"shape {list(codes)} reads more dims than the input {list(source)} has")
        src += 1
        return source[src - 1]

    while i < len(codes):
        code = codes[i]
        if code == 0:
            out.append(take())
        elif code == -1:
            if infer >= 0:
                raise ctx.fail(f"shape {list(codes)} has more than one -1")
            infer = len(out)
            src += 1
            out.append(1)
        elif code == -2:
            out.extend(source[src:])
            src = len(source)
        elif code == -3:
            out.append(take() * take())
        elif code == -4:
            if i + 2 >= len(codes):
                raise ctx.fail(f"shape {list(codes)}: -4 needs two more codes")
            whole, d1, d2 = take(), codes[i + 1], codes[i + 2]
            if d1 == -1 and d2 != 0:
                d1 = whole // d2
            if d2 == -1 and d1 != 0:
                d2 = whole // d1
            if d1 < 1 or d2 < 1 or d1 * d2 != whole:
                raise ctx.fail(f"shape {list(codes)}: -4 cannot split {whole} into {codes[i + 1]} x {codes[i + 2]}")
            out += [d1, d2]
            i += 2
        elif code > 0:
            out.append(code)
            src += 1
        else:
            raise ctx.fail(f"shape {list(codes)} has the unknown code {code}")
        i += 1
    if infer >= 0:
        known = product(out)
        if known == 0 or product(source) % known:
            raise ctx.fail(f"shape {list(codes)} does not fit an input of shape {list(source)}")
        out[infer] = product(source) // known
    if product(out) != product(source):
        raise ctx.fail(f"shape {list(codes)} gives {out}, which does not hold the {product(source)} values of {list(source)}")
    return out


@mxnet_extractor("Reshape", "reshape")
def reshape(ctx: NodeContext) -> SSAValue:
    source = list(ctx.shape(0))
    if ctx.attrs.ints("target_shape", []):
        raise ctx.fail("the deprecated target_shape is not supported", fix="use shape=(...) with MXNet's special codes")
    ctx.attrs.bool("keep_highest", False)
    codes = ctx.attrs.ints("shape", [])
    assert codes is not None
    if ctx.attrs.bool("reverse", False):
        target = reshape_codes(ctx, source[::-1], codes[::-1])[::-1]
    else:
        target = reshape_codes(ctx, source, codes)
    return ctx.value(Reshape, [ctx.input(0)], shape=target, special_zero=False)


@mxnet_extractor("transpose")
def transpose(ctx: NodeContext) -> SSAValue:
    rank = len(ctx.shape(0))
    axes = ctx.attrs.ints("axes", [])
    order = [a % rank for a in axes] if axes else list(range(rank))[::-1]
    return ctx.value(Permute, [ctx.input(0)], order=order)


@mxnet_extractor("expand_dims")
def expand_dims(ctx: NodeContext) -> SSAValue:
    rank = len(ctx.shape(0))
    axis = ctx.attrs.int("axis", 0)
    return ctx.value(Unsqueeze, [ctx.input(0)], axes=[axis % (rank + 1)])


@mxnet_extractor("squeeze")
def squeeze(ctx: NodeContext) -> SSAValue:
    shape = ctx.shape(0)
    axes = ctx.attrs.ints("axis", [])
    if not axes:
        axes = [i for i, d in enumerate(shape) if d == 1]
    return ctx.value(Squeeze, [ctx.input(0)], axes=[a % len(shape) for a in axes])


@mxnet_extractor("Concat", "concat")
def concat(ctx: NodeContext) -> SSAValue:
    ctx.attrs.int("num_args", ctx.num_inputs)
    return ctx.value(Concat, ctx.inputs(), axis=ctx.attrs.int("dim", 1) % len(ctx.shape(0)))


@mxnet_extractor("SliceChannel", "split")
def slice_channel(ctx: NodeContext) -> list[SSAValue]:
    shape = ctx.shape(0)
    axis = ctx.attrs.int("axis", 1) % len(shape)
    parts = ctx.attrs.int("num_outputs", 0)
    if parts < 1 or shape[axis] % parts:
        raise ctx.fail(f"num_outputs {parts} does not divide axis {axis} of size {shape[axis]}")
    pieces = ctx.add(Split, [ctx.input(0)], num_results=parts, suffix="/split" if ctx.attrs.bool("squeeze_axis", False) else "", axis=axis, split_lengths=[shape[axis] // parts] * parts)
    if not ctx.attrs.bool("squeeze_axis", False):
        return pieces
    if shape[axis] != parts:
        raise ctx.fail("squeeze_axis needs num_outputs equal to the axis size")
    return [ctx.value(Squeeze, [p], suffix=f":{i}" if i else "", axes=[axis]) for i, p in enumerate(pieces)]


def optional_bound(value: int | None, default: int) -> int:
    return default if value is None else value


@mxnet_extractor("slice_axis")
def slice_axis(ctx: NodeContext) -> SSAValue:
    rank = len(ctx.shape(0))
    axis = ctx.attrs.int("axis", 0) % rank
    begin = ctx.attrs.int("begin", 0)
    end = optional_bound(ctx.attrs.optional_int("end"), INT_MAX)
    return ctx.value(Slice, [ctx.input(0)], begins=[begin], ends=[end], axes=[axis])


@mxnet_extractor("slice", "crop")
def slice_(ctx: NodeContext) -> SSAValue:
    """x[begin:end:step] on the first axes; None bounds take the whole axis."""
    begins = ctx.attrs.optional_ints("begin") or []
    ends = ctx.attrs.optional_ints("end") or []
    steps = ctx.attrs.optional_ints("step") or []
    if len(begins) != len(ends) or (steps and len(steps) != len(begins)):
        raise ctx.fail(f"begin {begins}, end {ends} and step {steps} differ in length")
    steps = [optional_bound(s, 1) for s in steps] or [1] * len(begins)
    if 0 in steps:
        raise ctx.fail("step must not be 0")
    starts = [optional_bound(b, 0 if s > 0 else INT_MAX) for b, s in zip(begins, steps)]
    stops = [optional_bound(e, INT_MAX if s > 0 else -INT_MAX) for e, s in zip(ends, steps)]
    return ctx.value(Slice, [ctx.input(0)], begins=starts, ends=stops, axes=list(range(len(starts))), steps=steps)


@mxnet_extractor("Pad", "pad")
def pad(ctx: NodeContext) -> SSAValue:
    rank = len(ctx.shape(0))
    widths = ctx.attrs.ints("pad_width", [])
    assert widths is not None
    if len(widths) != 2 * rank:
        raise ctx.fail(f"pad_width has {len(widths)} values for an input of rank {rank} (2 per axis)")
    mode = ctx.attrs.str("mode", "constant")
    if mode not in ("constant", "edge", "reflect"):
        raise ctx.fail(f"mode {mode} is not supported")
    return ctx.value(Pad, [ctx.input(0)], pads_begin=widths[0::2], pads_end=widths[1::2], mode=mode, value=ctx.attrs.float("constant_value", 0.0))


@mxnet_extractor("Crop")
def crop(ctx: NodeContext) -> SSAValue:
    """The spatial window of size h_w (or the second input's H, W) at offset, or centred."""
    shape = ctx.shape(0)
    ctx.attrs.int("num_args", ctx.num_inputs)
    if ctx.num_inputs > 1:
        size = list(ctx.shape(1)[2:4])
    else:
        size = ctx.attrs.ints("h_w", [0, 0]) or [0, 0]
    if len(shape) != 4 or len(size) != 2 or min(size) < 1:
        raise ctx.fail(f"cannot crop {list(shape)} to {size}")
    if ctx.attrs.bool("center_crop", False):
        offset = [(shape[2] - size[0]) // 2, (shape[3] - size[1]) // 2]
    else:
        offset = ctx.attrs.ints("offset", [0, 0]) or [0, 0]
    if any(o < 0 or o + s > d for o, s, d in zip(offset, size, shape[2:])):
        raise ctx.fail(f"the crop {size} at {offset} leaves the input {list(shape)}")
    return ctx.value(Slice, [ctx.input(0)], begins=offset, ends=[o + s for o, s in zip(offset, size)], axes=[2, 3])


@mxnet_extractor("Dropout")
def dropout(ctx: NodeContext) -> SSAValue:
    for training_only in ("p", "axes", "cudnn_off"):
        ctx.attrs.str(training_only, "")
    if ctx.attrs.str("mode", "training") == "always":
        raise ctx.fail("Dropout with mode always drops values at inference too", fix="irforge imports inference models (mode training)")
    return ctx.value(Identity, [ctx.input(0)])


@mxnet_extractor("BlockGrad", "stop_gradient", "_copy", "identity", "make_loss", "MakeLoss")
def identity(ctx: NodeContext) -> SSAValue:
    for training_only in ("grad_scale", "valid_thresh", "normalization"):
        ctx.attrs.str(training_only, "")
    return ctx.value(Identity, [ctx.input(0)])
