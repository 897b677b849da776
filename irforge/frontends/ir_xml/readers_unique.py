"""Reader of OpenVINO's Unique-10 into nn.unique (i32 indices or counts converted from its
i64 results)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn.elementwise import Convert
from irforge.dialects.nn.unique import Unique
from irforge.frontends.ir_xml.context import LayerContext, ir_layer_reader
from irforge.weights.dtypes import to_xdsl


@ir_layer_reader("Unique")
def unique(ctx: LayerContext) -> Sequence[SSAValue | None]:
    axis = int(ctx.scalar(1, "axis")) if ctx.num_inputs > 1 else None
    results = ctx.add(Unique, [ctx.input(0)], num_results=4, axis=axis, sorted=ctx.bool("sorted", "true"))
    i32 = to_xdsl(np.dtype(np.int32))
    for index, attr, tag in ((1, "index_element_type", "indices"), (2, "index_element_type", "inverse"), (3, "count_element_type", "counts")):
        if ctx.attr(attr, "i64") == "i32":
            results[index] = ctx.value(Convert, [results[index]], suffix=f"/{tag}_i32", destination_type=i32)
    return results
