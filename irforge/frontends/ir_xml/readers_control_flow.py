"""Readers of opset8 If and opset5 Loop: their body nets become the regions of nn.if /
nn.loop (the inverse of backends/ir_xml/emitters/control_flow.py).

A body is imported by an importer of its own whose Parameters are the block's arguments and
whose Results, in the order the port map gives, are what nn.yield returns. Loop forms that
nn.loop cannot express are refused naming the attribute: a sliced input (TensorIterator
style), a scan output other than whole iterations concatenated on axis 0, an output of the
last iteration's value of something that is not loop-carried.
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.etree.ElementTree import Element

import numpy as np
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.utils.exceptions import VerifyException

from irforge.builder import ModelBuilder
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.control_flow import BOOL, INDEX, Yield, build_if, build_loop
from irforge.dialects.nn.elementwise import Convert
from irforge.dialects.nn.shape import Reshape, Squeeze, Unsqueeze
from irforge.frontends.ir_xml.context import LayerContext, ir_layer_reader
from irforge.frontends.ir_xml.parse import IrLayer, IrNet, parse_net
from irforge.weights.dtypes import from_xdsl


def body_importer_class():  # type: ignore[no-untyped-def]
    from irforge.frontends.ir_xml.importer import IrImporter, check_supported, drop_unused

    class BodyImporter(IrImporter):
        """Imports a body net into a block: Parameters are block arguments."""

        def __init__(self, parent: IrImporter, net: IrNet, arg_types: Sequence[Attribute], arg_of: dict[int, int]) -> None:
            super().__init__(net, parent.weights)
            self.builder = ModelBuilder(parent.builder.store)
            self.block = self.builder.block
            for t in arg_types:
                self.block.insert_arg(t, len(self.block.args))
            self.arg_of = arg_of

        def parameter(self, layer: IrLayer) -> SSAValue:
            if layer.id not in self.arg_of:
                raise self.fail_layer(layer, "is a body Parameter that the port map does not feed")
            return self.block.args[self.arg_of[layer.id]]

        def fail_layer(self, layer: IrLayer, message: str):  # type: ignore[no-untyped-def]
            from irforge.errors import IrforgeError

            return IrforgeError(f"body layer id {layer.id} {message}", where=layer.label, fix="the IR is corrupt; regenerate it", code="E640")

        def body(self, results: Sequence[int | None], adapt=None) -> tuple[Block, dict[int, SSAValue]]:  # type: ignore[no-untyped-def]
            check_supported(self.net)
            values: dict[int, SSAValue] = {}
            for layer in self.order():
                if layer.type == "Result":
                    values[layer.id] = self.value_at(self.input_keys(layer)[0])
                else:
                    self.read_layer(layer)
            return self.block, values

    return BodyImporter, drop_unused


def finish_block(block: Block, yielded: Sequence[SSAValue]) -> Block:
    from irforge.frontends.ir_xml.importer import drop_unused

    block.add_op(Yield(*yielded))
    drop_unused(block)
    return block


def body_net(ctx: LayerContext, tag: str) -> IrNet:
    element = ctx.layer.element
    body = element.find(tag) if element is not None else None
    if body is None:
        raise ctx.fail(f"has no <{tag}>")
    return parse_net(body, ctx.importer.weights.path.with_suffix(".xml"), f"{ctx.layer.name}/{tag}")


def port_map(ctx: LayerContext, tag: str) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    element: Element | None = ctx.layer.element.find(tag) if ctx.layer.element is not None else None
    if element is None:
        raise ctx.fail(f"has no <{tag}>")
    return [dict(e.attrib) for e in element.findall("input")], [dict(e.attrib) for e in element.findall("output")]


def ident(ctx: LayerContext, entry: dict[str, str], key: str) -> int:
    try:
        return int(entry[key])
    except (KeyError, ValueError):
        raise ctx.fail(f"a port map entry has no integer {key}: {entry}") from None


def param_types(ctx: LayerContext, net: IrNet, ids: Sequence[int]) -> list[Attribute]:
    """The types of body Parameters `ids` (a port map or back edge may name any id)."""
    from irforge.frontends.ir_xml.parse import ELEMENT_DTYPES
    from irforge.weights.dtypes import to_xdsl

    types: list[Attribute] = []
    for i in ids:
        layer = net.layers.get(i)
        if layer is None or layer.type != "Parameter":
            raise ctx.fail(f"the port map names body layer {i}, which is not a body Parameter")
        element = layer.data.get("element_type", "f32")
        if element not in ELEMENT_DTYPES:
            raise ctx.fail(f"body Parameter {i} has element_type '{element}', not one of {', '.join(sorted(ELEMENT_DTYPES))}")
        dims = layer.outputs[0].dims if layer.outputs else ()
        types.append(TensorType(to_xdsl(ELEMENT_DTYPES[element]), [d if d >= 0 else DYN for d in dims]))
    return types


def result_value(ctx: LayerContext, values: dict[int, SSAValue], layer_id: int, what: str) -> SSAValue:
    """The value body Result `layer_id` returns (a port map or back edge may name any id)."""
    if layer_id not in values:
        raise ctx.fail(f"the {what} names body layer {layer_id}, which is not a body Result")
    return values[layer_id]


@ir_layer_reader("If")
def if_(ctx: LayerContext) -> list[SSAValue]:
    BodyImporter, _ = body_importer_class()
    inputs = [ctx.input(i) for i in range(1, ctx.num_inputs)]
    first_out = ctx.num_inputs
    blocks = []
    for tag in ("then", "else"):
        net = body_net(ctx, f"{tag}_body")
        ins, outs = port_map(ctx, f"{tag}_port_map")
        arg_of = {ident(ctx, e, "internal_layer_id"): ident(ctx, e, "external_port_id") - 1 for e in ins}
        for layer_id, index in arg_of.items():
            if layer_id not in net.layers or not 0 <= index < len(inputs):
                raise ctx.fail(f"{tag}_port_map input {index + 1} -> layer {layer_id} names no input or body Parameter")
        importer = BodyImporter(ctx.importer, net, [v.type for v in inputs], arg_of)
        block, values = importer.body([])
        by_output = {ident(ctx, e, "external_port_id") - first_out: ident(ctx, e, "internal_layer_id") for e in outs}
        if sorted(by_output) != list(range(len(ctx.layer.outputs))) or any(r not in values for r in by_output.values()):
            raise ctx.fail(f"{tag}_port_map must give every output a body Result, got {sorted(by_output)}")
        blocks.append(finish_block(block, [values[by_output[k]] for k in range(len(ctx.layer.outputs))]))
    op = verified(ctx, lambda: build_if(ctx.input(0), inputs, blocks[0], blocks[1], ctx.layer.name))
    ctx.importer.builder.block.add_op(op)
    return list(op.results)


@ir_layer_reader("Loop")
def loop(ctx: LayerContext) -> list[SSAValue]:
    BodyImporter, _ = body_importer_class()
    if ctx.num_inputs < 2:
        raise ctx.fail("Loop needs a trip count and a condition input")
    net = body_net(ctx, "body")
    ins, outs = port_map(ctx, "port_map")
    edges = ctx.layer.element.find("back_edges")  # type: ignore[union-attr]
    back = [(ident(ctx, dict(e.attrib), "from-layer"), ident(ctx, dict(e.attrib), "to-layer")) for e in (edges if edges is not None else [])]
    carried_param = {to: frm for frm, to in back}  # body Parameter <- the Result feeding it back
    iteration_param, condition_result = None, None
    external: dict[int, int] = {}  # input index -> body Parameter
    for e in ins:
        if e.get("purpose") == "current_iteration":
            iteration_param = ident(ctx, e, "internal_layer_id")
            continue
        for attr in ("axis", "start", "end", "stride", "part_size"):
            if attr in e:
                raise ctx.fail(f"a sliced Loop input ({attr}='{e[attr]}') is not supported", fix="iterate with a Gather on the iteration number in the body")
        external[ident(ctx, e, "external_port_id")] = ident(ctx, e, "internal_layer_id")
    finals: dict[int, int] = {}  # output index -> body Result (last iteration's value)
    scans: dict[int, int] = {}
    for e in outs:
        if e.get("purpose") == "execution_condition":
            condition_result = ident(ctx, e, "internal_layer_id")
            continue
        index = ident(ctx, e, "external_port_id") - ctx.num_inputs
        if "axis" in e:
            form = {k: e.get(k) for k in ("axis", "start", "end", "stride", "part_size")}
            if form != {"axis": "0", "start": "0", "end": "-1", "stride": "1", "part_size": "1"}:
                raise ctx.fail(f"a Loop output concatenated as {form} is not supported (only axis 0, whole iterations)")
            scans[index] = ident(ctx, e, "internal_layer_id")
        else:
            finals[index] = ident(ctx, e, "internal_layer_id")
    carried = sorted(i for i, p in external.items() if p in carried_param)  # external input indices
    invariant = sorted(i for i, p in external.items() if p not in carried_param)
    results_of_carried = [carried_param[external[i]] for i in carried]
    for index, result in finals.items():
        if result not in results_of_carried:
            raise ctx.fail(f"Loop output {index} is the last value of body Result {result}, which is not loop-carried (not supported)")
    if sorted([*finals, *scans]) != list(range(len(ctx.layer.outputs))):
        raise ctx.fail("the port map must give every Loop output a body Result")
    order = [*carried, *invariant]
    arg_of = {external[i]: 2 + k for k, i in enumerate(order)}
    if iteration_param is not None:
        arg_of[iteration_param] = 0
        t = param_types(ctx, net, [iteration_param])[0]
        if t != INDEX:
            raise ctx.fail(f"the current_iteration Parameter must be i64 of rank 0, got {t}")
    values_in = [ctx.input(i) for i in order]
    types: list[Attribute] = [INDEX, BOOL, *param_types(ctx, net, [external[i] for i in carried]), *(v.type for v in values_in[len(carried) :])]
    importer = BodyImporter(ctx.importer, net, types, arg_of)
    block, values = importer.body([])
    condition = result_value(ctx, values, condition_result, "execution_condition") if condition_result is not None else block.args[1]
    if condition.type != BOOL:
        condition = ctx_in_block(importer, Reshape, [condition], shape=[], special_zero=False, name=f"{ctx.layer.name}/condition")
    yielded = [condition, *(result_value(ctx, values, r, "back edge") for r in results_of_carried)]
    scan_order = sorted(scans)
    for index in scan_order:
        value = result_value(ctx, values, scans[index], "port map")
        owner = value.owner
        if isinstance(owner, Unsqueeze) and owner.ints("axes") == (0,):  # as irforge writes it: the slice itself
            yielded.append(owner.input)
        else:
            yielded.append(ctx_in_block(importer, Squeeze, [value], axes=[0], name=f"{ctx.layer.name}/scan{index}"))
    block = finish_block(block, yielded)
    trip = ctx.input(0)
    known = ctx.importer.constant_value(trip)
    if known is not None and int(np.asarray(known).reshape(-1)[0]) < 0:
        trip_value = None  # -1: no limit
    else:
        trip_value = trip if from_xdsl(trip.type.element_type) == np.int64 else ctx.value(Convert, [trip], suffix="trip_count", destination_type=i64)  # type: ignore[attr-defined]
    initial = ctx.input(1)
    op = verified(ctx, lambda: build_loop(trip_value, initial, values_in, len(carried), block, ctx.layer.name))
    ctx.importer.builder.block.add_op(op)
    by_index: dict[int, SSAValue] = {}
    for index, result in finals.items():
        by_index[index] = op.results[results_of_carried.index(result)]
    for k, index in enumerate(scan_order):
        by_index[index] = op.results[len(carried) + k]
    return [by_index[i] for i in range(len(ctx.layer.outputs))]


def ctx_in_block(importer, cls, operands, *, name: str, **props) -> SSAValue:  # type: ignore[no-untyped-def]
    return importer.add(cls, operands, name=name, **props)[0]


def verified(ctx: LayerContext, make):  # type: ignore[no-untyped-def]
    """The op `make` builds; bodies that nn.if / nn.loop cannot hold are an error naming the layer."""
    try:
        return make()
    except VerifyException as error:
        raise ctx.fail(str(error).splitlines()[0]) from None
