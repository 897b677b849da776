"""ONNX's QDQ family -> the form OpenVINO gives INT8 models.

- QuantizeLinear -> DequantizeLinear on an activation (constant scale and zero point): one
  nn.fake_quantize with L = qmax - qmin + 1 levels and bounds (qmin - z) * s, (qmax - z) * s.
- DequantizeLinear of an integer constant (weights): kept integer, decompressed by
  nn.convert -> sub zero point -> mul scale (constant folding leaves that chain alone).
- A QuantizeLinear whose output is read as integers: x / s -> round -> + z -> clamp ->
  convert; a DequantizeLinear of a non-constant: convert -> sub z -> mul s.
- QLinearConv / QLinearMatMul: dequantize, Convolution / MatMul in float, quantize (the
  int32 bias of QLinearConv becomes B * x_scale * w_scale); DynamicQuantizeLinear: its scale
  and zero point computed with reductions, as the operator's definition writes them.
Per-tensor and per-axis scales (`axis`; known only at run time: per tensor or along the last axis), int8/uint8 (and int16/uint16);
INT4 / UINT4 initializers (read as int8 / uint8 by the loader) and QuantizeLinear's
output_dtype INT4 / UINT4 quantize to the 4-bit range -8..7 / 0..15. Blocked quantization
(opset 21's block_size) is supported for a DequantizeLinear of a constant with constant
scale and zero point: 4- and 8-bit weights stay compressed in OpenVINO's grouped form
(`compressed_weights.py`; i4 / u4 in an IR), 16- and 32-bit ones are dequantized at
conversion, exactly as the operator defines it; any other blocked node and other integer
types are refused by name.
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.ir import SSAValue

from irforge.dialects.nn import Activation, Clamp, Convert, Convolution, Eltwise, MatMul, Reduce
from irforge.dialects.nn.quantize import FakeQuantize
from irforge.errors import IrforgeError, NotConstantError
from irforge.frontends.onnx.extractors.compressed_weights import decompressed_weights, grouped
from irforge.frontends.onnx.extractors.conv import window_props
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl, to_xdsl

RANGES = {np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max)) for t in (np.int8, np.uint8, np.int16, np.uint16)}
FOUR_BIT_RANGES = {onnx.TensorProto.INT4: (-8, 7), onnx.TensorProto.UINT4: (0, 15)}


def integer_range(ctx: NodeContext, dtype: np.dtype, four_bit: int = 0) -> tuple[int, int]:
    """The range of a quantized type; `four_bit` is the ONNX INT4 / UINT4 type number of a
    tensor held in int8 / uint8 (its values then saturate to the 4-bit range)."""
    if four_bit:
        return FOUR_BIT_RANGES[four_bit]
    if dtype not in RANGES:
        raise IrforgeError(f"quantized type {dtype} is not supported", where=ctx.where, fix="quantize to int8, uint8, int16 or uint16", code="E170")
    return RANGES[dtype]


def four_bit_type(ctx: NodeContext, tensor: str) -> int:
    """TensorProto.INT4 / UINT4 when `tensor` is a 4-bit initializer or Constant, else 0 (the
    loader unpacked it to int8 / uint8, so the xDSL type no longer says 4-bit)."""
    found = getattr(ctx.importer, "_initializers", {}).get(tensor)
    if found is None:
        node = producer(ctx, tensor) if tensor else None
        if node is not None and node.op_type == "Constant":
            found = next((a.t for a in node.attribute if a.name == "value"), None)
    data_type = found.data_type if found is not None else 0
    return data_type if data_type in FOUR_BIT_RANGES else 0


def broadcastable(ctx: NodeContext, value: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A per-tensor or per-axis scale / zero point shaped to broadcast against rank `rank`."""
    if int(ctx.attr("block_size", 0)):
        raise IrforgeError("blocked quantization (block_size) is not supported", where=ctx.where, fix="quantize per tensor or per axis", code="E171")
    if value.size == 1:
        return value.reshape(())
    if not -rank <= axis < rank:  # a scalar input, or an axis past the rank: no axis to scale along
        raise IrforgeError(f"a per-axis scale or zero point ({value.size} values) along axis {axis} of an input of rank {rank}",
                           where=ctx.where, fix="give one value per tensor, or an axis within the input's rank", code="E185")
    shape = [1] * rank
    shape[axis % rank] = value.size
    return value.reshape(shape)


