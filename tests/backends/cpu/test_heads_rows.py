"""The fused attention kernel writing its [B, H, L, Dv] output as [B, L, H, Dv] rows for the
merged-heads output projection, which then runs as one plain [B * L, H * Dv] GEMM
(`attention.HEADS_ROWS`, `linear.merged_heads`): against the reference interpreter, the
arena NaN-filled, on (1 and 2 threads) and off; a batch of 2 (the head and image split of the
batch index), rows in several blocks with a tail block, a mask, a K of one block (the
residual stored over) and of two (`fc_kc`), columns that leave tails. A head's columns or an
image's rows put at the wrong place, or a row stride of Dv, fail it; an attention output
that something else reads too, or whose block of outputs does not fit `STAGED_MAX`, keeps
the op's layout. The exporter's NaN guard `Where(IsNaN(y), 0, y)` after the attention is the
kernel's (`ops.attention.NAN_GUARD`): a NaN row left NaN fails it."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import attention
from irforge.backends.cpu.ops import attention as ops_attention
from irforge.backends.cpu.ops import linear
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Eltwise, MatMul, Reduce
from irforge.dialects.nn.elementwise import Select
from irforge.dialects.nn.indexing import IsNaN
from irforge.dialects.nn import ScaledDotProductAttention as SDPA
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import rand


def _block(batch: int, h: int, l: int, s: int, d: int, dv: int, n: int, masked: bool, also_out: bool = False,  # type: ignore[no-untyped-def]
           guarded: bool = False):
    """r + (sum over heads of attention(q, k, v [, mask]) @ Wo[H, Dv, N]) + bias; `guarded`: the
    attention output through the exporter's `Where(IsNaN(y), 0, y)`, a query row NaN and one
    row masked out whole (NaN rows, made 0 by the guard)."""
    b = ModelBuilder()
    shapes = {"q": (batch, h, l, d), "k": (batch, h, s, d), "v": (batch, h, s, dv), "r": (batch, l, n)}
    feeds = {name: rand(*shape, seed=i + 1) for i, (name, shape) in enumerate(shapes.items())}
    values = {name: b.input(name, shape) for name, shape in shapes.items()}
    args = [values["q"], values["k"], values["v"]]
    if masked:
        mask = rand(batch, 1, l, s, seed=9, low=-4.0, high=1.0)
        mask.reshape(-1)[3::7] = -np.inf  # no row all -inf
        if guarded:
            mask[-1, 0, 4, :] = -np.inf  # but this one
        feeds["m"] = mask
        args.append(b.input("m", mask.shape))
    if guarded:
        feeds["q"][0, -1, 2, 1] = np.nan
        zero = b.constant(np.zeros((), np.float32))
    out = b.add(SDPA, args).output
    if guarded:
        out = b.add(Select, [b.add(IsNaN, [out]).output, zero, out]).output
    bias = b.constant(rand(n, seed=8))  # before the MatMul, as exporters place them: lowered first
    p = b.add(MatMul, [out, b.constant(rand(h, dv, n, seed=7))]).output
    y = b.add(Reduce, [p], operation="sum", axes=[1], keep_dims=False).output
    y = b.add(Eltwise, [y, bias], operation="sum").output
    y = b.add(Eltwise, [values["r"], y], operation="sum").output
    b.output(y, "y")
    if also_out:
        b.output(out, "attention")
    return b.finish(), feeds


def _kernels(compiled) -> list[str]:  # type: ignore[no-untyped-def]
    return [p.function for p in compiled._executable.program.phases]


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "HEADS_MIN_D", 1)  # the merged projection at these small D
    monkeypatch.setattr(attention, "BLOCK_FLOATS", 8 * attention.row_stride(45))  # blocks of 6 rows (MR): 29 = 4 x 6 + 5


CASES = [
    (2, 3, 29, 45, 16, 16, 20, True, False),  # K = 48: one block, C starts as the residual
    (2, 3, 29, 45, 16, 16, 20, True, True),  # the NaN guard absorbed
    (1, 4, 13, 7, 8, 24, 45, False, False),  # 45 columns: a tail
    (2, 2, 29, 45, 16, 200, 24, False, False),  # K = 400 > FC_KC: two K blocks, the residual in the epilogue
]


@pytest.mark.parametrize(
    "batch,h,l,s,d,dv,n,masked,guarded,on,threads",
    [case + (True, threads) for case in CASES for threads in (1, 2)] + [case + (False, 1) for case in CASES[1::2]],
)
def test_heads_rows_match_the_reference(batch, h, l, s, d, dv, n, masked, guarded, on, threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(attention, "HEADS_ROWS", on)
    model, feeds = _block(batch, h, l, s, d, dv, n, masked, guarded=guarded)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    kernels = _kernels(compiled)
    assert sum(k.endswith("_attention") for k in kernels) == 1 and sum(k.endswith("_gemm") for k in kernels) == 1
    assert len(kernels) == 2  # the guard's IsNaN and Select, the bias and residual Adds: no phases of their own
    matches_reference(compiled, model, feeds)


def test_the_layout_changes_only_for_the_merged_projection(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """On: other kernels than off (the spec differs); an attention output read by something else
    too (a model output here) keeps [B, H, L, Dv], the kernels as off."""
    names, staged = {}, attention.STAGED_MAX
    for on in (True, False):
        monkeypatch.setattr(attention, "HEADS_ROWS", on)
        model, feeds = _block(2, 3, 29, 45, 16, 16, 20, True)
        compiled = compile_model(model, threads=1, cache_dir=False)
        names[on] = _kernels(compiled)
        compiled.close()
    assert names[True] != names[False]
    monkeypatch.setattr(attention, "HEADS_ROWS", True)
    monkeypatch.setattr(attention, "STAGED_MAX", 16)  # a block's rows x 16 outputs do not fit: as off
    model, feeds = _block(2, 3, 29, 45, 16, 16, 20, True)
    compiled = compile_model(model, threads=1, cache_dir=False)
    assert _kernels(compiled) == names[False]
    compiled.close()
    monkeypatch.setattr(attention, "STAGED_MAX", staged)
    model, feeds = _block(2, 3, 29, 45, 16, 16, 20, True, also_out=True)
    compiled = compile_model(model, threads=2, cache_dir=False)
    assert [k for k in _kernels(compiled) if k.endswith("_attention")] == [k for k in names[False] if k.endswith("_attention")]
    matches_reference(compiled, model, feeds)


@pytest.mark.parametrize("absorbed", [True, False])
def test_the_nan_guard_alone(absorbed, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`ops.attention.NAN_GUARD` on and off, without the projection (the attention's output is
    the guard's, [B, H, L, Dv]): NaN rows stored as 0 by the kernel, or by the guard's phases."""
    monkeypatch.setattr(ops_attention, "NAN_GUARD", absorbed)
    b = ModelBuilder()
    shapes = {"q": (2, 3, 29, 16), "k": (2, 3, 45, 16), "v": (2, 3, 45, 8)}
    feeds = {name: rand(*shape, seed=i + 1) for i, (name, shape) in enumerate(shapes.items())}
    feeds["q"][1, 2, 7, 0] = np.nan
    zero = b.constant(np.zeros((), np.float32))
    out = b.add(SDPA, [b.input(name, shape) for name, shape in shapes.items()]).output
    b.output(b.add(Select, [b.add(IsNaN, [out]).output, zero, out]).output, "y")
    model = b.finish()
    compiled = compile_model(model, threads=2, cache_dir=False)
    assert len(_kernels(compiled)) == (1 if absorbed else 3)
    matches_reference(compiled, model, feeds)
