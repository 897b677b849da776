"""cut: new entry and exit points; everything the outputs do not need is removed.

Points name layers by their `name` property, in the Model Optimizer's forms:

- `inputs`: `node` (its non-constant operands become inputs), `port:node` (operand `port`
  of node becomes an input), `node:port` (result `port` of node becomes an input, the node
  is cut off), or the name of a model input (kept);
- `outputs`: `node` (its result 0) or `node:port`.

New inputs take the name written; the model's inputs no output needs any more disappear.
A name that matches no layer, or an output that does not depend on any of the given
inputs, is an error.

    // cut{inputs="relu1" outputs="conv2"}
    %c1 = nn.convolution %x, %w1 {name = "conv1"}
    %r1 = nn.relu %c1 {name = "relu1"}
    %c2 = nn.convolution %r1, %w2 {name = "conv2"}
    %r2 = nn.relu %c2 {name = "relu2"}
    func.return %r2
becomes (with a new input "relu1" of %c1's type)
    %r1 = nn.relu %relu1 {name = "relu1"}
    %c2 = nn.convolution %r1, %w2 {name = "conv2"}
    func.return %c2
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue, Use
from xdsl.passes import ModulePass

from irforge.dialects.nn.base import NNOp
from irforge.dialects.nn.constant import Constant
from irforge.errors import IrforgeError
from irforge.model import input_names, main_function, output_names


@dataclass(frozen=True)
class CutPoint:
    """Uses to feed from a new input (or a model input to keep), named `name`."""

    name: str
    value: SSAValue
    uses: tuple[Use, ...]


def split_points(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def layers_by_name(func: FuncOp) -> dict[str, NNOp]:
    return {op.layer_name.data: op for op in func.body.walk() if isinstance(op, NNOp) and op.layer_name is not None}


def resolve(point: str, layers: dict[str, NNOp], what: str) -> tuple[NNOp, str, int]:
    """(layer, form, port) for `node`, `port:node` (form 'in') or `node:port` (form 'out')."""
    if point in layers:
        return layers[point], "node", 0
    head, _, tail = point.rpartition(":")
    if head in layers and tail.isdigit():
        return layers[head], "out", int(tail)
    head, _, tail = point.partition(":")
    if tail in layers and head.isdigit():
        return layers[tail], "in", int(head)
    raise IrforgeError(
        f"cut: {what} '{point}' names no layer of the model",
        fix="use a layer name, with node:port or port:node for one port",
        code="E743",
    )


def check_port(op: NNOp, port: int, count: int, point: str) -> None:
    if port >= count:
        raise IrforgeError(f"cut: '{point}' names port {port}, but {op.label} has {count}", code="E743")


def input_points(func: FuncOp, text: str) -> list[CutPoint]:
    layers = layers_by_name(func)
    model_inputs = dict(zip(input_names(func), func.args))
    points = []
    for point in split_points(text):
        if point in model_inputs:
            arg = model_inputs[point]
            points.append(CutPoint(point, arg, tuple(arg.uses)))
            continue
        op, form, port = resolve(point, layers, "input")
        if form == "out":
            check_port(op, port, len(op.results), point)
            points.append(CutPoint(point, op.results[port], tuple(op.results[port].uses)))
            continue
        if form == "in":
            check_port(op, port, len(op.operands), point)
            ports = [port]
        else:
            ports = [i for i, v in enumerate(op.operands) if not isinstance(v.owner, Constant)]
        for i in ports:
            name = point if form == "in" or len(ports) == 1 else f"{i}:{point}"
            use = next(u for u in op.operands[i].uses if u.operation is op and u.index == i)
            points.append(CutPoint(name, op.operands[i], (use,)))
    return points


def output_values(func: FuncOp, text: str) -> list[tuple[str, SSAValue]]:
    layers = layers_by_name(func)
    outputs = []
    for point in split_points(text):
        op, form, port = resolve(point, layers, "output")
        if form == "in":
            raise IrforgeError(f"cut: output '{point}' names an input port", fix="write node or node:port", code="E743")
        check_port(op, port, len(op.results), point)
        outputs.append((point, op.results[port]))
    return outputs


def depends_on(value: SSAValue, sources: set[SSAValue]) -> bool:
    """Whether `value` is computed from any of `sources`."""
    seen: set[SSAValue] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if v in sources:
            return True
        if v in seen or not isinstance(v.owner, Operation):
            continue
        seen.add(v)
        stack.extend(v.owner.operands)
    return False


def erase_dead_ops(func: FuncOp) -> None:
    for op in reversed(list(func.body.block.ops)):
        if not isinstance(op, ReturnOp) and all(not r.uses for r in op.results):
            op.detach()
            op.erase()


@dataclass(frozen=True)
class CutPass(ModulePass):
    name = "cut"

    inputs: str = ""
    """New entry points, comma-separated."""
    outputs: str = ""
    """New exit points, comma-separated (default: the model's outputs)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.inputs and not self.outputs:
            return
        func = main_function(op)
        block = func.body.block
        ret = block.last_op
        assert isinstance(ret, ReturnOp)
        points = input_points(func, self.inputs)
        explicit = output_values(func, self.outputs)
        names = dict(zip(func.args, input_names(func)))
        kept = {p.value for p in points if p.value in names}
        for point in points:
            if point.value in names:
                continue
            arg = block.insert_arg(point.value.type, len(block.args))
            names[arg] = point.name
            for use in point.uses:
                use.operation.operands[use.index] = arg
            kept.add(arg)
        # read after the rewiring: a cut result that is also a model output now returns the new input
        outputs = explicit or list(zip(output_names(func), ret.arguments))
        if points:
            for name, value in outputs:
                if not depends_on(value, kept):
                    raise IrforgeError(
                        f"cut: output '{name}' is not reachable from the given inputs",
                        fix="choose outputs after the inputs, or other inputs",
                        code="E743",
                    )
        ret.operands = [v for _, v in outputs]
        erase_dead_ops(func)
        for arg in reversed(block.args):
            if not arg.uses:
                names.pop(arg)
                block.erase_arg(arg)
        arg_names = [names[a] for a in block.args]
        func.function_type = FunctionType.from_lists([a.type for a in block.args], [v.type for _, v in outputs])
        func.arg_attrs = name_attrs(arg_names)
        func.res_attrs = name_attrs([n for n, _ in outputs])


def name_attrs(names: list[str]) -> ArrayAttr[DictionaryAttr]:
    return ArrayAttr([DictionaryAttr({"nn.name": StringAttr(n)}) for n in names])
