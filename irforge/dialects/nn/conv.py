"""Convolution over N-d spatial inputs in NC* layout, with weights in O(I/group)* layout."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IntegerAttr, StringAttr, TensorType, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, result_def

from irforge.dialects.nn.base import DYN, IntArrayAttr, NNOp, Shape, known, tensor

AUTO_PAD = frozenset({"explicit", "same_upper", "same_lower", "valid"})


def resolve_pads(
    auto_pad: str,
    in_dims: Shape,
    kernel: Shape,
    strides: Shape,
    dilations: Shape,
    pads_begin: Shape,
    pads_end: Shape,
) -> tuple[Shape, Shape]:
    """The explicit begin/end pads that `auto_pad` stands for (needs known input sizes)."""
    if auto_pad == "explicit":
        return pads_begin, pads_end
    if auto_pad == "valid":
        return (0,) * len(in_dims), (0,) * len(in_dims)
    begin, end = [], []
    for size, k, s, d in zip(in_dims, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + d * (k - 1) + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begin.append(small if auto_pad == "same_upper" else large)
        end.append(large if auto_pad == "same_upper" else small)
    return tuple(begin), tuple(end)


def window_output_size(
    size: int, k: int, s: int, d: int, pad: int, auto_pad: str, ceil: bool = False
) -> int:
    """Output size of a sliding window along one axis; `pad` is begin + end padding."""
    if not known(size):
        return DYN
    if auto_pad in ("same_upper", "same_lower"):
        return -(-size // s)
    span = size + (0 if auto_pad == "valid" else pad) - d * (k - 1) - 1
    return (-(-span // s) if ceil else span // s) + 1


class WindowedOp(NNOp):
    """Shared property checks of ops that slide a window over spatial axes."""

    strides = opt_prop_def(IntArrayAttr)
    dilations = opt_prop_def(IntArrayAttr)
    pads_begin = opt_prop_def(IntArrayAttr)
    pads_end = opt_prop_def(IntArrayAttr)
    auto_pad = opt_prop_def(StringAttr, default_value=StringAttr("explicit"))

    STRING_CHOICES: ClassVar = {"auto_pad": AUTO_PAD}

    def spatial_rank(self) -> int:
        return len(self.operand_shape(0)) - 2

    def window(self, prop: str, default: int) -> Shape:
        values = self.ints(prop)
        return values if values else (default,) * self.spatial_rank()

    def verify_window(self) -> None:
        n = self.spatial_rank()
        if n < 1:
            raise self.error(f"input must have rank >= 3 (N, C, spatial...), got {n + 2}")
        for prop, minimum in (("strides", 1), ("dilations", 1), ("pads_begin", 0), ("pads_end", 0)):
            values = self.ints(prop)
            if values and len(values) != n:
                raise self.error(f"{prop} needs {n} values (one per spatial axis), got {len(values)}")
            if any(v < minimum for v in values):
                raise self.error(f"{prop} values must be >= {minimum}, got {list(values)}")

    def explicit_pads(self, kernel: Shape) -> tuple[Shape, Shape]:
        return resolve_pads(
            self.str_prop("auto_pad"),
            self.operand_shape(0)[2:],
            kernel,
            self.window("strides", 1),
            self.window("dilations", 1),
            self.window("pads_begin", 0),
            self.window("pads_end", 0),
        )

    def output_spatial(self, kernel: Shape, ceil: bool = False) -> Shape:
        pads = [b + e for b, e in zip(self.window("pads_begin", 0), self.window("pads_end", 0))]
        return tuple(
            window_output_size(size, k, s, d, p, self.str_prop("auto_pad"), ceil)
            for size, k, s, d, p in zip(
                self.operand_shape(0)[2:],
                kernel,
                self.window("strides", 1),
                self.window("dilations", 1),
                pads,
            )
        )


@irdl_op_definition
class Convolution(WindowedOp):
    """out[n, o, *y] = sum over (c in o's group, *k) of w[o, c, *k] * x[n, c, s*y + d*k - pb] + b[o]."""

    name = "nn.convolution"
    input = operand_def(TensorType)
    weights = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    group = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))

    def verify_attributes(self) -> None:
        self.verify_window()
        if self.int_prop("group") < 1:
            raise self.error(f"group must be >= 1, got {self.int_prop('group')}")

    def infer_shapes(self) -> list[TensorType]:
        x, w = self.operand_shape(0), self.operand_shape(1)
        group = self.int_prop("group")
        if len(w) != len(x):
            raise self.error(f"weights must have rank {len(x)}, got {len(w)}")
        out_channels, in_per_group = w[0], w[1]
        if known(x[1], in_per_group) and x[1] != in_per_group * group:
            raise self.error(
                f"input has {x[1]} channels but weights expect {in_per_group} x group {group}"
            )
        if known(out_channels) and out_channels % group:
            raise self.error(f"{out_channels} output channels are not divisible by group {group}")
        if self.bias is not None and self.operand_shape(2) != (out_channels,):
            raise self.error(f"bias must have shape [{out_channels}], got {list(self.operand_shape(2))}")
        spatial = self.output_spatial(w[2:])
        if any(known(d) and d < 1 for d in spatial):
            raise self.error(f"output spatial size {list(spatial)} is empty")
        return [tensor((x[0], out_channels, *spatial), self.operand_type(0).element_type)]
