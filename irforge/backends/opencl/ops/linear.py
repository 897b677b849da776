"""OpenCL lowerings of Convolution (implicit GEMM, 1x1 and depthwise specialisations),
FullyConnected and MatMul, each with its epilogue (bias, residual add, ReLU/Clamp) fused
through the CPU backend's epilogue absorption."""

from __future__ import annotations

import math

from irforge.backends.cpu.ops.fusion import absorb_epilogue
from irforge.backends.cpu.lower import shape_of
from irforge.backends.opencl.codegen.common import Shape, broadcast_strides, linear, numel, strides_of, unravel
from irforge.backends.opencl.codegen.gemm import GemmSpec, choose_tiles, gemm_attributes, gemm_body
from irforge.backends.opencl.lower import OclLowering, f32_only, opencl_lowering
from irforge.dialects.nn import Convolution, FullyConnected, MatMul


def launch_gemm(ctx: OclLowering, prefix: str, spec: GemmSpec, args: list, flops: int) -> None:  # type: ignore[type-arg]
    name = ctx.add_kernel(prefix, spec.params(), gemm_body(spec), gemm_attributes(spec))
    ctx.launch(name, spec.global_size(), spec.local_size(), args, flops)


def _conv_check(op: Convolution) -> str | None:
    return f32_only(op) or (None if len(shape_of(op.input)) <= 5 else "OpenCL convolution has 1 to 3 spatial axes")


def _gather_input(op: Convolution, cg: int, kernel: Shape) -> str:
    """Statements setting `v` to the im2col element (k, col) of the input, zero in padding."""
    in_dims, out_dims = shape_of(op.input)[2:], shape_of(op.output)[2:]
    begin, _ = op.explicit_pads(kernel)
    strides, dilations = op.window("strides", 1), op.window("dilations", 1)
    if all(k == 1 for k in kernel) and all(p == 0 for p in begin):
        # 1x1: no window, no padding; unit strides read the input plane as a matrix
        if tuple(in_dims) == tuple(out_dims):
            return f"        v = B[x_base + k * {numel(in_dims)} + col];"
        lines = [unravel("col", out_dims, "o").replace("  ", "        ", 1)]
        at = linear([(f"o{d}", s * st) for d, (s, st) in enumerate(zip(strides, strides_of(in_dims)))])
        return "\n".join(lines + [f"        v = B[x_base + k * {numel(in_dims)} + {at}];"])
    lines = [unravel("k", (cg, *kernel), "q"), unravel("col", out_dims, "o")]
    checks = []
    for d, (size, s, dl, p) in enumerate(zip(in_dims, strides, dilations, begin)):
        lines.append(f"  const int i{d} = o{d} * {s} - {p} + q{d + 1} * {dl};")
        checks.append(f"i{d} >= 0 && i{d} < {size}")
    at = linear([(f"i{d}", st) for d, st in enumerate(strides_of(in_dims))])
    lines.append(f"  if ({' && '.join(checks)}) v = B[x_base + q0 * {numel(in_dims)} + {at}];")
    return "\n".join("      " + line.strip() for line in "\n".join(lines).splitlines())


@opencl_lowering(Convolution, check=_conv_check)  # type: ignore[arg-type]
def convolution(ctx: OclLowering, op: Convolution) -> None:
    from irforge.backends.opencl.ops.window import depthwise

    x, w, y = shape_of(op.input), shape_of(op.weights), shape_of(op.output)
    group = op.int_prop("group")
    if group > 1 and group == x[1] == w[0] and len(x) == 4:
        depthwise(ctx, op)
        return
    n, c, o, kernel = x[0], x[1], w[0], w[2:]
    cg, og = c // group, o // group
    k, p = cg * numel(kernel), numel(y[2:])
    epilogue, residual, final = absorb_epilogue(ctx, op)
    spec = GemmSpec(
        m=og, n=p, k=k, batches=n * group,
        prologue=(
            f"  const int b = bz / {group}, g = bz % {group};\n"
            f"  const int a_base = g * {og * k}, x_base = (b * {c} + g * {cg}) * {numel(x[2:])}, "
            f"c_base = (b * {o} + g * {og}) * {p};"
        ),
        a_load=f"A[a_base + row * {k} + k]",
        b_load=_gather_input(op, cg, kernel),
        c_index=f"c_base + row * {p} + col",
        bias_index=f"g * {og} + row" if op.bias is not None else None,
        epilogue=epilogue,
        tiles=choose_tiles(ctx.device, og, p),
    )
    bias = [ctx.values[op.bias]] if op.bias is not None else []
    res = [residual] if residual is not None else []
    args = [ctx.values[op.weights], ctx.values[op.input], *bias, *res, ctx.result(final)]
    launch_gemm(ctx, "conv1x1" if all(d == 1 for d in kernel) else "conv", spec, args, 2 * n * o * p * k)


