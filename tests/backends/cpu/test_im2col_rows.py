"""im2col of output rows wider than a vector (`conv._im2col_row`): where the same thread
writes the next row too, a row's tail (from a panel's column 0) and the next row's head are
one plain store, and that row stores no head of its own (`conv.PLAIN_TAIL_STORES`); the
last row of a thread's range and of the plane stays masked (the next thread's rows, the
last panel's zero columns). Against the reference with the arena NaN-filled, threads
splitting the unfolded rows or (`by_positions`, 28+ output rows) the output rows, 1 to 3
threads, AVX2's 16-wide and AVX-512's 32-wide panels, on and off."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import conv as conv_codegen
from irforge.dialects.nn import Convolution
from tests.backends.cpu.conftest import matches_reference, one_op_model
from tests.helpers import rand

CASES = [
    # x shape, w shape, props: im2col rows of more than 16 outputs
    ((1, 8, 147, 147), (24, 8, 1, 1), dict(strides=[2, 2])),  # keras Xception's residual 1x1 s2: 74x74
    ((1, 6, 76, 76), (10, 6, 2, 2), dict(strides=[2, 2])),  # 38x38 (one tap per phase: not on phase planes)
    ((2, 5, 41, 45), (7, 5, 1, 1), dict(strides=[2, 2])),  # batch 2, 21x23
    ((1, 4, 60, 37), (6, 4, 2, 2), dict(strides=[2, 2], pads_begin=[0, 1], pads_end=[0, 0])),  # 30x19, a pad column
]


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("x_shape,w_shape,props", CASES)
def test_wide_rows(x_shape, w_shape, props, threads, on, panels, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(conv_codegen, "PLAIN_TAIL_STORES", on)
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1), rand(w_shape[0], seed=2)], **props)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert "im2col" in [p.tag for p in compiled._executable.program.phases]
    matches_reference(compiled, model, {"x0": rand(*x_shape, seed=3)})


@pytest.mark.parametrize("ahead", [0, 4, 300])  # 300: prefetches far past the input's end
@pytest.mark.parametrize("threads", [1, 2])
def test_row_prefetch(ahead, threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A 1x1 strided im2col prefetches each input row `ROW_PREFETCH_PLANES` channels ahead
    (ResNet's 56 -> 28 downsample shape, 256 -> 40 channels here); only prefetches: the
    same outputs at any distance."""
    from llvmlite import ir

    from irforge.backends.cpu.codegen.conv import ConvGeometry

    monkeypatch.setattr(conv_codegen, "ROW_PREFETCH_PLANES", ahead)
    g = ConvGeometry(1, 256, 56, 56, 1, 1, 28, 28, (2, 2), (1, 1), (0, 0), 1)
    module = ir.Module()
    conv_codegen.im2col_kernel(module, g, "im", by_positions=True)
    assert ("llvm.prefetch" in str(module)) == bool(ahead)
    x_shape, w_shape = (1, 256, 56, 56), (40, 256, 1, 1)
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1), rand(40, seed=2)], strides=[2, 2])
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert "im2col" in [p.tag for p in compiled._executable.program.phases]
    matches_reference(compiled, model, {"x0": rand(*x_shape, seed=3)}, atol=1e-4)