def constant_params(ctx: NodeContext, scale_index: int, zp_index: int, rank: int, axis: int, zp_dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    scale = broadcastable(ctx, ctx.required_constant(scale_index, "scale"), rank, axis)
    zp = ctx.required_constant(zp_index, "zero point") if ctx.has_input(zp_index) else np.zeros((), zp_dtype)
    return scale, broadcastable(ctx, zp, rank, axis)


Param = np.ndarray | SSAValue
"""A scale or zero point: its value when known at conversion time, else the run-time tensor."""


def params(ctx: NodeContext, rank: int, axis: int, zp_dtype: np.dtype) -> tuple[Param, Param]:
    """Scale and zero point (inputs 1 and 2), constant or not; a run-time one must broadcast
    as it is (one value, or per axis along the last axis)."""
    if int(ctx.attr("block_size", 0)):
        raise IrforgeError("blocked quantization (block_size) is not supported", where=ctx.where, fix="quantize per tensor or per axis", code="E171")
    found: list[Param] = []
    for index in (1, 2):
        value = ctx.constant_input(index) if ctx.has_input(index) else np.zeros((), zp_dtype)
        if value is not None:
            found.append(broadcastable(ctx, value, rank, axis))
            continue
        shape = ctx.input_shape(index)
        if len(shape) > 1 or (shape and shape[0] != 1 and (rank == 0 or axis % rank != rank - 1)):
            raise NotConstantError(
                "a per-axis scale or zero point known only at run time is supported along the last axis only",
                ctx.node.input[index], where=ctx.where, fix="make the scale and zero point constants", code="E172",
            )  # fmt: skip
        found.append(ctx.input(index))
    return found[0], found[1]


def param_dtype(p: Param) -> np.dtype:
    return p.dtype if isinstance(p, np.ndarray) else from_xdsl(p.type.element_type)  # type: ignore[attr-defined]


def operand(ctx: NodeContext, p: Param, dtype: np.dtype, suffix: str) -> SSAValue:
    """`p` as a value of element type `dtype` (a constant, or the tensor converted)."""
    if isinstance(p, np.ndarray):
        return ctx.constant(p.astype(dtype), suffix)
    return p if param_dtype(p) == dtype else ctx.value(Convert, [p], suffix=suffix, destination_type=to_xdsl(dtype))


def nonzero(p: Param) -> bool:
    return not isinstance(p, np.ndarray) or bool(np.any(p))


def quantize(ctx: NodeContext, x: SSAValue, scale: Param, zp: Param, suffix: str, four_bit: int = 0) -> SSAValue:
    """saturate(round(x / s) + z) in zp's integer type (the 4-bit range when `four_bit`)."""
    low, high = integer_range(ctx, param_dtype(zp), four_bit)
    dtype = from_xdsl(x.type.element_type)  # type: ignore[attr-defined]
    y = ctx.value(Eltwise, [x, operand(ctx, scale, dtype, f"{suffix}/scale")], suffix=f"{suffix}/div", operation="div")
    y = ctx.value(Activation, [y], suffix=f"{suffix}/round", kind="round")
    if nonzero(zp):
        y = ctx.value(Eltwise, [y, operand(ctx, zp, dtype, f"{suffix}/zero_point")], suffix=f"{suffix}/add", operation="sum")
    y = ctx.value(Clamp, [y], suffix=f"{suffix}/clamp", min=float(low), max=float(high))
    return ctx.value(Convert, [y], suffix=suffix, destination_type=to_xdsl(param_dtype(zp)))


def dequantize(ctx: NodeContext, q: SSAValue, scale: Param, zp: Param, suffix: str) -> SSAValue:
    """(float(q) - z) * s; for an integer constant this is the weight decompression chain."""
    dtype = param_dtype(scale)
    y = ctx.value(Convert, [q], suffix=f"{suffix}/convert", destination_type=to_xdsl(dtype))
    if nonzero(zp):
        y = ctx.value(Eltwise, [y, operand(ctx, zp, dtype, f"{suffix}/zero_point")], suffix=f"{suffix}/sub", operation="sub")
    return ctx.value(Eltwise, [y, operand(ctx, scale, dtype, f"{suffix}/scale")], suffix=suffix, operation="mul")


def producer(ctx: NodeContext, tensor: str) -> onnx.NodeProto | None:
    producers = getattr(ctx.importer, "_qdq_producers", None)
    if producers is None:
        producers = {out: node for node in ctx.importer.graph.node for out in node.output}
        ctx.importer._qdq_producers = producers  # type: ignore[attr-defined]
    return producers.get(tensor)


def output_dtype(ctx: NodeContext) -> tuple[np.dtype, int]:
    """QuantizeLinear's integer type: its zero point's, else output_dtype (uint8 by default);
    and its ONNX 4-bit type number (0 when not INT4 / UINT4: those are held in int8 / uint8)."""
    if ctx.has_input(2):
        return from_xdsl(ctx.input_type(2).element_type), four_bit_type(ctx, ctx.node.input[2])
    code = int(ctx.attr("output_dtype", 0)) or onnx.TensorProto.UINT8
    if code in FOUR_BIT_RANGES:
        return np.dtype(np.int8 if code == onnx.TensorProto.INT4 else np.uint8), code
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(code)), 0
    except (KeyError, ValueError, TypeError):
        raise IrforgeError(f"output_dtype {code} is not a quantized type irforge supports", where=ctx.where, fix="quantize to int4, uint4, int8, uint8, int16 or uint16", code="E170") from None


