"""channels-first-mlp (`passes/channels_first_mlp.py`, in the CPU backend's pipeline):
ConvNeXt's `permute(NCHW -> NHWC) -> FC -> GELU -> FC -> permute back` runs as two 1x1
convolutions on NCHW. Against the reference interpreter on odd shapes (channels and planes
that leave GEMM row and column tails, batch 2, 1 and 2 threads), with the residual Add after
it; and the cases the pass must leave alone: an intermediate with a second user, a chain
that does not end in the transpose back, an op that is not unary, the knob off."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Activation, Convolution, Eltwise, FullyConnected, MatMul, Permute
from irforge.passes import apply_pipeline, channels_first_mlp
from tests.helpers import rand


def _block(n: int, c: int, h: int, w: int, hidden: int, bias: bool = True, shared: bool = False,
           back: bool = True, binary: bool = False, act: str = "gelu", matmul: str = ""):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", (n, c, h, w))
    t = b.add(Permute, [x], order=[0, 2, 3, 1]).output

    def fc(v, k: int, o: int, seed: int):  # type: ignore[no-untyped-def]
        if matmul and seed == 3:  # the first layer as keras' Tensordot: MatMul by [K, O] (or [O, K] transposed)
            w = rand(o, k, seed=seed, low=-0.5, high=0.5)
            flip = matmul == "transposed"
            return b.add(MatMul, [v, b.constant(w if flip else np.ascontiguousarray(w.T))], transpose_b=flip).output
        operands = [v, b.constant(rand(o, k, seed=seed, low=-0.5, high=0.5))]
        if bias:
            operands.append(b.constant(rand(o, seed=seed + 1)))
        return b.add(FullyConnected, operands).output

    a = fc(t, c, hidden, 3)
    g = b.add(Activation, [a], kind=act).output
    if binary:
        g = b.add(Eltwise, [g, b.constant(rand(1, 1, 1, hidden, seed=9))], operation="mul").output
    y = fc(g, hidden, c, 5)
    if back:
        z = b.add(Permute, [y], order=[0, 3, 1, 2]).output
        b.output(b.add(Eltwise, [x, z], operation="sum").output, "z")
    else:
        b.output(y, "z")
    if shared:
        b.output(a, "a")
    feeds = {"x": rand(n, c, h, w, seed=1, low=-2.0, high=2.0)}
    return b.finish(), feeds


def _counts(model) -> dict[type, int]:  # type: ignore[no-untyped-def]
    ops = list(model.module.walk())
    return {cls: sum(isinstance(op, cls) for op in ops) for cls in (Permute, FullyConnected, Convolution, MatMul)}


def _compare(model, feeds, threads: int) -> None:  # type: ignore[no-untyped-def]
    """The compiled model (its pipeline applies the pass to a copy) against the reference
    interpreter on `model` as it is."""
    compiled = compile_model(model, threads=threads, cache_dir=False)
    try:
        got = compiled(feeds)
    finally:
        compiled.close()
    for name, value in run(model, feeds).items():
        # sums of up to 384 products: float32 rounding relative to the output's scale
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=2e-6 * max(1.0, float(np.abs(value).max())))


@pytest.mark.parametrize("shape", [(1, 12, 28, 28, 37), (2, 8, 16, 49, 32), (1, 5, 32, 32, 20), (1, 24, 56, 56, 96),
                                   # planes the pass leaves alone by default (`MIN_POSITIONS`, `ALIGN`): odd tails
                                   (1, 12, 7, 9, 37), (2, 8, 5, 3, 32), (1, 96, 14, 14, 384), (1, 5, 1, 17, 20), (1, 24, 7, 7, 96)])
@pytest.mark.parametrize("threads", [1, 2])
def test_block_as_convolutions(shape: tuple[int, ...], threads: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(channels_first_mlp, "MIN_POSITIONS", 0)
    monkeypatch.setattr(channels_first_mlp, "ALIGN", 1)
    model, feeds = _block(*shape)
    _compare(model, feeds, threads)
    apply_pipeline(model.module, "channels-first-mlp")
    assert _counts(model) == {Permute: 0, FullyConnected: 0, Convolution: 2, MatMul: 0}
    _compare(model, feeds, threads)


@pytest.mark.parametrize("act", ["gelu", "gelu_tanh", "swish"])
def test_no_bias_other_activations(act: str) -> None:
    model, feeds = _block(1, 16, 28, 32, 40, bias=False, act=act)
    _compare(model, feeds, 2)
    apply_pipeline(model.module, "channels-first-mlp")
    assert _counts(model)[Permute] == 0
    _compare(model, feeds, 2)


@pytest.mark.parametrize("matmul", ["plain", "transposed"])
@pytest.mark.parametrize("threads", [1, 2])
def test_keras_matmul(matmul: str, threads: int) -> None:
    model, feeds = _block(1, 12, 28, 28, 37, bias=False, matmul=matmul)
    _compare(model, feeds, threads)  # the backend's pipeline rewrites it; the reference runs the original
    apply_pipeline(model.module, "channels-first-mlp")
    assert _counts(model) == {Permute: 0, FullyConnected: 0, Convolution: 2, MatMul: 0}
    _compare(model, feeds, threads)


@pytest.mark.parametrize("case", ["shared", "not_back", "binary", "small", "unaligned"])
def test_left_alone(case: str) -> None:
    h, w = {"small": (14, 14), "unaligned": (30, 30)}.get(case, (28, 28))
    model, feeds = _block(1, 12, h, w, 24, shared=case == "shared", back=case != "not_back", binary=case == "binary")
    before = _counts(model)
    apply_pipeline(model.module, "channels-first-mlp")
    assert _counts(model) == before
    _compare(model, feeds, 2)


def test_knob_off(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(channels_first_mlp, "ENABLED", False)
    model, feeds = _block(1, 12, 28, 28, 37)
    before = _counts(model)
    apply_pipeline(model.module, "channels-first-mlp")
    assert _counts(model) == before and before[Permute] == 2
    _compare(model, feeds, 2)
