"""The blocked attention kernel's two exp paths (`attention.LEAN_EXP`): rows whose maximum is
finite take `mathfn.exp_nonpositive`, rows with a NaN or an infinite score keep `vector_exp`'s
limits. Logits spread over hundreds (most entries minus the row maximum under exp's -86.9
cut-off, others near it), rows made NaN by a NaN query, +inf by a +inf mask entry and all -inf
by a masked-out row, one S ending in a partial vector; 1 and 2 threads, arena NaN-filled;
against the reference interpreter, and the lean path against `vector_exp` on the same rows."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import attention
from irforge.dialects.nn import ScaledDotProductAttention as SDPA
from tests.backends.cpu.conftest import matches_reference, run_cpu
from tests.helpers import one_op_model, rand

H, L, S, D = 2, 9, 21, 8


def _inputs() -> list[np.ndarray]:
    q = rand(1, H, L, D, seed=1) * 40.0  # scores up to a few hundred: exp's cut-off crossed
    q[0, 1, 2, 3] = np.nan  # a NaN row
    mask = rand(1, H, L, S, seed=4, low=-90.0, high=0.0)
    mask[0, 0, 4, 7] = np.inf  # a row whose maximum is +inf
    mask[0, 1, 5, :] = -np.inf  # a row masked out: NaN on both sides
    mask[0, 0, 6, ::3] = -np.inf
    return [q, rand(1, H, S, D, seed=2), rand(1, H, S, D, seed=3), mask]


@pytest.mark.parametrize("threads", [1, 2])
def test_lean_exp_matches_the_reference(threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(attention, "LEAN_EXP", True)
    inputs = _inputs()
    model = one_op_model(SDPA, inputs, [], scale=0.3)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert any(p.function.endswith("_attention") for p in compiled._executable.program.phases)
    matches_reference(compiled, model, {f"x{i}": x for i, x in enumerate(inputs)})


def test_lean_exp_equals_vector_exp(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    inputs = _inputs()
    model = one_op_model(SDPA, inputs, [], scale=0.3)
    feeds = {f"x{i}": x for i, x in enumerate(inputs)}
    outs = []
    for lean in (False, True):
        monkeypatch.setattr(attention, "LEAN_EXP", lean)
        outs.append(run_cpu(model, feeds, False, threads=1)["y0"])
    assert np.isnan(outs[1][0, 1, 2]).all() and np.isnan(outs[1][0, 1, 5]).all() and np.isnan(outs[1][0, 0, 4]).any()
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-6, atol=1e-7)
