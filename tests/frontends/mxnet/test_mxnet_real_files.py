"""Files written by real MXNet 1.9.1 (`data/make_real_files.py`): a save_checkpoint of a small
net (BatchNorm defaults, PReLU, full pooling, Deconvolution adj, Reshape codes, FC,
SoftmaxOutput) against MXNet's own output, and mx.nd.save / mx.npx.save arrays (v2, v3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irforge.frontends.mxnet.loader import load_ndarray_list
from tests.frontends.mxnet.support import check_everywhere

DATA = Path(__file__).parent / "data"


def test_checkpoint_written_by_mxnet(tmp_path: Path) -> None:
    stored = np.load(DATA / "tiny.npz")
    argv = ["--input_model", str(DATA / "tiny-0000.params"), "--input_shape", "[1,2,6,6]"]
    check_everywhere(tmp_path, argv, {"data": stored["data"]}, {"softmax": stored["softmax"]}, rtol=1e-5)


def test_arrays_written_by_mxnet() -> None:
    arrays = load_ndarray_list(DATA / "dtypes.params").arrays
    assert {k: (str(v.dtype), v.shape) for k, v in arrays.items()} == {
        "f32": ("float32", (1, 2)), "f16": ("float16", (2,)), "f64": ("float64", (1,)), "u8": ("uint8", (2,)),
        "i32": ("int32", (1,)), "i64": ("int64", (1,)), "empty": ("float32", (0,)),
    }  # fmt: skip
    assert arrays["f32"].tolist() == [[1.5, -2.0]] and arrays["f16"].tolist() == [0.25, 3.0]
    assert arrays["u8"].tolist() == [7, 255] and arrays["i64"].tolist() == [2**40] and arrays["f64"][0] == 1e-300
    numpy_semantics = load_ndarray_list(DATA / "numpy.params").arrays
    assert numpy_semantics["scalar"].shape == () and float(numpy_semantics["scalar"]) == 2.5
    assert numpy_semantics["vector"].tolist() == [1.0, 2.0]


def test_ir_proposal_is_one_pixel_off_mxnet_so_the_importer_refuses() -> None:
    """Why _contrib_Proposal is refused: on MXNet 1.9.1's own RPN output the IR's Proposal
    (nn.proposal, Caffe's convention) gives the same rois in the same order, x1 and y1 equal,
    but x2 and y2 MXNet's + 1 where not clipped to the image."""
    import pytest

    from irforge.backends.reference import run
    from irforge.builder import ModelBuilder
    from irforge.dialects.nn.rcnn import Proposal
    from irforge.errors import IrforgeError
    from tests.frontends.mxnet.support import import_args

    stored = np.load(DATA / "rpn.npz")
    with pytest.raises(IrforgeError, match="no exact IR form"):
        import_args("--input_model", str(DATA / "rpn-0000.params"), "--input", "cls_prob,bbox_pred,im_info",
                    "--input_shape", "[1,12,5,6],[1,24,5,6],[1,3]")  # fmt: skip
    b = ModelBuilder()
    scores, deltas = b.input("cls_prob", stored["cls_prob"].shape), b.input("bbox_pred", stored["bbox_pred"].shape)
    info = b.input("im_info", (3,))
    # the attributes of rpn-symbol.json, as the importer mapped them
    rois = b.add(Proposal, [scores, deltas, info], name="rois", base_size=8, feat_stride=8, min_size=4, ratio=[0.5, 1.0, 2.0],
                 scale=[2.0, 4.0], pre_nms_topn=50, post_nms_topn=10, nms_thresh=0.7).results[0]  # fmt: skip
    b.output(rois, "rois")
    got = run(b.finish(), {"cls_prob": stored["cls_prob"], "bbox_pred": stored["bbox_pred"], "im_info": stored["im_info"].reshape(3)})["rois"]
    want = stored["rois"]
    np.testing.assert_allclose(got[:, :3], want[:, :3], atol=1e-4)
    limits = np.array([47.0, 39.0])  # width - 1, height - 1
    unclipped = got[:, 3:] < limits
    assert unclipped.sum() >= 10
    np.testing.assert_allclose(got[:, 3:][unclipped], want[:, 3:][unclipped] + 1, atol=1e-4)
