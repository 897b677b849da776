"""Printers of the reductions and normalisations: one work-item per kept element, loops
over the reduced axes (literal bounds and strides), one pass per statistic.

Every coordinate is named after its axis (`c{axis}`), kept axes from the work-item index,
reduced axes from the loops, so a pass body can address the element (`x[off]`) and any
per-channel operand (`c1`).
"""

from __future__ import annotations

from collections.abc import Sequence

from irforge.backends.opencl.codegen.common import Shape, linear, numel, strides_of

Pass = str
"""Statements run for every reduced element, with `v` = x[off] and all `c{axis}` defined."""


def kept_prologue(shape: Shape, axes: Sequence[int]) -> str:
    """Bounds check and the kept coordinates of work-item `gid`."""
    kept = [a for a in range(len(shape)) if a not in axes]
    lines = ["  const int gid = get_global_id(0);", f"  if (gid >= {numel([shape[a] for a in kept])}) return;", "  int rest = gid;"]
    for a in reversed(kept):
        lines.append(f"  const int c{a} = rest % {shape[a]}; rest /= {shape[a]};")
    return "\n".join(lines)


def reduce_pass(shape: Shape, axes: Sequence[int], body: Pass, load: bool = True) -> str:
    """Nested loops over `axes` running `body` per element (`off` its index)."""
    opens = "\n".join(f"  for (int c{a} = 0; c{a} < {shape[a]}; ++c{a}) {{" for a in axes)
    off = linear([(f"c{a}", s) for a, s in enumerate(strides_of(shape))])
    value = "    const float v = x[off];\n" if load else ""
    return f"{opens}\n    const int off = {off};\n{value}    {body}\n  " + "}" * len(axes)


def kept_count(shape: Shape, axes: Sequence[int]) -> int:
    return numel([shape[a] for a in range(len(shape)) if a not in axes])


REDUCE_INIT = {
    "max": "-INFINITY", "min": "INFINITY", "prod": "1.0f", "log_sum_exp": "-INFINITY",
}
# NaN propagates through max/min as in numpy
REDUCE_STEP = {
    "mean": "acc += v;", "sum": "acc += v;", "sum_square": "acc += v * v;", "l2": "acc += v * v;",
    "l1": "acc += fabs(v);", "log_sum": "acc += v;", "prod": "acc *= v;",
    "max": "if (v > acc || isnan(v)) acc = isnan(acc) ? acc : v;",
    "min": "if (v < acc || isnan(v)) acc = isnan(acc) ? acc : v;",
    "log_sum_exp": "if (v > acc || isnan(v)) acc = isnan(acc) ? acc : v;",
}
REDUCE_FINISH = {
    "mean": "acc / {count}.0f", "l2": "sqrt(acc)", "log_sum": "log(acc)", "log_sum_exp": "log(sum) + shift",
}


def reduce_body(shape: Shape, axes: Sequence[int], operation: str) -> str:
    count = numel([shape[a] for a in axes])
    lines = [kept_prologue(shape, axes), f"  float acc = {REDUCE_INIT.get(operation, '0.0f')};"]
    lines.append(reduce_pass(shape, axes, REDUCE_STEP[operation]))
    if operation == "log_sum_exp":
        # shift by the max so exp neither overflows nor underflows to all zeros
        lines.append("  const float shift = isfinite(acc) ? acc : 0.0f; float sum = 0.0f;")
        lines.append(reduce_pass(shape, axes, "sum += exp(v - shift);"))
    result = REDUCE_FINISH.get(operation, "acc").format(count=count)
    lines.append(f"  y[gid] = {result};")
    return "\n".join(lines)


def argmax_body(shape: Shape, axis: int, is_max: bool, last: bool) -> str:
    """The first (or, scanning backwards, the last) extreme index; NaN wins, as in numpy."""
    better = "v > best" if is_max else "v < best"
    size = shape[axis]
    scan = f"for (int c{axis} = {size - 1}; c{axis} >= 0; --c{axis})" if last else f"for (int c{axis} = 0; c{axis} < {size}; ++c{axis})"
    off = linear([(f"c{a}", s) for a, s in enumerate(strides_of(shape))])
    return f"""{kept_prologue(shape, [axis])}
  float best = 0.0f; long index = -1;
  {scan} {{
    const float v = x[{off}];
    if (index < 0 || (!isnan(best) && (isnan(v) || {better}))) {{ best = v; index = c{axis}; }}
  }}
  y[gid] = index < 0 ? 0 : index;"""


def softmax_body(shape: Shape, axis: int, log: bool) -> str:
    out = "(v - shift) - log(sum)" if log else "exp(v - shift) / sum"
    return "\n".join([
        kept_prologue(shape, [axis]),
        "  float acc = -INFINITY;",
        reduce_pass(shape, [axis], REDUCE_STEP["max"]),
        # a row of -inf stays 0 / 0 = NaN; one holding +inf is NaN throughout (ONNX's x - max(x))
        "  const float shift = acc == -INFINITY ? 0.0f : acc; float sum = 0.0f;",
        reduce_pass(shape, [axis], "sum += exp(v - shift);"),
        reduce_pass(shape, [axis], f"y[off] = {out};"),
    ])


def mvn_body(shape: Shape, axes: Sequence[int], variance: bool, eps: str, inside: bool) -> str:
    count = numel([shape[a] for a in axes])
    lines = [kept_prologue(shape, axes), "  float sum = 0.0f;", reduce_pass(shape, axes, "sum += v;"), f"  const float mean = sum / {count}.0f;"]
    if not variance:
        lines.append(reduce_pass(shape, axes, "y[off] = v - mean;"))
        return "\n".join(lines)
    lines += ["  float sq = 0.0f;", reduce_pass(shape, axes, "sq += (v - mean) * (v - mean);")]
    denominator = f"sqrt(sq / {count}.0f + {eps})" if inside else f"(sqrt(sq / {count}.0f) + {eps})"
    lines += [f"  const float d = {denominator};", reduce_pass(shape, axes, "y[off] = (v - mean) / d;")]
    return "\n".join(lines)


def l2_normalize_body(shape: Shape, axes: Sequence[int], bias: str, scale: str | None) -> str:
    """x / sqrt(sum of squares over `axes` + bias), times scale[c1] if given (Normalize, GRN)."""
    factor = f" * {scale}" if scale else ""
    return "\n".join([
        kept_prologue(shape, axes),
        "  float sq = 0.0f;",
        reduce_pass(shape, axes, "sq += v * v;"),
        f"  const float d = sqrt(sq + {bias});",
        reduce_pass(shape, axes, f"y[off] = v / d{factor};"),
    ])


def lrn_body(shape: Shape, axes: Sequence[int], before: int, after: int, alpha: str, bias: str, beta: str) -> str:
    strides = strides_of(shape)
    lines = [kept_prologue(shape, ()), "  float sq = 0.0f;"]
    lines += [f"  for (int w{a} = {-before}; w{a} <= {after}; ++w{a}) {{" for a in axes]
    inside = " && ".join(f"c{a} + w{a} >= 0 && c{a} + w{a} < {shape[a]}" for a in axes)
    shift = linear([(f"w{a}", strides[a]) for a in axes])
    lines.append(f"    if ({inside}) {{ const float v = x[gid + {shift}]; sq += v * v; }}")
    lines.append("  " + "}" * len(axes))
    lines.append(f"  y[gid] = x[gid] / pow({bias} + {alpha} * sq, {beta});")
    return "\n".join(lines)
