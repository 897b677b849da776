"""onnxruntime's com.microsoft GatherBlockQuantized (what onnxruntime-genai's int4 builder
writes for an embedding table tied to the 4-bit LM head) as a Gather of the dequantized
table:

    GatherBlockQuantized(data, indices, scales, zero_points?; bits, block_size, gather_axis,
        quantize_axis) = Gather(dequantize(data), indices, gather_axis)

data is a constant uint8 [rows, columns * bits / 8] with `bits`-bit values packed along the
last axis (low bits first), quantized in blocks of `block_size` along it; dequantize(q) =
(q - zero point) * scale per block, the zero point 2^(bits-1) without zero_points (uint8
packed like data otherwise). The table stays compressed (u4 when 4-bit, else u8), as
MatMulNBits' weights do (`compressed_weights.py`): the same values onnxruntime gathers.

data may also be an INT4 / UINT4 initializer [rows, columns] (onnxruntime-genai's int4
Whisper decoder), which the loader unpacks to int8 / uint8: then its zero points, if any, are
of data's 4-bit type, one per block, and the default zero point is 0 for INT4 and UINT4 alike
(as onnxruntime's kernel has it).

Refused with E186: FP8 / FP4 data, a rank other than 2, gather_axis other than 0 or
quantize_axis other than the last axis.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Gather
from irforge.frontends.onnx.extractors.compressed_weights import decompressed_weights, grouped
from irforge.frontends.onnx.extractors.ort_contrib import _unpacked
from irforge.frontends.onnx.extractors.ort_rotary import unsupported
from irforge.frontends.onnx.extractors.quantize import four_bit_type
from irforge.frontends.onnx.extractors.quantize_contrib import MS, check_attributes
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor


@onnx_extractor("GatherBlockQuantized", domain=MS)
def gather_block_quantized(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, {"bits", "block_size", "gather_axis", "quantize_axis"})
    data = ctx.required_constant(0, "the quantized table")
    four_bit = four_bit_type(ctx, ctx.node.input[0])
    if four_bit:  # unpacked by the loader: must not be unpacked again as packed uint8
        return four_bit_table(ctx, data, four_bit)
    if data.dtype != np.uint8 or data.ndim != 2:
        raise unsupported(ctx, f"data of type {data.dtype} and rank {data.ndim}", "quantize the table to packed uint8 [rows, bytes]")
    bits, block = int(ctx.attr("bits", 4)), int(ctx.attr("block_size", 128))
    if int(ctx.attr("gather_axis", 0)) not in (0, -2) or int(ctx.attr("quantize_axis", 1)) not in (1, -1):  # -3 % 2 is 1: no modulo
        raise unsupported(ctx, f"gather_axis={ctx.attr('gather_axis', 0)} / quantize_axis={ctx.attr('quantize_axis', 1)}",
                          "gather rows of a table quantized along its last axis")
    if bits not in (2, 4, 8) or block < 16 or block & (block - 1):
        raise ctx.fail(f"bits={bits} / block_size={block} is not a GatherBlockQuantized form", fix="use 2, 4 or 8 bits and a power-of-2 block >= 16")
    rows, columns = data.shape[0], data.shape[1] * 8 // bits
    scales = ctx.required_constant(2, "the scales")
    blocks = -(-columns // block)
    if scales.shape != (rows, blocks) or scales.dtype.kind != "f":
        raise ctx.fail(f"scales {list(scales.shape)} ({scales.dtype}) do not fit a table of {rows} x {columns} in blocks of {block}")
    values = _unpacked(data, bits, columns)
    zero = np.full((1, 1, 1), 1 << (bits - 1), np.uint8)
    if ctx.has_input(3):
        zp = ctx.required_constant(3, "the zero points")
        if zp.dtype != np.uint8 or zp.shape[0] != rows or zp.size * 8 // bits < rows * blocks:
            raise ctx.fail(f"zero points {list(zp.shape)} ({zp.dtype}) do not fit {rows} x {blocks} blocks of {bits} bits")
        zero = _unpacked(zp.reshape(rows, -1), bits, blocks)[..., None]
    return gathered_table(ctx, values, scales, zero, bits, block)


def gathered_table(ctx: NodeContext, values: np.ndarray, scales: np.ndarray, zero: np.ndarray | None, bits: int, block: int) -> SSAValue:
    """Gather of the table `values` [rows, columns] kept compressed (`compressed_weights.py`);
    scales [rows, blocks], zero [rows, blocks, 1] or broadcasting to it, or None (0)."""
    q = grouped(values, 1, block)
    table = decompressed_weights(ctx, q, scales[..., None], zero, axis=1, length=values.shape[1], bits=bits, dtype=scales.dtype, suffix="/table")
    return ctx.value(Gather, [table, ctx.input(1)], axis=0)


def four_bit_table(ctx: NodeContext, data: np.ndarray, four_bit: int) -> SSAValue:
    """GatherBlockQuantized of an INT4 / UINT4 table (values already one per element)."""
    bits, block = int(ctx.attr("bits", 4)), int(ctx.attr("block_size", 128))
    if data.ndim != 2 or int(ctx.attr("gather_axis", 0)) not in (0, -2) or int(ctx.attr("quantize_axis", 1)) not in (1, -1):
        raise unsupported(ctx, f"a 4-bit table of rank {data.ndim} with gather_axis={ctx.attr('gather_axis', 0)} / quantize_axis={ctx.attr('quantize_axis', 1)}",
                          "gather rows of a rank-2 table quantized along its last axis")
    if bits != 4 or block < 16 or block & (block - 1):
        raise ctx.fail(f"bits={bits} / block_size={block} is not a GatherBlockQuantized form of 4-bit data", fix="use bits=4 and a power-of-2 block >= 16")
    rows, columns = data.shape
    blocks = -(-columns // block)
    scales = ctx.required_constant(2, "the scales")
    if scales.shape != (rows, blocks) or scales.dtype.kind != "f":
        raise ctx.fail(f"scales {list(scales.shape)} ({scales.dtype}) do not fit a table of {rows} x {columns} in blocks of {block}")
    zp = None  # onnxruntime's default for int4 and uint4 data alike: 0
    if ctx.has_input(3):
        given = ctx.required_constant(3, "the zero points")
        if four_bit_type(ctx, ctx.node.input[3]) != four_bit or given.shape != (rows, blocks):
            raise ctx.fail(f"zero points {list(given.shape)} ({given.dtype}) are not {rows} x {blocks} values of the table's 4-bit type")
        zp = given[..., None]
    return gathered_table(ctx, data, scales, zp, 4, block)
