"""Seeds and mutators for the fuzz campaign's newer inputs: ONNX If / Loop decided at run time
(nn.if / nn.loop with regions), nested control flow, run-time Reshape, the QOperator contrib
ops, MatMulInteger / ConvInteger, Q/DQ and decomposed attention; TensorFlow StatelessWhile /
StatelessIf with library functions; IR XML If / Loop with body nets, port maps and back
edges; .mlir with nn.if / nn.loop. The mutators break the structure the byte flips of
`irforge.testing.fuzz` rarely reach: branch outputs of another count, type or rank, body
inputs removed, loop-carried counts that disagree, a condition of another type, names not in
scope, deep nesting, huge or negative trip counts, port maps and back edges to nowhere,
empty bodies and bodies with cycles.
"""

from __future__ import annotations

import random
import re
from typing import Any

import numpy as np

from irforge.testing.tf_models import function_node, library_function

# -- ONNX seeds -------------------------------------------------------------------------------


def _vi(name: str, elem: int, shape: list[Any] | None) -> Any:
    from onnx import helper

    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes: list[Any], inputs: list[Any], outputs: list[Any], inits: list[Any] = (), ms: bool = False) -> bytes:  # type: ignore[assignment]
    from onnx import helper

    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", 13 if not ms else 17)] + ([helper.make_opsetid("com.microsoft", 1)] if ms else [])
    return helper.make_model(graph, opset_imports=opsets).SerializeToString()


def _t(name: str, array: Any) -> Any:
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(array), name)


def onnx_if() -> bytes:
    """If ReduceSum(x) > 0 then x * 2 (2x3) else Concat(x, x + w) (4x3): outer-scope reads."""
    from onnx import TensorProto as T
    from onnx import helper

    then = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t"])], "then", [], [_vi("t", T.FLOAT, None)], [_t("two", np.float32(2))])
    other = helper.make_graph([helper.make_node("Add", ["x", "w"], ["x1"]), helper.make_node("Concat", ["x", "x1"], ["e"], axis=0)],
                              "else", [], [_vi("e", T.FLOAT, None)])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0), helper.make_node("Greater", ["s", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], name="branch", then_branch=then, else_branch=other)]
    inits = [_t("zero", np.float32(0)), _t("w", np.arange(6, dtype=np.float32).reshape(2, 3) / 7)]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 3])], [_vi("y", T.FLOAT, None)], inits)


def onnx_loop(nested: bool = False) -> bytes:
    """Loop n times (n an input): acc = acc * x + i (or If(i even) acc + x else acc * 0.5 when
    `nested`), grow = Concat(grow, rowmax(acc)), scan out -acc."""
    from onnx import TensorProto as T
    from onnx import helper

    if nested:
        then = helper.make_graph([helper.make_node("Add", ["acc", "x"], ["ta"])], "then", [], [_vi("ta", T.FLOAT, [2, 3])])
        other = helper.make_graph([helper.make_node("Mul", ["acc", "half"], ["ea"])], "else", [], [_vi("ea", T.FLOAT, [2, 3])],
                                  [_t("half", np.float32(0.5))])
        step = [helper.make_node("Mod", ["i", "two"], ["r"]), helper.make_node("Equal", ["r", "zero"], ["even"]),
                helper.make_node("If", ["even"], ["acc2"], then_branch=then, else_branch=other)]
        inits = [_t("two", np.int64(2)), _t("zero", np.int64(0))]
    else:
        step = [helper.make_node("Cast", ["i"], ["fi"], to=T.FLOAT), helper.make_node("Mul", ["acc", "x"], ["ax"]),
                helper.make_node("Add", ["ax", "fi"], ["acc2"])]
        inits = []
    body = helper.make_graph(
        [*step, helper.make_node("ReduceMax", ["acc2"], ["rs"], axes=[1], keepdims=0),
         helper.make_node("Concat", ["grow", "rs"], ["grow2"], axis=0), helper.make_node("Identity", ["cond"], ["cond2"]),
         helper.make_node("Neg", ["acc2"], ["scan"])],
        "body",
        [_vi("i", T.INT64, []), _vi("cond", T.BOOL, []), _vi("acc", T.FLOAT, [2, 3]), _vi("grow", T.FLOAT, None)],
        [_vi("cond2", T.BOOL, []), _vi("acc2", T.FLOAT, [2, 3]), _vi("grow2", T.FLOAT, None), _vi("scan", T.FLOAT, [2, 3])],
        inits,
    )
    nodes = [helper.make_node("Loop", ["n", "", "x", "g0"], ["acc_out", "grow_out", "scans"], name="counted", body=body)]
    outputs = [_vi("acc_out", T.FLOAT, [2, 3]), _vi("grow_out", T.FLOAT, None), _vi("scans", T.FLOAT, None)]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 3]), _vi("n", T.INT64, [])], outputs, [_t("g0", np.zeros([1], np.float32))])


