"""ONNX audio front-end ops (opset 17) that speech exports carry in-graph, as constants and
existing ops.

Whisper / wav2vec style exports compute log-mel features inside the model. Their sizes are
constants of the model, so:

    HannWindow / HammingWindow / BlackmanWindow(size)   a constant [size] (ONNX's formula,
        w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size if periodic else size - 1,
        Hann (0.5, 0.5, 0), Hamming (25/46, 21/46, 0), Blackman (0.42, 0.5, 0.08); computed in
        float64 and cast to output_datatype)
    MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz)
        a constant [dft_length // 2 + 1, num_mel_bins] (the ONNX reference's triangle filters,
        step for step: the bin edges are floored the same way)
    STFT(signal [B, L, 1|2], frame_step, window, frame_length)
        Gather of the frames (constant indices [frames, frame_length] along L) -> [B, frames,
        frame_length, 1|2], times the window ([1, 1, frame_length, 1], may be a run-time
        value), then the existing DFT along axis 2 (onesided, ONNX's default, keeps bins
        0 .. frame_length // 2; on a complex signal the full DFT cut there, as onnxruntime
        and the ONNX reference do): [B, frames, bins, 2],
        frames = 1 + (L - frame_length) // frame_step (the ONNX reference's count)

A size known only at run time is a one-line error naming the input (E131); a malformed form
(negative sizes, a window that disagrees with frame_length)
is E132.
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.ir import SSAValue

from irforge.dialects.nn.base import DYN
from irforge.errors import IrforgeError, NotConstantError
from irforge.frontends.onnx.node_expansion import Expansion
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor

WINDOW_COEFFICIENTS = {
    "HannWindow": (0.5, 0.5, 0.0),
    "HammingWindow": (25.0 / 46.0, 21.0 / 46.0, 0.0),
    "BlackmanWindow": (0.42, 0.5, 0.08),
}

MAX_CONSTANT = 1 << 27
"""The largest window / mel matrix folded into the model (elements): 512 MiB of float32."""


def _bad(ctx: NodeContext, what: str, fix: str) -> IrforgeError:
    return IrforgeError(f"{ctx.node.op_type}: {what}", where=ctx.where, fix=fix, code="E132")


def _scalar(ctx: NodeContext, index: int, what: str, kinds: str = "iu") -> float | int:
    """Input `index` as a Python number known at conversion time (E131 when it is not)."""
    if not ctx.has_input(index):
        raise _bad(ctx, f"{what} (input #{index}) is required", fix="give it as a constant")
    value = ctx.constant_input(index)
    if value is None:
        # NotConstantError names the tensor: the node suite's harness (and mo-style freezing) can fix it to a value
        raise NotConstantError(f"{ctx.node.op_type}: {what} (input #{index}, '{ctx.node.input[index]}') is computed at run time",
                           ctx.node.input[index], where=ctx.where, fix=f"make {what} a constant of the model (an initializer): its size shapes the result",
                           code="E131")
    if value.size != 1 or value.dtype.kind not in kinds:
        raise _bad(ctx, f"{what} must be one {'integer' if kinds == 'iu' else 'number'}, got {value.dtype} of shape {list(value.shape)}",
                   fix=f"give {what} as a scalar")
    number = value.reshape(-1)[0]
    return int(number) if kinds == "iu" else float(number)


def _output_dtype(ctx: NodeContext) -> np.dtype:
    code = int(ctx.attr("output_datatype", onnx.TensorProto.FLOAT))
    try:
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(code))
    except (KeyError, ValueError, TypeError):
        dtype = np.dtype(object)
    if dtype.kind not in "iuf":
        raise _bad(ctx, f"output_datatype={code} is not a numeric ONNX element type", fix="use a float or integer type (1 is float32)")
    return dtype


@onnx_extractor(*WINDOW_COEFFICIENTS)
def window(ctx: NodeContext) -> SSAValue:
    size = _scalar(ctx, 0, "size")
    if not 1 <= size <= MAX_CONSTANT:  # onnxruntime refuses 0 too
        raise _bad(ctx, f"size {size} is out of range", fix=f"give a size in [1, {MAX_CONSTANT}]")
    periodic = ctx.flag("periodic", 1)
    a0, a1, a2 = WINDOW_COEFFICIENTS[ctx.node.op_type]
    period = size if periodic else size - 1
    n = np.arange(size, dtype=np.float64)
    # size 1 symmetric divides 0 by 0 in ONNX's formula (NaN, as onnxruntime gives): kept
    with np.errstate(divide="ignore", invalid="ignore"):
        angle = 2.0 * np.pi * n / period
        values = a0 - a1 * np.cos(angle) + a2 * np.cos(2.0 * angle)
    return ctx.constant(values.astype(_output_dtype(ctx)), "")


def mel_weights(bins: int, dft_length: int, sample_rate: int, low: float, high: float) -> np.ndarray:
    """ONNX MelWeightMatrix in float64 (the reference's steps, so its floored edges agree)."""
    edges = np.arange(bins + 2)
    low_mel = 2595 * np.log1p(low / 700) / np.log(10)
    high_mel = 2595 * np.log1p(high / 700) / np.log(10)
    step = (high_mel - low_mel) / edges.shape[0]
    hertz = 700 * np.expm1((edges * step + low_mel) / 2595 * np.log(10))
    points = (((dft_length + 1) * hertz) // sample_rate).astype(int)
    out = np.zeros((dft_length // 2 + 1, bins))
    for i in range(bins):
        left, center, right = points[i], points[i + 1], points[i + 2]
        if center == left:
            out[center, i] = 1
        else:
            for j in range(left, center + 1):
                out[j, i] = (j - left) / (center - left)
        for j in range(center, right):
            out[j, i] = (right - j) / (right - center)
    return out


@onnx_extractor("MelWeightMatrix")
def mel_weight_matrix(ctx: NodeContext) -> SSAValue:
    bins = _scalar(ctx, 0, "num_mel_bins")
    dft_length = _scalar(ctx, 1, "dft_length")
    sample_rate = _scalar(ctx, 2, "sample_rate")
    low = _scalar(ctx, 3, "lower_edge_hertz", "iuf")
    high = _scalar(ctx, 4, "upper_edge_hertz", "iuf")
    if bins < 1 or dft_length < 1 or sample_rate < 1 or (dft_length // 2 + 1) * bins > MAX_CONSTANT:
        raise _bad(ctx, f"num_mel_bins {bins}, dft_length {dft_length} and sample_rate {sample_rate} must be >= 1 "
                        f"(and the matrix at most {MAX_CONSTANT} elements)", fix="check the inputs")
    if not 0 <= low < high:
        raise _bad(ctx, f"lower_edge_hertz {low} and upper_edge_hertz {high} must satisfy 0 <= lower < upper", fix="check the inputs")
    try:
        weights = mel_weights(bins, dft_length, sample_rate, low, high)
    except IndexError:
        # an edge above the Nyquist bin (upper_edge_hertz > sample_rate / 2)
        raise _bad(ctx, f"upper_edge_hertz {high} puts a filter past the last of {dft_length // 2 + 1} spectrogram bins",
                   fix="use an upper_edge_hertz at most sample_rate / 2") from None
    return ctx.constant(weights.astype(_output_dtype(ctx)), "")


@onnx_extractor("STFT")
def stft(ctx: NodeContext) -> SSAValue:
    shape = ctx.input_shape(0)
    if len(shape) != 3 or shape[2] not in (1, 2):
        raise _bad(ctx, f"signal shape {list(shape)} is not [batch, length, 1 or 2]", fix="give a [B, L, 1] real or [B, L, 2] complex signal")
    if shape[1] == DYN:
        raise _bad(ctx, "the signal length is not known at conversion (the frames are gathered at constant offsets)",
                   fix="give the input shapes (--input_shape)")
    length = shape[1]
    step = _scalar(ctx, 1, "frame_step")
    has_window = ctx.has_input(2)
    window_size = ctx.input_shape(2)[0] if has_window and len(ctx.input_shape(2)) == 1 else None
    if has_window and (window_size is None or window_size == DYN):
        raise _bad(ctx, f"window shape {list(ctx.input_shape(2))} is not [frame_length] with a size known at conversion",
                   fix="give a 1-D window of static size")
    if ctx.has_input(3):
        frame_length = _scalar(ctx, 3, "frame_length")
        if window_size is not None and window_size != frame_length:
            raise _bad(ctx, f"window has {window_size} values but frame_length is {frame_length}", fix="give a window of frame_length values")
    elif window_size is not None:
        frame_length = window_size
    else:
        raise _bad(ctx, "neither window nor frame_length is given", fix="give a window or a frame_length")
    if step < 1 or not 1 <= frame_length <= length:
        raise _bad(ctx, f"frame_step {step} must be >= 1 and frame_length {frame_length} in [1, {length}] (the signal length)",
                   fix="check frame_step and frame_length")
    onesided = ctx.flag("onesided", 1)  # ONNX's default: onesided
    frames = 1 + (length - frame_length) // step
    indices = np.arange(frames)[:, None] * step + np.arange(frame_length)[None, :]
    ex = Expansion(ctx)
    framed = ex.one("Gather", [ex.input(0), ex.constant(indices, np.int64)], axis=1)  # [B, frames, frame_length, C]
    if has_window:
        column = ex.one("Reshape", [ex.input(2), ex.constant([1, 1, frame_length, 1], np.int64)])
        framed = ex.one("Mul", [framed, column])
    complex_signal = shape[2] == 2
    out = ex.one("DFT", [framed], axis=2, onesided=onesided and not complex_signal)
    if onesided and complex_signal:
        # onnxruntime and the ONNX reference keep the first frame_length // 2 + 1 bins of the full DFT
        bounds = [ex.constant([v], np.int64) for v in (0, frame_length // 2 + 1, 2)]
        out = ex.one("Slice", [out, *bounds])
    return ex.result(out)
