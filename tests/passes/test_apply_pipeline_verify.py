"""`apply_pipeline` verifies the module after each pass, or (`verify_each=False`, the CPU
backend's own pipeline) once after the last: a pass that leaves invalid IR is E741 either way."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import ReturnOp
from xdsl.passes import ModulePass

from irforge import passes
from irforge.dialects.nn import ReLU
from irforge.errors import IrforgeError
from tests.helpers import one_op_model


@dataclass(frozen=True)
class DropReturn(ModulePass):
    """Leaves the function without its terminator (invalid IR)."""

    name = "test-drop-return"

    def apply(self, ctx, op: ModuleOp) -> None:  # type: ignore[no-untyped-def]
        for inner in list(op.walk()):
            if isinstance(inner, ReturnOp):
                inner.detach()
                inner.erase()


@pytest.mark.parametrize("verify_each", [True, False])
@pytest.mark.parametrize("spec", ["test-drop-return", "test-drop-return,infer-shapes", "infer-shapes,test-drop-return"])
def test_invalid_ir_is_e741(spec: str, verify_each: bool, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(passes.BUILTIN_PASSES, DropReturn.name, lambda: DropReturn)
    model = one_op_model(ReLU, [np.zeros((2, 3), np.float32)])
    with pytest.raises(IrforgeError) as info:
        passes.apply_pipeline(model.module, spec, verify_each=verify_each)
    assert info.value.code == "E741"


def test_valid_pipeline_either_way() -> None:
    for verify_each in (True, False):
        model = one_op_model(ReLU, [np.zeros((2, 3), np.float32)])
        passes.apply_pipeline(model.module, "infer-shapes,canonicalize", verify_each=verify_each)
        model.module.verify()
