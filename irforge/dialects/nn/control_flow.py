"""Control flow with bodies: If (OpenVINO opset8 If) and Loop (opset5 Loop).

Both bodies are regions of one block, isolated from above: every value a body reads from
the enclosing function is an explicit operand of the op, bound to a block argument (which is
also how OpenVINO's port_map feeds a body). A body ends with `nn.yield`.

- `nn.if %cond, %inputs...`: `then` and `else` blocks both take the inputs as arguments and
  yield the outputs. The results' types merge the two branches' yields: a size that differs
  between them is dynamic (`?`); the branches must agree on rank and element type.
- `nn.loop [%trip_count] [%condition] %inputs...` with property `carried` = N: the first N
  inputs are loop-carried (their values flow from one iteration's yield to the next
  iteration's arguments), the others are invariant. The body block takes
  (iteration: tensor<i64>, condition: tensor<i1>, carried..., invariants...) and yields
  (condition: tensor<i1>, carried..., scans...). The results are the final carried values,
  then each scan output stacked over the iterations along a new axis 0 (ONNX Loop's
  semantics), of `?` iterations unless the trip count is an inline constant and the condition
  provably stays true (then that count, as OpenVINO infers it). A carried value whose size changes from one iteration to the next has `?`
  there, in the body argument as in the result; scan results have `?` iterations.
  Without a trip count the loop runs while the condition holds; without a condition, for the
  trip count; without either, it is refused (it would never stop).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntegerAttr, StringAttr, TensorType, i1, i64
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    opt_operand_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsolatedFromAbove, IsTerminator, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from irforge.dialects.nn.base import DYN, NNOp, tensor, types_compatible
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.elementwise import Identity

BOOL = TensorType(i1, [])
INDEX = TensorType(i64, [])


@irdl_op_definition
class Yield(IRDLOperation):
    """The values a body of `nn.if` / `nn.loop` produces."""

    name = "nn.yield"
    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator())
    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, *values: SSAValue) -> None:
        super().__init__(operands=[list(values)])

    def verify_(self) -> None:
        if not isinstance(self.parent_op(), (If, Loop)):
            raise VerifyException("nn.yield must end the body of an nn.if or nn.loop")


def merge_types(label: str, what: str, a: TensorType, b: TensorType) -> TensorType:
    """The type covering both `a` and `b`: sizes that differ become dynamic."""
    if a.element_type != b.element_type or len(a.get_shape()) != len(b.get_shape()):
        raise VerifyException(f"{label}: {what} has type {a} in one place and {b} in another (rank and element type must agree)")
    return tensor([x if x == y else DYN for x, y in zip(a.get_shape(), b.get_shape())], a.element_type)


def body_block(op: NNOp, region: Region, what: str) -> Block:
    if len(region.blocks) != 1:
        raise op.error(f"the {what} body must be one block, got {len(region.blocks)}")
    block = region.blocks[0]
    if not isinstance(block.last_op, Yield):
        raise op.error(f"the {what} body must end with nn.yield")
    return block


def yielded_types(op: NNOp, block: Block) -> list[TensorType]:
    last = block.last_op
    assert isinstance(last, Yield)
    return [v.type for v in last.values]  # type: ignore[misc]


def check_args(op: NNOp, block: Block, expected: Sequence[Attribute], what: str) -> None:
    if len(block.args) != len(expected):
        raise op.error(f"the {what} body takes {len(block.args)} arguments, expected {len(expected)}")
    for i, (arg, t) in enumerate(zip(block.args, expected)):
        if not isinstance(arg.type, TensorType) or not isinstance(t, TensorType) or not types_compatible(arg.type, t):
            raise op.error(f"argument #{i} of the {what} body has type {arg.type}, expected {t}")


def is_bool_scalar(t: Attribute) -> bool:
    return isinstance(t, TensorType) and t.element_type == i1 and all(d == 1 for d in t.get_shape())


@irdl_op_definition
class If(NNOp):
    """Runs the `then` body if the condition (one bool) is true, else the `else` body."""

    name = "nn.if"
    condition = opt_operand_def(TensorType)  # always given; optional only to share the format
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    then_region = region_def("single_block")
    else_region = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), RecursiveMemoryEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = None  # generic form: the regions and operand segments round trip as they are

    def verify_attributes(self) -> None:
        if self.condition is None:
            raise self.error("needs a condition")

    def infer_shapes(self) -> list[TensorType]:
        assert self.condition is not None
        if not is_bool_scalar(self.condition.type):
            raise self.error(f"the condition must be one i1 value, got {self.condition.type}")
        then_block = body_block(self, self.then_region, "then")
        else_block = body_block(self, self.else_region, "else")
        inputs = [v.type for v in self.inputs]
        check_args(self, then_block, inputs, "then")
        check_args(self, else_block, inputs, "else")
        a, b = yielded_types(self, then_block), yielded_types(self, else_block)
        if len(a) != len(b):
            raise self.error(f"the then body yields {len(a)} values, the else body {len(b)}")
        return [merge_types(self.label, f"output #{i}", x, y) for i, (x, y) in enumerate(zip(a, b))]


@irdl_op_definition
class Loop(NNOp):
    """ONNX Loop / OpenVINO Loop; see the module docstring."""

    name = "nn.loop"
    trip_count = opt_operand_def(TensorType)
    initial_condition = opt_operand_def(TensorType)
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    carried = prop_def(IntegerAttr)
    """How many of the inputs are loop-carried (the rest are invariant)."""
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), RecursiveMemoryEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = None

    @property
    def num_carried(self) -> int:
        return int(self.carried.value.data)

    def verify_attributes(self) -> None:
        if not 0 <= self.num_carried <= len(self.inputs):
            raise self.error(f"carried {self.num_carried} is out of range for {len(self.inputs)} inputs")
        if self.trip_count is None and self.initial_condition is None:
            raise self.error("needs a trip count or a condition (it would never stop)")

    def body_argument_types(self) -> list[Attribute]:
        return [INDEX, BOOL, *(v.type for v in self.inputs)]

    def infer_shapes(self) -> list[TensorType]:
        if self.trip_count is not None:
            t = self.trip_count.type
            if not isinstance(t, TensorType) or t.element_type not in (i64,) or any(d != 1 for d in t.get_shape()):
                raise self.error(f"the trip count must be one i64 value, got {t}")
        if self.initial_condition is not None and not is_bool_scalar(self.initial_condition.type):
            raise self.error(f"the condition must be one i1 value, got {self.initial_condition.type}")
        block = body_block(self, self.body, "loop")
        n = self.num_carried
        if len(block.args) != 2 + len(self.inputs):
            raise self.error(f"the loop body takes {len(block.args)} arguments, expected {2 + len(self.inputs)}")
        if block.args[0].type != INDEX or block.args[1].type != BOOL:
            raise self.error(f"the loop body's first arguments must be tensor<i64> (iteration) and tensor<i1> (condition), got {block.args[0].type}, {block.args[1].type}")
        yielded = yielded_types(self, block)
        if len(yielded) < 1 + n or not is_bool_scalar(yielded[0]):
            raise self.error(f"the loop body must yield a tensor<i1> condition then {n} carried values")
        outputs: list[TensorType] = []
        for i in range(n):
            arg = block.args[2 + i].type
            initial = self.inputs[i].type
            assert isinstance(arg, TensorType) and isinstance(initial, TensorType)
            # the body argument covers the initial value and every yielded one
            merged = merge_types(self.label, f"carried value #{i}", initial, yielded[1 + i])
            if merge_types(self.label, f"carried value #{i}", merged, arg) != arg:
                raise self.error(f"the body argument of carried value #{i} has type {arg}, expected {merged} (sizes that change over iterations are ?)")
            outputs.append(arg)
        for i in range(n, len(self.inputs)):
            arg, outer = block.args[2 + i].type, self.inputs[i].type
            assert isinstance(arg, TensorType) and isinstance(outer, TensorType)
            if not types_compatible(arg, outer):
                raise self.error(f"argument #{2 + i} of the loop body has type {arg}, expected {outer}")
        iterations = self.static_iterations()
        for t in yielded[1 + n :]:
            outputs.append(tensor([DYN if iterations is None else iterations, *t.get_shape()], t.element_type))
        return outputs

    def static_iterations(self) -> int | None:
        """The number of iterations when it is known without running (as OpenVINO infers it):
        a constant trip count, and a condition that starts constant and stays as it came in
        (the body yields its condition argument, or a constant true)."""
        count = inline_scalar(self.trip_count) if self.trip_count is not None else None
        if count is None:
            return None
        if self.initial_condition is not None:
            start = inline_scalar(self.initial_condition)
            if start is None:
                return None
            if not start:
                return 0
        block = self.body.blocks[0]
        last = block.last_op
        if not isinstance(last, Yield) or not last.values:
            return None
        condition = last.values[0]
        while isinstance(condition.owner, Identity):
            condition = condition.owner.operands[0]
        if condition is block.args[1] or inline_scalar(condition) is True:
            return max(int(count), 0)
        return None


def inline_scalar(value: SSAValue) -> int | bool | None:
    """The one value of an inline nn.constant (None for anything else)."""
    owner = value.owner
    if not isinstance(owner, Constant) or owner.weight_name is not None:
        return None
    array = owner.inline_array().reshape(-1)
    return array[0].item() if array.size == 1 else None


def _built(cls: type[If] | type[Loop], operands: list, properties: dict[str, Attribute], blocks: Sequence[Block]) -> If | Loop:
    """An op of `cls` around `blocks`, its result types inferred from them (a probe op
    infers them, then hands its regions over)."""
    yields = yielded_types_of(blocks[0])
    probe = cls(operands=operands, result_types=[yields], properties=properties, regions=[Region(b) for b in blocks])
    try:
        types = probe.infer_shapes()
    finally:
        regions = [probe.detach_region(r) for r in list(probe.regions)]
        probe.drop_all_references()
    return cls(operands=operands, result_types=[types], properties=properties, regions=regions)


def yielded_types_of(block: Block) -> list[Attribute]:
    last = block.last_op
    return [v.type for v in last.operands] if last is not None else []


def build_if(condition: SSAValue, inputs: Sequence[SSAValue], then_block: Block, else_block: Block, name: str) -> If:
    op = _built(If, [[condition], list(inputs)], {"name": StringAttr(name)}, [then_block, else_block])
    assert isinstance(op, If)
    return op


def build_loop(trip_count: SSAValue | None, condition: SSAValue | None, inputs: Sequence[SSAValue], carried: int, body: Block, name: str) -> Loop:
    operands = [[trip_count] if trip_count else [], [condition] if condition else [], list(inputs)]
    props: dict[str, Attribute] = {"name": StringAttr(name), "carried": IntegerAttr(carried, i64)}
    op = _built(Loop, operands, props, [body])
    assert isinstance(op, Loop)
    return op
