"""1x1 layers over small planes (at most `linear.PACK_PLANE_MAX` positions: 14x14, 7x7) pack B
per block inside their GEMM (`linear.SMALL_PLANE_BLOCKS`, `GemmSpec.b_blocks`) instead of by a
whole-plane copy first: the plane's tails (a 4-column tail at 196 positions, one column at 49,
a masked vector at 169, a masked panel alone at 25), several K blocks, M tails, bias, a
residual read or accumulated in place, ReLU; 1 and 2 threads, AVX2's and AVX-512's tiles,
the arena NaN-filled; bit-equal to the whole-plane copy and the reference's numbers. A
depthwise layer's panels and a squeeze-excite scale keep the whole copy."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import gemm
from irforge.backends.cpu.ops import linear
from irforge.dialects.nn import Convolution, Eltwise, ReLU
from tests.backends.cpu.conftest import matches_reference
from tests.backends.cpu.test_b_blocks import block_copies  # noqa: F401  (the fixture)
from tests.backends.cpu.test_gemm_edges import tile  # noqa: F401  (the fixture: AVX2's and AVX-512's tiles)
from tests.helpers import ModelBuilder, rand


def _model(c: int, size: int, o: int, residual: str):  # type: ignore[no-untyped-def]
    """x -> 1x1 conv (bias) [+ r] -> ReLU; `residual`: "" none, "input" a model input (read
    by the epilogue), "conv" another layer's output (accumulated in place)."""
    b = ModelBuilder()
    x = b.input("x", (1, c, size, size))
    y = b.add(Convolution, [x, b.constant(rand(o, c, 1, 1, seed=1)), b.constant(rand(o, seed=2))], group=1).output
    if residual == "input":
        y = b.add(Eltwise, [y, b.input("r", (1, o, size, size))], operation="sum").output
    elif residual == "conv":
        r = b.add(Convolution, [x, b.constant(rand(o, c, 1, 1, seed=5))], group=1).output
        y = b.add(Eltwise, [y, r], operation="sum").output
    b.output(b.add(ReLU, [y]).output, "y")
    return b.finish()


def _run(model, feeds, threads: int):  # type: ignore[no-untyped-def]
    compiled = compile_model(model, threads=threads, cache_dir=False)
    compiled._executable.arena[:] = np.nan
    try:
        return compiled(feeds)["y"]
    finally:
        compiled.close()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c,size,o,residual", [
    (256, 14, 64, "input"),  # 196 = 12 x 16 + 4: a column tail; M = 64 (an M tail at MR = 6)
    (500, 7, 33, "conv"),  # 49 = 3 x 16 + 1; 2 K blocks (384 + 116); accumulated in place
    (90, 13, 20, ""),  # 169 = 10 x 16 + 9: a masked tail vector
    (800, 5, 40, "input"),  # 25: a masked panel alone; 3 K blocks
    (70, 14, 1030, ""),  # 1030 rows: NC blocks of 8 panels over 13 panels, many M blocks
])
def test_small_plane_packed_per_block(block_copies, tile, c, size, o, residual, threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    model = _model(c, size, o, residual)
    feeds = {"x": rand(1, c, size, size)}
    if residual == "input":
        feeds["r"] = rand(1, o, size, size, seed=4)
    monkeypatch.setattr(linear, "SMALL_PLANE_BLOCKS", False)
    whole = _run(model, feeds, threads)
    assert not block_copies
    monkeypatch.setattr(linear, "SMALL_PLANE_BLOCKS", True)
    got = _run(model, feeds, threads)
    assert block_copies
    np.testing.assert_array_equal(got, whole)  # the same products in the same order
    compiled = compile_model(model, threads=threads, cache_dir=False)
    matches_reference(compiled, model, feeds, atol=1e-4)


def test_stack_block_aligned(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The thread's stack block (`gemm.B_WORKSPACE` off) is 64-byte aligned
    (`gemm.B_COPY_ALIGN`): the micro-kernels' 16-lane loads of it then never straddle cache
    lines. In the workspace (the default) each thread's block starts on a 64-byte line: the
    workspace does (after the arena, rounded up to 64) and a block is whole lines."""
    from llvmlite import ir

    in_workspace = gemm.GemmSpec(m=64, n=196, k=256, a_panel=True, ldb=196, ldc=196, b_blocks=True)
    assert in_workspace.workspace and in_workspace.workspace_bytes() % 64 == 0
    monkeypatch.setattr(gemm, "B_WORKSPACE", False)
    spec = gemm.GemmSpec(m=64, n=196, k=256, a_panel=True, ldb=196, ldc=196, b_blocks=True)
    module = ir.Module()
    gemm.gemm_kernel(module, spec, "g")
    allocas = [line for line in str(module).splitlines() if "alloca [" in line]
    assert allocas and all("align 64" in line for line in allocas)
    monkeypatch.setattr(gemm, "B_COPY_ALIGN", 0)
    module = ir.Module()
    gemm.gemm_kernel(module, spec, "g")
    assert not any("align 64" in line for line in str(module).splitlines() if "alloca [" in line)


@pytest.mark.parametrize("threads", [1, 2])
def test_depthwise_panels_keep_their_path(block_copies, threads) -> None:  # type: ignore[no-untyped-def]
    """A depthwise layer writing the 1x1 layer's B panels (`depthwise.PANEL_OUTPUT`) is read as
    those panels: no block copy."""
    b = ModelBuilder()
    x = b.input("x", (1, 32, 14, 14))
    d = b.add(Convolution, [x, b.constant(rand(32, 1, 3, 3, seed=1)), b.constant(rand(32, seed=2))], group=32,
              pads_begin=[1, 1], pads_end=[1, 1]).output
    y = b.add(Convolution, [d, b.constant(rand(48, 32, 1, 1, seed=3)), b.constant(rand(48, seed=4))], group=1).output
    b.output(y, "y")
    model = b.finish()
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert not block_copies
    matches_reference(compiled, model, {"x": rand(1, 32, 14, 14)})
