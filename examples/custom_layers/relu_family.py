"""Two ONNX ops irforge does not know, mapped without a new op:

- `MyRelu` (domain com.example) is a ReLU under another name: a one-to-one OpExtension;
- `ThresholdedRelu` (y = x if x > alpha else 0) becomes a small sub-graph of existing ops,
  Mul(x, Convert(Greater(x, alpha))): a ConversionExtension.

    ir-convert --input_model model.onnx --extensions examples/custom_layers/relu_family.py
"""

from __future__ import annotations

import numpy as np

from irforge.custom import ConversionNode, conversion_extension, op_extension
from irforge.dialects.nn import Convert, Eltwise, ReLU
from irforge.weights.dtypes import from_xdsl

op_extension("onnx", "MyRelu", ReLU, domain="com.example", attr_map={})


@conversion_extension("onnx", "ThresholdedRelu")
def thresholded_relu(node: ConversionNode):  # type: ignore[no-untyped-def]
    x = node.get_input(0)
    dtype = from_xdsl(x.type.element_type)  # type: ignore[attr-defined]
    alpha = node.constant(np.array(node.get_attribute("alpha", 1.0), dtype), "/alpha")
    above = node.make(Eltwise, [x, alpha], operation="greater")
    mask = node.make(Convert, [above], destination_type=x.type.element_type)  # type: ignore[attr-defined]
    return node.make(Eltwise, [x, mask], operation="mul", suffix="")
