"""Printers of the direct sliding-window kernels: depthwise convolution (register-blocked
along the output row, taps unrolled), pooling and transposed convolution (one work-item
per output element, the window loops unrolled by the compiler from literal bounds)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from irforge.backends.cpu.codegen.epilogue import Epilogue
from irforge.backends.opencl.codegen.common import Param, Shape, linear, numel, strides_of, unravel
from irforge.backends.opencl.codegen.gemm import activation_code

DEPTHWISE_BLOCK = 4
"""Outputs along x per work-item: neighbouring taps overlap, so loads are shared in cache."""


@dataclass(frozen=True)
class DepthwiseSpec:
    channels: int
    in_hw: tuple[int, int]
    out_hw: tuple[int, int]
    kernel: tuple[int, int]
    strides: tuple[int, int]
    dilations: tuple[int, int]
    pads: tuple[int, int]
    bias: bool
    epilogue: Epilogue

    def params(self) -> list[Param]:
        params = [Param("X", "float"), Param("Wt", "float")]
        params += [Param("bias", "float")] if self.bias else []
        params += [Param("res", "float")] if self.epilogue.residual else []
        return params + [Param("Y", "float", written=True)]

    def global_size(self, batch: int) -> tuple[int, int, int]:
        return (-(-self.out_hw[1] // DEPTHWISE_BLOCK), self.out_hw[0], batch * self.channels)


def depthwise_body(s: DepthwiseSpec) -> str:
    (h, w), (oh, ow), (kh, kw) = s.in_hw, s.out_hw, s.kernel
    r = DEPTHWISE_BLOCK
    accs = ", ".join(f"acc{i} = 0.0f" for i in range(r))
    taps = "\n".join(
        f"        {{ const int ix = (ox0 + {i}) * {s.strides[1]} - {s.pads[1]} + kx * {s.dilations[1]};"
        f" if (ix >= 0 && ix < {w}) acc{i} = mad(wv, xr[ix], acc{i}); }}"
        for i in range(r)
    )
    stores = []
    for i in range(r):
        stmt = [f"if (ox0 + {i} < {ow}) {{ float v = acc{i};"]
        stmt += ["v += bias[ch];"] if s.bias else []
        stmt.append(f"const int at = plane + oy * {ow} + ox0 + {i};")
        stmt += ["v += res[at];"] if s.epilogue.residual else []
        stmt += [activation_code(s.epilogue.activation, s.epilogue.params), "Y[at] = v; }"]
        stores.append("  " + " ".join(x for x in stmt if x))
    return f"""  const int ox0 = get_global_id(0) * {r}, oy = get_global_id(1), nc = get_global_id(2);
  const int ch = nc % {s.channels}, plane = nc * {oh * ow};
  __global const float* xp = X + nc * {h * w};
  __global const float* wp = Wt + ch * {kh * kw};
  float {accs};
  for (int ky = 0; ky < {kh}; ++ky) {{
    const int iy = oy * {s.strides[0]} - {s.pads[0]} + ky * {s.dilations[0]};
    if (iy < 0 || iy >= {h}) continue;
    __global const float* xr = xp + iy * {w};
    for (int kx = 0; kx < {kw}; ++kx) {{
      const float wv = wp[ky * {kw} + kx];
{taps}
    }}
  }}
""" + "\n".join(stores)


@dataclass(frozen=True)
class PoolSpec:
    shape: Shape
    """Input [N, C, *spatial]."""
    out: Shape
    kernel: Shape
    strides: Shape
    dilations: Shape
    begin: Shape
    end: Shape
    is_max: bool
    exclude_pad: bool


def _window_loops(kernel: Sequence[int]) -> tuple[str, str]:
    opens = "\n".join(f"  for (int k{d} = 0; k{d} < {k}; ++k{d}) {{" for d, k in enumerate(kernel))
    return opens, "  " + "}" * len(kernel)


def pool_body(s: PoolSpec) -> str:
    spatial = s.shape[2:]
    opens, closes = _window_loops(s.kernel)
    lines = ["  const int gid = get_global_id(0);", f"  if (gid >= {numel(s.out)}) return;", unravel("gid", s.out)]
    lines.append(f"  __global const float* xp = X + (c0 * {s.shape[1]} + c1) * {numel(spatial)};")
    lines.append("  float acc = -INFINITY;" if s.is_max else "  float acc = 0.0f; int count = 0;")
    lines.append(opens)
    inside, padded = [], []
    for d, (size, st, dl, b, e) in enumerate(zip(spatial, s.strides, s.dilations, s.begin, s.end)):
        lines.append(f"    const int i{d} = c{d + 2} * {st} - {b} + k{d} * {dl};")
        inside.append(f"i{d} >= 0 && i{d} < {size}")
        padded.append(f"i{d} >= {-b} && i{d} < {size + e}")
    at = linear([(f"i{d}", st) for d, st in enumerate(strides_of(spatial))])
    lines.append(f"    const bool inside = {' && '.join(inside)};")
    if s.is_max:
        # NaN propagates as in numpy's max
        lines.append(f"    if (inside) {{ const float v = xp[{at}]; if (v > acc || isnan(v)) acc = isnan(acc) ? acc : v; }}")
    else:
        lines.append(f"    if (inside) acc += xp[{at}];")
        lines.append("    count += inside;" if s.exclude_pad else f"    count += {' && '.join(padded)};")
    lines.append(closes)
    lines.append("  Y[gid] = acc;" if s.is_max else "  Y[gid] = acc / (float)count;")
    return "\n".join(lines)


@dataclass(frozen=True)
class DeconvSpec:
    shape: Shape
    out: Shape
    weights: Shape
    """[C_in, O / group, *kernel]"""
    group: int
    strides: Shape
    dilations: Shape
    begin: Shape
    bias: bool


def deconv_body(s: DeconvSpec) -> str:
    spatial = s.shape[2:]
    c, og, kernel = s.shape[1], s.weights[1], s.weights[2:]
    cg = c // s.group
    opens, closes = _window_loops(kernel)
    lines = ["  const int gid = get_global_id(0);", f"  if (gid >= {numel(s.out)}) return;", unravel("gid", s.out)]
    lines.append(f"  const int g = c1 / {og}, ol = c1 % {og};")
    lines.append("  float acc = 0.0f;")
    lines.append(f"  for (int ic = g * {cg}; ic < (g + 1) * {cg}; ++ic) {{")
    lines.append(f"    __global const float* xp = X + (c0 * {c} + ic) * {numel(spatial)};")
    lines.append(f"    __global const float* wp = Wt + (ic * {og} + ol) * {numel(kernel)};")
    lines.append(opens)
    checks = []
    for d, (size, st, dl, b) in enumerate(zip(spatial, s.strides, s.dilations, s.begin)):
        lines.append(f"    const int t{d} = c{d + 2} + {b} - k{d} * {dl}, i{d} = t{d} / {st};")
        checks.append(f"t{d} >= 0 && t{d} % {st} == 0 && i{d} < {size}")
    at = linear([(f"i{d}", st) for d, st in enumerate(strides_of(spatial))])
    kat = linear([(f"k{d}", st) for d, st in enumerate(strides_of(kernel))])
    lines.append(f"    if ({' && '.join(checks)}) acc = mad(xp[{at}], wp[{kat}], acc);")
    lines.append(closes)
    lines.append("  }")
    lines.append("  Y[gid] = acc" + (" + bias[c1];" if s.bias else ";"))
    return "\n".join(lines)
