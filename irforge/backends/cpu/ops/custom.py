"""Custom layers on the CPU backend: their native kernel, or their numpy forward.

A `CustomOp` with a `cpu` kernel (`CpuKernel.build` adds `void f(float* in..., float* out...)`
to the module) runs it from a generated phase kernel as chunk 0 while the other threads wait
for the phase. Without one, the phase is a host step (`host_steps.py`) calling the op's
numpy `forward`.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from xdsl.ir import Operation

from irforge.backends.cpu.codegen.irutil import F32, KernelBuilder, i64
from irforge.backends.cpu.host_steps import host_phase
from irforge.backends.cpu.lower import Lowering, dtype_of, shape_of
from irforge.errors import IrforgeError

def custom_of(op: Operation):  # type: ignore[no-untyped-def]
    from irforge.custom.op import CUSTOM_OPS

    return CUSTOM_OPS.get(op.name)


def lower_custom(ctx: Lowering, op: Operation) -> None:
    custom = custom_of(op)
    assert custom is not None
    if custom.cpu is not None:
        args = [ctx.input(op, i) for i in range(len(op.operands))] + [ctx.output(op, i) for i in range(len(op.results))]
        _native(ctx, op, custom, args)
    else:
        host_phase(ctx, op, custom(op).forward, tag="custom")


def _native(ctx: Lowering, op: Operation, custom, args) -> None:  # type: ignore[no-untyped-def]
    values = [*op.operands, *op.results]
    if any(dtype_of(v) != np.float32 for v in values):
        raise IrforgeError(f"the CPU kernel of {op.name} takes f32 tensors only", fix="run it with its numpy forward (drop cpu=)", code="E843")
    shapes = [shape_of(v) for v in op.operands]
    key = ("custom", op.name, tuple(shapes), tuple(sorted((k, str(v)) for k, v in op.properties.items() if k != "name")))

    def build(module: ir.Module, name: str) -> None:
        user = module.get_global(custom.cpu.build(module, custom(op), shapes))
        user.linkage = "internal"  # two custom kernels may pick the same function name
        kb = KernelBuilder(module, name)
        pointers = [kb.b.bitcast(kb.b.load(kb.b.gep(kb.slots, [i64(i)])), ir.PointerType(F32)) for i in range(len(values))]
        with kb.b.if_then(kb.b.icmp_signed("==", kb.tid, i64(0))):
            kb.b.call(user, pointers)
        kb.b.ret_void()

    ctx.phase(ctx.kernel(key, build), args, tag="custom")
