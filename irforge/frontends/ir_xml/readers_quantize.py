"""Reader of OpenVINO's FakeQuantize (opset1, numpy broadcasting) into nn.fake_quantize."""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.dialects.nn.quantize import FakeQuantize
from irforge.frontends.ir_xml.context import LayerContext, ir_layer_reader


@ir_layer_reader("FakeQuantize")
def fake_quantize(ctx: LayerContext) -> SSAValue:
    if ctx.attr("auto_broadcast", "numpy").lower() != "numpy":
        raise ctx.fail(f"auto_broadcast '{ctx.attr('auto_broadcast')}' is not supported", fix="only numpy broadcasting has an nn equivalent")
    return ctx.value(FakeQuantize, [ctx.input(i) for i in range(5)], levels=ctx.int("levels"))