@opencl_lowering(FullyConnected)
def fully_connected(ctx: OclLowering, op: FullyConnected) -> None:
    """y = x @ W^T + b; constant weights are uploaded transposed, so B rows are contiguous."""
    o, k = shape_of(op.weights)
    m = numel(shape_of(op.input)[:-1])
    epilogue, residual, final = absorb_epilogue(ctx, op)
    weights = ctx.constant_of(op.weights)
    if weights is not None:
        b_buf, b_load = ctx.const(weights.astype("float32").T.copy()), f"        v = B[k * {o} + col];"
    else:
        b_buf, b_load = ctx.values[op.weights], f"        v = B[col * {k} + k];"
    spec = GemmSpec(
        m=m, n=o, k=k, batches=1, prologue="", a_load=f"A[row * {k} + k]", b_load=b_load,
        c_index=f"row * {o} + col", bias_index="col" if op.bias is not None else None,
        epilogue=epilogue, tiles=choose_tiles(ctx.device, m, o),
    )
    bias = [ctx.values[op.bias]] if op.bias is not None else []
    res = [residual] if residual is not None else []
    launch_gemm(ctx, "fc", spec, [ctx.values[op.input], b_buf, *bias, *res, ctx.result(final)], 2 * m * o * k)


def _matrices(op: MatMul) -> tuple[Shape, Shape, bool, bool]:
    """The [rows, cols] of a and b as stored (1-D a is a row, 1-D b a column) and whether
    each is read transposed."""
    a, b = shape_of(op.a), shape_of(op.b)
    a_mat = (1, a[0]) if len(a) == 1 else a[-2:]
    b_mat = (b[0], 1) if len(b) == 1 else b[-2:]
    return a_mat, b_mat, op.bool_prop("transpose_a") and len(a) > 1, op.bool_prop("transpose_b") and len(b) > 1


def _batch_prologue(op: MatMul, batch: Shape, a_size: int, b_size: int, c_size: int) -> str:
    """Bases of batch `bz` in a, b and the output (operand batch axes broadcast)."""
    if not batch:
        return "  const int a_base = 0, b_base = 0, c_base = 0;"
    a, b = shape_of(op.a), shape_of(op.b)
    lines = [unravel("bz", batch, "z")]
    for name, shape, size in (("a_base", a[:-2] if len(a) > 2 else (), a_size), ("b_base", b[:-2] if len(b) > 2 else (), b_size), ("c_base", batch, c_size)):
        strides = broadcast_strides(shape, batch) if shape else (0,) * len(batch)
        lines.append(f"  const int {name} = {linear([(f'z{i}', s * size) for i, s in enumerate(strides)])};")
    return "\n".join(lines)


@opencl_lowering(MatMul)
def matmul(ctx: OclLowering, op: MatMul) -> None:
    (ar, ac), (br, bc), ta, tb = _matrices(op)
    m, k = (ac, ar) if ta else (ar, ac)
    n = br if tb else bc
    rank = max(len(shape_of(op.a)), len(shape_of(op.b)))
    batch = shape_of(op.output)[: rank - 2] if rank > 2 else ()
    epilogue, residual, final = absorb_epilogue(ctx, op)
    spec = GemmSpec(
        m=m, n=n, k=k, batches=math.prod(batch),
        prologue=_batch_prologue(op, batch, m * k, k * n, m * n),
        a_load=f"A[a_base + k * {m} + row]" if ta else f"A[a_base + row * {k} + k]",
        b_load=f"        v = B[b_base + col * {k} + k];" if tb else f"        v = B[b_base + k * {n} + col];",
        c_index=f"c_base + row * {n} + col", bias_index=None, epilogue=epilogue,
        tiles=choose_tiles(ctx.device, m, n),
    )
    res = [residual] if residual is not None else []
    args = [ctx.values[op.a], ctx.values[op.b], *res, ctx.result(final)]
    launch_gemm(ctx, "matmul", spec, args, 2 * m * n * k * math.prod(batch))
