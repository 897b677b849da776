"""The recurrent Sequence ops and FakeQuantize on the CPU backend: their reference kernels as
host steps (FakeQuantize until it gets a vectorised kernel).

A recurrence is T dependent small GEMMs; the reference kernel runs each step as one numpy
matrix product for the whole batch, so it runs as a phase of the native program through the
host-step mechanism custom layers use (ops/custom.py): thread 0 calls back into Python on
views of the phase's arena buffers, the other threads wait at the barrier.
"""

from __future__ import annotations

import ctypes
import hashlib

import llvmlite.binding as llvm
import numpy as np
from xdsl.ir import Operation

from irforge.backends.cpu.lower import Lowering, dtype_of, lowering, shape_of
from irforge.backends.cpu.ops.custom import _KEEP_ALIVE, _SERIAL, HOST_STEP, HostStep
from irforge.backends.reference.registry import evaluate
from irforge.dialects.nn.quantize import FakeQuantize
from irforge.dialects.nn.recurrent import GRUSequence, LSTMSequence, RNNSequence


def reference_host_step(ctx: Lowering, op: Operation) -> None:
    """A phase that runs `op`'s reference kernel on its buffers."""

    def forward(*inputs: np.ndarray) -> list[np.ndarray]:
        return evaluate(op, list(inputs))

    step = HostStep(op.name, forward, [(shape_of(v), dtype_of(v)) for v in op.operands], [(shape_of(v), dtype_of(v)) for v in op.results])
    callback = HOST_STEP(step)
    _KEEP_ALIVE.append(callback)
    name = "irforge_host_" + hashlib.sha1(f"{op.name}{next(_SERIAL)}{id(step)}".encode()).hexdigest()[:12]
    llvm.add_symbol(name, ctypes.cast(callback, ctypes.c_void_p).value)
    ctx.host_steps.append(step)
    args = [ctx.input(op, i) for i in range(len(op.operands))] + [ctx.output(op, i) for i in range(len(op.results))]
    ctx.phase(name, args, tag="host")


lowering(LSTMSequence, GRUSequence, RNNSequence, FakeQuantize)(reference_host_step)
