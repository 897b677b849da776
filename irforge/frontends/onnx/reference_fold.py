"""Folding ONNX nodes that irforge has no extractor for, when all their inputs are constant.

Exporters compute positions and masks with ops no layer of the model needs at run time: BERT's
position ids (Range -> GatherElements), Swin's shifted-window masks (Range, ScatterND), T5's
relative-position buckets. At the given input shapes those inputs are all constants, so the
node is evaluated once by ONNX's own reference implementation (`onnx.reference`, which has a
kernel for every standard op) at the model's opset, and its outputs become constants. A node
that cannot fold this way (an input not constant, a result over the size budget, an op the
reference does not know) stays unsupported and is reported with all others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx

RANDOM_OPS = frozenset({"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli"})
"""Ops whose value changes from run to run: folding one sample into the weights would change
the model, so they are never folded (and reported as unsupported)."""

FOLD_LIMIT_BYTES = 64 << 20
"""Largest total size of a folded node's outputs: past it, folding would put a large tensor in
the weights that the model computes cheaply at run time (the node is reported instead)."""


def fold_node(
    node: onnx.NodeProto, inputs: Sequence[np.ndarray | None], opsets: Mapping[str, int]
) -> list[np.ndarray] | None:
    """The node's outputs computed by ONNX's reference implementation, or None if it cannot fold.

    `inputs` holds None for omitted optional inputs. None is returned (never raised) when the
    reference cannot evaluate the node or the outputs exceed `FOLD_LIMIT_BYTES`: the caller then
    reports the op as unsupported, which names the real problem better than a reference error.
    """
    from onnx.reference import ReferenceEvaluator

    if node.op_type in RANDOM_OPS:
        return None
    names = [f"in{i}" if array is not None else "" for i, array in enumerate(inputs)]
    while names and not names[-1]:
        names.pop()
    outputs = [f"out{i}" if name else "" for i, name in enumerate(node.output)]
    single = onnx.NodeProto()
    single.CopyFrom(node)
    del single.input[:]
    single.input.extend(names)
    del single.output[:]
    single.output.extend(outputs)
    graph = onnx.helper.make_graph(
        [single],
        "fold",
        [_value_info(name, array) for name, array in zip(names, inputs) if name and array is not None],
        [onnx.helper.make_value_info(name, onnx.TypeProto()) for name in outputs if name],
    )
    imports = [onnx.helper.make_opsetid(domain, version) for domain, version in opsets.items()]
    model = onnx.helper.make_model(graph, opset_imports=imports)
    feeds = {name: array for name, array in zip(names, inputs) if name and array is not None}
    try:
        results = ReferenceEvaluator(model).run(None, feeds)
    except Exception:  # noqa: BLE001  (any reference failure means "cannot fold", reported as unsupported)
        return None
    arrays = [np.asarray(r) for r in results]
    if sum(a.nbytes for a in arrays) > FOLD_LIMIT_BYTES:
        return None
    wanted = iter(arrays)
    return [next(wanted) if name else np.zeros(0, np.float32) for name in outputs]


def _value_info(name: str, array: np.ndarray) -> onnx.ValueInfoProto:
    elem_type = onnx.helper.np_dtype_to_tensor_dtype(np.asarray(array).dtype)
    return onnx.helper.make_tensor_value_info(name, elem_type, list(np.shape(array)))