def onnx_while() -> bytes:
    """A while loop: no trip count, cond = sum(acc) < 50 computed in the body."""
    from onnx import TensorProto as T
    from onnx import helper

    body = helper.make_graph(
        [helper.make_node("Add", ["acc", "acc"], ["acc2"]), helper.make_node("ReduceSum", ["acc2"], ["s"], keepdims=0),
         helper.make_node("Less", ["s", "limit"], ["cond2"])],
        "body", [_vi("i", T.INT64, []), _vi("cond", T.BOOL, []), _vi("acc", T.FLOAT, [2, 3])],
        [_vi("cond2", T.BOOL, []), _vi("acc2", T.FLOAT, [2, 3])], [_t("limit", np.float32(50))])
    nodes = [helper.make_node("Loop", ["", "go", "x"], ["y"], name="while", body=body)]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 3])], [_vi("y", T.FLOAT, [2, 3])], [_t("go", np.bool_(True))])


def onnx_reshape() -> bytes:
    """Reshape to a shape that is a model input (nn.reshape_to), then Relu."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("Reshape", ["x", "s"], ["r"]), helper.make_node("Relu", ["r"], ["y"])]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 6]), _vi("s", T.INT64, [2])], [_vi("y", T.FLOAT, None)])


def onnx_quantized() -> bytes:
    """Q/DQ and QOperator: QuantizeLinear -> QLinearAdd -> QLinearSigmoid -> QLinearConv ->
    DequantizeLinear; DynamicQuantizeLinear -> MatMulInteger and ConvInteger."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(0)
    inits = [_t("xs", np.float32(0.05)), _t("xz", np.uint8(128)), _t("bs", np.float32(0.1)), _t("bz", np.uint8(120)),
             _t("b", rng.integers(0, 255, [1, 3, 1, 1]).astype(np.uint8)), _t("ys", np.float32(0.04)), _t("yz", np.uint8(127)),
             _t("ws", np.float32(0.02)), _t("wz", np.int8(0)), _t("w", rng.integers(-60, 60, [4, 3, 3, 3]).astype(np.int8)),
             _t("cs", np.float32(0.1)), _t("cz", np.uint8(128)), _t("mw", rng.integers(-60, 60, [8, 4]).astype(np.int8)),
             _t("mwz", np.int8(0)), _t("cwz", np.int8(1))]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["q"]),
        helper.make_node("QLinearAdd", ["q", "xs", "xz", "b", "bs", "bz", "ys", "yz"], ["qa"], domain="com.microsoft"),
        helper.make_node("QLinearSigmoid", ["qa", "ys", "yz", "ys", "yz"], ["qs"], domain="com.microsoft"),
        helper.make_node("QLinearConv", ["qs", "ys", "yz", "w", "ws", "wz", "cs", "cz"], ["qc"], pads=[1, 1, 1, 1]),
        helper.make_node("DequantizeLinear", ["qc", "cs", "cz"], ["y"]),
        helper.make_node("DynamicQuantizeLinear", ["m"], ["mq", "ms", "mz"]),
        helper.make_node("MatMulInteger", ["mq", "mw", "mz", "mwz"], ["mi"]),
        helper.make_node("DynamicQuantizeLinear", ["x"], ["dq", "ds", "dz"]),
        helper.make_node("ConvInteger", ["dq", "w", "dz", "cwz"], ["ci"], pads=[1, 1, 1, 1]),
    ]
    outputs = [_vi("y", T.FLOAT, None), _vi("mi", T.INT32, None), _vi("ci", T.INT32, None)]
    return _model(nodes, [_vi("x", T.FLOAT, [1, 3, 8, 8]), _vi("m", T.FLOAT, [2, 8])], outputs, inits, ms=True)


