"""Custom layers on the CPU backend: their native kernel, or their numpy forward.

A `CustomOp` with a `cpu` kernel (`CpuKernel.build` adds `void f(float* in..., float* out...)`
to the module) runs it from a generated phase kernel on thread 0 while the other threads wait
at the next barrier. Without one, the phase is a host step: a ctypes callback, bound to the
phase's symbol in the JIT, that views the phase's buffers as numpy arrays and calls the op's
`forward` (the GIL is taken there; the native threads wait at the barrier). An exception in
`forward` is kept and raised by the executable after the run.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
from dataclasses import dataclass, field

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from xdsl.ir import Operation

from irforge.backends.common import view_at
from irforge.backends.cpu.codegen.irutil import F32, KernelBuilder, i64
from irforge.backends.cpu.lower import Lowering, dtype_of, shape_of
from irforge.errors import IrforgeError

HOST_STEP = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64, ctypes.c_int64)
_KEEP_ALIVE: list[object] = []  # compiled code holds the callbacks' addresses for good
_SERIAL = itertools.count()


def custom_of(op: Operation):  # type: ignore[no-untyped-def]
    from irforge.custom.op import CUSTOM_OPS

    return CUSTOM_OPS.get(op.name)


def lower_custom(ctx: Lowering, op: Operation) -> None:
    custom = custom_of(op)
    assert custom is not None
    args = [ctx.input(op, i) for i in range(len(op.operands))] + [ctx.output(op, i) for i in range(len(op.results))]
    if custom.cpu is not None:
        _native(ctx, op, custom, args)
    else:
        ctx.phase(_host_step(ctx, op, custom), args, tag="custom")


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


@dataclass
class HostStep:
    """A custom op's numpy forward as a phase of the native program."""

    op_name: str
    forward: object
    inputs: list[tuple[tuple[int, ...], np.dtype]]
    outputs: list[tuple[tuple[int, ...], np.dtype]]
    errors: list[BaseException] = field(default_factory=list)

    def __call__(self, slots, tid: int, nthreads: int) -> None:  # type: ignore[no-untyped-def]
        if tid != 0:
            return
        try:
            arrays = [view_at(slots[i], s, d) for i, (s, d) in enumerate(self.inputs + self.outputs)]
            produced = self.forward(*arrays[: len(self.inputs)])  # type: ignore[operator]
            results = produced if isinstance(produced, list | tuple) else [produced]
            for out, value in zip(arrays[len(self.inputs) :], results, strict=True):
                np.copyto(out, np.asarray(value).reshape(out.shape), casting="unsafe")
        except BaseException as e:  # noqa: BLE001  (raised again by the executable, in Python)
            self.errors.append(e)

    def raise_pending(self) -> None:
        if self.errors:
            error = self.errors.pop()
            self.errors.clear()
            if isinstance(error, IrforgeError):
                raise error
            raise IrforgeError(f"the forward of {self.op_name} failed: {type(error).__name__}: {error}", code="E843") from error


def _host_step(ctx: Lowering, op: Operation, custom) -> str:  # type: ignore[no-untyped-def]
    """The symbol of a new host step for `op`, bound in the JIT (one per compiled op)."""
    step = HostStep(
        op.name,
        custom(op).forward,
        [(shape_of(v), dtype_of(v)) for v in op.operands],
        [(shape_of(v), dtype_of(v)) for v in op.results],
    )
    callback = HOST_STEP(step)
    _KEEP_ALIVE.append(callback)
    digest = hashlib.sha1(f"{op.name}{next(_SERIAL)}{id(step)}".encode()).hexdigest()[:12]
    name = f"irforge_host_{digest}"
    llvm.add_symbol(name, ctypes.cast(callback, ctypes.c_void_p).value)
    ctx.host_steps.append(step)
    return name
