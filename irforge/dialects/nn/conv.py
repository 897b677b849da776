"""Sliding-window ops over N-d spatial inputs in NC* layout: Convolution (weights in
O(I/group)* layout), Deconvolution (weights in I(O/group)* layout) and Pooling."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, IntegerAttr, StringAttr, TensorType, i64
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)

from irforge.dialects.nn.base import DYN, IntArrayAttr, NNOp, Shape, known, product, tensor

AUTO_PAD = frozenset({"explicit", "same_upper", "same_lower", "valid"})
SAME = frozenset({"same_upper", "same_lower"})
POOL_METHODS = frozenset({"max", "avg"})
ROUNDING_TYPES = frozenset({"floor", "ceil"})


def split_same_padding(auto_pad: str, total: int) -> tuple[int, int]:
    """Begin/end halves of `total` padding: same_upper puts the odd one at the end."""
    small, large = total // 2, total - total // 2
    return (small, large) if auto_pad == "same_upper" else (large, small)


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
        b, e = split_same_padding(auto_pad, max((out - 1) * s + d * (k - 1) + 1 - size, 0))
        begin.append(b)
        end.append(e)
    return tuple(begin), tuple(end)


def window_output_size(
    size: int, k: int, s: int, d: int, pads: tuple[int, int], auto_pad: str, ceil: bool = False
) -> int:
    """Output size of a sliding window along one axis with (begin, end) padding `pads`.

    With `ceil`, a last partial window is kept if it starts inside the input or the begin
    padding (as ONNX ceil_mode and Caffe do).
    """
    if not known(size):
        return DYN
    if auto_pad in SAME:
        return -(-size // s)
    begin, end = (0, 0) if auto_pad == "valid" else pads
    span = size + begin + end - d * (k - 1) - 1
    if not ceil:
        return span // s + 1
    out = -(-span // s) + 1
    return out - 1 if (out - 1) * s >= size + begin else out


def transposed_output_size(
    size: int, k: int, s: int, d: int, pads: tuple[int, int], output_padding: int, auto_pad: str
) -> int:
    """Output size of a transposed (fractionally strided) window along one axis."""
    if not known(size):
        return DYN
    if auto_pad in SAME:
        return size * s
    begin, end = (0, 0) if auto_pad == "valid" else pads
    return s * (size - 1) + d * (k - 1) + 1 + output_padding - begin - end


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

    def verify_window(self, extra: tuple[tuple[str, int], ...] = ()) -> None:
        """Rank >= 3, and one value per spatial axis, at least a minimum, in each window
        property (strides, dilations, pads, and `extra` (name, minimum) pairs)."""
        n = self.spatial_rank()
        if n < 1:
            raise self.error(f"input must have rank >= 3 (N, C, spatial...), got {n + 2}")
        checks = (("strides", 1), ("dilations", 1), ("pads_begin", 0), ("pads_end", 0), *extra)
        for prop, minimum in checks:
            values = self.ints(prop)
            if values and len(values) != n:
                raise self.error(f"{prop} needs {n} values (one per spatial axis), got {len(values)}")
            if any(v < minimum for v in values):
                raise self.error(f"{prop} values must be >= {minimum}, got {list(values)}")

    def explicit_pads(self, kernel: Shape, in_dims: Shape | None = None) -> tuple[Shape, Shape]:
        """Begin/end pads for spatial sizes `in_dims` (default: the input type's, which must
        then be known where auto_pad is same_*)."""
        return resolve_pads(
            self.str_prop("auto_pad"),
            self.operand_shape(0)[2:] if in_dims is None else in_dims,
            kernel,
            self.window("strides", 1),
            self.window("dilations", 1),
            self.window("pads_begin", 0),
            self.window("pads_end", 0),
        )

    def output_spatial(self, kernel: Shape, ceil: bool = False, in_dims: Shape | None = None) -> Shape:
        """Output spatial sizes for spatial input sizes `in_dims` (default: the input type's)."""
        return tuple(
            window_output_size(size, k, s, d, pads, self.str_prop("auto_pad"), ceil)
            for size, k, s, d, pads in zip(
                self.operand_shape(0)[2:] if in_dims is None else in_dims,
                kernel,
                self.window("strides", 1),
                self.window("dilations", 1),
                zip(self.window("pads_begin", 0), self.window("pads_end", 0)),
            )
        )

    def check_not_empty(self, spatial: Shape) -> None:
        if any(known(d) and d < 1 for d in spatial):
            raise self.error(f"output spatial size {list(spatial)} is empty")


class FilterOp(WindowedOp):
    """A windowed op with weights, an optional bias and channel groups."""

    input = operand_def(TensorType)
    weights = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    group = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))

    def verify_filter(self, extra: tuple[tuple[str, int], ...] = ()) -> None:
        self.verify_window(extra)
        if self.int_prop("group") < 1:
            raise self.error(f"group must be >= 1, got {self.int_prop('group')}")

    def check_weights_rank(self) -> None:
        x, w = self.operand_shape(0), self.operand_shape(1)
        if len(w) != len(x):
            raise self.error(f"weights must have rank {len(x)}, got {len(w)}")

    def check_divisible(self, channels: int, kind: str) -> None:
        group = self.int_prop("group")
        if known(channels) and channels % group:
            raise self.error(f"{channels} {kind} channels are not divisible by group {group}")

    def check_bias(self, out_channels: int) -> None:
        if self.bias is None:
            return
        b = self.operand_shape(2)
        if len(b) != 1 or (known(b[0], out_channels) and b[0] != out_channels):
            shown = "?" if out_channels == DYN else out_channels
            raise self.error(f"bias must have shape [{shown}], got {list(b)}")


