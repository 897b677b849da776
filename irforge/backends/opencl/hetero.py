"""HETERO fallback: an op without an OpenCL kernel runs on the host with explicit transfers.

As in OpenVINO's HETERO plugin, each op gets an affinity: the OpenCL device if it has a
kernel there (and the instance fits the kernel: f32, supported rank...), else the CPU.
A CPU op is compiled by the native CPU backend when that backend lowers its class, as a
one-op model whose constant operands stay constants (its kernels pack weights); otherwise
its numpy reference kernel runs. At run time the step reads its operands back from the
device, runs, and writes its results to their device buffers; constants are read from host
memory directly. Every fallback is recorded with its reason, for `ir-run` to print.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation, SSAValue

from irforge.backends.cpu.lower import dtype_of, shape_of
from irforge.backends.opencl.lower import Fallback, HostStep, OclLowering
from irforge.backends.reference import evaluate
from irforge.builder import ModelBuilder
from irforge.errors import IrforgeError
from irforge.model import Model

Runner = Callable[[list[np.ndarray]], list[np.ndarray]]


def fallback(ctx: OclLowering, op: Operation, reason: str) -> None:
    """Lower `op` to a host step on the CPU backend, else on its reference kernel."""
    inputs = [(ctx.values[v], shape_of(v), dtype_of(v)) for v in op.operands]
    outputs = [(ctx.result(r), shape_of(r), dtype_of(r)) for r in op.results]
    runner = cpu_backend_runner(ctx, op)
    executor = "cpu" if runner is not None else "reference"
    if runner is None:
        runner = reference_runner(op)
    ctx.host(HostStep(op.label, inputs, outputs, runner), Fallback(op.label, reason, executor))


def reference_runner(op: Operation) -> Runner:
    return lambda arrays: evaluate(op, arrays)


def one_op_model(ctx: OclLowering, op: Operation) -> tuple[Model, list[int]]:
    """A model applying a copy of `op`; its inputs are the non-constant operands (their
    indices are returned), constant operands are constants of the model."""
    b = ModelBuilder()
    mapping: dict[SSAValue, SSAValue] = {}
    fed: list[int] = []
    for index, operand in enumerate(op.operands):
        if operand in mapping:
            continue
        array = ctx.constant_of(operand)
        if array is not None:
            mapping[operand] = b.constant(array, f"c{index}")
        else:
            mapping[operand] = b.input(f"x{index}", shape_of(operand), dtype_of(operand))
            fed.append(index)
    copy = op.clone(value_mapper=mapping)
    b.block.add_op(copy)
    for i, result in enumerate(copy.results):
        b.output(result, f"y{i}")
    return b.finish(), fed


def cpu_backend_runner(ctx: OclLowering, op: Operation) -> Runner | None:
    """A runner on the native CPU backend, or None where it has no kernel for `op`."""
    import irforge.backends.cpu.ops  # noqa: F401  (registers the CPU lowerings)
    from irforge.backends.cpu import compile_model
    from irforge.backends.cpu.lower import LOWERINGS

    if type(op) not in LOWERINGS:
        return None
    model, fed = one_op_model(ctx, op)
    try:
        compiled = compile_model(model)
    except IrforgeError:
        return None  # the CPU backend refuses this instance (an element type, a rank)
    count = len(op.results)

    def run(arrays: list[np.ndarray]) -> list[np.ndarray]:
        out = compiled({f"x{i}": arrays[i] for i in fed})
        return [out[f"y{i}"] for i in range(count)]

    return run
