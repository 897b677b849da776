"""Host steps: a Python callback as one phase of the native CPU program.

Some ops are sequential, data-dependent and cheap next to the convolutions around them
(SSD's DetectionOutput, Faster R-CNN's Proposal and ROI pooling, YOLO's region layer; ONNX's
NonZero/TopK/NMS); they run on the host instead of in generated code. A host step is a
ctypes callback bound to the phase's symbol in the JIT: the driver calls it like any kernel,
with the phase's argument table; the thread that runs chunk 0 (the caller's thread, or a
worker: see `runtime.py`) views the phase's buffers (operands, then results: explicit buffers
planned like any other) as numpy arrays, calls the step's function and copies its results
into the result buffers, while the other threads wait for the phase. The GIL is taken in
the callback. An exception is kept and raised by the executable after the run.

API:
- `host_step_op(*classes)`: run these op classes' numpy reference kernels as host steps
  (`HOST_STEP_OPS`, consulted by `lower.lowering_of` after the native lowerings).
- `f64_on_host(*classes)`: the same for ops of these classes that touch f64 tensors (their
  native kernels are f32-only; `F64_ON_HOST`, consulted by `lower.lowering_of` first).
- `host_phase(ctx, op, forward, tag)`: append a host step calling `forward(*operands)` for
  `op` (a list or tuple of arrays, or one array, per result); custom layers use it for their
  numpy forward.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import llvmlite.binding as llvm
import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType, f64
from xdsl.ir import Operation

from irforge.backends.common import view_at
from irforge.backends.cpu.lower import Lowering, dtype_of, shape_of
from irforge.errors import IrforgeError

HOST_STEP = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64, ctypes.c_int64)
_KEEP_ALIVE: list[object] = []  # compiled code holds the callbacks' addresses for good
_SERIAL = itertools.count()

HOST_STEP_OPS: set[type[Operation]] = set()
"""Op classes the CPU backend runs with their reference kernel as host steps."""


F64_ON_HOST: set[type[Operation]] = set()
"""Op classes whose native kernels are f32-only: with an f64 tensor they run their reference
kernel as a host step (`ops/f64_host.py`)."""


def f64_on_host(*classes: type[Operation]) -> None:
    """Run `classes` as host steps of their reference kernels when they touch f64 tensors."""
    F64_ON_HOST.update(classes)


def touches_f64(op: Operation) -> bool:
    return any(isinstance(v.type, TensorType) and v.type.element_type == f64 for v in (*op.operands, *op.results))


INTEGERS_ON_HOST: set[type[Operation]] = set()
"""Op classes whose native kernels are f32-only and that models also apply to 8/16-bit
integer tensors (MaxPool on uint8 in onnxruntime's QOperator models): with such a data
tensor they run their reference kernel as a host step."""


def touches_small_integers(op: Operation) -> bool:
    """An operand or result of a (u)int8 / (u)int16 element type: quantised data."""
    return any(isinstance(v.type, TensorType) and isinstance(v.type.element_type, IntegerType) and v.type.element_type.width.data in (8, 16)
               for v in (*op.operands, *op.results))  # fmt: skip


def host_step_op(*classes: type[Operation]) -> None:
    """Run `classes` on the CPU backend as host steps calling their reference kernels."""
    HOST_STEP_OPS.update(classes)


@dataclass
class HostStep:
    """A Python function as a phase of the native program (see the module docstring)."""

    op_name: str
    forward: Callable[..., object]
    inputs: list[tuple[tuple[int, ...], np.dtype]]
    outputs: list[tuple[tuple[int, ...], np.dtype]]
    errors: list[BaseException] = field(default_factory=list)

    def __call__(self, slots, tid: int, nthreads: int) -> None:  # type: ignore[no-untyped-def]
        if tid != 0:
            return
        try:
            arrays = [view_at(slots[i], s, d) for i, (s, d) in enumerate(self.inputs + self.outputs)]
            produced = self.forward(*arrays[: len(self.inputs)])
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


def host_phase(ctx: Lowering, op: Operation, forward: Callable[..., object], tag: str = "host") -> None:
    """Append a phase running `forward` on `op`'s operand buffers into fresh result buffers."""
    args = [ctx.input(op, i) for i in range(len(op.operands))] + [ctx.output(op, i) for i in range(len(op.results))]
    step = HostStep(
        op.name,
        forward,
        [(shape_of(v), dtype_of(v)) for v in op.operands],
        [(shape_of(v), dtype_of(v)) for v in op.results],
    )
    callback = HOST_STEP(step)
    _KEEP_ALIVE.append(callback)
    digest = hashlib.sha1(f"{op.name}{next(_SERIAL)}{id(step)}".encode()).hexdigest()[:12]
    name = f"irforge_host_{digest}"
    llvm.add_symbol(name, ctypes.cast(callback, ctypes.c_void_p).value)
    ctx.host_steps.append(step)
    ctx.phase(name, args, tag=tag)


def lower_reference(ctx: Lowering, op: Operation) -> None:
    """An op of `HOST_STEP_OPS`: its reference kernel as a host step."""
    from irforge.backends.reference import evaluate

    host_phase(ctx, op, lambda *arrays: evaluate(op, [np.array(a) for a in arrays]), tag="host")
