"""B packed per block inside the GEMM (`GemmSpec.b_blocks`, `linear.PACK_BLOCKS_OVER`): the
rule (aliased rows per block, unaligned ones copied whole), 1x1 convolutions packed per block
(the rule forced for unaligned planes, which bring a masked tail panel and a column tail;
several NC and K blocks, an M tail, bias, residual and ReLU in the epilogue), a 160 x 160
plane with the default knobs, MatMuls of two inputs whose aliased B rows are over the
whole copy's cap (lowered) or batched, and Deconvolutions over aliased input planes; against
the reference, 1 and 2 threads, the arena NaN-filled."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import gemm
from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.ops import linear
from irforge.dialects.nn import Convolution, Deconvolution, Eltwise, MatMul, ReLU
from tests.backends.cpu.conftest import matches_reference
from tests.backends.cpu.test_gemm_edges import tile  # noqa: F401  (the fixture: AVX2's and AVX-512's tiles)
from tests.helpers import ModelBuilder, rand


@pytest.fixture
def block_copies(monkeypatch):  # type: ignore[no-untyped-def]
    """The list of block copies emitted (one entry each)."""
    calls = []
    original = gemm._pack_block

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        original(*args, **kwargs)

    monkeypatch.setattr(gemm, "_pack_block", counted)
    return calls


def test_rule() -> None:
    """Aliased rows (planes of 1024 k positions) pack per block; unaligned ones are copied whole
    (`packs_unaligned`), small GEMMs read in place; None turns block packing off."""
    def plane(c: int, size: int) -> ConvGeometry:
        return ConvGeometry(1, c, size, size, 1, 1, size, size, (1, 1), (1, 1), (0, 0), 1)

    assert linear.packs_in_blocks(plane(64, 32), 40) and not linear.packs_unaligned(plane(64, 32), 40)
    assert linear.packs_in_blocks(plane(64, 256), 64)
    assert not linear.packs_in_blocks(plane(16, 32), 40)  # K under 64
    assert not linear.packs_in_blocks(plane(64, 32), 16)  # 16 outputs
    assert not linear.packs_in_blocks(plane(64, 24), 40)  # 576 positions: no aliasing
    assert not linear.packs_in_blocks(plane(64, 33), 40) and linear.packs_unaligned(plane(64, 33), 40)


def test_rule_off(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "PACK_BLOCKS_OVER", None)
    size = ConvGeometry(1, 64, 32, 32, 1, 1, 32, 32, (1, 1), (1, 1), (0, 0), 1)
    assert not linear.packs_in_blocks(size, 40) and linear.packs_unaligned(size, 40)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c,h,w,o", [
    (400, 32, 32, 40),  # 1024 positions (rows 4 KiB apart): 2 K blocks, an M tail
    (64, 19, 19, 33),  # 361: a masked tail panel
    (96, 17, 19, 50),  # 323: a 3-column tail
])
def test_plane_packed_per_block(monkeypatch, block_copies, tile, c, h, w, o, threads) -> None:  # type: ignore[no-untyped-def]
    """Every direct 1x1 layer packed per block (the rule forced: unaligned planes bring the
    tails), bias + residual + ReLU in the epilogue; AVX2's 6x16 tile and AVX-512's 12x32."""
    monkeypatch.setattr(linear, "packs_in_blocks", lambda g, o: True)
    b = ModelBuilder()
    x = b.input("x", (1, c, h, w))
    r = b.input("r", (1, o, h, w))
    conv = b.add(Convolution, [x, b.constant(rand(o, c, 1, 1, seed=1)), b.constant(rand(o, seed=2))], group=1).output
    b.output(b.add(ReLU, [b.add(Eltwise, [conv, r], operation="sum").output]).output, "y")
    model = b.finish()
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert block_copies
    matches_reference(compiled, model, {"x": rand(1, c, h, w), "r": rand(1, o, h, w, seed=4)})


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("a_shape,b_shape,blocks", [
    ((37, 1100), (1100, 1024), True),  # 3 K blocks of 367 (`fc_kc`)
    ((5, 70), (70, 2048), True),
    ((37, 96), (96, 1000), False),  # rows 4000 bytes apart
    ((2, 9, 96), (2, 96, 1024), True),  # batched B: per block at any width
    ((2, 3, 9, 70), (2, 1, 70, 2048), True),  # B broadcast over a batch axis
    ((2, 9, 32), (2, 32, 1024), False),  # K under 64
])
def test_matmul_rows_packed_per_block(block_copies, monkeypatch, a_shape, b_shape, blocks, threads) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "PACK_UNALIGNED_MAX", 300)  # B rows over it: too wide to copy whole
    b = ModelBuilder()
    out = b.add(MatMul, [b.input("a", a_shape), b.input("b", b_shape)]).output
    b.output(out, "y")
    model = b.finish()
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert bool(block_copies) == blocks
    matches_reference(compiled, model, {"a": rand(*a_shape), "b": rand(*b_shape, seed=3)}, atol=1e-4)  # K up to 1100


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,w_shape,blocks", [
    ((1, 400, 32, 32), (400, 12, 2, 2), True),  # 1024 input positions: 2 K blocks, m = 48
    ((2, 64, 32, 32), (64, 10, 3, 3), True),  # two samples (a batch level), m = 90
    ((1, 64, 30, 30), (64, 12, 2, 2), False),  # 900 positions
    ((1, 64, 32, 32), (64, 4, 2, 2), False),  # m = 16 rows
    ((1, 64, 4, 16, 16), (64, 8, 2, 2, 2), True),  # 3-D: 1024 input positions, m = 64
    ((1, 64, 4, 15, 16), (64, 8, 2, 2, 2), False),
])
def test_deconvolution_input_packed_per_block(block_copies, x_shape, w_shape, blocks, threads) -> None:  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", x_shape)
    axes = len(x_shape) - 2
    out = b.add(Deconvolution, [x, b.constant(rand(*w_shape, seed=1))], strides=[2] * axes, pads_begin=[0] * axes, pads_end=[0] * axes).output
    b.output(out, "y")
    model = b.finish()
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert bool(block_copies) == blocks
    matches_reference(compiled, model, {"x": rand(*x_shape)}, atol=1e-4)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,o,blocks", [
    ((1, 64, 4, 16, 16), 40, True),  # B rows 4 x 256 floats apart, slices of 256 positions
    ((1, 400, 2, 32, 32), 33, True),  # 2 K blocks, an M tail
    ((1, 64, 4, 15, 16), 40, False),
])
def test_volumetric_pointwise_packed_per_block(block_copies, x_shape, o, blocks, threads) -> None:  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", x_shape)
    w = b.constant(rand(o, x_shape[1], 1, 1, 1, seed=1))
    out = b.add(Convolution, [x, w, b.constant(rand(o, seed=2))], strides=[1, 1, 1], pads_begin=[0, 0, 0], pads_end=[0, 0, 0]).output
    b.output(b.add(ReLU, [out]).output, "y")
    model = b.finish()
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert bool(block_copies) == blocks
    matches_reference(compiled, model, {"x": rand(*x_shape)}, atol=1e-4)
