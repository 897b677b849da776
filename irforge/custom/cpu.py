"""Helpers for writing a custom layer's native CPU kernel with llvmlite.

`CpuKernel.build(module, op, shapes)` adds `void f(float* in..., float* out...)` to an
llvmlite module and returns its name. For the common element-wise case only the math of one
element needs writing:

    def build(module, op, shapes):
        return elementwise_kernel(module, "my_op", shapes[0],
                                  lambda b, x: b.fmul(x, ir.Constant(ir.FloatType(), op.alpha)))

LLVM vectorises the loop (the backend compiles with 512-bit vectors preferred).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from llvmlite import ir

F32 = ir.FloatType()
I64 = ir.IntType(64)


def elementwise_kernel(module: ir.Module, name: str, shape: Sequence[int], body: Callable[[ir.IRBuilder, ir.Value], ir.Value]) -> str:
    """`void name(float* x, float* y)`: y[i] = body(x[i]) for every element of `shape`."""
    count = 1
    for d in shape:
        count *= int(d)
    name = f"{name}_{count}"
    pointer = ir.PointerType(F32)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [pointer, pointer]), name=name)
    fn.args[0].add_attribute("noalias")
    fn.args[1].add_attribute("noalias")
    entry, loop, done = fn.append_basic_block("entry"), fn.append_basic_block("loop"), fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_unsigned(">", ir.Constant(I64, count), ir.Constant(I64, 0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), entry)
    b.store(body(b, b.load(b.gep(fn.args[0], [i]))), b.gep(fn.args[1], [i]))
    following = b.add(i, ir.Constant(I64, 1))
    i.add_incoming(following, loop)
    b.cbranch(b.icmp_unsigned("<", following, ir.Constant(I64, count)), loop, done)
    b.position_at_end(done)
    b.ret_void()
    return name
