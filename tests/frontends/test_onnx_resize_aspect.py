"""ONNX Resize keep_aspect_ratio_policy (not_larger / not_smaller with sizes): one scale for the
resized axes, sizes rounded from it; against onnxruntime on ref and cpu."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run


def resize(policy, mode, sizes, axes=None):  # type: ignore[no-untyped-def]
    extra = {"axes": axes} if axes else {}
    node = helper.make_node("Resize", ["x", "", "", "s"], ["y"], mode=mode, keep_aspect_ratio_policy=policy, **extra)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(np.array(sizes, np.int64), "s")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize(
    ("policy", "sizes", "axes"),
    [("not_larger", [10, 20], [2, 3]), ("not_smaller", [10, 7], [2, 3]), ("not_larger", [1, 2, 10, 20], None), ("not_smaller", [1, 1, 2, 4], None)],
    ids=["not_larger-axes", "not_smaller-axes", "not_larger-all", "not_smaller-all"],
)  # fmt: skip
def test_keep_aspect_ratio_matches_onnxruntime(policy, mode, sizes, axes):
    x = np.random.default_rng(3).standard_normal((1, 2, 5, 7)).astype(np.float32)
    proto = resize(policy, mode, sizes, axes)
    (want,) = ort_session_run(proto, {"x": x})
    model = import_onnx(proto)
    got = run(model, {"x": x})["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(compile_model(model)({"x": x})["y"], want, rtol=1e-5, atol=1e-5)


def test_keep_aspect_ratio_whose_rounded_sizes_need_another_scale_is_refused():
    # scale min(8/5, 8/7) = 8/7: rows round(5.71) = 6, which floor(5 * 8/7) = 5 cannot give
    with pytest.raises(IrforgeError, match="keep_aspect_ratio_policy 'not_larger' gives sizes"):
        import_onnx(resize("not_larger", "linear", [8, 8], [2, 3]))
