"""Winograd transforms emitted as loops of 1-D transforms (`codegen.winograd_transforms.ROLLED_MIN_POINTS`,
`ROLLED_OUTPUT`) against the reference with the arena NaN-filled: stride 2's F(4x4) (rolled by
default), and with the threshold at 0 every transform (stride 1 F(4x4) and F(2x2), stride 2
F(2x2)); the input rows read through one vector of tiles, the zero-padded stack rows and
masked loads (a 7x7 plane whose masked-off lanes an LLVM backend fold read from memory), the
output transform with bias, residual and ReLU, batch 2, 1 and 2 threads."""

from __future__ import annotations

import numpy as np
import pytest
from llvmlite import ir

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import winograd_transforms
from irforge.backends.cpu.codegen.winograd import WinogradSpec
from irforge.backends.cpu.codegen.winograd_transforms import input_transform_kernel, output_transform_kernel
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Convolution, Eltwise, ReLU
from tests.helpers import one_op_model, rand, winograd_phase_tags


def matches_reference(compiled, model, feeds) -> None:  # type: ignore[no-untyped-def]
    """The arena NaN-filled (a lane of V or Y left unwritten shows); Winograd's sums in
    another order: the tolerance a fraction of the output's range (as test_winograd_stride2)."""
    compiled._executable.arena[:] = np.nan
    try:
        assert [p.tag for p in compiled._executable.program.phases] == winograd_phase_tags()
        got = compiled(feeds)
    finally:
        compiled.close()
    for name, want in run(model, feeds).items():
        np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-5 * np.abs(want).max())


def _loops(kernel, spec: WinogradSpec) -> bool:  # type: ignore[no-untyped-def]
    module = ir.Module("m")
    kernel(module, spec, "k")
    return "trow.body" in str(module) or "mcol.body" in str(module)


def test_rolled_by_default_where_stride2_f4() -> None:
    """Stride 2's F(4x4) (81 points) input transform loops; stride 1's F(4x4) (36) and the
    output transforms stay unrolled."""
    s2 = WinogradSpec(1, 32, 32, 56, 56, 28, 28, (1, 1), m=4, stride=2)
    s1 = WinogradSpec(1, 32, 32, 28, 28, 28, 28, (1, 1), m=4)
    assert _loops(input_transform_kernel, s2) and not _loops(input_transform_kernel, s1)
    assert not _loops(output_transform_kernel, s2)


CASES = [
    # (N, C, H, W), O, strides
    ((1, 32, 56, 56), 33, 2),  # stride-2 F(4x4): 7 tiles a row, one vector
    ((1, 32, 57, 140), 32, 2),  # stride-2 F(4x4): 18 tiles a row, stack rows, partial tiles
    ((2, 32, 29, 31), 34, 2),  # stride-2 F(2x2), batch 2 (masked stores)
    ((1, 6, 30, 70), 9, 1),  # F(4x4), two vectors of tiles a row
    ((1, 8, 7, 7), 8, 1),  # F(2x2), 16 tiles
]


@pytest.mark.parametrize("padded", [True, False])
@pytest.mark.parametrize("rolled_output", [False, True])
@pytest.mark.parametrize("x_shape,o,stride", CASES)
def test_rolled_transforms(x_shape, o, stride, rolled_output, padded, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(winograd_transforms, "ROLLED_MIN_POINTS", 0)
    monkeypatch.setattr(winograd_transforms, "ROLLED_OUTPUT", rolled_output)
    monkeypatch.setattr(winograd_transforms, "PADDED_ROWS", padded)  # False: masked loads
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(o, x_shape[1], 3, 3, seed=1), rand(o, seed=2)],
                         strides=[stride, stride], pads_begin=[1, 1], pads_end=[1, 1])
    threads = 2 if padded else 1
    matches_reference(compile_model(model, threads=threads, cache_dir=False), model, {"x0": rand(*x_shape, seed=3)})


@pytest.mark.parametrize("threads", [1, 2])
def test_rolled_output_fuses_residual_and_relu(threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(winograd_transforms, "ROLLED_OUTPUT", True)
    b = ModelBuilder()
    x = b.input("x", (1, 32, 58, 58))
    r = b.input("r", (1, 32, 29, 29))
    y = b.add(Convolution, [x, b.constant(rand(32, 32, 3, 3, seed=1)), b.constant(rand(32, seed=2))],
              strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1]).output
    y = b.add(ReLU, [b.add(Eltwise, [r, y], operation="sum").output]).output
    b.output(y, "y")
    model = b.finish()
    feeds = {"x": rand(1, 32, 58, 58), "r": rand(1, 32, 29, 29, seed=3)}
    matches_reference(compile_model(model, threads=threads, cache_dir=False), model, feeds)
