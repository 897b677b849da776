"""Whole MXNet models against onnxruntime running an ONNX twin, through the reference
interpreter, the CPU backend and OpenVINO: ResNet-style (BatchNorm's fix_gamma and default
eps), MobileNet (depthwise), SqueezeNet (`full` pooling), Deconvolution (adj,
target_shape), LeakyReLU variants with scalar ops, Reshape's special codes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.frontends.mxnet.support import check_everywhere
from tests.frontends.mxnet.twins import Twin
from tests.helpers import ort_session_run


def expect(twin: Twin, heads: list, path: Path, feeds: dict[str, np.ndarray], names: list[str]) -> dict[str, np.ndarray]:
    model = twin.model([h[1] for h in heads])
    return dict(zip(names, ort_session_run(model, feeds)))


def resnet(twin: Twin, x, channels: int = 8):  # type: ignore[no-untyped-def]
    """Stem, two residual blocks (the second with a projection), global pool, FC, softmax."""
    y = twin.relu(twin.batch_norm(twin.conv(x, "conv0", 3, channels, 3, pad=1, bias=False), "bn0", channels), "relu0")
    y = twin.pool(y, "pool0", "max", k=3, stride=2, pad=1)
    for block, (cin, cout, stride) in enumerate([(channels, channels, 1), (channels, 2 * channels, 2)]):
        name = f"stage{block}"
        z = twin.relu(twin.batch_norm(twin.conv(y, f"{name}_conv1", cin, cout, 3, stride=stride, pad=1, bias=False), f"{name}_bn1", cout, fix_gamma=False), f"{name}_relu1")
        z = twin.batch_norm(twin.conv(z, f"{name}_conv2", cout, cout, 3, pad=1, bias=False), f"{name}_bn2", cout, eps=2e-5)
        shortcut = y if cin == cout and stride == 1 else twin.conv(y, f"{name}_sc", cin, cout, 1, stride=stride, bias=False)
        y = twin.relu(twin.binary(z, shortcut, f"{name}_add", "elemwise_add", "Add"), f"{name}_relu2")
    y = twin.pool(y, "pool1", "avg", global_pool=True)
    y = twin.fc(y, "fc1", 2 * channels, 10)
    return twin.sym.op("SoftmaxOutput", "softmax", [y[0], twin.sym.var("softmax_label")]), twin.onnx("Softmax", [y[1]], axis=1)


def test_resnet_style(tmp_path: Path) -> None:
    twin = Twin(seed=1)
    head = resnet(twin, twin.input("data", [1, 3, 16, 16]))
    params, model = twin.save(tmp_path, "resnet", [head])
    x = np.random.default_rng(2).standard_normal((1, 3, 16, 16)).astype(np.float32)
    (want,) = ort_session_run(model, {"data": x})
    check_everywhere(tmp_path, ["--input_model", str(params), "--input_shape", "[1,3,16,16]"], {"data": x}, {"softmax": want})


def test_mobilenet_depthwise(tmp_path: Path) -> None:
    twin = Twin(seed=3)
    x = twin.input("data", [1, 3, 16, 16])
    y = twin.relu(twin.batch_norm(twin.conv(x, "conv1", 3, 8, 3, stride=2, pad=1, bias=False), "bn1", 8), "relu1")
    for i, (cin, cout, stride) in enumerate([(8, 16, 1), (16, 32, 2)]):
        y = twin.relu(twin.batch_norm(twin.conv(y, f"dw{i}", cin, cin, 3, stride=stride, pad=1, group=cin, bias=False), f"dw{i}_bn", cin), f"dw{i}_relu")
        y = twin.relu(twin.batch_norm(twin.conv(y, f"pw{i}", cin, cout, 1, bias=False), f"pw{i}_bn", cout), f"pw{i}_relu")
    y = twin.pool(y, "pool", "avg", global_pool=True)
    y = twin.fc(y, "fc", 32, 5)
    params, model = twin.save(tmp_path, "mobilenet", [y])
    feed = np.random.default_rng(4).standard_normal((1, 3, 16, 16)).astype(np.float32)
    (want,) = ort_session_run(model, {"data": feed})
    check_everywhere(tmp_path, ["--input_model", str(params), "--input_shape", "[1,3,16,16]"], {"data": feed}, {"fc": want})


def fire(twin: Twin, x, name: str, cin: int, squeeze: int, expand: int):  # type: ignore[no-untyped-def]
    s = twin.relu(twin.conv(x, f"{name}_squeeze1x1", cin, squeeze, 1), f"{name}_relu_squeeze1x1")
    e1 = twin.relu(twin.conv(s, f"{name}_expand1x1", squeeze, expand, 1), f"{name}_relu_expand1x1")
    e3 = twin.relu(twin.conv(s, f"{name}_expand3x3", squeeze, expand, 3, pad=1), f"{name}_relu_expand3x3")
    return twin.sym.op("Concat", f"{name}_concat", [e1[0], e3[0]], dim=1, num_args=2), twin.onnx("Concat", [e1[1], e3[1]], axis=1)


def test_squeezenet_full_pooling(tmp_path: Path) -> None:
    """Pooling with pooling_convention full (ceil) on 15 -> 7 -> 3 maps, as SqueezeNet 1.1."""
    twin = Twin(seed=5)
    x = twin.input("data", [1, 3, 33, 33])
    y = twin.relu(twin.conv(x, "conv1", 3, 16, 3, stride=2), "relu_conv1")
    y = twin.pool(y, "pool1", "max", k=3, stride=2, convention="full")
    y = fire(twin, y, "fire2", 16, 4, 8)
    y = twin.pool(y, "pool3", "max", k=3, stride=2, convention="full")
    y = fire(twin, y, "fire3", 16, 4, 8)
    y = twin.sym.op("Dropout", "drop9", [y[0]], p=0.5), y[1]
    y = twin.relu(twin.conv(y, "conv10", 16, 10, 1), "relu_conv10")
    y = twin.pool(y, "pool10", "avg", global_pool=True)
    flat = twin.sym.op("Flatten", "flatten", [y[0]]), twin.onnx("Flatten", [y[1]], axis=1)
    head = twin.sym.op("SoftmaxOutput", "softmax", [flat[0], twin.sym.var("softmax_label")]), twin.onnx("Softmax", [flat[1]], axis=1)
    params, model = twin.save(tmp_path, "squeezenet", [head])
    assert "pooling_convention" in (tmp_path / "squeezenet-symbol.json").read_text()
    feed = np.random.default_rng(6).standard_normal((1, 3, 33, 33)).astype(np.float32)
    (want,) = ort_session_run(model, {"data": feed})
    check_everywhere(tmp_path, ["--input_model", str(params), "--input_shape", "[1,3,33,33]"], {"data": feed}, {"softmax": want})


def test_deconvolution_adj_and_target_shape(tmp_path: Path) -> None:
    twin = Twin(seed=7)
    x = twin.input("data", [1, 4, 5, 5])
    a = twin.deconv(x, "up_adj", 4, 6, 3, stride=2, pad=1, adj=1)  # 5 -> 10
    b = twin.deconv(x, "up_target", 4, 6, 4, stride=2, target=(9, 10), in_hw=(5, 5))  # full 12
    c = twin.deconv(x, "up_grouped", 4, 4, 2, stride=2, group=2)
    params, model = twin.save(tmp_path, "deconv", [a, b, c])
    feed = np.random.default_rng(8).standard_normal((1, 4, 5, 5)).astype(np.float32)
    want = dict(zip(["up_adj", "up_target", "up_grouped"], ort_session_run(model, {"data": feed})))
    assert want["up_adj"].shape == (1, 6, 10, 10) and want["up_target"].shape == (1, 6, 9, 10)
    check_everywhere(tmp_path, ["--input_model", str(params), "--input_shape", "[1,4,5,5]"], {"data": feed}, want, cpu=True)


@pytest.mark.parametrize("act", ["leaky", "prelu", "elu", "selu", "gelu"])
def test_leaky_relu_variants_and_scalar_ops(tmp_path: Path, act: str) -> None:
    twin = Twin(seed=9)
    x = twin.input("data", [1, 4, 6, 6])
    y = twin.conv(x, "conv", 4, 4, 3, pad=1)
    if act == "leaky":
        z = twin.sym.op("LeakyReLU", "act", [y[0]], act_type="leaky", slope=0.1), twin.onnx("LeakyRelu", [y[1]], alpha=0.1)
    elif act == "prelu":
        gamma = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
        z = twin.sym.op("LeakyReLU", "act", [y[0], twin.sym.param("act_gamma", gamma)], act_type="prelu"), twin.onnx("PRelu", [y[1], twin.init(gamma.reshape(4, 1, 1))])
    elif act == "elu":
        z = twin.sym.op("LeakyReLU", "act", [y[0]], act_type="elu", slope=0.7), twin.onnx("Elu", [y[1]], alpha=0.7)
    elif act == "selu":
        z = twin.sym.op("LeakyReLU", "act", [y[0]], act_type="selu"), twin.onnx("Selu", [y[1]])
    else:
        half, one = twin.init(np.array(0.5, np.float32)), twin.init(np.array(1.0, np.float32))
        erf = twin.onnx("Erf", [twin.onnx("Div", [y[1], twin.init(np.array(np.sqrt(2), np.float32))])])
        z = twin.sym.op("LeakyReLU", "act", [y[0]], act_type="gelu"), twin.onnx("Mul", [twin.onnx("Mul", [y[1], half]), twin.onnx("Add", [erf, one])])
    z = twin.scalar(z, "mul", "_mul_scalar", 2.0, "Mul")
    z = twin.scalar(z, "plus", "_plus_scalar", 0.5, "Add")
    z = twin.scalar(z, "rminus", "_rminus_scalar", 1.0, "Sub", reverse=True)
    z = twin.scalar(z, "div", "_div_scalar", 4.0, "Div")
    z = twin.scalar(z, "max", "_maximum_scalar", -0.75, "Max")
    z = twin.sym.op("clip", "clip", [z[0]], a_min=-0.5, a_max=0.6), twin.onnx("Clip", [z[1], twin.init(np.array(-0.5, np.float32)), twin.init(np.array(0.6, np.float32))])
    params, model = twin.save(tmp_path, "act", [z])
    feed = np.random.default_rng(10).standard_normal((1, 4, 6, 6)).astype(np.float32)
    (want,) = ort_session_run(model, {"data": feed})
    check_everywhere(tmp_path, ["--input_model", str(params), "--input_shape", "[1,4,6,6]"], {"data": feed}, {"clip": want})


RESHAPES = [
    ("keep_infer", dict(shape=(0, -1)), [2, 60]),
    ("copy_rest", dict(shape=(-2,)), [2, 3, 4, 5]),
    ("merge", dict(shape=(0, -3, 5)), [2, 12, 5]),
    ("split", dict(shape=(-4, 1, 2, -2)), [1, 2, 3, 4, 5]),
    ("split_infer", dict(shape=(-4, -1, 1, -2)), [2, 1, 3, 4, 5]),
    ("merge_rest", dict(shape=(-3, -2)), [6, 4, 5]),
    ("infer_last", dict(shape=(2, 3, -1)), [2, 3, 20]),
    ("reverse", dict(shape=(-1, 0), reverse=True), [24, 5]),
]
"""(name, Reshape attributes, the shape MXNet's documentation rules give for [2, 3, 4, 5])."""


def test_reshape_special_codes(tmp_path: Path) -> None:
    twin = Twin(seed=11)
    x = twin.input("data", [2, 3, 4, 5])
    y = twin.scalar(x, "scaled", "_mul_scalar", 3.0, "Mul")
    heads = []
    for name, attrs, shape in RESHAPES:
        heads.append((twin.sym.op("Reshape", name, [y[0]], **attrs), twin.onnx("Reshape", [y[1], twin.init(np.array(shape, np.int64))])))
    params, model = twin.save(tmp_path, "reshape", heads)
    feed = np.random.default_rng(12).standard_normal((2, 3, 4, 5)).astype(np.float32)
    want = dict(zip([r[0] for r in RESHAPES], ort_session_run(model, {"data": feed})))
    assert [list(want[name].shape) for name, _, _ in RESHAPES] == [shape for _, _, shape in RESHAPES]
    check_everywhere(tmp_path, ["--input_model", str(params), "--input_shape", "[2,3,4,5]"], {"data": feed}, want)


def test_shape_ops_and_reductions(tmp_path: Path) -> None:
    """transpose, expand_dims, squeeze, SliceChannel, slice_axis, slice, Pad, Crop,
    broadcast ops, mean/sum/max, softmax/log_softmax, UpSampling nearest, L2Normalization."""
    twin = Twin(seed=13)
    x = twin.input("data", [1, 4, 6, 6])
    sym, onnx = twin.sym, twin.onnx
    i64 = lambda *v: twin.init(np.array(v, np.int64))  # noqa: E731
    heads = []
    parts = sym.op("SliceChannel", "split", [x[0]], num_outputs=2, axis=1)
    a, b = onnx("Split", [x[1], i64(2, 2)], axis=1), None
    twin.nodes[-1].output[:] = ["split_a", "split_b"]
    a, b = "split_a", "split_b"
    heads.append((sym.op("broadcast_mul", "bmul", [(parts[0], 0), (parts[0], 1)]), onnx("Mul", ["split_a", "split_b"])))
    heads.append((sym.op("transpose", "perm", [x[0]], axes=(0, 2, 3, 1)), onnx("Transpose", [x[1]], perm=[0, 2, 3, 1])))
    heads.append((sym.op("expand_dims", "unsq", [x[0]], axis=-1), onnx("Unsqueeze", [x[1], i64(4)])))
    pooled = sym.op("mean", "mean_hw", [x[0]], axis=(2, 3), keepdims=True), onnx("ReduceMean", [x[1], i64(2, 3)], keepdims=1)
    heads.append(pooled)
    heads.append((sym.op("squeeze", "sq", [pooled[0]], axis=(2, 3)), onnx("Squeeze", [pooled[1], i64(2, 3)])))
    heads.append((sym.op("sum", "sum_c", [x[0]], axis=1), onnx("ReduceSum", [x[1], i64(1)], keepdims=0)))
    heads.append((sym.op("max", "max_all", [x[0]]), onnx("Reshape", [onnx("ReduceMax", [x[1]], keepdims=0), i64(1)])))
    heads.append((sym.op("slice_axis", "sl_axis", [x[0]], axis=2, begin=1, end="None"), onnx("Slice", [x[1], i64(1), i64(6), i64(2)])))
    heads.append((sym.op("slice", "sl", [x[0]], begin=(0, 1, "None"), end=("None", 3, 5), step=(1, 1, 2)), onnx("Slice", [x[1], i64(0, 1, 0), i64(1, 3, 5), i64(0, 1, 2), i64(1, 1, 2)])))
    heads.append((sym.op("Pad", "pad", [x[0]], mode="constant", pad_width=(0, 0, 0, 0, 1, 2, 2, 1), constant_value=0.5), onnx("Pad", [x[1], i64(0, 0, 1, 2, 0, 0, 2, 1), twin.init(np.array(0.5, np.float32))])))
    heads.append((sym.op("Pad", "pad_edge", [x[0]], mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 2, 2)), onnx("Pad", [x[1], i64(0, 0, 1, 2, 0, 0, 1, 2)], mode="edge")))
    heads.append((sym.op("Crop", "crop", [x[0]], num_args=1, offset=(1, 2), h_w=(3, 4)), onnx("Slice", [x[1], i64(1, 2), i64(4, 6), i64(2, 3)])))
    heads.append((sym.op("softmax", "softmax_c", [x[0]], axis=1), onnx("Softmax", [x[1]], axis=1)))
    heads.append((sym.op("log_softmax", "logsoftmax", [x[0]]), onnx("LogSoftmax", [x[1]], axis=-1)))
    heads.append((sym.op("UpSampling", "up", [x[0]], scale=2, sample_type="nearest", num_args=1), onnx("Resize", [x[1], "", twin.init(np.array([1, 1, 2, 2], np.float32))], mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")))
    sq = onnx("ReduceSum", [onnx("Mul", [x[1], x[1]]), i64(1, 2, 3)], keepdims=1)
    heads.append((sym.op("L2Normalization", "l2", [x[0]], mode="instance"), onnx("Div", [x[1], onnx("Sqrt", [onnx("Add", [sq, twin.init(np.array(1e-10, np.float32))])])])))
    sq_s = onnx("ReduceSum", [onnx("Mul", [x[1], x[1]]), i64(2, 3)], keepdims=1)
    heads.append((sym.op("L2Normalization", "l2_spatial", [x[0]], mode="spatial", eps=1e-6), onnx("Div", [x[1], onnx("Sqrt", [onnx("Add", [sq_s, twin.init(np.array(1e-6, np.float32))])])])))
    params, model = twin.save(tmp_path, "shapes", heads)
    names = [twin.sym.nodes[h[0][0]]["name"] for h in heads]
    feed = np.random.default_rng(14).standard_normal((1, 4, 6, 6)).astype(np.float32)
    want = dict(zip(names, ort_session_run(model, {"data": feed})))
    check_everywhere(tmp_path, ["--input_model", str(params), "--input_shape", "[1,4,6,6]"], {"data": feed}, want)
