"""ONNX DFT as products with constant cosine and sine matrices (static signal length).

torch's dynamo exporter writes `torch.fft.*` as DFT (HF FNet mixes tokens with
`fftn(x).real`: a DFT over the hidden axis, then over the sequence). The input is
[..., N, ..., 1] (real) or [..., N, ..., 2] (complex, re and im in the last axis); along
`axis`, with L = dft_length (default N; shorter signals are zero-padded, longer ones cut)
and K = L (or L // 2 + 1 when onesided), the output is [..., K, ..., 2]:

    X[k] = sum_{n < min(N, L)} x[n] * exp(-+ 2 pi i k n / L)      (+ and / L when inverse)
    re = xr @ C + s * xi @ S,  im = xi @ C - s * xr @ S,  C[n, k] = cos(2 pi k n / L),
    S[n, k] = sin(2 pi k n / L), s = 1 forward, -1 inverse

The signal axis is moved last (a Permute), multiplied by the [min(N, L), K] matrices (in
float64 then rounded to the input type) and moved back; re and im are joined on the last
axis. The products are exact DFT sums in float32 (rounding ~1e-7 relative per term, as an
FFT's). Opset 17 reads `axis` as an attribute (default 1), opset 20 as the third input
(default -2); an axis or dft_length computed at run time is an error.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Eltwise, MatMul, Permute, Reshape, Slice
from irforge.dialects.nn.base import DYN
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl


# the cosine/sine matrices are model constants: 2**27 elements are 512 MiB each in float32
MAX_MATRIX = 1 << 27


def _axis(ctx: NodeContext, rank: int) -> int:
    if ctx.opset < 20:
        axis = int(ctx.attr("axis", 1))
    elif ctx.has_input(2):
        given = ctx.constant_input(2)
        if given is None:
            raise ctx.fail("an axis computed at run time is not supported", fix="give DFT's axis as a constant")
        if given.dtype.kind not in "iu" or given.size != 1:
            raise ctx.fail(f"axis must be one int64 value, got {given.dtype} of shape {list(given.shape)}", fix="give DFT's axis as an int64 scalar")
        axis = int(given.reshape(-1)[0])
    else:
        axis = -2
    if not -rank <= axis < rank:
        # a `% rank` would silently transform another axis
        raise ctx.fail(f"axis {axis} is out of range for an input of rank {rank}", fix=f"use an axis in [{-rank}, {rank - 2}]")
    axis %= rank
    if axis == rank - 1:
        raise ctx.fail("axis is the last axis (the real/imaginary one)", fix="transform another axis")
    return axis


def _target(dims: list[int]) -> dict[str, object]:
    """Reshape props for `dims`; a dim unknown at conversion (a dynamic batch) is copied from
    the same position of the input (special_zero), where both reshapes keep it."""
    if DYN not in dims:
        return {"shape": dims, "special_zero": False}
    return {"shape": [0 if d == DYN else d for d in dims], "special_zero": True}


@onnx_extractor("DFT")
def dft(ctx: NodeContext) -> SSAValue:
    shape = ctx.input_shape(0)
    rank = len(shape)
    if rank < 2 or shape[-1] not in (1, 2):
        raise ctx.fail(f"input shape {list(shape)} has no real/imaginary last axis of 1 or 2", fix="export a DFT of [..., N, 1|2]")
    axis = _axis(ctx, rank)
    size = shape[axis]
    if size == DYN:
        raise ctx.fail("the signal length is not known at conversion", fix="give the input shapes (--input_shape)")
    length = size
    if ctx.has_input(1):
        given = ctx.constant_input(1)
        if given is None:
            raise ctx.fail("a dft_length computed at run time is not supported", fix="give dft_length as a constant")
        if given.dtype.kind not in "iu" or given.size != 1 or int(given.reshape(-1)[0]) < 1:
            raise ctx.fail(f"dft_length must be one int64 value >= 1, got {given.reshape(-1)[:4].tolist()} ({given.dtype})",
                           fix="give dft_length as a positive int64 scalar")
        length = int(given.reshape(-1)[0])
    inverse, onesided = bool(ctx.attr("inverse", 0)), bool(ctx.attr("onesided", 0))
    if onesided and (inverse or shape[-1] == 2):
        raise ctx.fail("onesided on a complex input or with inverse", fix="onesided applies to forward DFTs of real signals")
    used = min(size, length)
    bins = length // 2 + 1 if onesided else length
    if used * bins > MAX_MATRIX:
        raise ctx.fail(f"dft_length {length} needs [{used}, {bins}] cosine/sine matrices, over {MAX_MATRIX} elements",
                       fix="use a shorter dft_length (the matrices are constants of the model)")
    dtype = from_xdsl(ctx.input_type(0).element_type)
    n, k = np.arange(used)[:, None], np.arange(bins)[None, :]
    angle = 2.0 * np.pi * ((n * k) % length) / length
    norm = 1.0 / length if inverse else 1.0
    cos, sin = (np.cos(angle) * norm).astype(dtype), (np.sin(angle) * norm).astype(dtype)
    sign = -1.0 if inverse else 1.0

    # the signal axis last, its first `used` samples; the part (re, im) axis dropped
    order = [d for d in range(rank - 1) if d != axis] + [axis]
    x = ctx.input(0)

    def part(index: int, tag: str) -> SSAValue:
        picked = ctx.value(Slice, [x], suffix=f"/{tag}", axes=[rank - 1, axis], begins=[index, 0], ends=[index + 1, used])
        squeezed = ctx.value(Reshape, [picked], suffix=f"/{tag}_squeezed",
                             **_target([d if i != axis else used for i, d in enumerate(shape[:-1])]))
        return ctx.value(Permute, [squeezed], suffix=f"/{tag}_last", order=order)

    def times(value: SSAValue, matrix: np.ndarray, tag: str) -> SSAValue:
        return ctx.value(MatMul, [value, ctx.constant(np.ascontiguousarray(matrix), f"/{tag}_matrix")], suffix=f"/{tag}")

    re = part(0, "re")
    real = times(re, cos, "re_cos")
    imag = times(re, sin * np.asarray(-sign, dtype), "re_sin")  # im = -s * xr @ S (+ xi @ C)
    if shape[-1] == 2:
        im = part(1, "im")
        real = ctx.value(Eltwise, [real, times(im, sin * np.asarray(sign, dtype), "im_sin")], suffix="/real", operation="sum")
        imag = ctx.value(Eltwise, [imag, times(im, cos, "im_cos")], suffix="/imag", operation="sum")
    back = [order.index(d) for d in range(rank - 1)]
    out = [d if i != axis else bins for i, d in enumerate(shape[:-1])]
    joined = []
    for value, tag in ((real, "real_out"), (imag, "imag_out")):
        placed = ctx.value(Permute, [value], suffix=f"/{tag}_axis", order=back)
        joined.append(ctx.value(Reshape, [placed], suffix=f"/{tag}", **_target([*out, 1])))
    return ctx.value(Concat, joined, axis=rank - 1)
