"""TensorFlow's atrous convolution folded into one dilated convolution, before importing.

`tf.nn.atrous_conv2d`, `tf.nn.depthwise_conv2d(dilations=...)` and TF1 DeepLab write a
dilated convolution as

    SpaceToBatchND(x, block, paddings) -> Conv2D / DepthwiseConv2dNative (VALID, stride 1)
        [-> BiasAdd] -> BatchToSpaceND(., block, crops)

which is the convolution with `dilations = block` and explicit pads `paddings[:, 0]` at the
start and `paddings[:, 1] - crops[:, 1]` at the end (crops at the start are 0 in what TF
writes; other crops, strided or already dilated convolutions, or a SpaceToBatchND read by
anything else are left to the SpaceToBatchND / BatchToSpaceND extractors). The convolution
node keeps its name and reads x; BatchToSpaceND becomes an Identity of its input.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from irforge.frontends.tf.loader import tensor_to_array

CONVOLUTIONS = ("Conv2D", "DepthwiseConv2dNative")


def fold_atrous_convolutions(graph_def: Any) -> Any:
    """`graph_def` with every foldable SpaceToBatchND -> conv -> BatchToSpaceND rewritten
    (a copy when there is one; the given message otherwise)."""
    if not any(n.op == "SpaceToBatchND" for n in graph_def.node):
        return graph_def
    original, graph_def = graph_def, type(graph_def)()
    graph_def.CopyFrom(original)
    nodes = {n.name: n for n in graph_def.node}
    readers: dict[str, list[Any]] = defaultdict(list)
    for n in graph_def.node:
        for i in n.input:
            readers[i.lstrip("^").split(":")[0]].append(n)
    folded = {name for b2s in [n for n in graph_def.node if n.op == "BatchToSpaceND"] if (name := _fold(b2s, nodes, readers))}
    kept = [n for n in graph_def.node if n.name not in folded]
    del graph_def.node[:]
    graph_def.node.extend(kept)
    return graph_def


def _constant(name: str, nodes: dict[str, Any]) -> np.ndarray | None:
    node = nodes.get(name.split(":")[0])
    while node is not None and node.op == "Identity":
        node = nodes.get(node.input[0].split(":")[0])
    if node is None or node.op != "Const":
        return None
    return tensor_to_array(node.attr["value"].tensor, f"TensorFlow node '{node.name}'")


def _only_reader(name: str, readers: dict[str, list[Any]]) -> Any | None:
    found = readers.get(name, [])
    return found[0] if len(found) == 1 else None


def _fold(b2s: Any, nodes: dict[str, Any], readers: dict[str, list[Any]]) -> str | None:
    """Rewrites one chain; the name of the SpaceToBatchND it made dead, or None."""
    chain = [nodes.get(b2s.input[0].split(":")[0])]
    if chain[0] is not None and chain[0].op == "BiasAdd":
        chain.insert(0, nodes.get(chain[0].input[0].split(":")[0]))
    conv = chain[0]
    if conv is None or conv.op not in CONVOLUTIONS or any(_only_reader(n.name, readers) is None for n in chain):
        return None
    s2b = nodes.get(conv.input[0].split(":")[0])
    if s2b is None or s2b.op != "SpaceToBatchND" or ":" in conv.input[0] or _only_reader(s2b.name, readers) is not conv:
        return None
    block, paddings, crops = (_constant(n.input[i], nodes) for n, i in ((s2b, 1), (s2b, 2), (b2s, 2)))
    block2 = _constant(b2s.input[1], nodes)
    if block is None or paddings is None or crops is None or block2 is None or block.shape != (2,) or not np.array_equal(block, block2):
        return None
    fmt = conv.attr["data_format"].s.decode() if "data_format" in conv.attr else "NHWC"
    strides = list(conv.attr["strides"].list.i) or [1] * 4
    dilations = list(conv.attr["dilations"].list.i) or [1] * 4
    padding = conv.attr["padding"].s.decode()
    paddings, crops = paddings.reshape(2, 2).astype(np.int64), crops.reshape(2, 2).astype(np.int64)
    ends = paddings[:, 1] - crops[:, 1]
    if fmt != "NHWC" or padding != "VALID" or set(strides) != {1} or set(dilations) != {1} or crops[:, 0].any() or (ends < 0).any():
        return None
    bh, bw = (int(v) for v in block)
    conv.input[0] = s2b.input[0]
    del conv.attr["dilations"].list.i[:]
    conv.attr["dilations"].list.i.extend([1, bh, bw, 1])
    conv.attr["padding"].s = b"EXPLICIT"
    del conv.attr["explicit_paddings"].list.i[:]
    conv.attr["explicit_paddings"].list.i.extend([0, 0, int(paddings[0, 0]), int(ends[0]), int(paddings[1, 0]), int(ends[1]), 0, 0])
    b2s.op = "Identity"
    del b2s.input[1:]
    for key in list(b2s.attr):
        del b2s.attr[key]
    return str(s2b.name)
