"""The tiled GEMM printer behind Convolution (implicit GEMM), FullyConnected and MatMul.

C[M, N] = A[M, K] @ B[K, N] per batch (grid axis 2), with a fused epilogue. A work-group of
LX x LY work-items computes a TM x TN tile of C (TM = LY * RM, TN = LX * RN): per TK-deep
slice of K it stages A and B tiles in local memory (coalesced: consecutive work-items load
consecutive k of A and consecutive n of B), then every work-item accumulates an RM x RN
register block, its RN columns as RN / V vectors of the device's preferred float width V
(`floatV` multiply-adds on local-memory vector loads). Tiles are zero-filled past the edges,
so any M, N, K work; stores are bounds-checked.

The operands are described by C snippets, which is what makes one printer serve three ops:
`a_load` is A(row, k), `b_load` statements set `v` to B(k, col) (for a convolution: the
im2col gather of the input, never materialised), `c_index` places C(row, col), and the
`prologue` computes per-batch bases from `bz`. The epilogue is the CPU backend's: bias
(per row or per column), then the residual, then ReLU/Clamp, as the unfused graph orders them.
"""

from __future__ import annotations

from dataclasses import dataclass

from irforge.backends.cpu.codegen.epilogue import Epilogue
from irforge.backends.opencl.codegen.common import Param, flit, round_up
from irforge.backends.opencl.codegen.pointwise import UNARY
from irforge.backends.opencl.device import DeviceInfo


@dataclass(frozen=True)
class Tiles:
    lx: int
    ly: int
    rm: int
    rn: int
    vw: int
    tk: int

    @property
    def tm(self) -> int:
        return self.ly * self.rm

    @property
    def tn(self) -> int:
        return self.lx * self.rn


