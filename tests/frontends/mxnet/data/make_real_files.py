"""Writes the small files of this folder with real MXNet 1.9.1 (run once, with MXNet's venv:
`MXNET_MKLDNN_ENABLED=0 /tmp/mxvenv/bin/python tests/frontends/mxnet/data/make_real_files.py`).

    tiny-symbol.json, tiny-0000.params   mx.model.save_checkpoint of a small conv net
    tiny.npz                             its input and MXNet's output
    dtypes.params                        mx.nd.save of arrays of several element types (v2)
    numpy.params                         mx.npx.save with numpy semantics (v3, a 0-d array)
"""

from pathlib import Path

import mxnet as mx
import numpy as np

HERE = Path(__file__).parent
rng = np.random.default_rng(0)
S = mx.sym
data = S.var("data")
y = S.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=4, name="conv0")
y = S.BatchNorm(y, name="bn0")  # fix_gamma and eps left at MXNet's defaults
y = S.LeakyReLU(y, act_type="prelu", name="prelu0")
y = S.Pooling(y, kernel=(3, 3), stride=(2, 2), pool_type="max", pooling_convention="full", name="pool0")
y = S.Deconvolution(y, kernel=(2, 2), stride=(2, 2), adj=(1, 1), num_filter=3, name="up0")
y = S.Reshape(y, shape=(0, -3, -2), name="reshape0")
y = S.FullyConnected(y, num_hidden=5, name="fc0")
y = S.SoftmaxOutput(y, name="softmax")
shape = (1, 2, 6, 6)
arg_shapes, _, aux_shapes = y.infer_shape(data=shape)
args = {n: mx.nd.array(rng.standard_normal(s).astype(np.float32) * 0.5) for n, s in zip(y.list_arguments(), arg_shapes) if n not in ("data", "softmax_label")}
auxs = {n: mx.nd.array(rng.uniform(0.5, 1.5, s).astype(np.float32)) for n, s in zip(y.list_auxiliary_states(), aux_shapes)}
x = mx.nd.array(rng.standard_normal(shape).astype(np.float32))
exe = y.bind(mx.cpu(), {"data": x, "softmax_label": mx.nd.zeros((1,)), **args}, aux_states=auxs, grad_req="null")
out = exe.forward(is_train=False)[0].asnumpy()
mx.model.save_checkpoint(str(HERE / "tiny"), 0, y, args, auxs)
np.savez(HERE / "tiny.npz", data=x.asnumpy(), softmax=out)
mx.nd.save(str(HERE / "dtypes.params"), {
    "f32": mx.nd.array([[1.5, -2.0]], dtype="float32"), "f16": mx.nd.array([0.25, 3.0], dtype="float16"),
    "f64": mx.nd.array([1e-300], dtype="float64"), "u8": mx.nd.array([7, 255], dtype="uint8"),
    "i32": mx.nd.array([-3], dtype="int32"), "i64": mx.nd.array([2**40], dtype="int64"),
    "empty": mx.nd.array(np.zeros((0,), np.float32)),
})
mx.npx.set_np()
mx.npx.save(str(HERE / "numpy.params"), {"scalar": mx.np.array(2.5), "vector": mx.np.array([1.0, 2.0])})

# rpn-symbol.json, rpn-0000.params, rpn.npz: _contrib_Proposal alone, with MXNet's rois
mx.npx.reset_np()
cls, bbox, info = S.var("cls_prob"), S.var("bbox_pred"), S.var("im_info")
rois = S.contrib.Proposal(cls, bbox, info, rpn_pre_nms_top_n=50, rpn_post_nms_top_n=10, threshold=0.7, rpn_min_size=4,
                          scales=(2, 4), ratios=(0.5, 1, 2), feature_stride=8, name="rois")  # fmt: skip
feeds = {"cls_prob": rng.uniform(0, 1, (1, 12, 5, 6)).astype(np.float32), "bbox_pred": (rng.standard_normal((1, 24, 5, 6)) * 0.2).astype(np.float32),
         "im_info": np.array([[40, 48, 1.0]], np.float32)}  # fmt: skip
exe = rois.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in feeds.items()}, grad_req="null")
mx.model.save_checkpoint(str(HERE / "rpn"), 0, rois, {}, {})
np.savez(HERE / "rpn.npz", rois=exe.forward(is_train=False)[0].asnumpy(), **feeds)