def only_paired_readers(ctx: NodeContext) -> bool:
    """Whether every reader of this QuantizeLinear's output is a DequantizeLinear with the same
    scale, zero point and axis (each becomes a FakeQuantize, so the integers are never built)."""
    out = ctx.node.output[0]
    if out in {vi.name for vi in ctx.importer.graph.output}:
        return False
    params = lambda n: (list(n.input[1:3]), next((a.i for a in n.attribute if a.name == "axis"), 1))  # noqa: E731
    readers = [n for n in ctx.importer.graph.node if out in n.input]
    return bool(readers) and all(n.op_type == "DequantizeLinear" and n.input[0] == out and params(n) == params(ctx.node) for n in readers)


@onnx_extractor("QuantizeLinear")
def quantize_linear(ctx: NodeContext) -> SSAValue | list[None]:
    rank = len(ctx.input_shape(0))
    dtype, four_bit = output_dtype(ctx)
    scale, zp = params(ctx, rank, int(ctx.attr("axis", 1)), dtype)
    if isinstance(scale, np.ndarray) and isinstance(zp, np.ndarray) and only_paired_readers(ctx):
        # its readers take its input instead, so no node reads this output any more
        ctx.importer.used_names.discard(ctx.node.output[0])
        return [None]
    return quantize(ctx, ctx.input(0), scale, zp, "", four_bit)


def fake_quantize(ctx: NodeContext, x: SSAValue, scale: np.ndarray, zp: np.ndarray, four_bit: int = 0) -> SSAValue:
    low, high = integer_range(ctx, zp.dtype, four_bit)
    dtype = scale.dtype
    lows = ((low - zp.astype(np.float64)) * scale).astype(dtype)
    highs = ((high - zp.astype(np.float64)) * scale).astype(dtype)
    bounds = [ctx.constant(lows, "/low"), ctx.constant(highs, "/high")]
    return ctx.value(FakeQuantize, [x, *bounds, *bounds], levels=high - low + 1)


