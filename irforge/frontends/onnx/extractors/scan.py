"""ONNX Scan (opset 8, 9+), unrolled: its body imported once per step of the scanned axis.

Scan runs its body over slices of the scan inputs along their scan axes (forward, or reverse
per `scan_input_directions`), threading N state variables; each step's K scan-output
elements are stacked along `scan_output_axes` (in step order, or reversed per
`scan_output_directions`). The number of steps is the scanned axes' size, known at
conversion (static shapes); each step's slice is a Gather of one index, each stacked output
an Unsqueeze + Concat, and the body's nodes go through the ordinary extractors
(region_import.import_body, as an unrolled Loop). Scan-8 adds a leading batch axis to
states and scan inputs (axis 1 is scanned) and an optional sequence_lens; it runs one
unrolled scan per batch element, for full-length sequences only.
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.ir import SSAValue

from irforge.dialects.nn.base import DYN
from irforge.errors import IrforgeError
from irforge.frontends.onnx.node_expansion import Expansion
from irforge.frontends.onnx.region_import import import_body
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor

MAX_STEPS = 4096
"""Scans longer than this are refused rather than unrolled into a huge graph."""


def _error(ctx: NodeContext, what: str, fix: str) -> IrforgeError:
    return IrforgeError(what, where=ctx.where, fix=fix, code="E135")


@onnx_extractor("Scan")
def scan(ctx: NodeContext) -> list[SSAValue]:
    body: onnx.GraphProto = ctx.attr("body")
    m = int(ctx.attr("num_scan_inputs"))
    e = Expansion(ctx)
    if ctx.opset >= 9:
        names = list(ctx.node.input)
        return [e.result(n) for n in _scan(ctx, e, body, names[: len(names) - m], names[len(names) - m :], "")]
    return _scan8(ctx, e, body, m)


def _axes(ctx: NodeContext, name: str, count: int, ranks: list[int], default: int = 0) -> list[int]:
    values = [int(v) for v in ctx.attr(name, [default] * count)]
    if len(values) != count:
        raise _error(ctx, f"{name} has {len(values)} values for {count} tensors", fix=f"give one value per tensor in {name}")
    for value, rank in zip(values, ranks):
        if not -rank <= value < rank:
            raise _error(ctx, f"{name} value {value} is out of range for rank {rank}", fix=f"use values in [{-rank}, {rank - 1}]")
    return [v % r for v, r in zip(values, ranks)]


def _scan(ctx: NodeContext, e: Expansion, body: onnx.GraphProto, states: list[str], scanned: list[str], tag: str) -> list[str]:
    """The unrolled scan over tensors named `scanned` from `states`: final states, scan outputs."""
    m, n = len(scanned), len(states)
    k = len(body.output) - n
    if len(body.input) != n + m or k < 0:
        raise _error(ctx, f"the body has {len(body.input)} inputs and {len(body.output)} outputs for {n} states and {m} scan inputs",
                     fix="give the body one input per state and scan input, and one output per state first")
    shapes = [e.result(name).type.get_shape() for name in scanned]  # type: ignore[attr-defined]
    in_axes = _axes(ctx, "scan_input_axes", m, [len(s) for s in shapes]) if ctx.opset >= 9 else [0] * m
    in_dirs = [int(d) for d in ctx.attr("scan_input_directions" if ctx.opset >= 9 else "directions", [0] * m)]
    if any(not 0 <= axis < len(shape) for shape, axis in zip(shapes, in_axes)):
        raise _error(ctx, f"scan inputs of shapes {[list(s) for s in shapes]} have no axis {in_axes}", fix="check scan_input_axes and the inputs' ranks")
    steps = {shape[axis] for shape, axis in zip(shapes, in_axes)}
    if len(steps) != 1 or DYN in steps:
        raise _error(ctx, f"the scan inputs' scanned axes have sizes {sorted(steps)}: one static size is needed", fix="give static input shapes (--input_shape)")
    count = steps.pop()
    if count > MAX_STEPS or count < 1:
        raise _error(ctx, f"a scan of {count} steps is not unrolled (1 to {MAX_STEPS})", fix="scan fewer steps")
    elements: list[list[str]] = [[] for _ in range(k)]
    for t in range(count):
        step = [e.one("Gather", [name, e.constant(count - 1 - t if d else t, np.int64)], axis=axis) for name, axis, d in zip(scanned, in_axes, in_dirs)]
        bound = dict(zip([vi.name for vi in body.input], [e.result(s) for s in states + step]))
        outputs = import_body(ctx, body, bound, f"/scan{tag}{t}")
        states = [e.value(v) for v in outputs[:n]]
        for slot, value in zip(elements, outputs[n:]):
            slot.append(e.value(value))
    out_ranks = [len(e.result(slot[0]).type.get_shape()) + 1 for slot in elements]  # type: ignore[attr-defined]
    out_axes = _axes(ctx, "scan_output_axes", k, out_ranks) if ctx.opset >= 9 and ctx.attr("scan_output_axes") is not None else [0] * k
    out_dirs = [int(d) for d in ctx.attr("scan_output_directions", [0] * k)] if ctx.opset >= 9 else [0] * k
    stacked = []
    for slot, axis, d in zip(elements, out_axes, out_dirs):
        parts = [e.one("Unsqueeze", [v, e.constant([axis], np.int64)]) for v in (reversed(slot) if d else slot)]
        stacked.append(parts[0] if len(parts) == 1 else e.one("Concat", parts, axis=axis))
    return states + stacked


def _scan8(ctx: NodeContext, e: Expansion, body: onnx.GraphProto, m: int) -> list[SSAValue]:
    """Scan-8: states and scan inputs carry a batch axis 0 (scan inputs scan axis 1)."""
    if any(len(ctx.input_shape(i)) < (1 if i < ctx.num_inputs - m else 2) for i in range(1, ctx.num_inputs)):
        raise _error(ctx, "Scan-8 states need a batch axis and scan inputs a batch and a scanned axis",
                     fix="give states [batch, ...] and scan inputs [batch, steps, ...]")
    if ctx.has_input(0):
        lengths = ctx.constant_input(0)
        steps = ctx.input_shape(ctx.num_inputs - m)[1]
        if lengths is None or any(int(v) != steps for v in lengths.reshape(-1)):
            raise _error(ctx, "Scan-8 with sequence_lens shorter than the scanned axis is not supported",
                         fix="scan full-length sequences (leave sequence_lens empty), or export at opset 9+")
    names = list(ctx.node.input)
    states, scanned = names[1 : len(names) - m], names[len(names) - m :]
    batch = ctx.input_shape(len(names) - 1)[0]
    if batch == DYN:
        raise _error(ctx, "Scan-8 with a dynamic batch size", fix="give static input shapes (--input_shape)")
    steps = ctx.input_shape(len(names) - 1)[1]
    if batch < 1 or steps != DYN and batch * steps > MAX_STEPS:  # one unrolled scan per batch element
        raise _error(ctx, f"Scan-8 of batch {batch} x {steps} steps is not unrolled (1 to {MAX_STEPS} bodies in all)", fix="scan fewer steps or a smaller batch")
    per_batch = []
    for b in range(batch):
        pick = e.constant(b, np.int64)
        row = _scan(ctx, e, body, [e.one("Gather", [s, pick], axis=0) for s in states], [e.one("Gather", [s, pick], axis=0) for s in scanned], f"b{b}_")
        per_batch.append([e.one("Unsqueeze", [v, e.constant([0], np.int64)]) for v in row])
    results = [cols[0] if len(cols) == 1 else e.one("Concat", list(cols), axis=0) for cols in zip(*per_batch)]
    return [e.result(r) for r in results]
