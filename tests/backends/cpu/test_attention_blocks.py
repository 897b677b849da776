"""The blocked attention kernel (`codegen/attention.py`) against the reference interpreter:
several blocks of query rows with a short last block (`BLOCK_FLOATS` made small), rows of S
that end in a partial vector, float masks broadcast along the batch, head and row axes (with
-inf entries), a scale property, 1 and 2 threads; and the forms it does not take keep the
unfused phases."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import attention
from irforge.backends.reference import run
from irforge.dialects.nn import ScaledDotProductAttention as SDPA
from tests.helpers import one_op_model, rand

B, H, L, S, D, DV = 2, 3, 37, 45, 8, 6


def _mask(*shape: int) -> np.ndarray:
    mask = rand(*shape, seed=11, low=-4.0, high=1.0)
    mask.reshape(-1)[3::7] = -np.inf  # no row all -inf: both sides would give NaN
    return mask


def _run(inputs, threads: int, **props):  # type: ignore[no-untyped-def]
    model = one_op_model(SDPA, inputs, [], **props)
    feeds = {f"x{i}": x for i, x in enumerate(inputs)}
    compiled = compile_model(model, threads=threads, cache_dir=False)
    try:
        kernels = [p.function for p in compiled._executable.program.phases]
        return compiled(feeds)["y0"], run(model, feeds)["y0"], kernels
    finally:
        compiled.close()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "mask, props",
    [
        (None, {}),
        (_mask(H, L, S), {"scale": 0.3}),  # T5's position bias: per head, broadcast over the batch
        (_mask(B, 1, 1, S), {}),  # BERT's padding mask: per sample and key
        (_mask(L, S), {}),
        (_mask(B, H, L, S), {}),
    ],
    ids=["plain", "per-head", "per-key", "rows", "full"],
)
def test_blocks_match_the_reference(mask, props, threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(attention, "BLOCK_FLOATS", 12 * attention.row_stride(S))  # blocks of 12 rows: 12, 12, 12, 1
    inputs = [rand(B, H, L, D, seed=1), rand(B, H, S, D, seed=2), rand(B, H, S, DV, seed=3)]
    got, want, kernels = _run(inputs + ([mask] if mask is not None else []), threads, **props)
    assert any(k.endswith("_attention") for k in kernels)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_one_block_of_all_rows() -> None:
    inputs = [rand(1, 2, 20, 16, seed=4), rand(1, 2, 33, 16, seed=5), rand(1, 2, 33, 16, seed=6)]
    assert attention.block_rows(20, 33) == 20
    got, want, kernels = _run(inputs, 2)
    assert any(k.endswith("_attention") for k in kernels)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_block_rows() -> None:
    mr = attention.MR
    assert attention.block_rows(1500, 1500) == attention.BLOCK_FLOATS // 1500 // mr * mr
    assert attention.block_rows(197, 197) == 197
    assert attention.block_rows(4000, 100000) == mr


@pytest.mark.parametrize("props, extra", [({"causal": True}, []), ({}, [rand(2, 1, 5, 7, seed=5) > -0.5])],
                         ids=["causal", "boolean-mask"])
def test_other_forms_keep_the_unfused_phases(props, extra) -> None:  # type: ignore[no-untyped-def]
    if extra:
        extra[0][..., 0] = True
    inputs = [rand(2, 3, 5, 8, seed=1), rand(2, 3, 7, 8, seed=2), rand(2, 3, 7, 4, seed=3)] + extra
    got, want, kernels = _run(inputs, 1, **props)
    assert not any(k.endswith("_attention") for k in kernels)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
