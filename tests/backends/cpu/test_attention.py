"""ScaledDotProductAttention on the CPU backend (transpose, GEMM, pointwise and softmax
kernels) against the reference kernel, and the transformer with its attention fused."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.dialects.nn import ScaledDotProductAttention as SDPA
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.testing import onnx_models
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.backends.cpu.conftest import check_op, run_cpu
from tests.helpers import ort_session_run, rand

Q, K, V = rand(2, 3, 5, 8, seed=1), rand(2, 3, 7, 8, seed=2), rand(2, 3, 7, 4, seed=3)
MASK = rand(5, 7, seed=4, low=-3.0, high=0.0)
BOOLEAN = rand(2, 1, 5, 7, seed=5) > -0.5
BOOLEAN[..., 0] = True  # every row attends somewhere (else NaN on both sides)


@pytest.mark.parametrize(
    "inputs, constants, props",
    [
        ([Q, K, V], [], {}),
        ([Q, K, V, MASK], [], {"scale": 0.3}),
        ([Q, K, V, BOOLEAN], [], {}),
        ([Q, K, V], [BOOLEAN], {}),
        ([Q, K, V, MASK], [], {"causal": True}),
        ([Q, K, V, np.zeros((), np.float32), np.array([0.7], np.float32)], [], {}),
        ([rand(2, 1, 5, 8, seed=6), rand(3, 7, 8, seed=7), rand(1, 3, 7, 6, seed=8)], [], {}),
    ],
    ids=["plain", "mask-scale", "boolean-mask", "boolean-mask-constant", "causal", "scale-operand", "broadcast-batch"],
)
def test_attention_matches_the_reference(inputs, constants, props, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(SDPA, inputs, constants, cache_dir, **props)


def test_mask_broadcasting_the_scores_is_refused(cache_dir) -> None:  # type: ignore[no-untyped-def]
    from tests.helpers import one_op_model

    model = one_op_model(SDPA, [rand(1, 5, 8), rand(1, 7, 8), rand(1, 7, 4), rand(2, 5, 7)])
    with pytest.raises(IrforgeError, match="mask that broadcasts the scores has no CPU kernel"):
        compile_model(model, cache_dir=cache_dir)


@pytest.mark.parametrize("threads", [1, 2])
def test_transformer_with_fused_attention_matches_onnxruntime(threads, cache_dir) -> None:  # type: ignore[no-untyped-def]
    proto = onnx_models.transformer_encoder()
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    assert any(isinstance(op, SDPA) for op in model.func.body.block.ops)
    feeds = {"tokens": np.random.default_rng(0).standard_normal((1, 8, 32)).astype(np.float32)}
    got = next(iter(run_cpu(model, feeds, cache_dir, threads).values()))
    np.testing.assert_allclose(got, ort_session_run(proto, feeds)[0], rtol=1e-4, atol=1e-5)
