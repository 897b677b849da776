"""ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (`extractors/losses.py`) against
onnxruntime on ref and cpu, every reduction with and without weights and ignore_index, and
the IR in OpenVINO."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

X_SHAPE, T_SHAPE, CLASSES = [3, 5, 2, 4], [3, 2, 4], 5


def model(op: str, reduction: str, weighted: bool, ignore: int | None, log_prob: bool = False, x_shape=X_SHAPE, t_shape=T_SHAPE):  # type: ignore[no-untyped-def]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape), helper.make_tensor_value_info("t", TensorProto.INT64, t_shape)]
    if weighted:
        inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, [x_shape[1]]))
    attrs = {"reduction": reduction} | ({} if ignore is None else {"ignore_index": ignore})
    outputs = ["y", "log_prob"] if log_prob else ["y"]
    node = helper.make_node(op, [i.name for i in inputs], outputs, **attrs)
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def feeds(weighted: bool, ignore: int | None, x_shape=X_SHAPE, t_shape=T_SHAPE) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(7)
    x = rng.standard_normal(x_shape).astype(np.float32)
    t = rng.integers(0, x_shape[1], t_shape).astype(np.int64)
    if ignore is not None:
        t.reshape(-1)[::3] = ignore  # every third position ignored (some outside [0, C))
    out = {"x": x, "t": t}
    if weighted:
        out["w"] = rng.uniform(0.2, 2.0, [x_shape[1]]).astype(np.float32)
    return out


# ignore_index -1 with no weight: the mean is over the kept positions, as in onnxruntime (onnx.reference
# divides by all positions there)
FORMS = [(op, reduction, weighted, ignore) for op in ("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss")
         for reduction in ("none", "sum", "mean") for weighted, ignore in ((False, None), (False, -1), (True, None), (True, 1))]  # fmt: skip


@pytest.mark.parametrize(("op", "reduction", "weighted", "ignore"), FORMS, ids=lambda v: str(v))
def test_loss_matches_onnxruntime_on_ref_and_cpu(op, reduction, weighted, ignore):
    log_prob = op == "SoftmaxCrossEntropyLoss"
    proto = model(op, reduction, weighted, ignore, log_prob)
    inputs = feeds(weighted, ignore)
    want = ort_session_run(proto, inputs)
    model_ir = import_onnx(proto)
    for device, got in (("ref", run(model_ir, inputs)), ("cpu", compile_model(model_ir, threads=1)(inputs))):
        for name, expected in zip(("y", "log_prob"), want):
            assert got[name].shape == expected.shape and got[name].dtype == expected.dtype, (device, name, got[name].shape)
            np.testing.assert_allclose(got[name], expected, rtol=1e-5, atol=1e-6, err_msg=f"{device} {name}")


def test_two_dim_input_loss_matches_onnxruntime():
    proto = model("SoftmaxCrossEntropyLoss", "mean", True, 0, x_shape=[6, 4], t_shape=[6])
    inputs = feeds(True, 0, x_shape=[6, 4], t_shape=[6])
    (want,) = ort_session_run(proto, inputs)
    np.testing.assert_allclose(run(import_onnx(proto), inputs)["y"], want, rtol=1e-5)


def test_losses_ir_runs_in_openvino_like_onnxruntime(tmp_path):
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import assert_close, run_openvino

    for op in ("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"):
        proto = model(op, "mean", True, 2)
        inputs = feeds(True, 2)
        write_ir_xml(import_onnx(proto), tmp_path / f"{op}.xml")
        (want,) = ort_session_run(proto, inputs)
        assert_close(run_openvino(tmp_path / f"{op}.xml", inputs)["y"], want, rtol=1e-5, what=op)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(reduction="max"), "reduction 'max' is not one of"),
        (dict(t_shape=[3, 2]), "the input must be"),
        (dict(t_shape=[3, 2, 5]), "does not match input"),
    ],
)
def test_bad_loss_forms_are_one_line_errors(kwargs, message):
    args = dict(op="NegativeLogLikelihoodLoss", reduction="mean", weighted=False, ignore=None) | kwargs
    with pytest.raises(IrforgeError, match=message) as info:
        import_onnx(model(**args))
    assert info.value.code == "E117"
