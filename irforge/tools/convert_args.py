"""Parsing of ir-convert's Model Optimizer-style values.

    --input_shape [1,3,224,224]            one shape (or several: [1,3,224,224],[1,10])
    --mean_values data[123,117,104]        per named input, or [123,117,104] for all inputs
    --input data,mask                      input names (node, node:port or port:node forms)
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from irforge.errors import IrforgeError, quoted

_LIST = re.compile(r"[\[(]([^\])]*)[\])]")
_NAMED_LIST = re.compile(r"\s*([^\[\](),]*)\s*[\[(]([^\])]*)[\])]\s*,?")


def _numbers(text: str, flag: str, kind: type) -> list:  # type: ignore[type-arg]
    items = [t for t in re.split(r"[,\s]+", text.strip()) if t]
    try:
        values = [kind(t) for t in items]
    except ValueError:
        values = None
    # sizes past int64 and non-finite means/scales would be silently wrong downstream
    if values is None or any(not -(2**62) < v < 2**62 if kind is int else not math.isfinite(v) for v in values):
        raise IrforgeError(
            f"bad value for {flag}: {quoted(text)} is not a list of {'integers' if kind is int else 'finite numbers'}",
            fix="write it as [1,3,224,224]" if kind is int else "write it as [123.7,116.3,103.5]",
            code="E030",
        )
    return values


def parse_shapes(text: str) -> list[list[int]]:
    """`[1,3,224,224]` or `[1,3,224,224],[1,10]` (also with parentheses); -1 or ? for dynamic."""
    text = text.replace("?", "-1")
    shapes = [_numbers(m.group(1), "--input_shape", int) for m in _LIST.finditer(text)]
    leftover = _LIST.sub("", text).replace(",", "").strip()
    if not shapes or leftover:
        raise IrforgeError(
            f"bad value for --input_shape: '{text}'",
            fix="write one shape per input in brackets: --input_shape [1,3,224,224]",
            code="E030",
        )
    for shape in shapes:
        if any(d < -1 or d == 0 for d in shape):
            raise IrforgeError(
                f"bad value for --input_shape: {shape} has a dimension that is 0 or below -1",
                fix="give positive sizes, or -1 for a dynamic one",
                code="E030",
            )
    return shapes


def parse_per_input_values(text: str, flag: str) -> dict[str, list[float]]:
    """`data[123,117,104]`, `a[1,2],b[3,4]`, or `[123,117,104]` (key '' = every input)."""
    values: dict[str, list[float]] = {}
    position = 0
    for match in _NAMED_LIST.finditer(text):
        if match.start() != position:
            break
        if match.group(1) in values:  # the second list would silently replace the first
            raise IrforgeError(
                f"bad value for {flag}: '{text}' gives two lists for {('input ' + repr(match.group(1))) if match.group(1) else 'every input'}",
                fix=f"give one list per input, each named: {flag} a[123,117,104],b[1,2,3]",
                code="E030",
            )
        values[match.group(1)] = _numbers(match.group(2), flag, float)
        position = match.end()
    if not values or position != len(text):
        raise IrforgeError(
            f"bad value for {flag}: '{text}'",
            fix=f"write {flag} data[123,117,104] (per input) or {flag} [123,117,104] (all inputs)",
            code="E030",
        )
    return values


def parse_names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise IrforgeError(f"bad list of names: '{text}'", fix="separate names with commas: --input a,b", code="E030")
    return names


def match_shapes(names: Sequence[str], shapes: list[list[int]], model_inputs: Sequence[str]) -> dict[str, list[int]]:
    """Shapes of model inputs by name: in --input order, or the model's when there is one
    input. Names that are not model inputs are layers to cut at; set-shapes gives their
    shapes after the cut (convert_pipeline.cut_points checks them)."""
    targets = list(names) if names else list(model_inputs)
    if len(shapes) != len(targets):
        raise IrforgeError(
            f"--input_shape gives {len(shapes)} shapes for {len(targets)} inputs ({', '.join(targets)})",
            fix="give one shape per input, in the order of --input",
            code="E030",
        )
    return {n: s for n, s in zip(targets, shapes) if n in model_inputs}