@irdl_op_definition
class Convolution(FilterOp):
    """out[n, o, *y] = sum over (c in o's group, *k) of w[o, c, *k] * x[n, c, s*y + d*k - pb] + b[o]."""

    name = "nn.convolution"
    SAME_ELEMENT_TYPE: ClassVar = ('input', 'weights', 'bias')

    def verify_attributes(self) -> None:
        self.verify_filter()

    def infer_shapes(self) -> list[TensorType]:
        x, w = self.operand_shape(0), self.operand_shape(1)
        group = self.int_prop("group")
        self.check_weights_rank()
        if known(x[1], w[1]) and x[1] != w[1] * group:
            raise self.error(f"input has {x[1]} channels but weights expect {w[1]} x group {group}")
        self.check_divisible(w[0], "output")
        self.check_bias(w[0])
        spatial = self.output_spatial(w[2:])
        self.check_not_empty(spatial)
        return [tensor((x[0], w[0], *spatial), self.operand_type(0).element_type)]


@irdl_op_definition
class Deconvolution(FilterOp):
    """Transposed convolution, the gradient of Convolution with respect to its input.

    full[n, g*Og + o, s*i + d*k] = sum over (c in group g) of x[n, c, i] * w[c, o, k], of size
    F = s*(in - 1) + d*(k - 1) + 1 + output_padding; out = full[pb : F - pe] + b, so the output
    size is F - pads_begin - pads_end (explicit), F (valid) or in*s (same_*: the crop is split
    as for Convolution; if F < in*s, zeros are appended instead).
    """

    name = "nn.deconvolution"
    SAME_ELEMENT_TYPE: ClassVar = ('input', 'weights', 'bias')
    output_padding = opt_prop_def(IntArrayAttr)

    def verify_attributes(self) -> None:
        self.verify_filter((("output_padding", 0),))
        limits = zip(self.window("strides", 1), self.window("dilations", 1))
        if any(p >= max(s, d) for p, (s, d) in zip(self.ints("output_padding"), limits)):
            raise self.error(
                f"output_padding values must be smaller than stride or dilation, "
                f"got {list(self.ints('output_padding'))}"
            )

    def transposed_pads(self, kernel: Shape, in_dims: Shape) -> tuple[Shape, Shape]:
        """Begin/end crops of the full output for spatial input sizes `in_dims` (a negative
        end crop, for same_* when the full output is short, means zeros appended)."""
        auto_pad = self.str_prop("auto_pad")
        if auto_pad == "explicit":
            return self.window("pads_begin", 0), self.window("pads_end", 0)
        if auto_pad == "valid":
            return (0,) * len(in_dims), (0,) * len(in_dims)
        strides, dilations = self.window("strides", 1), self.window("dilations", 1)
        begin, end = [], []
        for size, k, s, d, p in zip(in_dims, kernel, strides, dilations, self.window("output_padding", 0)):
            total = s * (size - 1) + d * (k - 1) + 1 + p - size * s
            b = split_same_padding(auto_pad, max(total, 0))[0]
            begin.append(b)
            end.append(total - b)
        return tuple(begin), tuple(end)

    def infer_shapes(self) -> list[TensorType]:
        x, w = self.operand_shape(0), self.operand_shape(1)
        self.check_weights_rank()
        if known(x[1], w[0]) and x[1] != w[0]:
            raise self.error(f"input has {x[1]} channels but weights expect {w[0]}")
        self.check_divisible(w[0], "input")
        out_channels = product((w[1], self.int_prop("group")))
        self.check_bias(out_channels)
        spatial = tuple(
            transposed_output_size(size, k, s, d, pads, p, self.str_prop("auto_pad"))
            for size, k, s, d, pads, p in zip(
                x[2:],
                w[2:],
                self.window("strides", 1),
                self.window("dilations", 1),
                zip(self.window("pads_begin", 0), self.window("pads_end", 0)),
                self.window("output_padding", 0),
            )
        )
        self.check_not_empty(spatial)
        return [tensor((x[0], out_channels, *spatial), self.operand_type(0).element_type)]


