"""ONNX models built with `onnx.helper` for tests, benchmarks and examples (no downloads).

Each builder returns a `ModelProto` with seeded random weights and BatchNormalization kept
as its own node, as exporters produce it, so irforge's fusion has real work to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


@dataclass
class GraphBuilder:
    """Appends ONNX nodes with fresh names; weights become initializers."""

    seed: int = 0
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    count: int = 0

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def fresh(self, base: str) -> str:
        self.count += 1
        return f"{base}_{self.count}"

    def tensor(self, array: np.ndarray, base: str) -> str:
        name = self.fresh(base)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op_type: str, inputs: list[str], base: str | None = None, outputs: int = 1, **attrs: object) -> str | list[str]:
        name = self.fresh(base or op_type.lower())
        names = [name] if outputs == 1 else [f"{name}:{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, names, name=name, **attrs))
        return names[0] if outputs == 1 else names

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1, bias: bool = False) -> str:
        fan_in = cin // group * k * k
        w = (self.rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        inputs = [x, self.tensor(w, "w")]
        if bias:
            inputs.append(self.tensor(self.rng.uniform(-0.1, 0.1, cout).astype(np.float32), "b"))
        p = k // 2
        return self.node("Conv", inputs, "conv", kernel_shape=[k, k], strides=[stride, stride], pads=[p, p, p, p], group=group)  # type: ignore[return-value]

    def bn(self, x: str, c: int) -> str:
        stats = [self.rng.uniform(0.5, 1.5, c), self.rng.uniform(-0.1, 0.1, c), self.rng.uniform(-0.1, 0.1, c), self.rng.uniform(0.5, 1.5, c)]
        names = [self.tensor(s.astype(np.float32), n) for s, n in zip(stats, ("gamma", "beta", "mean", "var"))]
        return self.node("BatchNormalization", [x, *names], "bn", epsilon=1e-5)  # type: ignore[return-value]

    def conv_bn(self, x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1, act: str | None = "Relu") -> str:
        y = self.bn(self.conv(x, cin, cout, k, stride, group), cout)
        if act == "Relu":
            y = self.node("Relu", [y])  # type: ignore[assignment]
        elif act == "Relu6":
            y = self.node("Clip", [y, self.tensor(np.array(0, np.float32), "min"), self.tensor(np.array(6, np.float32), "max")], "relu6")  # type: ignore[assignment]
        return y

    def fc(self, x: str, cin: int, cout: int) -> str:
        w = (self.rng.standard_normal((cout, cin)) / np.sqrt(cin)).astype(np.float32)
        b = self.rng.uniform(-0.1, 0.1, cout).astype(np.float32)
        return self.node("Gemm", [x, self.tensor(w, "fc_w"), self.tensor(b, "fc_b")], "fc", transB=1)  # type: ignore[return-value]

    def model(self, inputs: list[onnx.ValueInfoProto], output: str, name: str) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes, name, inputs, [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)], self.initializers
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="irforge.testing")
        return model


def image_input(name: str, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def classifier_head(g: GraphBuilder, x: str, channels: int, classes: int) -> str:
    pooled = g.node("GlobalAveragePool", [x], "gap")
    flat = g.node("Flatten", [pooled], "flatten", axis=1)
    logits = g.fc(flat, channels, classes)  # type: ignore[arg-type]
    return g.node("Softmax", [logits], "prob", axis=1)  # type: ignore[return-value]


def resnet(blocks: tuple[int, ...] = (2, 2), width: int = 16, size: int = 32, classes: int = 10, bottleneck: bool = False, seed: int = 0) -> onnx.ModelProto:
    """A ResNet-style stack: stem, stages of residual blocks (basic or bottleneck), head.

    `resnet((3, 4, 6, 3), 64, 224, 1000, bottleneck=True)` has ResNet-50's layer shapes.
    """
    g = GraphBuilder(seed)
    y = g.conv_bn("data", 3, width, 7 if size >= 64 else 3, 2 if size >= 64 else 1)
    if size >= 64:
        y = g.node("MaxPool", [y], "pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])  # type: ignore[assignment]
    cin = width
    for stage, count in enumerate(blocks):
        mid = width * 2**stage
        cout = mid * 4 if bottleneck else mid
        for i in range(count):
            stride = 2 if stage > 0 and i == 0 else 1
            if bottleneck:
                z = g.conv_bn(y, cin, mid, 1)
                z = g.conv_bn(z, mid, mid, 3, stride)
                z = g.conv_bn(z, mid, cout, 1, act=None)
            else:
                z = g.conv_bn(y, cin, cout, 3, stride)
                z = g.conv_bn(z, cout, cout, 3, act=None)
            shortcut = y if stride == 1 and cin == cout else g.conv_bn(y, cin, cout, 1, stride, act=None)
            y = g.node("Relu", [g.node("Add", [z, shortcut])])  # type: ignore[list-item,assignment]
            cin = cout
    out = classifier_head(g, y, cin, classes)
    return g.model([image_input("data", [1, 3, size, size])], out, "resnet")


def mobilenet_v2(settings: tuple[tuple[int, int, int, int], ...] = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 2, 2)), width: int = 32, size: int = 32, classes: int = 10, seed: int = 0) -> onnx.ModelProto:
    """Inverted residual blocks (expand 1x1, depthwise 3x3, project 1x1) with ReLU6 as Clip.

    `settings` rows are (expansion t, channels c, repeats n, stride s) as in the paper; the
    full MobileNetV2 is mobilenet_v2(MOBILENET_V2_FULL, 32, 224, 1000).
    """
    g = GraphBuilder(seed)
    y = g.conv_bn("data", 3, width, 3, 2, act="Relu6")
    cin = width
    for t, c, n, s in settings:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            z = g.conv_bn(y, cin, hidden, 1, act="Relu6") if t != 1 else y
            z = g.conv_bn(z, hidden, hidden, 3, stride, group=hidden, act="Relu6")
            z = g.conv_bn(z, hidden, c, 1, act=None)
            y = g.node("Add", [z, y]) if stride == 1 and cin == c else z  # type: ignore[assignment]
            cin = c
    y = g.conv_bn(y, cin, cin * 4, 1, act="Relu6")
    out = classifier_head(g, y, cin * 4, classes)
    return g.model([image_input("data", [1, 3, size, size])], out, "mobilenet_v2")


MOBILENET_V2_FULL = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))


def vgg(stages: tuple[int, ...] = (1, 1, 2), width: int = 8, size: int = 32, classes: int = 10, seed: int = 0) -> onnx.ModelProto:
    """VGG-style: stages of 3x3 conv + bias + ReLU, max pooling, then two FC layers."""
    g = GraphBuilder(seed)
    y, cin = "data", 3
    for stage, count in enumerate(stages):
        cout = width * 2**stage
        for _ in range(count):
            y = g.node("Relu", [g.conv(y, cin, cout, 3, bias=True)])  # type: ignore[assignment]
            cin = cout
        y = g.node("MaxPool", [y], "pool", kernel_shape=[2, 2], strides=[2, 2])  # type: ignore[assignment]
    spatial = size // 2 ** len(stages)
    flat = g.node("Flatten", [y], "flatten", axis=1)
    hidden = g.node("Relu", [g.fc(flat, cin * spatial * spatial, 64)])  # type: ignore[arg-type]
    out = g.node("Softmax", [g.fc(hidden, 64, classes)], "prob", axis=1)  # type: ignore[arg-type]
    return g.model([image_input("data", [1, 3, size, size])], out, "vgg")  # type: ignore[arg-type]


def transformer_encoder(seq: int = 8, dim: int = 32, heads: int = 4, ffn: int = 64, seed: int = 0) -> onnx.ModelProto:
    """One post-norm encoder layer: multi-head self-attention and a Gelu feed-forward."""
    g = GraphBuilder(seed)
    head_dim = dim // heads

    def linear(x: str, cin: int, cout: int) -> str:
        w = g.tensor((g.rng.standard_normal((cin, cout)) / np.sqrt(cin)).astype(np.float32), "w")
        b = g.tensor(g.rng.uniform(-0.1, 0.1, cout).astype(np.float32), "b")
        return g.node("Add", [g.node("MatMul", [x, w]), b])  # type: ignore[list-item,return-value]

    def split_heads(x: str) -> str:
        shape = g.tensor(np.array([1, seq, heads, head_dim], np.int64), "shape")
        return g.node("Transpose", [g.node("Reshape", [x, shape])], perm=[0, 2, 1, 3])  # type: ignore[list-item,return-value]

    def layer_norm(x: str) -> str:
        scale = g.tensor(g.rng.uniform(0.5, 1.5, dim).astype(np.float32), "ln_scale")
        bias = g.tensor(g.rng.uniform(-0.1, 0.1, dim).astype(np.float32), "ln_bias")
        return g.node("LayerNormalization", [x, scale, bias], "ln", axis=-1, epsilon=1e-5)  # type: ignore[return-value]

    x = "tokens"
    q, k, v = (split_heads(linear(x, dim, dim)) for _ in range(3))
    scores = g.node("MatMul", [q, g.node("Transpose", [k], perm=[0, 1, 3, 2])])  # type: ignore[list-item]
    scale = g.tensor(np.array(1 / np.sqrt(head_dim), np.float32), "scale")
    attn = g.node("Softmax", [g.node("Mul", [scores, scale])], axis=-1)  # type: ignore[list-item]
    ctx = g.node("Transpose", [g.node("MatMul", [attn, v])], perm=[0, 2, 1, 3])  # type: ignore[list-item]
    merged = g.node("Reshape", [ctx, g.tensor(np.array([1, seq, dim], np.int64), "shape")])  # type: ignore[list-item]
    h = layer_norm(g.node("Add", [x, linear(merged, dim, dim)]))  # type: ignore[arg-type,list-item]
    f = linear(g.node("Gelu", [linear(h, dim, ffn)]), ffn, dim)  # type: ignore[arg-type]
    out = layer_norm(g.node("Add", [h, f]))  # type: ignore[list-item]
    graph_input = helper.make_tensor_value_info("tokens", TensorProto.FLOAT, [1, seq, dim])
    model = g.model([graph_input], out, "transformer_encoder")
    model.opset_import[0].version = 20  # Gelu is an ONNX op from opset 20
    return model
