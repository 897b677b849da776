"""Checks of a custom layer's OpenCL kernel against what irforge passes it, so that a wrong
signature is the extension's error (E993), not a crash inside pyopencl.

irforge calls `entry` with the input buffers, then the output buffers (`__global float*`),
then one value per item of `scalars(op)`: an `int` item as a 32-bit int, anything else as a
32-bit float, so the kernel declares those parameters `int` (or `uint`) and `float`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from irforge.errors import IrforgeError

_INTEGER_TYPES = {"int", "uint", "unsigned", "unsigned int", "short", "ushort", "char", "uchar"}
FIX = "declare the input buffers, the output buffers (__global float*), then one int or float per OpenCLKernel scalars value"


def _parameters(source: str, entry: str) -> list[str] | None:
    """The parameter declarations of kernel `entry`, or None when they cannot be read (macros)."""
    match = re.search(r"(?:__kernel|kernel)\s+void\s+" + re.escape(entry) + r"\s*\(([^)]*)\)", source)
    if match is None:
        return None
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", match.group(1), flags=re.S)
    return [p.strip() for p in text.split(",") if p.strip()]


def _base_type(declaration: str) -> str:
    words = [w for w in re.split(r"\s+", declaration.replace("*", " * ")) if w not in ("const", "__private", "private")]
    return " ".join(words[:-1])  # the last word is the parameter's name


def check_signature(layer: str, source: str, entry: str, buffers: int, scalars: Sequence[object]) -> None:
    """Raise E993 when `entry`'s declared parameters cannot take `buffers` buffers and `scalars`."""
    params = _parameters(source, entry)
    if params is None:
        if not re.search(r"\b" + re.escape(entry) + r"\b", source):
            raise IrforgeError(f"custom layer {layer}: its OpenCL source defines no kernel '{entry}'",
                               fix="make OpenCLKernel(entry=...) the name of a __kernel in its source", code="E993")
        return  # declared through macros: pyopencl's own check at launch time reports it
    pointers = [p for p in params if "*" in p]
    plain = [p for p in params if "*" not in p]
    if len(params) != buffers + len(scalars) or len(pointers) != buffers or params[:buffers] != pointers:
        raise IrforgeError(
            # what irforge passes first: a long parameter list loses its middle in the one-line error
            f"irforge passes OpenCL kernel '{entry}' {buffers} buffers and {len(scalars)} scalars "
            f"({', '.join(map(repr, scalars)) or 'scalars=lambda op: [] by default'}), but it takes ({', '.join(params)})",
            where=f"custom layer {layer}", fix=FIX, code="E993",
        )
    for declaration, value in zip(plain, scalars):
        integer = _base_type(declaration) in _INTEGER_TYPES
        if integer != isinstance(value, int) or isinstance(value, bool):
            passed = "a 32-bit int" if isinstance(value, int) else "a 32-bit float"
            raise IrforgeError(
                f"custom layer {layer}: OpenCL kernel '{entry}' declares '{declaration}', but scalars gives {value!r} ({passed})",
                fix="give int values for int parameters and float values for float ones (float(op.alpha), int(op.axis))",
                code="E993",
            )