@irdl_op_definition
class Pooling(WindowedOp):
    """Max or average over windows of the spatial axes, per sample and channel.

    max: out[n, c, *y] = max over k of x[n, c, s*y + d*k - pb] (padding never wins).
    avg: out[n, c, *y] = sum over k of x[n, c, s*y + k - pb] / count, where count is the number
    of real elements in the window (exclude_pad) or of its elements inside the padded input.
    With rounding_type ceil, a last partial window is kept if it starts inside the input or
    pads_begin. global_pool: one window over the whole spatial extent, output sizes 1.
    """

    name = "nn.pooling"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    method = prop_def(StringAttr)
    kernel = opt_prop_def(IntArrayAttr)
    exclude_pad = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    rounding_type = opt_prop_def(StringAttr, default_value=StringAttr("floor"))
    global_pool = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))

    STRING_CHOICES: ClassVar = {
        **WindowedOp.STRING_CHOICES,
        "method": POOL_METHODS,
        "rounding_type": ROUNDING_TYPES,
    }

    def verify_attributes(self) -> None:
        self.verify_window((("kernel", 1),))
        if self.bool_prop("global_pool"):
            self.verify_global()
            return
        kernel = self.ints("kernel")
        if not kernel:
            raise self.error("kernel is required unless global_pool is set")
        begin, end = self.window("pads_begin", 0), self.window("pads_end", 0)
        if self.str_prop("auto_pad") == "explicit" and any(
            max(b, e) >= k for b, e, k in zip(begin, end, kernel)
        ):
            raise self.error(
                f"pads must be smaller than kernel {list(kernel)}, "
                f"got pads_begin {list(begin)} and pads_end {list(end)}"
            )

    def verify_global(self) -> None:
        window_props = ("kernel", "strides", "dilations", "pads_begin", "pads_end")
        given = [p for p in window_props if getattr(self, p) is not None]
        if self.str_prop("auto_pad") != "explicit":
            given.append("auto_pad")
        if given:
            raise self.error(f"global_pool takes no {', '.join(given)}")

    def ceil_mode(self) -> bool:
        return self.str_prop("rounding_type") == "ceil"

    def infer_shapes(self) -> list[TensorType]:
        x = self.operand_shape(0)
        if self.bool_prop("global_pool"):
            spatial: Shape = (1,) * (len(x) - 2)
        else:
            spatial = self.output_spatial(self.ints("kernel"), self.ceil_mode())
            self.check_not_empty(spatial)
        return [tensor((x[0], x[1], *spatial), self.operand_type(0).element_type)]