def quantize_pair(ctx: NodeContext) -> onnx.NodeProto | None:
    """The QuantizeLinear feeding this DequantizeLinear with the same constant scale, zero
    point and axis, if there is one (the pair is then one FakeQuantize)."""
    q = producer(ctx, ctx.node.input[0])
    if q is None or q.op_type != "QuantizeLinear" or q.domain not in ("", "ai.onnx") or len(q.input) < 2:
        return None
    mine = [ctx.node.input[i] if i < len(ctx.node.input) else "" for i in (1, 2)]
    theirs = [q.input[i] if i < len(q.input) else "" for i in (1, 2)]
    values = [ctx.importer.constant_value(ctx.importer.value(n)) if n else None for n in (*mine, *theirs)]
    if any(v is None for v, n in zip(values, (*mine, *theirs)) if n) or bool(mine[1]) != bool(theirs[1]):
        return None
    same = all(a is None and b is None or (a is not None and b is not None and a.shape == b.shape and np.array_equal(a, b)) for a, b in ((values[0], values[2]), (values[1], values[3])))
    axes = [next((a.i for a in n.attribute if a.name == "axis"), 1) for n in (ctx.node, q)]
    return q if same and (values[0].size == 1 or axes[0] == axes[1]) else None


def _check_zero_point_type(ctx: NodeContext) -> None:
    """x and x_zero_point share one type in ONNX's definition (onnxruntime refuses others); a
    UINT4 x with INT4 or UINT8 zero points would be read with them as they are."""
    if not (ctx.has_input(0) and ctx.has_input(2)):
        return
    types = [from_xdsl(ctx.input_type(i).element_type) for i in (0, 2)]
    widths = [four_bit_type(ctx, ctx.node.input[i]) for i in (0, 2)]
    if types[0] != types[1] or (ctx.constant_input(0) is not None and widths[0] != widths[1]):
        names = [helper_type_name(w) if w else str(t) for t, w in zip(types, widths)]
        raise ctx.fail(f"x_zero_point of type {names[1]} differs from x's {names[0]}", fix="give the zero point the quantized input's type")


def helper_type_name(data_type: int) -> str:
    from onnx import TensorProto

    return str(TensorProto.DataType.Name(data_type))


@onnx_extractor("DequantizeLinear")
def dequantize_linear(ctx: NodeContext) -> SSAValue:
    axis = int(ctx.attr("axis", 1))
    if int(ctx.attr("block_size", 0)):
        _check_zero_point_type(ctx)
        return blocked_dequantize(ctx, axis)
    q = quantize_pair(ctx)  # a QuantizeLinear's output (not built: the pair is one FakeQuantize)
    if q is not None:
        x = ctx.importer.value(q.input[0])
        rank = len(x.type.get_shape())  # type: ignore[attr-defined]
        if ctx.has_input(2):
            dtype, four_bit = from_xdsl(ctx.input_type(2).element_type), four_bit_type(ctx, ctx.node.input[2])
        else:
            dtype, four_bit = output_dtype_of(ctx, q)
        scale, zp = constant_params(ctx, 1, 2, rank, axis, dtype)
        return fake_quantize(ctx, x, scale, zp, four_bit)
    _check_zero_point_type(ctx)
    rank = len(ctx.input_shape(0))
    dtype = from_xdsl(ctx.input_type(0).element_type)
    if dtype != np.int32:  # an int32 bias has no zero-point range and converts exactly
        integer_range(ctx, dtype)
    scale, zp = params(ctx, rank, axis, dtype)
    q = ctx.input(0)
    if four_bit_type(ctx, ctx.node.input[0]) and (weights := ctx.constant_input(0)) is not None:
        # INT4 / UINT4 weights stay 4-bit in an IR (i4 / u4), their zero points too (as ovc)
        q = ctx.constant(weights, "/q", bits=4)
        if isinstance(zp, np.ndarray) and np.any(zp) and four_bit_type(ctx, ctx.node.input[2]):
            zp = ctx.constant(zp, "/zero_point_q", bits=4)
    return dequantize(ctx, q, scale, zp, "")


def output_dtype_of(ctx: NodeContext, q: onnx.NodeProto) -> tuple[np.dtype, int]:
    """The integer type of QuantizeLinear `q` without a zero point (its output_dtype)."""
    code = next((a.i for a in q.attribute if a.name == "output_dtype"), 0) or onnx.TensorProto.UINT8
    if code in FOUR_BIT_RANGES:
        return np.dtype(np.int8 if code == onnx.TensorProto.INT4 else np.uint8), code
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(code)), 0


