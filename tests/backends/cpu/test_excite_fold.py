"""Squeeze-excite's `x * s` folded into the next 1x1 convolution's packed weights
(`ops/excite.py`, `codegen/scale_panels.py`) against the reference: K below one vector step
(GROUP rows), K with 1-3 tail rows per block, K over one and over two K blocks (`CONV_KC`),
output channels filling part of a panel or several panels, the scale on either side of the
Multiply, a bias, a residual with ReLU; 1 and 2 threads, the arena NaN-filled. Where the fold
does not apply (more outputs than positions, a second user of the product, the product a
model output) the Multiply stays a pointwise phase, with the same numbers. Those run with
`linear.SCALED_PACK` off; with it on, a 1x1 layer that packs its input into B panels (planes
up to 196 positions, unaligned planes) scales the rows as it packs them, at any output count
(`test_scaled_pack`)."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.ops import linear
from irforge.backends.reference import run
from irforge.dialects.nn import Activation, Convolution, Eltwise, ReLU
from tests.helpers import ModelBuilder, rand

CACHE = CACHE_SCALED = ""
"""One object cache for the file: the second thread count and the cases' common kernels hit
it; the scaled pack has its own (the program cache keys no module knob: `wide` is one model
both ways). Set by `_caches`."""


@pytest.fixture(autouse=True, scope="module")
def _caches(tmp_path_factory):  # type: ignore[no-untyped-def]
    """The file's caches under pytest's temporary folder, which pytest prunes (a module-level
    mkdtemp was left in /tmp by every run)."""
    global CACHE, CACHE_SCALED
    CACHE, CACHE_SCALED = str(tmp_path_factory.mktemp("excite")), str(tmp_path_factory.mktemp("excite-pack"))

CASES = [
    # (c, h, w), o, scale first, residual + ReLU
    ((3, 4, 5), 2, False, False),  # K 3: tail rows only
    ((7, 6, 6), 7, True, False),  # one group of 4 + 3 tail rows; 7 outputs: a second panel of 1
    ((384, 7, 7), 6, False, False),  # one whole K block
    ((390, 2, 9), 13, True, True),  # two K blocks, the second of 6 rows
    ((961, 5, 5), 20, False, False),  # three K blocks, the last of 193 (48 groups + 1)
]


def _model(c, h, w, o, scale_first, residual, extra_use=False, product_out=False):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", (1, c, h, w))
    pooled = b.input("p", (1, c, 1, 1))
    s = b.add(Activation, [pooled], kind="sigmoid").output  # as an SE block's gate
    y = b.add(Eltwise, [s, x] if scale_first else [x, s], operation="mul").output
    out = b.add(Convolution, [y, b.constant(rand(o, c, 1, 1, seed=1)), b.constant(rand(o, seed=2))], group=1).output
    feeds = {"x": rand(1, c, h, w) * 2, "p": rand(1, c, 1, 1, seed=3) * 4}
    if residual:
        r = b.input("r", (1, o, h, w))
        out = b.add(ReLU, [b.add(Eltwise, [r, out], operation="sum").output]).output
        feeds["r"] = rand(1, o, h, w, seed=4)
    b.output(out, "y")
    if extra_use:
        b.output(b.add(Activation, [y], kind="sigmoid").output, "z")
    if product_out:
        b.output(y, "z")
    return b.finish(), feeds


@pytest.fixture(autouse=True)
def _scaled_pack_off(monkeypatch):  # type: ignore[no-untyped-def]
    """The weights fold's cases run without the scaled pack (which would take them all)."""
    monkeypatch.setattr(linear, "SCALED_PACK", False)


def _check(model, feeds, folded: bool, sigmoids: int = 1, packed: bool = False) -> None:  # type: ignore[no-untyped-def]
    want = run(model, feeds)
    for threads in (1, 2):
        compiled = compile_model(model, threads=threads, cache_dir=CACHE_SCALED if packed or linear.SCALED_PACK else CACHE)
        compiled._executable.arena[:] = np.nan
        try:
            phases = compiled._executable.program.phases
            functions = [p.function for p in phases]
            assert any("scale_panels" in f for f in functions) == (folded and not packed)
            assert sum("pointwise" in f for f in functions) == sigmoids + (not folded)  # the Multiply's phase
            # the scaled pack: a pack phase with the scale as its fourth buffer
            assert any(f.endswith("pack_rows") and len(p.args) == 4 for f, p in zip(functions, phases)) == packed
            got = compiled(feeds)
            for name, value in want.items():
                np.testing.assert_allclose(got[name], value, rtol=1e-4, atol=1e-4)
        finally:
            compiled.close()


@pytest.mark.parametrize("shape,o,scale_first,residual", CASES)
def test_folded(shape, o, scale_first, residual) -> None:  # type: ignore[no-untyped-def]
    _check(*_model(*shape, o, scale_first, residual), folded=True)


@pytest.mark.parametrize("case", ["wide", "two_users", "product_out"])
def test_not_folded(case: str) -> None:
    c, h, w, o = (8, 3, 3, 10) if case == "wide" else (8, 4, 4, 5)  # wide: 10 outputs > 9 positions
    _check(*_model(c, h, w, o, False, False, extra_use=case == "two_users", product_out=case == "product_out"), folded=False,
           sigmoids=1 + (case == "two_users"))


SCALED_CASES = [
    # (c, h, w), o, scale first, residual + ReLU
    ((8, 3, 3), 10, False, False),  # 10 outputs > 9 positions: no weights fold, the pack scales
    ((70, 14, 14), 320, True, True),  # RegNet-Y's 14x14 block: 196 positions, 13 panels, the last of 4
    ((64, 15, 15), 40, False, False),  # an unaligned plane over 196 (`packs_unaligned`): 225 positions
    ((961, 5, 5), 20, False, False),  # three K blocks
]


@pytest.mark.parametrize("shape,o,scale_first,residual", SCALED_CASES)
def test_scaled_pack(shape, o, scale_first, residual, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "SCALED_PACK", True)
    _check(*_model(*shape, o, scale_first, residual), folded=True, packed=True)


def test_scaled_pack_not_for_rows(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A 28x28 plane is read in place (no pack): the scale stays on the weights."""
    monkeypatch.setattr(linear, "SCALED_PACK", True)
    _check(*_model(16, 28, 28, 24, False, False), folded=True)
