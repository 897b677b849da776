"""ONNX Reshape whose target shape is computed at run time (torchvision RetinaNet's box
decoding reshapes to the Shape of a tensor of data-dependent size): nn.reshape_to, run on
ref and cpu (a host step in the segmented model) and in OpenVINO (Reshape-1 with a
non-constant shape input); a shape that folds at the given input shapes stays nn.reshape."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.frontends.test_onnx_dynamic_shapes import FLOAT, INT64, check, make
from tests.helpers import ort_session_run


def run_time_reshape_model(allowzero: int = 0):  # type: ignore[no-untyped-def]
    """Scores above 0 (NonZero) select rows of a [8, 4] box tensor; the flattened selection
    is reshaped back to [count, 4] by Concat(Shape(selection)[0], -1) and to [0-copy, 2, 2]."""
    nodes = [
        helper.make_node("Greater", ["s", "zero_f"], ["mask"]),
        helper.make_node("NonZero", ["mask"], ["nz"]),
        helper.make_node("Squeeze", ["nz", "zero"], ["where"]),
        helper.make_node("Gather", ["boxes", "where"], ["kept"], axis=0),
        helper.make_node("Flatten", ["kept"], ["flat"], axis=0),
        helper.make_node("Shape", ["kept"], ["dims"]),
        helper.make_node("Gather", ["dims", "zero"], ["count"], axis=0),
        helper.make_node("Concat", ["count", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["flat", "target"], ["rows"], allowzero=allowzero),
        helper.make_node("Concat", ["count", "two", "two"], ["target3"], axis=0),
        helper.make_node("Reshape", ["rows", "target3"], ["cube"]),
        helper.make_node("Shape", ["boxes"], ["static_dims"]),  # folds: stays nn.reshape
        helper.make_node("Reshape", ["cube_src", "static_dims"], ["folded"]),
    ]
    initializers = [("zero_f", np.float32(0.0)), ("zero", np.array([0], np.int64)),
                    ("minus_one", np.array([-1], np.int64)), ("two", np.array([2], np.int64))]  # fmt: skip
    inputs = [("s", FLOAT, [8]), ("boxes", FLOAT, [8, 4]), ("cube_src", FLOAT, [2, 16])]
    return make(nodes, inputs, [("rows", FLOAT), ("cube", FLOAT), ("folded", FLOAT)], initializers, opset=14)


def feeds(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"s": rng.standard_normal(8).astype(np.float32), "boxes": rng.standard_normal((8, 4)).astype(np.float32),
            "cube_src": rng.standard_normal((2, 16)).astype(np.float32)}  # fmt: skip


@pytest.mark.parametrize("seed", [0, 3])
def test_reshape_to_a_run_time_shape_runs_on_ref_and_cpu(seed):
    model = check(run_time_reshape_model(), feeds(seed))
    names = [op.name for op in model.func.body.block.ops]
    assert names.count("nn.reshape_to") == 2 and names.count("nn.reshape") == 1


def test_reshape_to_with_allowzero_runs_like_onnxruntime():
    check(run_time_reshape_model(allowzero=1), feeds(1))


def test_reshape_to_a_run_time_shape_runs_in_openvino(tmp_path):
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    proto, inputs = run_time_reshape_model(), feeds(2)
    want = ort_session_run(proto, inputs)
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    got = run_openvino(tmp_path / "m.xml", inputs)
    for output, w in zip(proto.graph.output, want):
        np.testing.assert_allclose(got[output.name], w, rtol=1e-6, err_msg=output.name)


def test_a_run_time_shape_that_does_not_fit_is_one_error():
    from irforge.backends.reference import run

    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"])]
    model = import_onnx(make(nodes, [("x", FLOAT, [6]), ("shape", INT64, [2])], [("y", FLOAT)]))
    assert [op.name for op in model.func.body.block.ops][0] == "nn.reshape_to"
    x = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(run(model, {"x": x, "shape": np.array([-1, 3], np.int64)})["y"], x.reshape(2, 3))
    with pytest.raises(IrforgeError, match="cannot hold the elements") as info:
        run(model, {"x": x, "shape": np.array([4, -1], np.int64)})
    assert info.value.code == "E885"


def test_reshape_to_a_run_time_shape_runs_on_opencl():
    pytest.importorskip("pyopencl")
    from irforge.backends.opencl.device import _all_devices

    if not _all_devices():
        pytest.skip("no OpenCL device")
    check(run_time_reshape_model(), feeds(4), devices=("gpu",))
