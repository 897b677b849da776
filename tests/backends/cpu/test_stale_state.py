"""State the CPU lowering keeps by buffer, checked for staleness: a buffer stored over in place
(`fusion.residual_in_place`) after the state was made from its earlier content. A squeeze-excite
scale left to the next 1x1 layer (`ops/excite.py`: `Lowering.channel_scales`) is read by that
layer's phase, after the Multiply's place in the order: a GEMM between them whose residual is
the scale must not store its result over it. Against the reference, the arena NaN-filled,
1 and 2 threads, with the scaled pack (`linear.SCALED_PACK`) on and off, the scale's buffer
stored over itself or as part of a Concat's output (`movement.CONCAT_IN_PLACE` on). B panels
shared by buffer (`linear.SHARED_PACKS`, `Lowering.packed_rows`) of a MatMul's run-time B
stored over in place by the FC path (`linear._over_residual`; the 1x1 convolution's path is
`test_shared_packs.test_pack_of_a_buffer_stored_over_in_place`)."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.ops import fusion, linear, movement
from irforge.backends.reference import run
from irforge.dialects.nn import Activation, Concat, Convolution, Eltwise, MatMul, ReLU
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import ModelBuilder, rand


def _scale_stored_over(c: int, h: int, w: int, o: int, concat: bool = False):  # type: ignore[no-untyped-def]
    """x * s (an SE gate), then a 1x1 layer over another tensor with s as its residual (the
    GEMM may store its result over s's buffer: the Multiply, s's only other reader, is
    lowered already), then
    the 1x1 layer over x * s, which reads s's buffer for the deferred scale. `concat`: s is
    stored in its slice of a Concat's output (`movement.in_place_input`) and that output is
    the residual stored over."""
    b = ModelBuilder()
    x = b.add(ReLU, [b.input("x", (1, c, h, w))]).output
    s = b.add(Activation, [b.input("p", (1, c, 1, 1))], kind="sigmoid").output
    y = b.add(Eltwise, [x, s], operation="mul").output
    d = 2 * c if concat else c
    q = b.add(ReLU, [b.input("q", (1, d, 1, 1))]).output
    held = b.add(Concat, [s, b.add(ReLU, [b.input("r", (1, c, 1, 1))]).output], axis=1).output if concat else s
    t = b.add(Convolution, [q, b.constant(rand(d, d, 1, 1, seed=5)), b.constant(rand(d, seed=6))], group=1).output
    t = b.add(ReLU, [b.add(Eltwise, [held, t], operation="sum").output]).output
    out = b.add(Convolution, [y, b.constant(rand(o, c, 1, 1, seed=1)), b.constant(rand(o, seed=2))], group=1).output
    b.output(out, "y")
    b.output(t, "t")
    feeds = {"x": rand(1, c, h, w) * 2, "p": rand(1, c, 1, 1, seed=3) * 4, "q": rand(1, d, 1, 1, seed=4)}
    return b.finish(), {**feeds, "r": rand(1, c, 1, 1, seed=7)} if concat else feeds


@pytest.mark.parametrize("concat", [False, True])
@pytest.mark.parametrize("scaled_pack", [True, False])
@pytest.mark.parametrize("c,h,w,o", [(24, 15, 15, 8), (40, 7, 7, 12), (16, 28, 28, 16)])
def test_channel_scale_not_stored_over(c, h, w, o, scaled_pack, concat, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The scale the 1x1 layer over x * s reads is s's, not the GEMM's result stored over it
    (every case failed before `Lowering.scale_pending`)."""
    monkeypatch.setattr(linear, "SCALED_PACK", scaled_pack)
    monkeypatch.setattr(movement, "CONCAT_IN_PLACE", True)
    monkeypatch.setattr(fusion, "RESIDUAL_IN_PLACE", True)
    model, feeds = _scale_stored_over(c, h, w, o, concat)
    want = run(model, feeds)
    for threads in (1, 2):
        compiled = compile_model(model, threads=threads, cache_dir=False)
        compiled._executable.arena[:] = np.nan
        try:
            phases = compiled._executable.program.phases
            # the Multiply deferred: its scale read by the 1x1 layer's weights or B copy
            assert any(p.function.endswith("scale_panels") or (p.function.endswith("pack_rows") and len(p.args) == 4) for p in phases)
            got = compiled(feeds)
            for name, value in want.items():
                np.testing.assert_allclose(got[name], value, rtol=1e-4, atol=1e-4, err_msg=name)
        finally:
            compiled.close()


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
def test_matmul_pack_of_a_buffer_stored_over(threads, shared, panels, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A run-time B packed into panels (`linear.aliased_rows`, `SHARED_PACKS`), then stored
    over in place by a MatMul whose residual it is (`linear._over_residual`: K one block),
    then read as B again: packed again from the new content (`Lowering.alias` forgets the
    panels), not the first pack's."""
    monkeypatch.setattr(linear, "SHARED_PACKS", shared)
    monkeypatch.setattr(fusion, "RESIDUAL_IN_PLACE", True)
    b = ModelBuilder()
    rhs = b.add(ReLU, [b.input("b", (64, 1024))]).output
    y1 = b.add(MatMul, [b.input("a1", (7, 64)), rhs]).output
    update = b.add(MatMul, [b.input("c", (64, 48)), b.input("d", (48, 1024))]).output
    rhs = b.add(Eltwise, [rhs, update], operation="sum").output  # stored over the first rhs
    y2 = b.add(MatMul, [b.input("a2", (5, 64)), rhs]).output
    b.output(y1, "y1")
    b.output(y2, "y2")
    model = b.finish()
    compiled = compile_model(model, threads=threads, cache_dir=False)
    feeds = {"b": rand(64, 1024), "a1": rand(7, 64, seed=1), "c": rand(64, 48, seed=2), "d": rand(48, 1024, seed=3),
             "a2": rand(5, 64, seed=4)}
    matches_reference(compiled, model, feeds)
    phases = compiled._executable.program.phases
    assert sum("pack_rows" in p.function for p in phases) >= 2  # rhs's content twice (and d's)
