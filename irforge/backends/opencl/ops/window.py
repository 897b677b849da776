"""OpenCL lowerings of the direct window ops: depthwise Convolution, Pooling, Deconvolution."""

from __future__ import annotations

from irforge.backends.cpu.lower import shape_of
from irforge.backends.cpu.ops.fusion import absorb_epilogue
from irforge.backends.opencl.codegen.common import Param, numel
from irforge.backends.opencl.codegen.window import DeconvSpec, DepthwiseSpec, PoolSpec, deconv_body, depthwise_body, pool_body
from irforge.backends.opencl.lower import OclLowering, opencl_lowering
from irforge.backends.opencl.ops.launch import launch_1d
from irforge.dialects.nn import Convolution, Deconvolution, Pooling


def depthwise(ctx: OclLowering, op: Convolution) -> None:
    """One input channel per output channel (2-D): a direct kernel, epilogue fused."""
    x, w, y = shape_of(op.input), shape_of(op.weights), shape_of(op.output)
    begin, _ = op.explicit_pads(w[2:])
    epilogue, residual, final = absorb_epilogue(ctx, op)
    spec = DepthwiseSpec(
        x[1], (x[2], x[3]), (y[2], y[3]), (w[2], w[3]), op.window("strides", 1), op.window("dilations", 1),  # type: ignore[arg-type]
        begin, op.bias is not None, epilogue,  # type: ignore[arg-type]
    )
    name = ctx.add_kernel("dwconv", spec.params(), depthwise_body(spec))
    bias = [ctx.values[op.bias]] if op.bias is not None else []
    res = [residual] if residual is not None else []
    args = [ctx.values[op.input], ctx.values[op.weights], *bias, *res, ctx.result(final)]
    ctx.launch(name, spec.global_size(x[0]), None, args, 2 * numel(y) * w[2] * w[3])


@opencl_lowering(Pooling)
def pooling(ctx: OclLowering, op: Pooling) -> None:
    x, y = shape_of(op.input), shape_of(op.output)
    if op.bool_prop("global_pool"):
        rank = len(x) - 2
        spec = PoolSpec(x, y, x[2:], (1,) * rank, (1,) * rank, (0,) * rank, (0,) * rank, op.str_prop("method") == "max", True)
    else:
        kernel = op.ints("kernel")
        begin, end = op.explicit_pads(kernel)
        spec = PoolSpec(
            x, y, kernel, op.window("strides", 1), op.window("dilations", 1), begin, end,
            op.str_prop("method") == "max", op.bool_prop("exclude_pad"),
        )
    name = ctx.add_kernel("pool", [Param("X", "float"), Param("Y", "float", written=True)], pool_body(spec))
    launch_1d(ctx, name, numel(y), [ctx.values[op.input], ctx.result(op.output)])


@opencl_lowering(Deconvolution)
def deconvolution(ctx: OclLowering, op: Deconvolution) -> None:
    x, w, y = shape_of(op.input), shape_of(op.weights), shape_of(op.output)
    begin, _ = op.transposed_pads(w[2:], x[2:])
    spec = DeconvSpec(x, y, w, op.int_prop("group"), op.window("strides", 1), op.window("dilations", 1), begin, op.bias is not None)
    params = [Param("X", "float"), Param("Wt", "float")] + ([Param("bias", "float")] if spec.bias else [])
    name = ctx.add_kernel("deconv", params + [Param("Y", "float", written=True)], deconv_body(spec))
    bias = [ctx.values[op.bias]] if op.bias is not None else []
    args = [ctx.values[op.input], ctx.values[op.weights], *bias, ctx.result(op.output)]
    launch_1d(ctx, name, numel(y), args, 2 * numel(y) * numel(w[2:]) * (x[1] // spec.group))
