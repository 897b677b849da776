"""OpenCL lowerings of the data-movement ops. Reshape, Flatten, Squeeze and Unsqueeze are
views (their result shares the input's buffer, no kernel); Permute, Slice, Tile, Pad,
Concat and Split are index maps; Gather and Resample have kernels of their own."""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation

from irforge.backends.cpu.lower import dtype_of, shape_of
from irforge.backends.opencl.codegen.common import Param, linear, numel, storage_type, strides_of
from irforge.backends.opencl.codegen.movement import gather_body, map_body, mirrored, resample_body
from irforge.backends.opencl.lower import OclLowering, f32_only, opencl_lowering
from irforge.backends.opencl.ops.launch import launch_1d
from irforge.backends.reference.kernels.resample import cubic_taps, linear_taps, nearest_taps, source_coordinates
from irforge.dialects.nn import Concat, Flatten, Gather, Pad, Permute, Reshape, Resample, Slice, Split, Squeeze, Tile, Unsqueeze


def _movable(op: Operation) -> str | None:
    dtype = dtype_of(op.results[0])
    return None if storage_type(dtype) else f"no OpenCL data movement of {dtype}"


def _copy(ctx: OclLowering, prefix: str, op: Operation, body: str, items: int, source=None, result=None) -> None:  # type: ignore[no-untyped-def]
    t = storage_type(dtype_of(op.results[0]))
    name = ctx.add_kernel(prefix, [Param("x", t or "uint"), Param("y", t or "uint", written=True)], body)
    x = ctx.values[op.operands[0]] if source is None else source
    y = ctx.result(op.results[0]) if result is None else result
    launch_1d(ctx, name, items, [x, y])


@opencl_lowering(Reshape, Flatten, Squeeze, Unsqueeze, check=lambda op: None)
def view(ctx: OclLowering, op: Operation) -> None:
    ctx.alias(op.results[0], ctx.values[op.operands[0]])


@opencl_lowering(Permute, check=_movable)
def permute(ctx: OclLowering, op: Permute) -> None:
    in_strides, out = strides_of(shape_of(op.input)), shape_of(op.output)
    source = linear([(f"c{i}", in_strides[axis]) for i, axis in enumerate(op.ints("order"))])
    _copy(ctx, "permute", op, map_body(out, source), numel(out))


@opencl_lowering(Slice, check=_movable)
def slice_(ctx: OclLowering, op: Slice) -> None:
    shape, out = shape_of(op.input), shape_of(op.output)
    bounds = op.bounds(shape)
    source = linear([(f"({start} + c{i} * {step})", s) for i, ((start, _, step), s) in enumerate(zip(bounds, strides_of(shape)))])
    _copy(ctx, "slice", op, map_body(out, source), numel(out))


@opencl_lowering(Tile, check=_movable)
def tile(ctx: OclLowering, op: Tile) -> None:
    shape, out = shape_of(op.input), shape_of(op.output)
    padded = (1,) * (len(out) - len(shape)) + shape
    source = linear([(f"(c{i} % {size})", s) for i, (size, s) in enumerate(zip(padded, strides_of(padded)))])
    _copy(ctx, "tile", op, map_body(out, source), numel(out))


def _fill_bits(value: float, dtype: np.dtype) -> str:
    """The bit pattern of `value` cast to `dtype`, as a literal of its storage type."""
    with np.errstate(all="ignore"):
        bits = np.array([value]).astype(dtype).view(f"u{dtype.itemsize}")[0]
    return f"{int(bits)}ul" if dtype.itemsize == 8 else f"{int(bits)}u"


@opencl_lowering(Pad, check=_movable)
def pad(ctx: OclLowering, op: Pad) -> None:
    shape, out = shape_of(op.input), shape_of(op.output)
    mode, begin = op.str_prop("mode"), op.ints("pads_begin")
    coords = [f"(c{i} - {b})" for i, b in enumerate(begin)]
    if mode == "constant":
        inside = " && ".join(f"{c} >= 0 && {c} < {n}" for c, n in zip(coords, shape)) or "1"
        source = linear(list(zip(coords, strides_of(shape))))
        body = map_body(out, source, inside=inside, fill=_fill_bits(op.float_prop("value"), dtype_of(op.input)))
    else:
        source = linear([(mirrored(c, n, mode), s) for c, n, s in zip(coords, shape, strides_of(shape))])
        body = map_body(out, source)
    _copy(ctx, f"pad_{mode}", op, body, numel(out))