def onnx_attention() -> bytes:
    """Decomposed attention (MatMul(q, Transpose(k)) * scale + mask -> Softmax -> MatMul v),
    the pattern the attention fusions match."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), helper.make_node("MatMul", ["q", "kt"], ["qk"]),
             helper.make_node("Mul", ["qk", "scale"], ["sc"]), helper.make_node("Add", ["sc", "mask"], ["msk"]),
             helper.make_node("Softmax", ["msk"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
    shape = [1, 2, 4, 8]
    inits = [_t("scale", np.float32(8**-0.5)), _t("mask", np.triu(np.full((4, 4), -1e9, np.float32), 1))]
    return _model(nodes, [_vi(n, T.FLOAT, shape) for n in "qkv"], [_vi("y", T.FLOAT, shape)], inits)


ONNX_SEEDS = {"if.onnx": onnx_if, "loop.onnx": onnx_loop, "nested.onnx": lambda: onnx_loop(nested=True), "while.onnx": onnx_while,
              "reshape.onnx": onnx_reshape, "quant.onnx": onnx_quantized, "attn.onnx": onnx_attention}
# models whose control flow converts to IR XML / .mlir seeds
IR_SEEDS = ("if", "loop", "nested", "reshape")


def onnx_seeds() -> dict[str, bytes]:
    return {name: make() for name, make in ONNX_SEEDS.items()}


# -- TensorFlow seeds ----------------------------------------------------------------------------
FLOAT, INT32, BOOL = 1, 3, 10


def tf_while() -> bytes:
    """i = 0, acc = x; while i < n and sum(acc) < 100: i += 1, acc = acc * 2 + 1."""
    from irforge.testing.tf_models import DualBuilder, tf_tensor

    b = DualBuilder()
    b.placeholder("x", [2])
    b.tf_node("Placeholder", [], "n", dtype=("type", INT32))
    b.graph.node[-1].attr["shape"].shape.SetInParent()
    b.tf_node("Const", [], "zero", value=tf_tensor(np.array(0, np.int32)), dtype=("type", INT32))

    def cond(f: Any) -> None:
        function_node(f, "Const", "axis", [], value=tf_tensor(np.array([0], np.int32)), dtype=("type", INT32))
        function_node(f, "Const", "hundred", [], value=tf_tensor(np.array(100, np.float32)), dtype=("type", FLOAT))
        function_node(f, "Less", "counting", ["i", "limit"])
        function_node(f, "Sum", "total", ["acc", "axis:output:0"], keep_dims=False)
        function_node(f, "Less", "small", ["total:output:0", "hundred:output:0"])
        function_node(f, "LogicalAnd", "both", ["counting:z:0", "small:z:0"])

    def body(f: Any) -> None:
        function_node(f, "Const", "one", [], value=tf_tensor(np.array(1, np.int32)), dtype=("type", INT32))
        function_node(f, "Const", "onef", [], value=tf_tensor(np.array(1, np.float32)), dtype=("type", FLOAT))
        function_node(f, "AddV2", "next_i", ["i", "one:output:0"])
        function_node(f, "AddV2", "twice", ["acc", "acc"])
        function_node(f, "AddV2", "next_acc", ["twice:z:0", "onef:output:0"])

    args = [("i", INT32), ("limit", INT32), ("acc", FLOAT)]
    library_function(b.graph, "cond_fn", args, [("keep", "both:z:0", BOOL)], cond)
    library_function(b.graph, "body_fn", args, [("i_out", "next_i:z:0", INT32), ("limit_out", "limit", INT32), ("acc_out", "next_acc:z:0", FLOAT)], body)
    b.tf_node("StatelessWhile", ["zero", "n", "x"], "loop")
    b.graph.node[-1].attr["cond"].func.name = "cond_fn"
    b.graph.node[-1].attr["body"].func.name = "body_fn"
    b.tf_node("Identity", ["loop:2"], "y")
    return b.graph.SerializeToString()


def tf_if() -> bytes:
    """y = If(sum(x) > 0, then: x * 2, else: Concat(x, -x))."""
    from irforge.testing.tf_models import DualBuilder, tf_tensor

    b = DualBuilder()
    b.placeholder("x", [2])
    b.tf_node("Const", [], "axis", value=tf_tensor(np.array([0], np.int32)), dtype=("type", INT32))
    b.tf_node("Const", [], "zero", value=tf_tensor(np.array(0, np.float32)), dtype=("type", FLOAT))
    b.tf_node("Sum", ["x", "axis"], "total", keep_dims=False)
    b.tf_node("Greater", ["total", "zero"], "positive")

    def then(f: Any) -> None:
        function_node(f, "AddV2", "twice", ["v", "v"])

    def other(f: Any) -> None:
        function_node(f, "Neg", "neg", ["v"])
        function_node(f, "Const", "cat_axis", [], value=tf_tensor(np.array(0, np.int32)), dtype=("type", INT32))
        function_node(f, "ConcatV2", "both", ["v", "neg:y:0", "cat_axis:output:0"])

    library_function(b.graph, "then_fn", [("v", FLOAT)], [("out", "twice:z:0", FLOAT)], then)
    library_function(b.graph, "else_fn", [("v", FLOAT)], [("out", "both:output:0", FLOAT)], other)
    b.tf_node("StatelessIf", ["positive", "x"], "cond")
    b.graph.node[-1].attr["then_branch"].func.name = "then_fn"
    b.graph.node[-1].attr["else_branch"].func.name = "else_fn"
    return b.graph.SerializeToString()


TF_SEEDS = {"while.pb": tf_while, "if.pb": tf_if}
TF_OUTPUTS = {"while.pb": "y", "if.pb": "cond"}


def tf_seeds() -> dict[str, bytes]:
    return {name: make() for name, make in TF_SEEDS.items()}


# -- ONNX mutators -------------------------------------------------------------------------------


def _subgraph_nodes(graph: Any) -> list[tuple[Any, Any]]:
    """(node, attribute) for every If / Loop / Scan graph attribute, at any depth."""
    found = []
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == attr.GRAPH:
                found.append((node, attr))
                found.extend(_subgraph_nodes(attr.g))
    return found


def mutate_onnx_control_flow(data: bytes, rng: random.Random) -> bytes:
    """An edit of an If / Loop: a branch output added, removed or retyped, a body input
    removed, a loop-carried value added, a condition of another type, a body node reading a
    name not in scope, deep nesting, a huge or negative trip count, an empty body, a cycle."""
    import onnx
    from google.protobuf.message import DecodeError
    from onnx import TensorProto as T
    from onnx import helper

    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except DecodeError:  # an earlier edit nested it past protobuf's depth limit: already bad enough
        return data
    graph = model.graph
    subs = _subgraph_nodes(graph)
    if not subs:  # quantized / attention / reshape seeds: edit the special nodes' inputs
        node = rng.choice(list(graph.node))
        choice = rng.randrange(4)
        if choice == 0 and node.input:
            del node.input[rng.randrange(len(node.input))]
        elif choice == 1 and node.input:
            node.input[rng.randrange(len(node.input))] = rng.choice(["", "missing", node.output[0], graph.input[0].name])
        elif choice == 2 and graph.initializer:
            init = rng.choice(list(graph.initializer))
            init.CopyFrom(onnx.numpy_helper.from_array(rng.choice([np.zeros([2, 2], np.uint8), np.float32(np.nan), np.zeros([0], np.int8),
                                                                  np.array(-1, np.int64), np.float32(0), np.full([3], 7, np.int8)]), init.name))
        else:
            node.output.append(rng.choice(["extra", node.output[0], ""]))
        return model.SerializeToString()
    node, attr = rng.choice(subs)
    body = attr.g
    choice = rng.randrange(14)
    if choice == 0 and body.output:  # branch / body output removed
        del body.output[rng.randrange(len(body.output))]
    elif choice == 1:  # one output more
        body.output.append(_vi(rng.choice(["x", "ghost", body.output[0].name if body.output else "x"]), T.FLOAT, None))
    elif choice == 2 and body.output:  # output of another type or rank
        out = rng.choice(list(body.output))
        out.type.tensor_type.elem_type = rng.choice([T.INT64, T.BOOL, T.STRING, T.UINT8, 0, 99])
        if rng.random() < 0.5:
            out.type.tensor_type.shape.dim.add().dim_value = rng.choice([1, 7, 0])
    elif choice == 3 and body.input:  # body input removed / retyped
        if rng.random() < 0.5:
            del body.input[rng.randrange(len(body.input))]
        else:
            body.input[rng.randrange(len(body.input))].type.tensor_type.elem_type = rng.choice([T.FLOAT, T.INT32, T.STRING])
    elif choice == 4 and node.op_type == "Loop":  # loop-carried count mismatch
        if rng.random() < 0.5:
            node.input.append(rng.choice(["x", "g0", "missing"]))
        elif len(node.input) > 2:
            del node.input[-1]
        else:
            del node.output[:]
    elif choice == 5:  # condition / trip count of another type or value
        target = node.input[0] if node.op_type == "If" or rng.random() < 0.5 else (node.input[1] if len(node.input) > 1 else "")
        value = rng.choice([np.float32(1.5), np.array([True, False]), np.int64(10**9), np.int64(-5), np.int64(2**62),
                            np.array([], np.bool_), np.int32(3), np.str_("yes")])
        name = f"forced_{choice}"
        tensor = onnx.helper.make_tensor(name, T.STRING, [], [b"yes"]) if isinstance(value, np.str_) else _t(name, value)
        graph.initializer.append(tensor) if node in graph.node else body.initializer.append(tensor)
        if node.op_type == "If" or target == node.input[0]:
            node.input[0] = name
        elif len(node.input) > 1:
            node.input[1] = name
    elif choice == 6 and body.node:  # a body node reads a name not in scope
        inner = rng.choice(list(body.node))
        if inner.input:
            inner.input[rng.randrange(len(inner.input))] = rng.choice(["nowhere", "acc_out", "y", node.output[0], inner.output[0]])
    elif choice == 7:  # empty body
        del body.node[:]
        if rng.random() < 0.5:
            del body.output[:]
    elif choice == 8 and len(body.node) >= 2:  # a cycle: the first node reads the last one's output
        body.node[0].input.append(body.node[-1].output[0])
        body.node[-1].input.append(body.node[0].output[0])
    elif choice == 9:  # deep nesting: wrap the body in If(true) many times
        depth = rng.choice([3, 10, 40])  # past ~30 levels protobuf itself refuses the model (its depth limit)
        inner, flat = onnx.GraphProto(), onnx.GraphProto()
        inner.CopyFrom(body)
        flat.CopyFrom(body)
        del flat.input[:]
        for level in range(depth):  # the nest in the then branch only: linear, not 2**depth, in size
            try:
                wrapper = helper.make_graph([helper.make_node("If", ["nest_c"], [o.name for o in inner.output], then_branch=inner,
                                                              else_branch=flat)], f"nest{level}", [], list(inner.output),
                                            [_t("nest_c", np.bool_(True))])
            except DecodeError:
                break
            inner = wrapper
        keep = list(body.input)
        body.CopyFrom(inner)
        del body.input[:]
        body.input.extend(keep)
    elif choice == 10:  # the body is the model's own graph (recursion of the same structure)
        body.node.append(helper.make_node(node.op_type, list(node.input), [f"{o}_rec" for o in node.output],
                                          **{a.name: helper.get_attribute_value(a) for a in node.attribute}))
    elif choice == 11 and node.op_type == "Loop" and node in graph.node:  # trip count a constant
        name = "trip"
        graph.initializer.append(_t(name, np.int64(rng.choice([10**9, -1, 0, 2**63 - 1, 10**6]))))
        node.input[0] = name
    elif choice == 12:  # a subgraph attribute of the wrong name or kind
        if rng.random() < 0.5:
            attr.name = rng.choice(["then_branch", "else_branch", "body", "bogus"])
        else:
            node.attribute.remove(attr)
    else:  # a body output that is a body input (pass-through) or an outer name
        if body.output:
            body.output[rng.randrange(len(body.output))].name = rng.choice([i.name for i in body.input] + ["x", "nowhere"])
    return model.SerializeToString()


# -- TensorFlow mutators ---------------------------------------------------------------------------


def mutate_tf_control_flow(data: bytes, rng: random.Random) -> bytes:
    """An edit of StatelessWhile / StatelessIf and their library functions: a function name
    that does not exist, signatures of another length or type, rets to nowhere, a body that
    calls itself, a loop with one input less, a condition of another type."""
    from google.protobuf.message import DecodeError

    from irforge.frontends.tf.schema import message_classes

    graph = message_classes()["GraphDef"]()
    try:
        graph.ParseFromString(data)
    except DecodeError:
        return data
    ctrl = [n for n in graph.node if n.op in ("StatelessWhile", "While", "StatelessIf", "If")]
    functions = list(graph.library.function)
    choice = rng.randrange(10)
    if not ctrl or not functions:
        return data
    node = rng.choice(ctrl)
    f = rng.choice(functions)
    if choice == 0:  # a function attribute that names nothing / the wrong function
        key = rng.choice([k for k in ("cond", "body", "then_branch", "else_branch") if k in node.attr])
        node.attr[key].func.name = rng.choice(["nowhere", *(g.signature.name for g in functions)])
    elif choice == 1 and f.signature.input_arg:  # one argument less
        del f.signature.input_arg[rng.randrange(len(f.signature.input_arg))]
    elif choice == 2:  # one argument more
        f.signature.input_arg.add(name="extra", type=rng.choice([FLOAT, INT32, BOOL, 0, 99]))
    elif choice == 3 and f.signature.output_arg:  # an output of another type, or removed
        arg = rng.choice(list(f.signature.output_arg))
        if rng.random() < 0.5:
            arg.type = rng.choice([INT32, BOOL, 7, 0, 99])
        else:
            f.signature.output_arg.remove(arg)
    elif choice == 4 and f.ret:  # a ret to a name not in the function
        key = rng.choice(sorted(f.ret))
        f.ret[key] = rng.choice(["nowhere:z:0", "x", "twice:z:7", "", key])
    elif choice == 5 and f.node_def:  # a body node reads a name not in scope, or itself
        n = rng.choice(list(f.node_def))
        if n.input:
            n.input[rng.randrange(len(n.input))] = rng.choice(["nowhere", "x", f"{n.name}:z:0", "loop", "^nowhere"])
    elif choice == 6 and f.node_def:  # a function calling its own loop (recursion)
        n = f.node_def.add(name="again", op=node.op)
        n.input.extend([a.name for a in f.signature.input_arg])
        for key in node.attr:
            n.attr[key].CopyFrom(node.attr[key])
    elif choice == 7 and node.input:  # a loop / If with an input less or more
        if rng.random() < 0.5:
            del node.input[-1]
        else:
            node.input.append(rng.choice(["x", "zero", "missing"]))
    elif choice == 8:  # an empty function
        del f.node_def[:]
    else:  # the condition reads another tensor (float, or a loop output)
        node.input[0] = rng.choice(["x", "total", "zero", node.name])
    return graph.SerializeToString()


# -- IR XML mutators -----------------------------------------------------------------------------

_PORT_MAP = re.compile(rb'<(input|output) ([^>]*?)external_port_id="(\d+)"([^>]*?)internal_layer_id="(\d+)"')
_BACK_EDGE = re.compile(rb'<edge from-layer="(\d+)" from-port="(\d+)" to-layer="(\d+)" to-port="(\d+)"\s*/>')


def mutate_ir_control_flow(data: bytes, rng: random.Random) -> bytes:
    """An edit of an If / Loop / TensorIterator layer of an IR XML: a port map pointing at a
    layer or port that does not exist, a back edge to a missing layer, an edge making a cycle
    in a body net, a body net emptied, a then/else body removed, a special port of another
    purpose, a huge or negative trip count constant, an external port out of range."""
    text = data
    maps = list(_PORT_MAP.finditer(text))
    edges = list(_BACK_EDGE.finditer(text))
    choice = rng.randrange(9)
    if choice == 0 and maps:  # a port map to a layer that does not exist
        m = rng.choice(maps)
        text = text[: m.start(5)] + rng.choice([b"999", b"-1", b"x", b""]) + text[m.end(5) :]
    elif choice == 1 and maps:  # an external port out of range
        m = rng.choice(maps)
        text = text[: m.start(3)] + rng.choice([b"99", b"-1", b"0", b"1"]) + text[m.end(3) :]
    elif choice == 2 and edges:  # a (back) edge to / from nowhere
        m = rng.choice(edges)
        group = rng.choice([1, 2, 3, 4])
        text = text[: m.start(group)] + rng.choice([b"999", b"-7", b"0", b"x"]) + text[m.end(group) :]
    elif choice == 3 and edges:  # a cycle: an edge reversed
        m = rng.choice(edges)
        a, ap, b, bp = m.groups()
        text = text[: m.end()] + b'\n<edge from-layer="' + b + b'" from-port="' + bp + b'" to-layer="' + a + b'" to-port="' + ap + b'"/>' + text[m.end() :]
    elif choice == 4 and b"<body>" in text:  # a body net emptied
        start = text.index(b"<body>")
        end = text.find(b"</body>", start)
        if end > 0:
            text = text[: start + 6] + rng.choice([b"", b"<layers></layers><edges></edges>", b"<layers>"]) + text[end:]
    elif choice == 5 and (b"<then_body>" in text or b"<else_body>" in text or b"<body>" in text):  # a body removed
        tag = rng.choice([t for t in (b"then_body", b"else_body", b"body") if b"<" + t + b">" in text])
        start = text.index(b"<" + tag + b">")
        end = text.find(b"</" + tag + b">", start)
        if end > 0:
            text = text[:start] + text[end + len(tag) + 3 :]
    elif choice == 6 and b"purpose=" in text:  # special ports of another purpose
        spans = [m.span(1) for m in re.finditer(rb'purpose="([^"]*)"', text)]
        a, b = rng.choice(spans)
        text = text[:a] + rng.choice([b"execution_condition", b"current_iteration", b"nope", b""]) + text[b:]
    elif choice == 7 and maps:  # a port map duplicated
        m = rng.choice(maps)
        line_end = text.find(b"/>", m.end())
        if line_end > 0:
            text = text[: line_end + 2] + b"\n" + text[m.start() : line_end + 2] + text[line_end + 2 :]
    else:  # the layer type swapped between the control-flow kinds
        kinds = [m.span(1) for m in re.finditer(rb'type="(If|Loop|TensorIterator)"', text)]
        if kinds:
            a, b = rng.choice(kinds)
            text = text[:a] + rng.choice([b"If", b"Loop", b"TensorIterator", b"Parameter"]) + text[b:]
    return text


# -- .mlir mutators ------------------------------------------------------------------------------------


def mutate_mlir_control_flow(data: bytes, rng: random.Random) -> bytes:
    """An edit of nn.if / nn.loop text: a region's yield of another count, a region emptied,
    a block argument removed, the condition replaced by a float value, an op nested deeper."""
    text = data
    choice = rng.randrange(5)
    yields = [m.span() for m in re.finditer(rb'"?nn\.yield"?[^\n]*', text)]
    if choice == 0 and yields:  # yield of another count
        a, b = rng.choice(yields)
        line = text[a:b]
        text = text[:a] + rng.choice([b'"nn.yield"() : () -> ()', line.replace(b"(%", b"(%0, %", 1), line + line[line.find(b"%") :]]) + text[b:]
    elif choice == 1:  # a block argument removed
        args = [m.span() for m in re.finditer(rb"\^bb\d+\(([^)]*)\)", text)]
        if args:
            a, b = rng.choice(args)
            text = text[:a] + rng.choice([b"^bb0()", b"^bb0(%zz : tensor<f32>)", b""]) + text[b:]
    elif choice == 2:  # a region emptied
        regions = [m.start() for m in re.finditer(rb"\(\{", text)]
        if regions:
            at = rng.choice(regions)
            end = text.find(b"})", at)
            if end > 0:
                text = text[: at + 2] + rng.choice([b"", b"\n^bb0:\n"]) + text[end:]
    elif choice == 3:  # the op kinds swapped
        kinds = [m.span() for m in re.finditer(rb"nn\.(if|loop)", text)]
        if kinds:
            a, b = rng.choice(kinds)
            text = text[:a] + rng.choice([b"nn.if", b"nn.loop", b"nn.yield", b"nn.relu"]) + text[b:]
    else:  # a tensor type in a region changed
        types = [m.span() for m in re.finditer(rb"tensor<[^>]*>", text)]
        if types:
            a, b = rng.choice(types)
            text = text[:a] + rng.choice([b"tensor<i1>", b"tensor<?x?xf32>", b"tensor<f64>", b"tensor<2x3x4xf32>", b"i32"]) + text[b:]
    return text


__all__ = ["IR_SEEDS", "ONNX_SEEDS", "TF_OUTPUTS", "TF_SEEDS", "mutate_ir_control_flow", "mutate_mlir_control_flow",
           "mutate_onnx_control_flow", "mutate_tf_control_flow", "onnx_seeds", "tf_seeds"]


# -- ir-run cases ------------------------------------------------------------------------------------

TRIP_COUNTS = [np.array(10**9, np.int64), np.array(-1, np.int64), np.array(2**62, np.int64), np.array(3, np.int32),
               np.array([1, 2], np.int64), np.array(3, np.int64), np.array(0, np.int64), np.array(1.5, np.float32)]
RESHAPE_SHAPES = [np.array([3, 4], np.int64), np.array([-1, 4], np.int64), np.array([-1, -1], np.int64), np.array([0, 6], np.int64),
                  np.array([2**40, 1], np.int64), np.array([12, 1, 1], np.int64), np.array([-3, 4], np.int64)]


def run_case(rng: random.Random, seeds: dict[str, dict[str, bytes]]) -> Any:
    """ir-run of a control-flow / run-time Reshape model (ONNX, IR XML or .mlir) on ref or cpu,
    with random inputs or a trip count / shape that is huge, negative or of another dtype."""
    from irforge.testing.fuzz_flags import Case, npy_bytes

    fmt = rng.choice(["onnx", "xml", "mlir"])
    stem = rng.choice(IR_SEEDS if fmt != "onnx" else [*IR_SEEDS, "while", "quant", "attn"])
    suffix = {"onnx": (".onnx",), "xml": (".xml", ".bin"), "mlir": (".mlir", ".weights")}[fmt]
    files = {stem + s: seeds[fmt][stem + s] for s in suffix if stem + s in seeds[fmt]}
    argv = [f"IN/{stem}{suffix[0]}", "--device", rng.choice(["ref", "cpu", "cpu"]), "--output", "OUT/o.npz"]
    if stem in ("loop", "nested") and rng.random() < 0.7:
        files["n.npy"] = npy_bytes(rng.choice(TRIP_COUNTS))
        argv += ["--input", "n=IN/n.npy"]
    elif stem == "reshape" and rng.random() < 0.7:
        files["s.npy"] = npy_bytes(rng.choice(RESHAPE_SHAPES))
        argv += ["--input", "s=IN/s.npy"]
    elif stem == "if" and rng.random() < 0.5:
        files["x.npy"] = npy_bytes(rng.choice([np.full((2, 3), -1, np.float32), np.full((2, 3), np.nan, np.float32), np.ones((3, 2), np.float32)]))
        argv += ["--input", "x=IN/x.npy"]
    if rng.random() < 0.3:
        argv += ["--seed", str(rng.randrange(100))]
    return Case("ir-run", argv, files, f"run:{stem}{suffix[0]}")
