"""Reference kernel of FakeQuantize, as OpenVINO's opset1 specification writes it."""

from __future__ import annotations

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.quantize import FakeQuantize


@kernel(FakeQuantize)
def fake_quantize(op: FakeQuantize, x: np.ndarray, in_low: np.ndarray, in_high: np.ndarray, out_low: np.ndarray, out_high: np.ndarray) -> np.ndarray:
    steps = op.int_prop("levels") - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.round((x - in_low) / (in_high - in_low) * steps) / steps * (out_high - out_low) + out_low
    q = np.where(x <= np.minimum(in_low, in_high), out_low, q)
    q = np.where(x > np.maximum(in_low, in_high), out_high, q)
    return np.broadcast_to(q, x.shape).astype(x.dtype)
