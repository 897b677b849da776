"""One ONNX node imported as a few standard ONNX nodes (its exact definition in newer ops).

Old and experimental forms (ImageScaler, Crop, legacy broadcasting, Hardmax's 2-D coercion,
...) are defined by the ONNX spec in terms of ops irforge already imports; writing them as
those nodes keeps one tested lowering per op (reference, CPU, OpenCL, IR XML) instead of a
second copy. The helper nodes run through the ordinary extractors at a modern opset, with
names under the original node's (`<node>/<op>_<i>`), so errors still name the model's node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from xdsl.ir import SSAValue

from irforge.frontends.onnx.registry import NodeContext, find_extractor

EXPANSION_OPSET = 13
"""The opset the helper nodes are written in (Slice/Pad/Reduce* take inputs; Softmax is not coerced)."""


class Expansion:
    """Builds helper nodes for `ctx`'s node; `tensor(...)` names a value, `node(...)` imports one."""

    def __init__(self, ctx: NodeContext) -> None:
        self.ctx = ctx
        self.count = 0

    def _name(self, what: str) -> str:
        self.count += 1
        return f"{self.ctx.name}/{what}_{self.count}"

    def constant(self, array: np.ndarray | Sequence[Any], dtype: Any = None) -> str:
        """A constant's tensor name (registered as an importer value)."""
        name = self._name("const")
        self.ctx.importer.values[name] = self.ctx.constant(np.asarray(array, dtype), "/" + name.rsplit("/", 1)[-1])
        return name

    def value(self, value: SSAValue) -> str:
        """An existing value's tensor name."""
        name = self._name("value")
        self.ctx.importer.values[name] = value
        return name

    def input(self, index: int) -> str:
        if index >= len(self.ctx.node.input):  # a malformed node: fewer inputs than the op has
            raise self.ctx.fail(f"input #{index} is required")
        return self.ctx.node.input[index]

    def node(self, op_type: str, inputs: Sequence[str], outputs: int = 1, **attrs: Any) -> list[str]:
        """Import one helper node; the names of its outputs."""
        node_name = self._name(op_type)
        names = [f"{node_name}:{i}" for i in range(outputs)]
        node = onnx.helper.make_node(op_type, list(inputs), names, name=node_name, **attrs)
        extractor = find_extractor("", op_type)
        assert extractor is not None, op_type  # helper nodes use ops irforge imports
        produced = extractor(NodeContext(self.ctx.importer, node, EXPANSION_OPSET))
        results = [produced] if isinstance(produced, SSAValue) else list(produced)
        for name, value in zip(names, results):
            if value is not None:
                self.ctx.importer.values[name] = value
        return names

    def one(self, op_type: str, inputs: Sequence[str], **attrs: Any) -> str:
        return self.node(op_type, inputs, 1, **attrs)[0]

    def result(self, name: str) -> SSAValue:
        """The value of a tensor name: a helper's, or the graph's (initializers load lazily)."""
        return self.ctx.importer.value(name)


def rewritten(ctx: NodeContext, op_type: str | None = None, opset: int | None = None, drop: Sequence[str] = (),
              set_attrs: Mapping[str, Any] | None = None, inputs: Sequence[str] | None = None) -> NodeContext:
    """`ctx`'s node with attributes dropped / set, inputs replaced or read at another opset:
    the modern form of a legacy node, handed to the ordinary extractor."""
    node = onnx.NodeProto()
    node.CopyFrom(ctx.node)
    node.name = ctx.name
    if op_type is not None:
        node.op_type = op_type
    keep = [a for a in node.attribute if a.name not in set(drop) | set(set_attrs or {})]
    del node.attribute[:]
    node.attribute.extend(keep)
    for key, value in (set_attrs or {}).items():
        node.attribute.append(onnx.helper.make_attribute(key, value))
    if inputs is not None:
        del node.input[:]
        node.input.extend(inputs)
    return NodeContext(ctx.importer, node, ctx.opset if opset is None else opset)
