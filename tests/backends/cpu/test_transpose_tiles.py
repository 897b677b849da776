"""f32 Permutes that are batched 2-D transposes run in tiles (`codegen/transpose.py`,
session 11; SegFormer's token / channel transposes). Checked against onnxruntime on ref and
cpu (arena NaN-filled), 1 and 2 threads: partial tiles on both axes, size-1 axes between
merged ones, NCHW <-> NHWC, and a permute that is no 2-D transpose (the permuted copy)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen.transpose import as_transpose
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import ort_session_run

CASES = [  # shape, perm, tiled
    ((1, 300, 70), (0, 2, 1), True),  # [tokens, C] -> [C, tokens]: partial tiles both ways
    ((40, 33), (1, 0), True),
    ((2, 24, 20, 17), (0, 2, 3, 1), True),  # NCHW -> NHWC, batch 2
    ((1, 35, 20, 20), (0, 3, 1, 2), True),  # NHWC -> NCHW
    ((20, 1, 40, 48), (2, 1, 3, 0), True),  # a size-1 axis between the merged ones
    ((3, 20, 18, 5), (0, 2, 1, 3), False),  # rows swapped, inner axis kept: the permuted copy
    ((4, 5, 40), (0, 2, 1), False),  # 5 rows: under TILED_MIN, the permuted copy
]


@pytest.mark.parametrize("shape,perm,tiled", CASES)
def test_transpose_matches_onnxruntime(shape, perm, tiled, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = [shape[a] for a in perm]
    # Transpose then Relu: the permute is not the model's output alias
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=list(perm)), helper.make_node("Relu", ["t"], ["y"])]
    graph = helper.make_graph(nodes, "transpose", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    feeds = {"x": np.random.default_rng(0).standard_normal(shape).astype(np.float32)}
    want = ort_session_run(proto, feeds)[0]
    model = import_onnx(proto)
    np.testing.assert_array_equal(run(model, feeds)["y"], want)
    for threads in (1, 2):
        compiled = compile_model(model, threads=threads, cache_dir=tmp_path)
        kernels = [p.function for p in compiled._executable.program.phases]
        assert any(k.endswith("_transpose") for k in kernels) == tiled, kernels
        np.testing.assert_array_equal(compiled(feeds)["y"], want)
        matches_reference(compiled, model, feeds, rtol=0, atol=0)


def test_as_transpose_shapes() -> None:
    assert as_transpose((1, 300, 70), (0, 2, 1)) == (1, 300, 70)
    assert as_transpose((2, 24, 20, 17), (0, 2, 3, 1)) == (2, 24, 340)
    assert as_transpose((1, 35, 20, 20), (0, 3, 1, 2)) == (1, 700, 20)  # NHWC -> channels first: R = 35 * 20
    assert as_transpose((20, 1, 40, 48), (2, 1, 3, 0)) == (1, 20, 1920)
    assert as_transpose((3, 20, 18, 5), (0, 2, 1, 3)) is None
    assert as_transpose((2, 3), (0, 1)) is None
