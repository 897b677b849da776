"""TensorFlow GraphDefs for tests and benchmarks, built without TensorFlow.

`DualBuilder` writes each layer twice from the same weights: as TensorFlow nodes (NHWC, as a
frozen Keras graph has them) and as an equivalent ONNX graph with explicit Transposes, so
irforge's import of the GraphDef can be checked against onnxruntime.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from irforge.frontends.tf.schema import DT_FLOAT, DT_INT32, message_classes

TO_NCHW, TO_NHWC = [0, 3, 1, 2], [0, 2, 3, 1]


def function_node(f: Any, op: str, name: str, inputs: list[str], **attrs: Any) -> Any:
    """A node of a library function `f`; an attribute given as a tuple is a type (its second
    item), a float or bool is itself, anything else a TensorProto."""
    n = f.node_def.add(name=name, op=op)
    n.input.extend(inputs)
    for key, value in attrs.items():
        if isinstance(value, tuple):
            n.attr[key].type = value[1]
        elif isinstance(value, float):
            n.attr[key].f = value
        elif isinstance(value, bool):
            n.attr[key].b = value
        else:
            n.attr[key].tensor.CopyFrom(value)
    return n


def library_function(graph: Any, name: str, inputs: list[tuple[str, int]], outputs: list[tuple[str, str, int]], body: Any) -> None:
    """Add function `name` to `graph`'s library: typed input args, output args returning the
    given tensors, nodes written by `body(f)`."""
    f = graph.library.function.add()
    f.signature.name = name
    for arg, dtype in inputs:
        f.signature.input_arg.add(name=arg, type=dtype)
    for arg, tensor, dtype in outputs:
        f.signature.output_arg.add(name=arg, type=dtype)
        f.ret[arg] = tensor
    body(f)


def tf_tensor(array: np.ndarray) -> Any:
    tensor = message_classes()["TensorProto"]()
    array = np.asarray(array)
    tensor.dtype = {np.dtype(np.float32): DT_FLOAT, np.dtype(np.int32): DT_INT32}[array.dtype]
    for d in array.shape:
        tensor.tensor_shape.dim.add(size=d)
    tensor.tensor_content = np.ascontiguousarray(array).tobytes()
    return tensor


@dataclass
class DualBuilder:
    seed: int = 0
    graph: Any = None
    onnx_nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    count: int = 0

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)
        self.graph = message_classes()["GraphDef"]()

    def fresh(self, base: str) -> str:
        self.count += 1
        return f"{base}_{self.count}"

    # -- TensorFlow side ----------------------------------------------------------------
    def tf_node(self, op: str, inputs: list[str], name: str, **attrs: Any) -> str:
        node = self.graph.node.add(name=name, op=op)
        node.input.extend(inputs)
        for key, value in attrs.items():
            slot = node.attr[key]
            if isinstance(value, bool):
                slot.b = value
            elif isinstance(value, int):
                slot.i = value
            elif isinstance(value, float):
                slot.f = value
            elif isinstance(value, str):
                slot.s = value.encode()
            elif isinstance(value, list):
                slot.list.i.extend(value)
            elif isinstance(value, tuple) and value[0] == "type":
                slot.type = value[1]
            else:
                slot.tensor.CopyFrom(value)
        return name

    def const(self, array: np.ndarray, base: str, tf: bool = True, onnx: bool = True) -> tuple[str, str]:
        """A constant on both sides (or one): (TensorFlow node, ONNX initializer)."""
        name = self.fresh(base)
        if tf:
            self.tf_node("Const", [], name, value=tf_tensor(array), dtype=("type", DT_FLOAT))
        if onnx:
            self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name, name

    def onnx(self, op: str, inputs: list[str], **attrs: Any) -> str:
        name = self.fresh(f"onnx_{op.lower()}")
        self.onnx_nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    # -- layers (x is a pair: TensorFlow tensor, ONNX tensor) ------------------------------
    def placeholder(self, name: str, shape: list[int]) -> tuple[str, str]:
        node = self.graph.node.add(name=name, op="Placeholder")
        node.attr["dtype"].type = DT_FLOAT
        for d in shape:
            node.attr["shape"].shape.dim.add(size=d)
        self.onnx_input = helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
        return name, name

    def conv(self, x: tuple[str, str], cin: int, cout: int, k: int, stride: int = 1, padding: str = "SAME", depthwise: bool = False) -> tuple[str, str]:
        shape = (k, k, cin, 1) if depthwise else (k, k, cin, cout)
        w = (self.rng.standard_normal(shape) * np.sqrt(2.0 / (k * k * cin))).astype(np.float32)
        wt, _ = self.const(w, "filter", onnx=False)
        op = "DepthwiseConv2dNative" if depthwise else "Conv2D"
        y = self.tf_node(op, [x[0], wt], self.fresh(op.lower()), strides=[1, stride, stride, 1], padding=padding, data_format="NHWC")
        oihw = w.reshape(k, k, cin, 1).transpose(2, 3, 0, 1) if depthwise else w.transpose(3, 2, 0, 1)
        _, wo = self.const(oihw, "filter_oihw", tf=False)
        t = self.onnx("Transpose", [x[1]], perm=TO_NCHW)
        c = self.onnx("Conv", [t, wo], kernel_shape=[k, k], strides=[stride, stride], group=cin if depthwise else 1,
                      auto_pad="SAME_UPPER" if padding == "SAME" else "VALID")
        return y, self.onnx("Transpose", [c], perm=TO_NHWC)

    def batch_norm(self, x: tuple[str, str], c: int) -> tuple[str, str]:
        stats = [self.rng.uniform(0.5, 1.5, c), self.rng.uniform(-0.1, 0.1, c), self.rng.uniform(-0.1, 0.1, c), self.rng.uniform(0.5, 1.5, c)]
        names = [self.const(s.astype(np.float32), n) for s, n in zip(stats, ("gamma", "beta", "mean", "var"))]
        y = self.tf_node("FusedBatchNormV3", [x[0], *(n[0] for n in names)], self.fresh("bn"), epsilon=1e-3, is_training=False, data_format="NHWC")
        t = self.onnx("Transpose", [x[1]], perm=TO_NCHW)
        b = self.onnx("BatchNormalization", [t, *(n[1] for n in names)], epsilon=1e-3)
        return y, self.onnx("Transpose", [b], perm=TO_NHWC)

    def unary(self, x: tuple[str, str], tf_op: str) -> tuple[str, str]:
        y = self.tf_node(tf_op, [x[0]], self.fresh(tf_op.lower()))
        if tf_op == "Relu6":
            _, lo = self.const(np.array(0, np.float32), "lo", tf=False)
            _, hi = self.const(np.array(6, np.float32), "hi", tf=False)
            return y, self.onnx("Clip", [x[1], lo, hi])
        return y, self.onnx({"Relu": "Relu", "Sigmoid": "Sigmoid", "Tanh": "Tanh"}[tf_op], [x[1]])

    def binary(self, a: tuple[str, str], b: tuple[str, str], tf_op: str) -> tuple[str, str]:
        y = self.tf_node(tf_op, [a[0], b[0]], self.fresh(tf_op.lower()))
        if tf_op == "SquaredDifference":
            d = self.onnx("Sub", [a[1], b[1]])
            return y, self.onnx("Mul", [d, d])
        onnx_op = {"AddV2": "Add", "Add": "Add", "BiasAdd": "Add", "Mul": "Mul", "Sub": "Sub", "RealDiv": "Div"}[tf_op]
        return y, self.onnx(onnx_op, [a[1], b[1]])

    def mean(self, x: tuple[str, str], axes: list[int], keep_dims: bool) -> tuple[str, str]:
        name = self.fresh("axes")
        self.tf_node("Const", [], name, value=tf_tensor(np.array(axes, np.int32)), dtype=("type", DT_INT32))
        y = self.tf_node("Mean", [x[0], name], self.fresh("mean"), keep_dims=keep_dims)
        return y, self.onnx("ReduceMean", [x[1]], axes=axes, keepdims=int(keep_dims))

    def reshape(self, x: tuple[str, str], shape: list[int]) -> tuple[str, str]:
        name = self.fresh("shape")
        self.tf_node("Const", [], name, value=tf_tensor(np.array(shape, np.int32)), dtype=("type", DT_INT32))
        self.initializers.append(numpy_helper.from_array(np.array(shape, np.int64), name))
        return self.tf_node("Reshape", [x[0], name], self.fresh("reshape")), self.onnx("Reshape", [x[1], name])

    def dense(self, x: tuple[str, str], cin: int, cout: int) -> tuple[str, str]:
        w = self.const((self.rng.standard_normal((cin, cout)) / np.sqrt(cin)).astype(np.float32), "kernel")
        b = self.const(self.rng.uniform(-0.1, 0.1, cout).astype(np.float32), "bias")
        return self.binary(self.matmul(x, w), b, "BiasAdd")

    def matmul(self, a: tuple[str, str], b: tuple[str, str]) -> tuple[str, str]:
        return self.tf_node("MatMul", [a[0], b[0]], self.fresh("matmul")), self.onnx("MatMul", [a[1], b[1]])

    def softmax(self, x: tuple[str, str]) -> tuple[str, str]:
        return self.tf_node("Softmax", [x[0]], "prob"), self.onnx("Softmax", [x[1]], axis=-1)

    def finish(self, out: tuple[str, str], opset: int = 13) -> tuple[Any, onnx.ModelProto]:
        graph = helper.make_graph(
            self.onnx_nodes, "tf_twin", [self.onnx_input],
            [helper.make_tensor_value_info(out[1], TensorProto.FLOAT, None)], self.initializers,
        )
        return self.graph, helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def conv_block(b: DualBuilder, x: tuple[str, str], cin: int, cout: int, k: int, stride: int = 1, act: str | None = "Relu", depthwise: bool = False) -> tuple[str, str]:
    y = b.batch_norm(b.conv(x, cin, cout, k, stride, depthwise=depthwise), cout)
    return b.unary(y, act) if act else y


def keras_resnet(size: int = 16, width: int = 8, classes: int = 10, flatten: bool = False, seed: int = 0) -> tuple[Any, onnx.ModelProto]:
    """conv/bn/relu stem, a residual block, a depthwise + Relu6 block, and a classifier head
    (global mean, or Flatten -> Dense in NHWC order)."""
    b = DualBuilder(seed)
    x = b.placeholder("input_1", [1, size, size, 3])
    y = conv_block(b, x, 3, width, 3, 2)
    z = conv_block(b, conv_block(b, y, width, width, 3), width, width, 3, act=None)
    y = b.unary(b.binary(y, z, "AddV2"), "Relu")
    y = conv_block(b, y, width, width, 3, depthwise=True, act="Relu6")
    y = conv_block(b, y, width, 2 * width, 1, act="Relu6")
    spatial, channels = size // 2, 2 * width
    if flatten:
        y = b.dense(b.reshape(y, [1, spatial * spatial * channels]), spatial * spatial * channels, classes)
    else:
        y = b.dense(b.mean(y, [1, 2], False), channels, classes)
    return b.finish(b.softmax(y))
