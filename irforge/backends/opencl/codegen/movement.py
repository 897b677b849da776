"""Printers of the data-movement kernels: an index map (each output element copied from an
input element found from its coordinates, or a fill value), Gather, and Resample.

Data movement copies bits, so tensors are accessed as unsigned integers of their element
size (`common.storage_type`): one kernel serves f32, f16, i64 and bool alike.
"""

from __future__ import annotations

from collections.abc import Sequence

from irforge.backends.opencl.codegen.common import Shape, linear, numel, strides_of, unravel


def map_body(shape: Shape, source: str, target: str = "gid", inside: str | None = None, fill: str = "0") -> str:
    """For every element (coordinates `c{i}`) of `shape`: y[target] = x[source], or `fill`
    where `inside` is false."""
    value = f"({inside}) ? x[{source}] : {fill}" if inside else f"x[{source}]"
    return "\n".join([
        "  const int gid = get_global_id(0);",
        f"  if (gid >= {numel(shape)}) return;",
        unravel("gid", shape),
        f"  y[{target}] = {value};",
    ])


def mirrored(coord: str, size: int, mode: str) -> str:
    """The source coordinate of padded coordinate `coord` (already shifted by the begin pad)."""
    if mode == "edge":
        return f"clamp({coord}, 0, {size - 1})"
    if mode == "reflect":
        return f"({coord} < 0 ? -({coord}) : ({coord} >= {size} ? {2 * (size - 1)} - ({coord}) : {coord}))"
    return f"({coord} < 0 ? -({coord}) - 1 : ({coord} >= {size} ? {2 * size - 1} - ({coord}) : {coord}))"


def gather_body(data: Shape, indices: Shape, axis: int, batch_dims: int, index_type: str) -> str:
    """out[batch, before, i, after] = data[batch, before, indices[batch, i], after]; negative
    indices count from the end, and out-of-range ones are clamped (the device cannot raise;
    the reference interpreter reports them)."""
    index_rank = len(indices) - batch_dims
    out = data[:axis] + indices[batch_dims:] + data[axis + 1:]
    lines = ["  const int gid = get_global_id(0);", f"  if (gid >= {numel(out)}) return;", unravel("gid", out)]
    batch = [(f"c{d}", s) for d, s in zip(range(batch_dims), strides_of(indices))]
    own = [(f"c{axis + j}", s) for j, s in zip(range(index_rank), strides_of(indices)[batch_dims:])]
    lines.append(f"  {index_type} i = ind[{linear(batch + own)}];")
    lines.append(f"  i = i < 0 ? i + {data[axis]} : i; i = clamp(i, ({index_type})0, ({index_type}){data[axis] - 1});")
    strides = strides_of(data)
    terms = [(f"c{d}", strides[d]) for d in range(axis)] + [("(int)i", strides[axis])]
    terms += [(f"c{axis + index_rank + j}", strides[axis + 1 + j]) for j in range(len(data) - axis - 1)]
    lines.append(f"  y[gid] = x[{linear(terms)}];")
    return "\n".join(lines)


def resample_body(shape: Shape, out: Shape, taps: Sequence[int | None]) -> str:
    """Interpolation as a weighted sum over the product of per-axis taps; `taps[a]` is the
    tap count of a resampled axis (its tables are `idx{a}`/`wt{a}`, [out, taps]) or None."""
    strides = strides_of(shape)
    lines = ["  const int gid = get_global_id(0);", f"  if (gid >= {numel(out)}) return;", unravel("gid", out), "  float acc = 0.0f;"]
    axes = [a for a, t in enumerate(taps) if t is not None]
    for a in axes:
        lines.append(f"  for (int t{a} = 0; t{a} < {taps[a]}; ++t{a}) {{")
        lines.append(f"    const int s{a} = idx{a}[c{a} * {taps[a]} + t{a}]; const float w{a} = wt{a}[c{a} * {taps[a]} + t{a}];")
    at = linear([(f"s{a}" if taps[a] is not None else f"c{a}", strides[a]) for a in range(len(shape))])
    weight = " * ".join(f"w{a}" for a in axes) or "1.0f"
    lines.append(f"    acc += {weight} * x[{at}];")
    lines.append("  " + "}" * len(axes))
    lines.append("  y[gid] = acc;")
    return "\n".join(lines)
