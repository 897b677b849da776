"""What every OpenCL printer shares: C types, literals, buffer parameters, index arithmetic.

Tensors live in a few large device buffers (the planned arena, one per constant, one per
model input), so every tensor parameter is a (buffer, byte offset) pair: a kernel declares
`__global T* NAME_buf, const uint NAME_off` and its prologue rebases `NAME`. Sub-buffers
would need every offset aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN (128 bytes and more),
which the arena planner's 64-byte alignment does not guarantee.

Shapes are static, so sizes, strides and divisors are printed as literals: the OpenCL
compiler strength-reduces the divisions of index unravelling.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Shape = tuple[int, ...]

_VALUE_TYPES = {
    np.dtype(np.float32): "float",
    np.dtype(np.int64): "long",
    np.dtype(np.int32): "int",
    np.dtype(np.int16): "short",
    np.dtype(np.int8): "char",
    np.dtype(np.uint64): "ulong",
    np.dtype(np.uint32): "uint",
    np.dtype(np.uint16): "ushort",
    np.dtype(np.uint8): "uchar",
    np.dtype(np.bool_): "uchar",
}
_STORAGE_TYPES = {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"}


def value_type(dtype: np.dtype) -> str | None:
    """The OpenCL C type arithmetic on `dtype` uses (None: not computable on the device;
    f16 is only loaded and stored, through vload_half/vstore_half)."""
    return _VALUE_TYPES.get(np.dtype(dtype))


def storage_type(dtype: np.dtype) -> str | None:
    """An unsigned type of `dtype`'s size: data movement copies bits, whatever they mean."""
    return _STORAGE_TYPES.get(np.dtype(dtype).itemsize)


def flit(value: float) -> str:
    """A float literal of `value` rounded to f32 (infinities and NaN by their macros)."""
    v = float(np.float32(value))
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "(-INFINITY)"
    return f"{v!r}f"


@dataclass(frozen=True)
class Param:
    """A tensor parameter: name, element C type, written or only read."""

    name: str
    ctype: str
    written: bool = False

    def declaration(self) -> str:
        qual = "" if self.written else "const "
        return f"__global {qual}{self.ctype}* restrict {self.name}_buf, const uint {self.name}_off"

    def rebase(self) -> str:
        qual = "" if self.written else "const "
        return (
            f"  __global {qual}{self.ctype}* restrict {self.name} = "
            f"(__global {qual}{self.ctype}*)((__global {qual}char*){self.name}_buf + {self.name}_off);"
        )


def kernel_text(name: str, params: Sequence[Param], body: str, attributes: str = "") -> str:
    """A complete `__kernel` with rebased tensor parameters."""
    decls = ",\n    ".join(p.declaration() for p in params)
    rebases = "\n".join(p.rebase() for p in params)
    attr = f"{attributes}\n" if attributes else ""
    return f"{attr}__kernel void {name}(\n    {decls})\n{{\n{rebases}\n{body.rstrip()}\n}}\n"


def strides_of(shape: Sequence[int]) -> Shape:
    """Row-major element strides."""
    out, step = [], 1
    for size in reversed(shape):
        out.append(step)
        step *= size
    return tuple(reversed(out))


def unravel(var: str, shape: Sequence[int], prefix: str = "c") -> str:
    """Statements declaring `{prefix}0..` as the coordinates of linear index `var`."""
    lines = [f"  int {prefix}_rest = {var};"]
    for axis in range(len(shape) - 1, -1, -1):
        size = shape[axis]
        if axis == 0:
            lines.append(f"  const int {prefix}{axis} = {prefix}_rest;")
        else:
            lines.append(f"  const int {prefix}{axis} = {prefix}_rest % {size}; {prefix}_rest /= {size};")
    return "\n".join(lines)


def linear(terms: Sequence[tuple[str, int]], base: int = 0) -> str:
    """`base + sum(expr * stride)`, dropping zero strides (broadcast axes)."""
    parts = [f"{expr} * {stride}" if stride != 1 else f"{expr}" for expr, stride in terms if stride != 0]
    if base:
        parts.insert(0, str(base))
    return " + ".join(f"({p})" for p in parts) if parts else "0"


def broadcast_strides(shape: Sequence[int], out_shape: Sequence[int]) -> Shape:
    """Strides of `shape` read at coordinates of `out_shape` (numpy broadcasting: 0 where
    the operand's axis is missing or 1)."""
    padded = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    return tuple(0 if size == 1 and out != 1 else stride for size, out, stride in zip(padded, out_shape, strides_of(padded)))


def broadcast_offset(shape: Sequence[int], out_shape: Sequence[int], prefix: str = "c") -> str:
    """The element offset into an operand of `shape` at output coordinates `{prefix}i`."""
    if tuple(shape) == tuple(out_shape):
        return "gid"
    strides = broadcast_strides(shape, out_shape)
    return linear([(f"{prefix}{i}", s) for i, s in enumerate(strides)])


def numel(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple
