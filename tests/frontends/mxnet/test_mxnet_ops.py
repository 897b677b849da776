"""The remaining MXNet ops, several per model, against ONNX twins (ref, cpu and OpenVINO):
normalisations, linear algebra, Embedding, bilinear UpSampling, activations, the softmax
loss layers' modes, pooling's padding count, ROIPooling."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irforge.errors import IrforgeError
from tests.frontends.mxnet.support import check_everywhere, import_args
from tests.frontends.mxnet.twins import Pair, Twin
from tests.helpers import ort_session_run


def run_twin(tmp_path: Path, twin: Twin, heads: list[Pair], feeds: dict[str, np.ndarray], cpu: bool = True) -> None:
    params, model = twin.save(tmp_path, "ops", heads)
    names = [twin.sym.nodes[h[0][0]]["name"] for h in heads]
    want = dict(zip(names, ort_session_run(model, feeds)))
    shapes = ",".join("[" + ",".join(map(str, v.shape)) + "]" for v in feeds.values())
    check_everywhere(tmp_path, ["--input_model", str(params), "--input", ",".join(feeds), "--input_shape", shapes], feeds, want, cpu=cpu)


def test_normalisations_and_activations(tmp_path: Path) -> None:
    twin = Twin(seed=31)
    sym, onnx = twin.sym, twin.onnx
    x = twin.input("data", [2, 4, 5, 5])
    gamma, beta = twin.rng.uniform(0.5, 1.5, 4).astype(np.float32), twin.rng.uniform(-0.5, 0.5, 4).astype(np.float32)
    heads = [
        (sym.op("InstanceNorm", "inorm", [x[0], sym.param("inorm_gamma", gamma), sym.param("inorm_beta", beta)], eps=1e-4),
         onnx("InstanceNormalization", [x[1], twin.init(gamma), twin.init(beta)], epsilon=1e-4)),
        # knorm is left at its default 2: OpenVINO 2026.4 CPU computes LRN wrongly for bias 1.5 (ONNX LRN too)
        (sym.op("LRN", "lrn", [x[0]], nsize=3, alpha=0.3, beta=0.6), onnx("LRN", [x[1]], size=3, alpha=0.3, beta=0.6, bias=2.0)),
        (sym.op("Activation", "sig", [x[0]], act_type="sigmoid"), onnx("Sigmoid", [x[1]])),
        (sym.op("Activation", "tanh", [x[0]], act_type="tanh"), onnx("Tanh", [x[1]])),
        (sym.op("Activation", "softrelu", [x[0]], act_type="softrelu"), onnx("Softplus", [x[1]])),
        (sym.op("Activation", "softsign", [x[0]], act_type="softsign"), onnx("Softsign", [x[1]])),
        (sym.op("LeakyReLU", "rrelu", [x[0]], act_type="rrelu", lower_bound=0.1, upper_bound=0.3), onnx("LeakyRelu", [x[1]], alpha=0.2)),
        (sym.op("SoftmaxOutput", "sm_multi", [x[0], sym.var("label")], multi_output=True), onnx("Softmax", [x[1]], axis=1)),
        (sym.op("SoftmaxOutput", "sm_last", [x[0], sym.var("label2")], preserve_shape=True), onnx("Softmax", [x[1]], axis=-1)),
        (sym.op("SoftmaxActivation", "sm_instance", [x[0]]),
         onnx("Reshape", [onnx("Softmax", [onnx("Flatten", [x[1]], axis=1)], axis=1), twin.init(np.array([2, 4, 5, 5], np.int64))])),
        (sym.op("softmax", "sm_t", [x[0]], axis=2, temperature=2.0), onnx("Softmax", [onnx("Mul", [x[1], twin.init(np.array(0.5, np.float32))])], axis=2)),
    ]  # fmt: skip
    feed = np.random.default_rng(32).standard_normal((2, 4, 5, 5)).astype(np.float32)
    run_twin(tmp_path, twin, heads, {"data": feed})


def test_linear_algebra_embedding_and_arithmetic(tmp_path: Path) -> None:
    twin = Twin(seed=33)
    sym, onnx = twin.sym, twin.onnx
    a, b, ids = twin.input("a", [2, 3, 4]), twin.input("b", [2, 4, 5]), twin.input("ids", [2, 3])
    w2 = twin.weights(4, 6)
    table = twin.weights(7, 3, scale=1.0)
    fc_w, fc_b = twin.weights(6, 4), twin.rng.uniform(-1, 1, 6).astype(np.float32)
    clipped = onnx("Cast", [onnx("Clip", [ids[1], twin.init(np.array(0, np.float32)), twin.init(np.array(6, np.float32))])], to=6)
    heads = [
        (sym.op("batch_dot", "bdot", [a[0], b[0]]), onnx("MatMul", [a[1], b[1]])),
        (sym.op("batch_dot", "bdot_t", [b[0], b[0]], transpose_a=True), onnx("MatMul", [onnx("Transpose", [b[1]], perm=[0, 2, 1]), b[1]])),
        (sym.op("dot", "dot_nd", [a[0], sym.param("w2", w2)]), onnx("MatMul", [a[1], twin.init(w2)])),
        (sym.op("Embedding", "embed", [ids[0], sym.param("embed_weight", table)], input_dim=7, output_dim=3), onnx("Gather", [twin.init(table), clipped], axis=0)),
        (sym.op("FullyConnected", "fc_noflat", [a[0], sym.param("fc_weight", fc_w), sym.param("fc_bias", fc_b)], num_hidden=6, flatten=False),
         onnx("Add", [onnx("MatMul", [a[1], twin.init(fc_w.T.copy())]), twin.init(fc_b)])),
        (sym.op("add_n", "addn", [a[0], a[0], a[0]], num_args=3), onnx("Sum", [a[1], a[1], a[1]])),
        (sym.op("broadcast_maximum", "bmax", [a[0], sym.op("sum", "rowsum", [a[0]], axis=2, keepdims=True)]),
         onnx("Max", [a[1], onnx("ReduceSum", [a[1], twin.init(np.array([2], np.int64))], keepdims=1)])),
        (sym.op("_rdiv_scalar", "rdiv", [sym.op("_plus_scalar", "shift", [a[0]], scalar=3.0)], scalar=1.0),
         onnx("Div", [twin.init(np.array(1.0, np.float32)), onnx("Add", [a[1], twin.init(np.array(3.0, np.float32))])])),
        (sym.op("_power_scalar", "sq", [a[0]], scalar=2.0), onnx("Pow", [a[1], twin.init(np.array(2.0, np.float32))])),
    ]  # fmt: skip
    rng = np.random.default_rng(34)
    feeds = {"a": rng.standard_normal((2, 3, 4)).astype(np.float32), "b": rng.standard_normal((2, 4, 5)).astype(np.float32),
             "ids": np.array([[0, 3.7, 6], [9, -2, 2]], np.float32)}  # fmt: skip
    run_twin(tmp_path, twin, heads, feeds)


def test_bilinear_upsampling_pooling_padding_and_split(tmp_path: Path) -> None:
    twin = Twin(seed=35)
    sym, onnx = twin.sym, twin.onnx
    x = twin.input("data", [1, 4, 6, 6])
    k = np.array([0.25, 0.75, 0.75, 0.25], np.float32)
    bilinear = np.tile(np.outer(k, k), (4, 1, 1, 1)).astype(np.float32)
    parts = sym.op("SliceChannel", "halves", [x[0]], num_outputs=4, axis=1, squeeze_axis=True)
    split = onnx("Split", [x[1], twin.init(np.array([1, 1, 1, 1], np.int64))], axis=1)
    twin.nodes[-1].output[:] = [f"{split}_{i}" for i in range(4)]
    heads = [
        (sym.op("UpSampling", "up", [x[0], sym.param("up_weight", bilinear)], scale=2, sample_type="bilinear", num_filter=4, num_args=2),
         onnx("ConvTranspose", [x[1], twin.init(bilinear)], kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1], group=4)),
        (sym.op("Pooling", "avg_excl", [x[0]], pool_type="avg", kernel=(3, 3), stride=(2, 2), pad=(1, 1), count_include_pad=False),
         onnx("AveragePool", [x[1]], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0)),
        (sym.op("Pooling", "avg_incl", [x[0]], pool_type="avg", kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
         onnx("AveragePool", [x[1]], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)),
        (sym.op("elemwise_sub", "diff", [sym.output(parts, 3), sym.output(parts, 1)]),
         onnx("Squeeze", [onnx("Sub", [f"{split}_3", f"{split}_1"]), twin.init(np.array([1], np.int64))])),
        (sym.op("Concat", "cat", [x[0], x[0]], dim=-1, num_args=2), onnx("Concat", [x[1], x[1]], axis=-1)),
    ]  # fmt: skip
    run_twin(tmp_path, twin, heads, {"data": np.random.default_rng(36).standard_normal((1, 4, 6, 6)).astype(np.float32)})


def test_roi_pooling(tmp_path: Path) -> None:
    twin = Twin(seed=37)
    x, rois = twin.input("data", [1, 3, 12, 12]), twin.input("rois", [3, 5])
    head = twin.sym.op("ROIPooling", "roi", [x[0], rois[0]], pooled_size=(2, 3), spatial_scale=0.5), twin.onnx("MaxRoiPool", [x[1], rois[1]], pooled_shape=[2, 3], spatial_scale=0.5)
    boxes = np.array([[0, 0, 0, 15, 15], [0, 4, 2, 22, 9], [0, 10, 10, 23, 23]], np.float32)
    feeds = {"data": np.random.default_rng(38).standard_normal((1, 3, 12, 12)).astype(np.float32), "rois": boxes}
    run_twin(tmp_path, twin, [head], feeds, cpu=False)  # no CPU kernel for ROIPooling


def test_proposal_is_refused(tmp_path: Path) -> None:
    """_contrib_Proposal has no exact IR form (see the extractor): a one-line error, not boxes
    one pixel off."""
    b = Twin(seed=39).sym
    scores, deltas, info = b.var("cls_prob"), b.var("bbox_pred"), b.var("im_info")
    y = b.op("_contrib_Proposal", "rois", [scores, deltas, info], rpn_pre_nms_top_n=100, rpn_post_nms_top_n=20, feature_stride=8, scales=(2, 4), ratios=(0.5, 1, 2))
    params = b.save(tmp_path, "rpn", [y])
    with pytest.raises(IrforgeError, match="no exact IR form") as e:
        import_args("--input_model", str(params), "--input", "cls_prob,bbox_pred,im_info", "--input_shape", "[1,12,4,4],[1,24,4,4],[1,3]")
    assert e.value.code == "E414" and "rois" in str(e.value)


def test_full_pooling_whose_last_window_starts_in_the_padding_is_refused(tmp_path: Path) -> None:
    twin = Twin()
    x = twin.input("data", [1, 1, 5, 5])
    y = twin.pool(x, "pool", "max", k=2, stride=2, pad=1, convention="full")
    params, _ = twin.save(tmp_path, "pool", [y])
    with pytest.raises(IrforgeError, match=r"pooling_convention full gives \[4, 4\]") as e:
        import_args("--input_model", str(params), "--input_shape", "[1,1,5,5]")
    assert e.value.code == "E412"
