"""py-faster-rcnn's Python proposal layer maps to the built-in nn.proposal (OpenVINO's
Proposal, opset4): its numbers against a numpy version of the layer, the IR read and run by
OpenVINO itself, the shipped example's mapping, and refused param_str keys."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from irforge.backends.ir_xml.writer import write_ir_xml
from irforge.backends.reference import run
from irforge.dialects.nn import Proposal
from irforge.errors import IrforgeError
from irforge.frontends.caffe import import_caffe
from tests.dialects.test_rcnn import faster_rcnn_proposal
from tests.backends.cpu.conftest import cache_dir, run_cpu  # noqa: F401  (cache_dir: the fixture)
from tests.frontends.caffe.caffe_files import write_caffe

EXAMPLE = Path(__file__).parents[3] / "examples" / "custom_layers" / "proposal.py"
NET = """
input: "scores"
input_shape { dim: 1 dim: 18 dim: 6 dim: 8 }
input: "deltas"
input_shape { dim: 1 dim: 36 dim: 6 dim: 8 }
input: "im_info"
input_shape { dim: 1 dim: 3 }
layer {
  name: "proposal" type: "Python"
  bottom: "scores" bottom: "deltas" bottom: "im_info" top: "rois"
  python_param { module: "rpn.proposal_layer" layer: "ProposalLayer" param_str: "%s" }
}
"""


def feeds() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "scores": rng.uniform(0, 1, (1, 18, 6, 8)).astype(np.float32),
        "deltas": (rng.standard_normal((1, 36, 6, 8)) * 0.2).astype(np.float32),
        "im_info": np.array([[96, 128, 1.0]], np.float32),
    }


def test_python_proposal_is_nn_proposal_with_py_faster_rcnn_settings(tmp_path: Path) -> None:
    model_path, _ = write_caffe(tmp_path, "rpn", NET % "'feat_stride': 16", {})
    model = import_caffe(model_path)
    (op,) = [o for o in model.func.body.block.ops if isinstance(o, Proposal)]
    assert (op.int_prop("pre_nms_topn"), op.int_prop("post_nms_topn"), op.int_prop("min_size")) == (6000, 300, 16)
    assert op.float_prop("nms_thresh") == pytest.approx(0.7) and op.floats("scale") == (8.0, 16.0, 32.0)
    x = feeds()
    got = run(model, x)["rois"]
    props = dict(base_size=16, feat_stride=16, min_size=16, ratio=[0.5, 1.0, 2.0], scale=[8.0, 16.0, 32.0], pre_nms_topn=6000, post_nms_topn=300, nms_thresh=0.7)
    want = faster_rcnn_proposal(x["scores"], x["deltas"], [96.0, 128.0, 1.0], **props)
    kept = int((want[:, 3] > 0).sum())
    assert kept > 10
    np.testing.assert_allclose(got[:kept], want[:kept], rtol=1e-5, atol=1e-4)


def test_python_proposal_ir_runs_in_openvino(tmp_path: Path) -> None:
    from tests.backends.ir_xml_support import run_openvino

    model_path, _ = write_caffe(tmp_path, "rpn", NET % "'feat_stride': 16, 'scales': (4, 8, 16), 'post_nms_topn': 50", {})
    model = import_caffe(model_path)
    xml, _ = write_ir_xml(model, tmp_path / "rpn.xml")
    text = xml.read_text()
    assert 'type="Proposal" version="opset4"' in text and "frcnn" not in text
    want = run(model, feeds())["rois"]
    got = next(iter(run_openvino(xml, feeds(), check_dims=False).values()))
    kept = int((want[:, 3] > 0).sum())
    assert kept > 10
    np.testing.assert_allclose(got[:kept], want[:kept], rtol=1e-4, atol=1e-3)


def test_shipped_example_maps_a_renamed_layer_to_nn_proposal(tmp_path: Path) -> None:
    example = tmp_path / "my_proposal.py"
    example.write_text(EXAMPLE.read_text().replace('"Python:rpn.proposal_layer.ProposalLayer"', '"Python:mine.Proposal"'))
    text = NET.replace('module: "rpn.proposal_layer" layer: "ProposalLayer"', 'module: "mine" layer: "Proposal"') % "'feat_stride': 16"
    model_path, _ = write_caffe(tmp_path, "rpn", text, {})
    result = subprocess.run(
        [sys.executable, "-m", "irforge.tools.ir_convert", "--input_model", str(model_path), "--extensions", str(example), "-o", str(tmp_path), "--emit", "mlir"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "nn.proposal" in (tmp_path / "rpn.mlir").read_text()


def test_unknown_param_str_key_is_refused(tmp_path: Path) -> None:
    model_path, _ = write_caffe(tmp_path, "rpn", NET % "'feat_stride': 16, 'bbox_vote': True", {})
    with pytest.raises(IrforgeError, match="param_str key.* bbox_vote .*not understood") as info:
        import_caffe(model_path)
    assert info.value.code == "E204"


def test_yaml_param_str_of_the_coco_files(tmp_path: Path) -> None:
    # py-faster-rcnn reads param_str with yaml.load; its COCO test.prototxt files write
    # "'feat_stride': 16 \n'scales': !!python/tuple [4, 8, 16, 32]" (here 3 scales: 9 anchors)
    model_path, _ = write_caffe(tmp_path, "rpn", NET % "'feat_stride': 16 \\n'scales': !!python/tuple [4, 8, 16]", {})
    (op,) = [o for o in import_caffe(model_path).func.body.block.ops if isinstance(o, Proposal)]
    assert op.floats("scale") == (4.0, 8.0, 16.0) and op.int_prop("feat_stride") == 16


def test_param_str_neither_dict_nor_yaml_is_refused(tmp_path: Path) -> None:
    model_path, _ = write_caffe(tmp_path, "rpn", NET % "feat_stride = 16", {})
    with pytest.raises(IrforgeError, match="param_str is not a Python dict literal"):
        import_caffe(model_path)


def test_second_top_gives_the_roi_scores(tmp_path: Path, cache_dir) -> None:  # type: ignore[no-untyped-def]
    # py-faster-rcnn's RPN-only test nets: top 'rois' and top 'scores' (here roi_scores) ([rows, 1])
    from tests.backends.ir_xml_support import run_openvino

    text = NET.replace('top: "rois"', 'top: "rois" top: "roi_scores"') % "'feat_stride': 16, 'post_nms_topn': 50"
    model_path, _ = write_caffe(tmp_path, "rpn", text, {})
    model = import_caffe(model_path)
    x = feeds()
    got = run(model, x)
    assert got["roi_scores"].shape == (50, 1)
    alone = run(import_caffe(write_caffe(tmp_path, "one", NET % "'feat_stride': 16, 'post_nms_topn': 50", {})[0]), x)["rois"]
    np.testing.assert_array_equal(got["rois"], alone)
    kept = int((got["rois"][:, 3] > 0).sum())
    scores = got["roi_scores"][:, 0]
    assert kept > 10 and np.all(np.diff(scores[:kept]) <= 0) and np.all(scores[kept:] == 0)
    # each score is the object score (second half of the channels) of an anchor cell
    assert np.isin(scores[:kept], x["scores"][0, 9:].ravel()).all()
    xml, _ = write_ir_xml(model, tmp_path / "rpn.xml")
    ov = run_openvino(xml, x, check_dims=False)
    np.testing.assert_allclose(ov["roi_scores"][:kept], got["roi_scores"][:kept], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ov["rois"][:kept], got["rois"][:kept], rtol=1e-4, atol=1e-3)
    on_cpu = run_cpu(model, x, cache_dir)
    np.testing.assert_array_equal(on_cpu["roi_scores"], got["roi_scores"])
