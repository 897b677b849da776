"""Reference kernel of FakeQuantize, as OpenVINO's opset1 specification writes it.

    y = round((x - il) / (ih - il) * (L - 1)) / (L - 1) * (oh - ol) + ol   (clipped to ol, oh)

A FakeQuantize that an ONNX QuantizeLinear/DequantizeLinear pair became (same input and output
bounds il = (qmin - z) * s, ih = (qmax - z) * s with an integer z) is computed as that pair
computes it in float32: q = round_half_even(x / s) + z clamped, y = (q - z) * s. The
specification's form rounds three times before the final round, so values of x / s within
~1e-5 of a half step land on the other integer (a one-step error that a deep INT8 network
carries to its outputs: 8e-3 on a QDQ BERT against onnxruntime); the pair's form gives
onnxruntime's numbers exactly (the CPU backend runs this kernel as a host step).
"""

from __future__ import annotations

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.quantize import FakeQuantize


def quantize_dequantize(x: np.ndarray, low: np.ndarray, high: np.ndarray, steps: int) -> np.ndarray | None:
    """The Q/DQ pair's arithmetic when the bounds are (qmin - z) * s, (qmax - z) * s with an
    integer z (per tensor or per channel), else None."""
    low64, high64 = np.asarray(low, np.float64), np.asarray(high, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = ((high64 - low64) / steps).astype(np.float32)
        zero = -low64 / scale.astype(np.float64)
    if not (np.all(np.isfinite(zero)) and np.all(scale > 0)):
        return None
    rounded = np.round(zero)
    if np.max(np.abs(zero - rounded)) > 1e-3 or np.min(rounded) < -(1 << 24) or np.max(rounded) > (1 << 24):
        return None
    zero32 = rounded.astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.round(x.astype(np.float32) / scale) + zero32  # half to even, as onnxruntime and numpy round
        q = np.clip(q, 0, steps)  # zero is z - qmin: q runs over 0..L-1
        return ((q - zero32) * scale).astype(np.float32)


@kernel(FakeQuantize)
def fake_quantize(op: FakeQuantize, x: np.ndarray, in_low: np.ndarray, in_high: np.ndarray, out_low: np.ndarray, out_high: np.ndarray) -> np.ndarray:
    steps = op.int_prop("levels") - 1
    if x.dtype == np.float32 and np.array_equal(in_low, out_low) and np.array_equal(in_high, out_high):
        pair = quantize_dequantize(x, in_low, in_high, steps)
        if pair is not None:
            return np.broadcast_to(pair, x.shape).astype(x.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.round((x - in_low) / (in_high - in_low) * steps) / steps * (out_high - out_low) + out_low
    q = np.where(x <= np.minimum(in_low, in_high), out_low, q)
    q = np.where(x > np.maximum(in_low, in_high), out_high, q)
    return np.broadcast_to(q, x.shape).astype(x.dtype)
