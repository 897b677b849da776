"""Runs a model op by op with the numpy kernels: the numerical ground truth."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects.func import ReturnOp
from xdsl.ir import SSAValue

from irforge.backends.reference.registry import evaluate
from irforge.dialects.nn.constant import Constant
from irforge.errors import IrforgeError
from irforge.model import Model, input_names, output_names
from irforge.weights import WeightStore
from irforge.weights.dtypes import from_xdsl


def constant_value(op: Constant, store: WeightStore) -> np.ndarray:
    if op.weight_name is not None:
        return store[op.weight_name]
    return op.inline_array()


def check_input(name: str, value: SSAValue, array: np.ndarray) -> np.ndarray:
    t = value.type
    dtype = from_xdsl(t.element_type)  # type: ignore[attr-defined]
    shape = t.get_shape()  # type: ignore[attr-defined]
    if array.ndim != len(shape) or any(d >= 0 and d != a for d, a in zip(shape, array.shape)):
        raise IrforgeError(
            f"input '{name}' has shape {list(array.shape)} but the model expects {t}",
            fix="pass an array of the model's input shape",
            code="E856",
        )
    return np.asarray(array, dtype=dtype)


def run(model: Model, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Outputs of `model` (by output name) for `inputs` (by input name)."""
    func = model.func
    names = input_names(func)
    missing = [n for n in names if n not in inputs]
    if missing:
        raise IrforgeError(f"missing model inputs: {', '.join(missing)}", fix="pass --input NAME=FILE.npy", code="E856")
    values: dict[SSAValue, np.ndarray] = {
        arg: check_input(name, arg, inputs[name]) for name, arg in zip(names, func.args)
    }
    for op in func.body.block.ops:
        if isinstance(op, ReturnOp):
            return {
                name: values[v] for name, v in zip(output_names(func), op.arguments, strict=True)
            }
        if isinstance(op, Constant):
            values[op.output] = constant_value(op, model.store)
            continue
        outs = evaluate(op, [values[v] for v in op.operands])
        values.update(zip(op.results, outs))
    raise IrforgeError("the model function has no func.return", code="E856")
