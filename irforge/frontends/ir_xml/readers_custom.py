"""Reading custom layers back: a layer whose `version` is a loaded extension's name and whose
type is the IR type of one of its `CustomOp`s becomes that op, its attributes parsed by
their declared kinds (the inverse of `backends.ir_xml.mapping.custom_layer`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from xdsl.ir import Attribute, SSAValue

from irforge.custom.op import CUSTOM_OPS, CustomOp
from irforge.frontends.ir_xml.context import LayerContext
from irforge.frontends.ir_xml.parse import IrLayer

PARSERS: dict[str, Callable[[LayerContext, str], object]] = {
    "int": LayerContext.int,
    "float": LayerContext.float,
    "bool": LayerContext.bool,
    "str": LayerContext.attr,
    "ints": LayerContext.ints,
    "floats": LayerContext.floats,
}


def custom_op_of(layer: IrLayer) -> type[CustomOp] | None:
    """The custom op a layer stands for, if its version names the op's extension."""
    for custom in CUSTOM_OPS.values():
        if custom.extension == layer.version and (custom.ir_type or custom.__name__) == layer.type:
            return custom
    return None


def custom_reader(layer: IrLayer) -> Callable[[LayerContext], Sequence[SSAValue]] | None:
    custom = custom_op_of(layer)
    return None if custom is None else partial(read_custom, custom)


def read_custom(custom: type[CustomOp], ctx: LayerContext) -> Sequence[SSAValue]:
    props: dict[str, Attribute] = {}
    for key in ctx.layer.data:
        spec = custom.attrs.get(key)
        if spec is None:
            known = ", ".join(sorted(custom.attrs)) or "none"
            raise ctx.fail(f"attribute '{key}' is not one of {custom.op_class.name}'s ({known})", fix="regenerate the IR with the extension that is loaded")
        props[key] = spec.attribute(PARSERS[spec.kind_name](ctx, key))
    inputs = [ctx.input(i) for i in range(ctx.num_inputs)]
    return ctx.add(custom.op_class, inputs, num_results=custom.num_outputs, **props)