@opencl_lowering(Concat, check=_movable)
def concat(ctx: OclLowering, op: Concat) -> None:
    """One copy per input into its slab of the output."""
    out = shape_of(op.output)
    axis = op.int_prop("axis") % len(out)
    y = ctx.result(op.output)
    offset = 0
    for value in op.inputs:
        shape = shape_of(value)
        target = linear([(f"c{i}" if i != axis else f"(c{i} + {offset})", s) for i, s in enumerate(strides_of(out))])
        _copy(ctx, "concat", op, map_body(shape, "gid", target), numel(shape), ctx.values[value], y)
        offset += shape[axis]


@opencl_lowering(Split, check=_movable)
def split(ctx: OclLowering, op: Split) -> None:
    shape = shape_of(op.input)
    axis = op.int_prop("axis") % len(shape)
    offset = 0
    for result in op.outputs:
        out = shape_of(result)
        source = linear([(f"c{i}" if i != axis else f"(c{i} + {offset})", s) for i, s in enumerate(strides_of(shape))])
        t = storage_type(dtype_of(result)) or "uint"
        name = ctx.add_kernel("split", [Param("x", t), Param("y", t, written=True)], map_body(out, source))
        launch_1d(ctx, name, numel(out), [ctx.values[op.input], ctx.result(result)])
        offset += out[axis]


def _gather_check(op: Gather) -> str | None:
    return _movable(op) or (None if dtype_of(op.indices) in (np.int32, np.int64) else "OpenCL gather needs i32/i64 indices")


@opencl_lowering(Gather, check=_gather_check)  # type: ignore[arg-type]
def gather(ctx: OclLowering, op: Gather) -> None:
    axis, batch_dims = op.gather_axes()
    t = storage_type(dtype_of(op.output)) or "uint"
    index_type = "long" if dtype_of(op.indices) == np.int64 else "int"
    body = gather_body(shape_of(op.data), shape_of(op.indices), axis, batch_dims, index_type)
    params = [Param("x", t), Param("ind", index_type), Param("y", t, written=True)]
    name = ctx.add_kernel("gather", params, body)
    launch_1d(ctx, name, numel(shape_of(op.output)), [ctx.values[op.data], ctx.values[op.indices], ctx.result(op.output)])


def _axis_taps(op: Resample, n_in: int, n_out: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The reference kernel's (index, weight) tables of one axis, so coordinates match it."""
    coords = source_coordinates(op.str_prop("coordinate_transformation_mode"), scale, n_in, n_out)
    mode = op.str_prop("mode")
    if mode == "nearest":
        return nearest_taps(coords, n_in, op.str_prop("nearest_mode"))
    if mode == "linear":
        return linear_taps(coords, n_in)
    return cubic_taps(coords, n_in, op.float_prop("cubic_coeff_a"))


@opencl_lowering(Resample, check=f32_only)
def resample(ctx: OclLowering, op: Resample) -> None:
    shape, out = shape_of(op.input), shape_of(op.output)
    taps: list[int | None] = []
    params, tables = [Param("x", "float")], []
    for axis, (n_in, n_out, scale) in enumerate(zip(shape, out, op.axis_scales(shape))):
        if n_in == n_out and scale == 1:
            taps.append(None)
            continue
        index, weight = _axis_taps(op, n_in, n_out, scale)
        taps.append(index.shape[1])
        params += [Param(f"idx{axis}", "int"), Param(f"wt{axis}", "float")]
        tables += [ctx.const(index.astype(np.int32)), ctx.const(weight.astype(np.float32))]
    name = ctx.add_kernel("resample", params + [Param("y", "float", written=True)], resample_body(shape, out, taps))
    launch_1d(ctx, name, numel(out), [ctx.values[op.input], *tables, ctx.result(op.output)])