def choose_tiles(info: DeviceInfo, m: int, n: int) -> Tiles:
    """Register blocks from the preferred vector width; the work-group as large as the
    device allows (16 x 16) but no larger than the problem needs; TK so both tiles fit in
    half the local memory (two work-groups per compute unit can then be resident)."""
    vw = info.vector_width
    rn = vw * max(1, 4 // vw)
    rm = 4 if m >= 4 else 1
    lx, ly = 16, 16
    while lx > 1 and (lx // 2) * rn >= n:
        lx //= 2
    while ly > 1 and (ly // 2) * rm >= m:
        ly //= 2
    while lx * ly > info.max_work_group_size:
        if lx >= ly:
            lx //= 2
        else:
            ly //= 2
    tk = 16
    while tk > 1 and 4 * tk * (ly * rm + lx * rn) > info.local_mem_size // 2:
        tk //= 2
    return Tiles(lx, ly, rm, rn, vw, tk)


@dataclass(frozen=True)
class GemmSpec:
    m: int
    n: int
    k: int
    batches: int
    prologue: str
    """Statements computing the bases the snippets use, from `bz` (the batch index)."""
    a_load: str
    """A(row, k): an expression of `row`, `k` and the pointer `A`."""
    b_load: str
    """Statements setting `v` to B(k, col), from `k`, `col` and the pointer `B`."""
    c_index: str
    """The element index of C(row, col) in `Y` (and in the residual)."""
    bias_index: str | None
    epilogue: Epilogue
    tiles: Tiles

    def params(self) -> list[Param]:
        params = [Param("A", "float"), Param("B", "float")]
        if self.bias_index is not None:
            params.append(Param("bias", "float"))
        if self.epilogue.residual:
            params.append(Param("res", "float"))
        return params + [Param("Y", "float", written=True)]

    def global_size(self) -> tuple[int, int, int]:
        t = self.tiles
        return (round_up(self.n, t.tn) // t.tn * t.lx, round_up(self.m, t.tm) // t.tm * t.ly, self.batches)

    def local_size(self) -> tuple[int, int, int]:
        return (self.tiles.lx, self.tiles.ly, 1)


def activation_code(kind: str, params: tuple[float, ...], v: str = "v") -> str:
    """The statement applying an epilogue activation to `v` (as the reference kernels)."""
    if kind == "relu":
        slope = params[0] if params else 0.0
        return f"{v} = {v} >= 0.0f ? {v} : {v} * {flit(slope)};"
    if kind == "clamp":
        low, high = flit(params[0]), flit(params[1])
        return f"{v} = {v} < {low} ? {low} : ({v} > {high} ? {high} : {v});"
    if kind.startswith("act."):
        # the CPU's shared `absorb_epilogue` folds FUSED_KINDS activations into the producer:
        # the same expressions as the pointwise kernels, x/A/B bound to v and the op's params
        alpha, beta = (tuple(params) + (0.0, 0.0))[:2]
        return f"{{ const float x = {v}, A = {flit(alpha)}, B = {flit(beta)}; {v} = {UNARY[kind[4:]]}; }}"
    return ""


def _vector(t: Tiles) -> str:
    return "float" if t.vw == 1 else f"float{t.vw}"


def _load_tiles(spec: GemmSpec) -> str:
    t = spec.tiles
    threads = t.lx * t.ly
    return f"""    for (int i = tid; i < {t.tm * t.tk}; i += {threads}) {{
      const int mm = i / {t.tk}, kk = i % {t.tk};
      const int row = m0 + mm, k = k0 + kk;
      As[kk * {t.tm} + mm] = (row < {spec.m} && k < {spec.k}) ? ({spec.a_load}) : 0.0f;
    }}
    for (int i = tid; i < {t.tk * t.tn}; i += {threads}) {{
      const int kk = i / {t.tn}, nn = i % {t.tn};
      const int k = k0 + kk, col = n0 + nn;
      float v = 0.0f;
      if (k < {spec.k} && col < {spec.n}) {{
{spec.b_load}
      }}
      Bs[kk * {t.tn} + nn] = v;
    }}
    barrier(CLK_LOCAL_MEM_FENCE);"""


def _multiply(t: Tiles) -> str:
    vec, nv = _vector(t), t.rn // t.vw
    lines = [f"      const float a{i} = As[kk * {t.tm} + ty * {t.rm} + {i}];" for i in range(t.rm)]
    for j in range(nv):
        at = f"kk * {t.tn} + tx * {t.rn} + {j * t.vw}"
        load = f"Bs[{at}]" if t.vw == 1 else f"vload{t.vw}(0, Bs + {at})"
        lines.append(f"      const {vec} b{j} = {load};")
    for i in range(t.rm):
        for j in range(nv):
            lines.append(f"      acc{i}_{j} = mad(({vec})(a{i}), b{j}, acc{i}_{j});")
    return "\n".join(lines)


def _store(spec: GemmSpec) -> str:
    t = spec.tiles
    ep = spec.epilogue
    lines = []
    for i in range(t.rm):
        for j in range(t.rn // t.vw):
            for lane in range(t.vw):
                value = f"acc{i}_{j}" if t.vw == 1 else f"acc{i}_{j}.s{lane:x}"
                stmt = [f"const int row = m0 + ty * {t.rm} + {i}, col = n0 + tx * {t.rn} + {j * t.vw + lane};"]
                stmt.append(f"if (row < {spec.m} && col < {spec.n}) {{ float v = {value};")
                if spec.bias_index is not None:
                    stmt.append(f"v += bias[{spec.bias_index}];")
                stmt.append(f"const int at = {spec.c_index};")
                if ep.residual:
                    stmt.append("v += res[at];")
                stmt.append(activation_code(ep.activation, ep.params))
                stmt.append("Y[at] = v; }")
                lines.append("  { " + " ".join(s for s in stmt if s) + " }")
    return "\n".join(lines)


def gemm_body(spec: GemmSpec) -> str:
    t = spec.tiles
    vec, nv = _vector(t), t.rn // t.vw
    accs = ", ".join(f"acc{i}_{j} = 0.0f" for i in range(t.rm) for j in range(nv))
    return f"""  const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * {t.lx} + tx;
  const int n0 = get_group_id(0) * {t.tn}, m0 = get_group_id(1) * {t.tm}, bz = get_group_id(2);
{spec.prologue}
  __local float As[{t.tk * t.tm}];
  __local float Bs[{t.tk * t.tn}];
  {vec} {accs};
  for (int k0 = 0; k0 < {spec.k}; k0 += {t.tk}) {{
{_load_tiles(spec)}
    for (int kk = 0; kk < {t.tk}; ++kk) {{
{_multiply(t)}
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
{_store(spec)}"""


def gemm_attributes(spec: GemmSpec) -> str:
    return f"__attribute__((reqd_work_group_size({spec.tiles.lx}, {spec.tiles.ly}, 1)))"
