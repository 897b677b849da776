"""The OpenCL backend: `nn` ops printed as OpenCL C specialised to static shapes, run
through pyopencl, with a HETERO fallback to the CPU for ops without an OpenCL kernel.

Pipeline: the model (a copy) is optimised as for the CPU backend (BatchNorm/ScaleShift
folded into convolutions), each op or fused group (conv/FC/MatMul + bias + residual add +
ReLU/Clamp, grouped by the CPU backend's epilogue absorption) is printed as a kernel
(`codegen/`, chosen per op in `ops/`), buffers are placed by the CPU backend's liveness
planner in one device arena, and the runtime builds all kernels as one program per device
and enqueues them (`runtime.py`). Ops without a kernel, listed in `lower.CPU_ONLY` or not
in `lower.LOWERINGS`, run on the CPU backend or the reference interpreter (`hetero.py`).
Data-dependent shapes (NonZero, NonMaxSuppression, a run-time TopK k) run as for the CPU
backend: the static segments compiled here, the ops touching a dynamic dim on the host's
reference kernels between them (`irforge/backends/segments.py`), each listed as a fallback.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np

from irforge.backends.opencl.device import DeviceInfo
from irforge.backends.segments import SegmentedModel, compile_segmented, has_data_dependent_shapes
from irforge.model import Model


@dataclass
class CompileStats:
    seconds: float
    kernels: int
    launches: int
    arena_bytes: int
    unplanned_bytes: int


class CompiledModel:
    """A model compiled for an OpenCL device: call it with a dict of input arrays by name.

    `fallbacks` lists the ops that run on the CPU (HETERO) and why; `device` names the
    device; with `profile=True`, `timings()` gives each launch's device time."""

    def __init__(self, executable, stats: CompileStats, device_name: str) -> None:  # type: ignore[no-untyped-def]
        self._executable = executable
        self.stats = stats
        self.device = device_name
        self.fallbacks = list(executable.program.fallbacks)

    def __call__(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self._executable(feeds)

    def timings(self) -> list:  # type: ignore[type-arg]
        """(tag, flops, seconds) of each launch of the last call (profile=True only)."""
        return list(self._executable.timings)


class SegmentedCompiledModel:
    """A model with data-dependent shapes on an OpenCL device: its static segments compiled
    for the device, the ops touching a dynamic dim on the host (`segments.py`)."""

    def __init__(self, segmented: SegmentedModel, device_name: str) -> None:
        from irforge.backends.opencl.lower import Fallback

        self.segmented = segmented
        self.device = device_name
        self.fallbacks = []
        for segment in segmented.segments:
            if segment.host:
                self.fallbacks += [Fallback(op.label, "data-dependent shape", "reference") for op in segment.ops]  # type: ignore[attr-defined]
            else:
                self.fallbacks += segment.run.fallbacks  # type: ignore[union-attr]

    def __call__(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self.segmented(feeds)

    def timings(self) -> list:  # type: ignore[type-arg]
        return [t for s in self.segmented.segments if not s.host for t in s.run.timings()]  # type: ignore[union-attr]


def compile_model(
    model: Model,
    device: str | int | None = None,
    cpu_ops: Collection[str] = (),
    profile: bool = False,
    tuning: DeviceInfo | None = None,
) -> CompiledModel | SegmentedCompiledModel:
    """Compile `model` (left unchanged) for the OpenCL device chosen by `device` (see
    `device.select_device`). Ops named in `cpu_ops` (e.g. "nn.softmax") are placed on the
    CPU, as HETERO's manual affinities. `tuning` replaces the limits the printers read
    from the device (tests use it to print for other vector widths and work-group limits)."""
    from irforge.backends.cpu import SHARED_PIPELINE, copy_model
    from irforge.backends.cpu.planner import naive_size, plan
    from irforge.backends.opencl.device import select_device
    from irforge.backends.opencl.lower import lower
    from irforge.backends.opencl.runtime import Executable
    from irforge.passes import apply_pipeline

    start = time.perf_counter()
    cl_device = select_device(device)
    work = copy_model(model)
    apply_pipeline(work.module, SHARED_PIPELINE)
    if has_data_dependent_shapes(work):
        segmented = compile_segmented(work, lambda op: True, lambda part: compile_model(part, device, cpu_ops, profile, tuning))
        return SegmentedCompiledModel(segmented, cl_device.name.strip())
    program = lower(work, tuning or DeviceInfo.of(cl_device), cpu_ops)
    arena = plan(program.buffers)
    executable = Executable(program, arena, cl_device, profile)
    executable.model = work  # host steps hold ops of this module
    stats = CompileStats(
        time.perf_counter() - start, program.source.count("__kernel"), sum(1 for s in executable.steps if isinstance(s, tuple)),
        arena, naive_size(program.buffers),
    )
    return CompiledModel(executable, stats, cl_device.name.strip())


def run_reporting(model: Model, inputs: Mapping[str, np.ndarray], device: str | None, report) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """Compile for the OpenCL device `device`, `report` the device and each HETERO
    fallback (one line each), and run once: what `ir-run --device gpu` does."""
    compiled = compile_model(model, device)
    report(f"device: {compiled.device} (OpenCL)")
    for fallback in compiled.fallbacks:
        report(f"fallback: {fallback.describe()}")
    return compiled(inputs)
