"""MXNet test models with an ONNX twin: each layer is written as MXNet symbol nodes (with
its weights) and as the ONNX nodes that compute the same, so the import is checked against
onnxruntime running an independently written graph."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from irforge.testing.mxnet_models import SymbolBuilder

Pair = tuple[tuple[int, int], str]
"""(MXNet entry, ONNX tensor name)."""


@dataclass
class Twin:
    seed: int = 0
    sym: SymbolBuilder = field(default_factory=SymbolBuilder)
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    inputs: list[onnx.ValueInfoProto] = field(default_factory=list)
    count: int = 0

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def fresh(self, base: str) -> str:
        self.count += 1
        return f"{base}{self.count}"

    def init(self, array: np.ndarray, base: str = "c") -> str:
        name = self.fresh(f"onnx_{base}")
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def onnx(self, op: str, inputs: list[str], **attrs: Any) -> str:
        name = self.fresh(f"onnx_{op.lower()}")
        self.nodes.append(helper.make_node(op, inputs, [name], **attrs))
        return name

    def weights(self, *shape: int, scale: float | None = None) -> np.ndarray:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        return (self.rng.standard_normal(shape) * (scale or 1 / np.sqrt(fan_in))).astype(np.float32)

    # -- layers ------------------------------------------------------------------------------
    def input(self, name: str, shape: list[int]) -> Pair:
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return self.sym.var(name), name

    def conv(self, x: Pair, name: str, cin: int, cout: int, k: int, stride: int = 1, pad: int = 0, group: int = 1, dilate: int = 1, bias: bool = True) -> Pair:
        w = self.weights(cout, cin // group, k, k)
        inputs, onnx_inputs = [x[0], self.sym.param(f"{name}_weight", w)], [x[1], self.init(w)]
        if bias:
            b = self.rng.uniform(-0.5, 0.5, cout).astype(np.float32)
            inputs.append(self.sym.param(f"{name}_bias", b))
            onnx_inputs.append(self.init(b))
        entry = self.sym.op("Convolution", name, inputs, kernel=(k, k), stride=(stride, stride), pad=(pad, pad), dilate=(dilate, dilate), num_filter=cout, num_group=group, no_bias=not bias)
        out = self.onnx("Conv", onnx_inputs, kernel_shape=[k, k], strides=[stride] * 2, pads=[pad] * 4, dilations=[dilate] * 2, group=group)
        return entry, out

    def deconv(self, x: Pair, name: str, cin: int, cout: int, k: int, stride: int, pad: int = 0, adj: int = 0, target: tuple[int, int] | None = None, in_hw: tuple[int, int] = (0, 0), group: int = 1) -> Pair:
        """Deconvolution (no bias, MXNet's default) and ConvTranspose with the pads MXNet means."""
        w = self.weights(cin, cout // group, k, k)
        attrs: dict[str, object] = {"kernel": (k, k), "stride": (stride, stride), "num_filter": cout, "num_group": group}
        if target is not None:
            attrs["target_shape"] = target
            full = [stride * (n - 1) + k for n in in_hw]
            begins = [math.ceil((f - t) / 2) for f, t in zip(full, target)]
            ends = [f - t - b for f, t, b in zip(full, target, begins)]
        else:
            attrs.update(pad=(pad, pad), adj=(adj, adj))
            begins, ends = [pad, pad], [pad - adj] * 2
        entry = self.sym.op("Deconvolution", name, [x[0], self.sym.param(f"{name}_weight", w)], **attrs)
        out = self.onnx("ConvTranspose", [x[1], self.init(w)], kernel_shape=[k, k], strides=[stride] * 2, pads=[*begins, *ends], group=group)
        return entry, out

    def batch_norm(self, x: Pair, name: str, channels: int, fix_gamma: bool | None = None, eps: float | None = None) -> Pair:
        """BatchNorm with MXNet's defaults where fix_gamma/eps are None (gamma fixed, 1e-3)."""
        gamma = self.rng.uniform(0.5, 1.5, channels).astype(np.float32)
        beta, mean = (self.rng.uniform(-0.5, 0.5, channels).astype(np.float32) for _ in range(2))
        var = self.rng.uniform(0.5, 2.0, channels).astype(np.float32)
        attrs: dict[str, object] = {}
        if fix_gamma is not None:
            attrs["fix_gamma"] = fix_gamma
        if eps is not None:
            attrs["eps"] = eps
        inputs = [x[0], self.sym.param(f"{name}_gamma", gamma), self.sym.param(f"{name}_beta", beta),
                  self.sym.param(f"{name}_moving_mean", mean, aux=True), self.sym.param(f"{name}_moving_var", var, aux=True)]  # fmt: skip
        entry = self.sym.op("BatchNorm", name, inputs, **attrs)
        used_gamma = np.ones(channels, np.float32) if fix_gamma in (None, True) else gamma
        out = self.onnx("BatchNormalization", [x[1], self.init(used_gamma), self.init(beta), self.init(mean), self.init(var)], epsilon=1e-3 if eps is None else eps)
        return entry, out

    def relu(self, x: Pair, name: str) -> Pair:
        return self.sym.op("Activation", name, [x[0]], act_type="relu"), self.onnx("Relu", [x[1]])

    def pool(self, x: Pair, name: str, kind: str, k: int = 2, stride: int = 2, pad: int = 0, convention: str | None = None, global_pool: bool = False, count_include_pad: bool | None = None) -> Pair:
        attrs: dict[str, object] = {"pool_type": kind, "kernel": (k, k)}
        if global_pool:
            attrs["global_pool"] = True
            return self.sym.op("Pooling", name, [x[0]], **attrs), self.onnx("GlobalAveragePool" if kind == "avg" else "GlobalMaxPool", [x[1]])
        attrs.update(stride=(stride, stride), pad=(pad, pad))
        if convention:
            attrs["pooling_convention"] = convention
        onnx_attrs: dict[str, object] = {"kernel_shape": [k, k], "strides": [stride] * 2, "pads": [pad] * 4, "ceil_mode": int(convention == "full")}
        if kind == "avg":
            if count_include_pad is not None:
                attrs["count_include_pad"] = count_include_pad
            onnx_attrs["count_include_pad"] = int(count_include_pad in (None, True))
        entry = self.sym.op("Pooling", name, [x[0]], **attrs)
        return entry, self.onnx("MaxPool" if kind == "max" else "AveragePool", [x[1]], **onnx_attrs)

    def fc(self, x: Pair, name: str, features: int, hidden: int) -> Pair:
        """FullyConnected with flatten (MXNet's default) and Flatten + Gemm."""
        w, b = self.weights(hidden, features), self.rng.uniform(-0.5, 0.5, hidden).astype(np.float32)
        entry = self.sym.op("FullyConnected", name, [x[0], self.sym.param(f"{name}_weight", w), self.sym.param(f"{name}_bias", b)], num_hidden=hidden)
        flat = self.onnx("Flatten", [x[1]], axis=1)
        return entry, self.onnx("Gemm", [flat, self.init(w), self.init(b)], transB=1)

    def binary(self, a: Pair, b: Pair, name: str, mx_op: str, onnx_op: str) -> Pair:
        return self.sym.op(mx_op, name, [a[0], b[0]]), self.onnx(onnx_op, [a[1], b[1]])

    def scalar(self, x: Pair, name: str, mx_op: str, value: float, onnx_op: str, reverse: bool = False) -> Pair:
        c = self.init(np.array(value, np.float32))
        return self.sym.op(mx_op, name, [x[0]], scalar=value), self.onnx(onnx_op, [c, x[1]] if reverse else [x[1], c])

    def model(self, outputs: list[str]) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, "twin", self.inputs, [helper.make_empty_tensor_value_info(o) for o in outputs], self.initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])

    def save(self, directory: Path, name: str, heads: list[Pair], **kwargs: Any) -> tuple[Path, onnx.ModelProto]:
        params = self.sym.save(directory, name, [h[0] for h in heads], **kwargs)
        return params, self.model([h[1] for h in heads])