def blocked_dequantize(ctx: NodeContext, axis: int) -> SSAValue:
    """Opset 21's blocked DequantizeLinear of constant integers with constant scale and zero
    point (onnxruntime's int4 QDQ weights): each run of `block_size` elements along `axis`
    shares one scale and zero point; y = (x - z) * s, computed here in the scale's type."""
    block = int(ctx.attr("block_size", 0))
    x = ctx.constant_input(0)
    if x is None:
        raise NotConstantError("blocked quantization (block_size) of a tensor known only at run time is not supported", ctx.node.input[0],
                               where=ctx.where, fix="make the quantized input a constant (weights), or quantize per tensor or per axis", code="E171")
    if block < 0 or x.ndim == 0 or not -x.ndim <= axis < x.ndim:
        raise IrforgeError(f"block_size {block} along axis {axis} of a tensor of shape {list(x.shape)}", where=ctx.where,
                           fix="give a positive block_size and an axis within the input's rank", code="E171")
    axis %= x.ndim
    scale = ctx.required_constant(1, "scale")
    zp = ctx.required_constant(2, "zero point") if ctx.has_input(2) else np.zeros(scale.shape, x.dtype)
    blocks = -(-x.shape[axis] // block)
    wanted = tuple(blocks if d == axis else n for d, n in enumerate(x.shape))
    if scale.shape != wanted or zp.shape != wanted:
        raise IrforgeError(f"blocked scale / zero point of shapes {list(scale.shape)} / {list(zp.shape)} for input {list(x.shape)}, block_size {block}, axis {axis} (expected {list(wanted)})",
                           where=ctx.where, fix="give one scale and zero point per block along the axis", code="E171")
    if x.dtype not in (np.dtype(np.int32),):
        integer_range(ctx, x.dtype)  # refuses types irforge does not quantize with
    if x.dtype.itemsize == 1 and zp.dtype == x.dtype and not groups_output_axis(ctx, axis, x.ndim):
        # 4- and 8-bit weights stay compressed: OpenVINO's grouped decompression subgraph
        blocked = lambda v: grouped(v, axis, block)  # noqa: E731
        one_per_block = lambda v: np.expand_dims(v, axis + 1)  # noqa: E731
        bits = 4 if four_bit_type(ctx, ctx.node.input[0]) else 8
        return decompressed_weights(ctx, blocked(x), one_per_block(scale), one_per_block(zp), axis=axis, length=x.shape[axis],
                                    bits=bits, dtype=scale.dtype, suffix="")  # fmt: skip
    expand = lambda v: np.repeat(v, block, axis=axis).take(np.arange(x.shape[axis]), axis=axis)  # noqa: E731
    y = (x.astype(np.int64) - expand(zp).astype(np.int64)).astype(scale.dtype) * expand(scale)
    return ctx.constant(y.astype(scale.dtype), "")


def groups_output_axis(ctx: NodeContext, axis: int, rank: int) -> bool:
    """Whether the blocks run along the output axis of a MatMul or Gemm the weights feed as B
    (N of [K, N]): OpenVINO's compressed FullyConnected groups along K only, and its CPU plugin
    (2026.4, ConvertFullyConnectedToFullyConnectedCompressed) mis-shapes the other layout
    ("Incompatible MatMul matrix dimension" at compile), so those weights are dequantized here."""
    if rank < 2:
        return False
    output = ctx.node.output[0]
    for node in ctx.importer.graph.node:
        if len(node.input) < 2 or node.input[1] != output:
            continue
        trans_b = node.op_type == "Gemm" and any(a.name == "transB" and a.i for a in node.attribute)
        if node.op_type == "MatMul" and axis == rank - 1 or node.op_type == "Gemm" and axis == (0 if trans_b else 1):
            return True
    return False


def linear_params(ctx: NodeContext, scale_index: int, rank: int, axis: int) -> tuple[np.ndarray, np.ndarray]:
    dtype = from_xdsl(ctx.input_type(scale_index - 1).element_type)
    return constant_params(ctx, scale_index, scale_index + 1, rank, axis, dtype)


@onnx_extractor("QLinearConv")
def qlinear_conv(ctx: NodeContext) -> SSAValue:
    rank = len(ctx.input_shape(0))
    xs, xz = linear_params(ctx, 1, rank, 1)
    ws, wz = linear_params(ctx, 4, rank, 0)
    ys, yz = linear_params(ctx, 6, rank, 1)
    x = dequantize(ctx, ctx.input(0), xs, xz, "/x")
    w = dequantize(ctx, ctx.input(3), ws, wz, "/w")
    spatial = rank - 2
    props = window_props(ctx, spatial)
    props["dilations"] = list(ctx.attr("dilations", [1] * spatial))
    props["group"] = int(ctx.attr("group", 1))
    operands = [x, w]
    if ctx.has_input(8):
        bias = ctx.required_constant(8, "bias").astype(np.float64) * xs.reshape(-1) * ws.reshape(-1)
        operands.append(ctx.constant(bias.astype(xs.dtype).reshape(-1), "/bias"))
    y = ctx.value(Convolution, operands, suffix="/conv", **props)
    return quantize(ctx, y, ys, yz, "")


@onnx_extractor("QLinearMatMul")
def qlinear_matmul(ctx: NodeContext) -> SSAValue:
    a_rank, b_rank = len(ctx.input_shape(0)), len(ctx.input_shape(3))
    a_s, a_z = linear_params(ctx, 1, a_rank, -2)
    b_s, b_z = linear_params(ctx, 4, b_rank, -1)
    y_s, y_z = linear_params(ctx, 6, max(a_rank, b_rank), -1)
    a = dequantize(ctx, ctx.input(0), a_s, a_z, "/a")
    b = dequantize(ctx, ctx.input(3), b_s, b_z, "/b")
    y = ctx.value(MatMul, [a, b], suffix="/matmul")
    return quantize(ctx, y, y_s, y_z, "")


@onnx_extractor("DynamicQuantizeLinear")
def dynamic_quantize_linear(ctx: NodeContext) -> list[SSAValue]:
    """scale = (max(0, max x) - min(0, min x)) / 255, zero point = saturate(round(-min / scale)),
    y = saturate(round(x / scale) + zero point), all uint8."""
    x = ctx.input(0)
    dtype = from_xdsl(ctx.input_type(0).element_type)
    axes = list(range(len(ctx.input_shape(0))))
    zero = ctx.constant(np.zeros((), dtype), "/zero")
    high = ctx.value(Eltwise, [ctx.value(Reduce, [x], suffix="/max", operation="max", axes=axes, keep_dims=False), zero], suffix="/high", operation="max")
    low = ctx.value(Eltwise, [ctx.value(Reduce, [x], suffix="/min", operation="min", axes=axes, keep_dims=False), zero], suffix="/low", operation="min")
    span = ctx.value(Eltwise, [high, low], suffix="/span", operation="sub")
    scale = ctx.value(Eltwise, [span, ctx.constant(np.array(255, dtype), "/levels")], suffix="/scale", operation="div")
    shift = ctx.value(Eltwise, [zero, ctx.value(Eltwise, [low, scale], suffix="/low_steps", operation="div")], suffix="/shift", operation="sub")
    shift = ctx.value(Clamp, [ctx.value(Activation, [shift], suffix="/shift_round", kind="round")], suffix="/shift_clamp", min=0.0, max=255.0)
    y = ctx.value(Activation, [ctx.value(Eltwise, [x, scale], suffix="/div", operation="div")], suffix="/round", kind="round")
    y = ctx.value(Clamp, [ctx.value(Eltwise, [y, shift], suffix="/add", operation="sum")], suffix="/clamp", min=0.0, max=255.0)
    u8 = to_xdsl(np.dtype(np.uint8))
    return [ctx.value(Convert, [y], destination_type=u8), scale, ctx.value(Convert, [shift], suffix="/zero_point", destination_type=u8)]
