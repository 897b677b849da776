"""Custom layers with an OpenCL kernel of their own (`irforge.custom.CustomOp.opencl`).

Such a kernel is written against whole buffers (`__global float* x`, as the seed's
.cl files are), so its tensors cannot live at an offset in the arena: operands in the
arena are first copied into buffers of their own, by a copy kernel, and its results get
buffers of their own (kind "own", outside the planned arena), which later kernels read
at offset 0 like any tensor.
"""

from __future__ import annotations

from xdsl.ir import Operation

from irforge.backends.cpu.lower import Buffer, nbytes_of, shape_of
from irforge.backends.opencl.codegen.common import Param, numel
from irforge.backends.opencl.codegen.movement import map_body
from irforge.backends.opencl.lower import Launch, OclLowering, custom_kernel
from irforge.backends.opencl.ops.launch import launch_1d
from irforge.custom.op import CUSTOM_OPS
from irforge.custom.opencl_signature import check_signature


def own_copy(ctx: OclLowering, buf: Buffer, count: int) -> Buffer:
    """`buf` itself if it is a whole device buffer, else a copy of its `count` floats."""
    if buf.kind in ("input", "const", "own"):
        return buf
    copy = ctx.buffer(4 * count, "own")
    name = ctx.add_kernel("copy", [Param("x", "uint"), Param("y", "uint", written=True)], map_body((count,), "gid"))
    launch_1d(ctx, name, count, [buf, copy])
    return copy


def custom_layer(ctx: OclLowering, op: Operation) -> None:
    kernel = custom_kernel(op)
    instance = CUSTOM_OPS[op.name](op)
    shapes = [shape_of(v) for v in op.operands]
    inputs = [own_copy(ctx, ctx.values[v], numel(shape_of(v))) for v in op.operands]
    outputs = []
    for result in op.results:
        outputs.append(ctx.buffer(nbytes_of(result), "own"))
        ctx.alias(result, outputs[-1])
    ctx.sources.setdefault(f"custom:{kernel.entry}", kernel.source)
    global_size = tuple(int(g) for g in kernel.global_size(instance, shapes))
    local_size = tuple(kernel.local_size) if kernel.local_size else None
    args = inputs + outputs
    scalars = tuple(kernel.scalars(instance))
    check_signature(op.label, kernel.source, kernel.entry, len(args), scalars)
    ctx.steps.append(Launch(kernel.entry, global_size, local_size, args, op.name, 0, scalars))
    ctx.phase(kernel.entry, args)
