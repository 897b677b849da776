"""Seeds and structure-aware mutators for the fuzz campaign's newer formats and flags: MXNet
(symbol JSON + .params), Kaldi (nnet1/nnet2/nnet3, binary and text), TensorFlow text
GraphDefs, and model-level edits of ONNX and TensorFlow protobufs (attributes of the wrong
type, huge or negative dims, data that disagrees with its shape) that byte flips rarely reach.
`irforge.testing.fuzz` builds cases from them.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np

HUGE_DIMS = [10**12, -3, 0, 2**31, 2**63 - 1]
BAD_ATTR_TEXT = ["(3,a)", "", "None", "1e400", "(-1,-1)", "True", "[[[[", "(99999999999,3)", "nan", "(3,3", "0x10", "'x'", "(" * 300]


# -- seeds ---------------------------------------------------------------------------------
def mxnet_seed() -> dict[str, bytes]:
    from irforge.testing.mxnet_models import SymbolBuilder, ndarray_list_bytes

    rng = np.random.default_rng(0)
    b = SymbolBuilder()
    x = b.var("data", __shape__=(1, 3, 8, 8))
    y = b.conv(x, "conv0", 3, 4, 3, rng, pad=(1, 1))
    y = b.batch_norm(y, "bn0", 4, rng, eps=0.001, fix_gamma=False)
    y = b.op("Activation", "relu0", [y], act_type="relu")
    y = b.op("Pooling", "pool0", [y], kernel=(2, 2), stride=(2, 2), pool_type="max")
    y = b.op("Flatten", "flat0", [y])
    w = b.param("fc0_weight", rng.standard_normal((5, 64)).astype(np.float32))
    bias = b.param("fc0_bias", rng.standard_normal(5).astype(np.float32))
    y = b.op("FullyConnected", "fc0", [y, w, bias], num_hidden=5)
    y = b.op("softmax", "prob", [y], axis=-1)
    return {"m-symbol.json": b.symbol_json([y]).encode(), "m-0000.params": ndarray_list_bytes(b.named_params())}


KALDI_SEEDS = ("nnet1.nnet", "nnet1-lstm.nnet", "nnet2.mdl", "nnet3.raw", "nnet3-cnn.raw")
KALDI_FEATURES = {"nnet1.nnet": 5, "nnet1-lstm.nnet": 4, "nnet2.mdl": 6, "nnet3.raw": 4, "nnet3-cnn.raw": 12}


def kaldi_seeds() -> dict[str, bytes]:
    """One small model of each Kaldi generation; the binary/text choice varies per model."""
    from irforge.testing import kaldi_models as km

    layers, priors = km.nnet2_model()
    return {
        "nnet1.nnet": km.write_nnet1(km.nnet1_model(), binary=True),
        "nnet1-lstm.nnet": km.write_nnet1(km.lstm_nnet1_model(), binary=False),
        "nnet2.mdl": km.write_nnet2(layers, priors, binary=True),
        "nnet3.raw": km.write_nnet3(km.tdnn_model(), binary=False),
        "nnet3-cnn.raw": km.write_nnet3(km.cnn_tdnn_model(), binary=True),
    }


def pbtxt_seed(pb: bytes) -> bytes:
    from google.protobuf import text_format

    from irforge.frontends.tf.schema import message_classes

    graph = message_classes()["GraphDef"]()
    graph.ParseFromString(pb)
    return text_format.MessageToString(graph).encode()


# -- structured mutators ---------------------------------------------------------------------
def mutate_onnx(data: bytes, rng: random.Random) -> bytes:
    """A model-level edit: an attribute of another type or removed, a huge or negative dim, an
    initializer whose data disagrees with its dims, an unknown element type, an odd name."""
    import onnx

    model = onnx.ModelProto()
    model.ParseFromString(data)
    graph = model.graph
    choice = rng.randrange(7)
    nodes = [n for n in graph.node if n.attribute]
    if choice <= 1 and nodes:
        node = rng.choice(nodes)
        attr = rng.choice(list(node.attribute))
        if choice == 0:
            node.attribute.remove(attr)
        else:
            _retype_onnx_attribute(attr, rng)
    elif choice == 2 and graph.initializer:
        init = rng.choice(list(graph.initializer))
        if init.raw_data and rng.random() < 0.5:
            init.raw_data = init.raw_data[: rng.randrange(len(init.raw_data))]
        elif init.dims:
            init.dims[rng.randrange(len(init.dims))] = rng.choice(HUGE_DIMS)
    elif choice == 3 and graph.input:
        dims = graph.input[0].type.tensor_type.shape.dim
        if dims:
            dims[rng.randrange(len(dims))].dim_value = rng.choice(HUGE_DIMS)
    elif choice == 4:
        target = rng.choice(list(graph.initializer) or [None])
        if target is not None:
            target.data_type = rng.choice([0, 8, 14, 16, 17, 23, 99])
        else:
            graph.input[0].type.tensor_type.elem_type = rng.choice([0, 8, 99])
    elif choice == 5 and graph.node:
        node = rng.choice(list(graph.node))
        if rng.random() < 0.5:
            node.op_type = rng.choice(["Conv", "Gemm", "Reshape", "Slice", "Pad", "Resize", "Concat", "Split", "Nope"])
        else:
            node.name = rng.choice(["a\nb", "x" * 3000, "../x"])
    else:
        node = rng.choice(list(graph.node))
        node.input.append(rng.choice(["", "missing", node.output[0]]))
    return model.SerializeToString()


def _retype_onnx_attribute(attr: Any, rng: random.Random) -> None:
    import onnx
    from onnx import helper

    name = attr.name
    replacement = rng.choice([
        helper.make_attribute(name, "abc"), helper.make_attribute(name, 1.5), helper.make_attribute(name, 7),
        helper.make_attribute(name, [1, 2, 3, 4, 5, 6, 7]), helper.make_attribute(name, [0.5]),
        helper.make_attribute(name, onnx.numpy_helper.from_array(np.array([1.5], np.float32))), helper.make_attribute(name, [], attr_type=onnx.AttributeProto.INTS),
        helper.make_attribute(name, -(2**40)),
    ])  # fmt: skip
    attr.CopyFrom(replacement)
    if rng.random() < 0.1:
        attr.type = 0  # UNDEFINED: a corrupt file


def mutate_tf(data: bytes, rng: random.Random) -> bytes:
    """A GraphDef edit: an attribute of another kind, a Const whose content disagrees with its
    shape, a huge dim, an unknown dtype, a dangling input."""
    from irforge.frontends.tf.schema import message_classes

    graph = message_classes()["GraphDef"]()
    graph.ParseFromString(data)
    nodes = list(graph.node)
    node = rng.choice(nodes)
    choice = rng.randrange(5)
    if choice <= 1 and node.attr:
        key = rng.choice(sorted(node.attr))
        value = node.attr[key]
        if choice == 0:
            del node.attr[key]
        else:
            value.Clear()
            kind = rng.randrange(6)
            if kind == 0:
                value.s = b"abc"
            elif kind == 1:
                value.i = rng.choice([7, -1, 2**40])
            elif kind == 2:
                value.f = 1.5
            elif kind == 3:
                value.list.i.extend([1, 2, 3])
            elif kind == 4:
                value.type = rng.choice([0, 7, 21, 99])
            else:
                value.list.s.extend([b"a", b"b"])
    elif choice == 2:
        consts = [n for n in nodes if n.op == "Const" and "value" in n.attr]
        if consts:
            tensor = rng.choice(consts).attr["value"].tensor
            if tensor.tensor_content and rng.random() < 0.5:
                tensor.tensor_content = tensor.tensor_content[: rng.randrange(len(tensor.tensor_content))]
            elif tensor.tensor_shape.dim:
                tensor.tensor_shape.dim[rng.randrange(len(tensor.tensor_shape.dim))].size = rng.choice(HUGE_DIMS)
            else:
                tensor.dtype = rng.choice([0, 7, 99])
    elif choice == 3:
        node.input.append(rng.choice(["missing", "missing:3", node.name, "^missing", ""]))
    else:
        node.op = rng.choice(["Conv2D", "MatMul", "Reshape", "Pad", "StridedSlice", "ConcatV2", "Nope"])
    return graph.SerializeToString()


def mutate_mxnet_symbol(data: bytes, rng: random.Random) -> bytes:
    """A symbol-file edit: an attribute that does not parse or is out of range, an attribute
    removed, an input index out of range or pointing forward, a node removed."""
    symbol = json.loads(data)
    nodes = symbol["nodes"]
    ops = [n for n in nodes if n["op"] != "null"]
    node = rng.choice(ops)
    choice = rng.randrange(6)
    attrs = node.setdefault("attrs", {})
    if choice <= 1 and attrs:
        key = rng.choice(sorted(attrs))
        if choice == 0:
            attrs[key] = rng.choice(BAD_ATTR_TEXT)
        else:
            del attrs[key]
    elif choice == 2 and node["inputs"]:
        entry = rng.choice(node["inputs"])
        entry[rng.randrange(2)] = rng.choice([-1, 999, len(nodes) - 1, 2**40])
    elif choice == 3:
        attrs[rng.choice(["kernel", "stride", "pad", "num_filter", "num_hidden", "axis", "__shape__", "layout"])] = rng.choice(BAD_ATTR_TEXT)
    elif choice == 4:
        node["op"] = rng.choice(["Convolution", "Reshape", "Concat", "SliceChannel", "Pooling", "Nope", ""])
    else:
        symbol["heads"] = rng.choice([[], [[999, 0, 0]], [[0, 5, 0]], "x"])
    return json.dumps(symbol).encode()


def mutate_kaldi_text(data: bytes, rng: random.Random) -> bytes:
    """A token-level edit of a text Kaldi model: a number made huge, negative or not a number,
    a token removed or repeated, a component type renamed."""
    tokens = data.split(b" ")
    for _ in range(rng.randint(1, 2)):
        i = rng.randrange(len(tokens))
        choice = rng.randrange(4)
        if choice == 0:
            numbers = [j for j, t in enumerate(tokens) if t.strip().lstrip(b"-").replace(b".", b"").isdigit()]
            if numbers:
                tokens[rng.choice(numbers)] = rng.choice([b"-1", b"0", b"99999999999", b"nan", b"x", b"1e40"])
        elif choice == 1:
            del tokens[i]
        elif choice == 2:
            tokens.insert(i, tokens[i])
        else:
            tags = [j for j, t in enumerate(tokens) if t.startswith(b"<") and t.endswith(b">")]
            if tags:
                tokens[rng.choice(tags)] = rng.choice([b"<Foo>", b"<AffineTransform>", b"<Splice>", b"<Nnet>", b"</Nnet>", b"<>"])
    return b" ".join(tokens)


__all__ = ["KALDI_FEATURES", "KALDI_SEEDS", "kaldi_seeds", "mutate_kaldi_text", "mutate_mxnet_symbol", "mutate_onnx", "mutate_tf",
           "mxnet_seed", "pbtxt_seed"]
