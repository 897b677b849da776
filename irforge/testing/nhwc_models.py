"""NHWC ONNX models as converters from NHWC frameworks (tf2onnx, Keras) produce them.

Every convolution and pooling sits between a Transpose to NCHW and one back to NHWC, while
batch normalisation (as Mul + Add with per-channel vectors), activations, residual adds,
the global mean and the classifier work on NHWC tensors. `convert-layout` must remove all
the inner transposes.
"""

from __future__ import annotations

import numpy as np
import onnx

from irforge.testing.onnx_models import GraphBuilder, image_input

TO_NCHW = [0, 3, 1, 2]
TO_NHWC = [0, 2, 3, 1]


def _nchw_op(g: GraphBuilder, x: str, op: str, *args: object, **attrs: object) -> str:
    """`op` applied in NCHW between the transposes an NHWC converter emits."""
    t = g.node("Transpose", [x], "to_nchw", perm=TO_NCHW)
    if op == "Conv":
        y = g.conv(t, *args, **attrs)  # type: ignore[arg-type]
    else:
        y = g.node(op, [t], op.lower(), **attrs)  # type: ignore[assignment]
    return g.node("Transpose", [y], "to_nhwc", perm=TO_NHWC)  # type: ignore[return-value]


def _bn_nhwc(g: GraphBuilder, x: str, c: int) -> str:
    scale = g.tensor(g.rng.uniform(0.5, 1.5, c).astype(np.float32), "bn_scale")
    shift = g.tensor(g.rng.uniform(-0.1, 0.1, c).astype(np.float32), "bn_shift")
    return g.node("Add", [g.node("Mul", [x, scale]), shift])  # type: ignore[list-item,return-value]


def _unit(g: GraphBuilder, x: str, cin: int, cout: int, k: int, stride: int = 1, relu: bool = True) -> str:
    y = _bn_nhwc(g, _nchw_op(g, x, "Conv", cin, cout, k, stride), cout)
    return g.node("Relu", [y]) if relu else y  # type: ignore[return-value]


def resnet_nhwc(blocks: tuple[int, ...] = (1, 1), width: int = 8, size: int = 16, classes: int = 10, flatten: bool = False, seed: int = 0) -> onnx.ModelProto:
    """A ResNet-style NHWC classifier; `flatten` ends in Reshape -> MatMul (Keras Flatten + Dense)
    instead of the global mean."""
    g = GraphBuilder(seed)
    y = _unit(g, "data", 3, width, 3)
    y = _nchw_op(g, y, "MaxPool", kernel_shape=[2, 2], strides=[2, 2])
    cin, spatial = width, size // 2
    for stage, count in enumerate(blocks):
        cout = width * 2**stage
        for i in range(count):
            stride = 2 if stage > 0 and i == 0 else 1
            z = _unit(g, _unit(g, y, cin, cout, 3, stride), cout, cout, 3, relu=False)
            shortcut = y if stride == 1 and cin == cout else _unit(g, y, cin, cout, 1, stride, relu=False)
            y = g.node("Relu", [g.node("Add", [z, shortcut])])  # type: ignore[list-item,assignment]
            cin, spatial = cout, spatial // stride
    if flatten:
        features = cin * spatial * spatial
        y = g.node("Reshape", [y, g.tensor(np.array([1, features], np.int64), "shape")])  # type: ignore[assignment]
    else:
        features = cin
        y = g.node("ReduceMean", [y], "mean", axes=[1, 2], keepdims=0)  # type: ignore[assignment]
    w = g.tensor((g.rng.standard_normal((features, classes)) / np.sqrt(features)).astype(np.float32), "dense_w")
    b = g.tensor(g.rng.uniform(-0.1, 0.1, classes).astype(np.float32), "dense_b")
    logits = g.node("Add", [g.node("MatMul", [y, w]), b])  # type: ignore[list-item]
    out = g.node("Softmax", [logits], "prob", axis=-1)
    model = g.model([image_input("data", [1, size, size, 3])], out, "resnet_nhwc")  # type: ignore[arg-type]
    model.opset_import[0].version = 13  # ReduceMean with axes as an attribute
    return model
