"""preprocess: channel reversal, mean subtraction and scaling at the model inputs.

For each input, in the Model Optimizer's order: with `reverse-input-channels`, the channels
of every input with more than one channel are reversed first (RGB <-> BGR); then, for inputs
named in `mean` / `scale` (`data[123,117,104]`, or `[...]` for every input), the model sees
(x - mean) / scale per channel (axis 1, or the last axis with channels-last). Mean and scale
values are therefore in the order of the channels the model was trained with (after the
reversal), as OpenVINO documents and as its PrePostProcessor computes
`reverse_channels().mean(m).scale(s)`. The ops are a gather and plain eltwise sub/div;
fuse-linear-ops folds them into the first layer where that is exact (a scale and a channel
permutation always fold into a convolution; a mean only where it reads no padding).

    // preprocess{mean="data[1,2]" scale="data[4,8]" reverse-input-channels=true}
    func.func @main(%data: tensor<1x2x8x8xf32>) ...
      %c = nn.convolution %data, %w ...
becomes
      %i = nn.constant dense<[1, 0]> : tensor<2xi64>
      %r = nn.gather %data, %i {axis = 1 : i64, name = "data/reverse_channels"}
      %m = nn.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
      %0 = nn.eltwise %r, %m {operation = "sub", name = "data/mean"}
      %s = nn.constant dense<[[[4.0]], [[8.0]]]> : tensor<2x1x1xf32>
      %1 = nn.eltwise %0, %s {operation = "div", name = "data/scale"}
      %c = nn.convolution %1, %w ...
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from irforge.builder import constant_op
from irforge.dialects.nn.base import DYN, build
from irforge.dialects.nn.elementwise import Eltwise
from irforge.dialects.nn.shape import Gather
from irforge.errors import IrforgeError
from irforge.model import input_names, main_function, store_of
from irforge.passes.patterns.affine import dtype_of, float_tensor, shape_of
from irforge.tools.convert_args import parse_per_input_values


def values_by_input(text: str, what: str, names: list[str]) -> dict[str, np.ndarray]:
    """Per-input values of a `mean`/`scale` option ('' = all inputs)."""
    if not text:
        return {}
    parsed = parse_per_input_values(text, what)
    unknown = [n for n in parsed if n and n not in names]
    if unknown:
        raise IrforgeError(
            f"{what} names input '{unknown[0]}', which the model does not have",
            fix=f"its inputs are: {', '.join(names)}",
            code="E745",
        )
    if "" in parsed:
        return {n: np.array(parsed[""]) for n in names}
    return {n: np.array(v) for n, v in parsed.items()}


def channel_axis(arg: SSAValue, channels_last: bool) -> int:
    return len(shape_of(arg)) - 1 if channels_last else 1


def channel_constant(values: np.ndarray, arg: SSAValue, what: str, name: str, channels_last: bool = False) -> np.ndarray:
    """`values` shaped to broadcast along the channel axis of input `arg` (axis 1, or the
    last for NHWC inputs), checked against its channels."""
    shape = shape_of(arg)
    if len(shape) < 2 or not float_tensor(arg):
        raise IrforgeError(f"{what} for input '{name}' needs a float input of rank >= 2, got {arg.type}", code="E745")
    axis = channel_axis(arg, channels_last)
    if values.size not in (1, shape[axis]) and shape[axis] != DYN:
        raise IrforgeError(
            f"{what} for input '{name}' has {values.size} values but the input has {shape[axis]} channels",
            fix="give one value per channel",
            code="E745",
        )
    dtype = dtype_of(arg)
    with np.errstate(over="ignore", under="ignore"):
        typed = values.astype(dtype)
    # 1e39 is inf in f32 (every output inf / NaN); a scale of 1e-46 is 0 there, 1e-39 a
    # subnormal whose reciprocal overflows: refuse what the input's type cannot hold
    tiny = np.finfo(dtype).tiny if what == "scale" else 0.0
    if not np.all(np.isfinite(typed)) or (what == "scale" and np.any(np.abs(typed) < tiny)):
        raise IrforgeError(
            f"{what} for input '{name}' has a value beyond the range of its {dtype.name} type ({values.tolist()})",
            fix=f"give {what} values of magnitude {'%.3g .. ' % tiny if what == 'scale' else 'up to '}{np.finfo(dtype).max:.3g}",
            code="E745",
        )
    return typed.reshape([values.size] + [1] * (len(shape) - 1 - axis))


def reversal(arg: SSAValue, channels_last: bool = False) -> np.ndarray | None:
    """Indices that reverse the channels of `arg`, None if it has fewer than two or unknown."""
    shape = shape_of(arg)
    if len(shape) < 2:
        return None
    channels = shape[channel_axis(arg, channels_last)]
    if channels == DYN or channels < 2:
        return None
    return np.arange(channels - 1, -1, -1, dtype=np.int64)


@dataclass(frozen=True)
class PreprocessPass(ModulePass):
    name = "preprocess"

    mean: str = ""
    """Values subtracted per channel: `data[123.7,116.3,103.5]`."""
    scale: str = ""
    """Values divided by per channel (after the mean): `data[58.4,57.1,57.4]`."""
    reverse_input_channels: bool = False
    """Reverse the channel order of the inputs (before mean and scale)."""
    channels_last: bool = False
    """The inputs are NHWC (TensorFlow): channels are their last axis, not axis 1."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        func = main_function(op)
        names = input_names(func)
        means = values_by_input(self.mean, "mean", names)
        scales = values_by_input(self.scale, "scale", names)
        for name, values in scales.items():
            if not np.all(values != 0):
                raise IrforgeError(f"scale for input '{name}' has a zero", fix="give nonzero scale values", code="E745")
        for name, arg in zip(names, func.args):
            self.preprocess_input(arg, name, means.get(name), scales.get(name))

    def preprocess_input(self, arg: BlockArgument, name: str, mean: np.ndarray | None, scale: np.ndarray | None) -> None:
        block = arg.block
        store = store_of(block.parent_op())  # type: ignore[arg-type]
        new_ops: list[Operation] = []
        y: SSAValue = arg
        # reversal first: mean and scale values are in the model's channel order (MO, OpenVINO)
        indices = reversal(arg, self.channels_last) if self.reverse_input_channels else None
        if indices is not None:
            const = constant_op(indices, store, f"{name}/reverse")
            axis = channel_axis(arg, self.channels_last)
            gather = build(Gather, [y, const.output], axis=axis, name=f"{name}/reverse_channels")
            new_ops += [const, gather]
            y = gather.output
        for values, operation, what in ((mean, "sub", "mean"), (scale, "div", "scale")):
            if values is None:
                continue
            const = constant_op(channel_constant(values, arg, what, name, self.channels_last), store, f"{name}/{what}")
            step = build(Eltwise, [y, const.output], operation=operation, name=f"{name}/{what}")
            new_ops += [const, step]
            y = step.output
        if not new_ops:
            return
        arg.replace_uses_with_if(y, lambda use: use.operation not in new_ops)
        block.insert_ops_before(new_ops, block.first_op)  # type: ignore[arg-type]
