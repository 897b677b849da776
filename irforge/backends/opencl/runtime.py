"""Running a lowered model on an OpenCL device.

One context and in-order queue per device, one program per (device, source hash) built
once per process (pyopencl also keeps built binaries on disk). Tensors stay in device
buffers from op to op: the planned arena holds every intermediate, constants are uploaded
once at compile time, model inputs have buffers of their own. A call copies the inputs in,
enqueues every launch (their arguments were set when compiling), runs HETERO host steps
with their explicit transfers, and copies the outputs out.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from irforge.backends.common import input_array
from irforge.backends.cpu.lower import Buffer
from irforge.backends.opencl.lower import HostStep, Launch, OclProgram
from irforge.errors import IrforgeError
from irforge.custom.opencl_signature import FIX as CUSTOM_KERNEL_FIX

_CONTEXTS: dict[int, object] = {}
_QUEUES: dict[tuple[int, bool], object] = {}
_PROGRAMS: dict[tuple[int, str], object] = {}
_LOCK = threading.Lock()


def context_and_queue(device, profile: bool = False):  # type: ignore[no-untyped-def]
    """The device's one context (programs and buffers are shared by all its models) and
    an in-order queue, with profiling or without."""
    import pyopencl as cl

    with _LOCK:
        if device.int_ptr not in _CONTEXTS:
            _CONTEXTS[device.int_ptr] = cl.Context([device])
        context = _CONTEXTS[device.int_ptr]
        key = (device.int_ptr, profile)
        if key not in _QUEUES:
            props = cl.command_queue_properties.PROFILING_ENABLE if profile else 0
            _QUEUES[key] = cl.CommandQueue(context, device, properties=props)
        return context, _QUEUES[key]


def build_program(context, device, source: str):  # type: ignore[no-untyped-def]
    """The built program of `source` on `device` (built once, cached by its hash)."""
    import pyopencl as cl

    key = (context.int_ptr, hashlib.sha256(source.encode()).hexdigest())
    with _LOCK:
        program = _PROGRAMS.get(key)
        if program is None:
            try:
                program = cl.Program(context, source).build(devices=[device])
            except cl.RuntimeError as e:
                raise IrforgeError(
                    f"the OpenCL compiler of '{device.name.strip()}' rejected a kernel: {str(e).splitlines()[0]}",
                    fix="report this with IRFORGE_TRACEBACK=1; run with --device cpu meanwhile",
                    code="E855",
                ) from e
            _PROGRAMS[key] = program
        return program


@dataclass
class Timing:
    tag: str
    flops: int
    seconds: float


class Executable:
    """Device buffers and kernel objects of a program, ready to run."""

    def __init__(self, program: OclProgram, arena_size: int, device, profile: bool = False) -> None:  # type: ignore[no-untyped-def]
        import pyopencl as cl

        self.program = program
        self.context, self.queue = context_and_queue(device, profile)
        self.profile = profile
        built = build_program(self.context, device, program.source) if program.source else None
        self.arena = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, max(arena_size, 64))
        self.location: dict[int, tuple[object, int]] = {}
        for buf in program.buffers:
            self.location[id(buf)] = self._place(buf)
        self.steps: list[tuple[object, Launch] | HostStep] = []
        for step in program.steps:
            if isinstance(step, HostStep):
                self.steps.append(step)
                continue
            try:
                kernel = cl.Kernel(built, step.kernel)
                kernel.set_args(*self._arguments(step))
            except (cl.Error, TypeError) as e:
                if step.plain is None:  # irforge's own kernel: a bug, reported as one
                    raise
                raise IrforgeError(f"custom layer {step.tag}: its OpenCL kernel '{step.kernel}' cannot take its arguments: {e}",
                                   fix=CUSTOM_KERNEL_FIX, code="E993") from None
            self.steps.append((kernel, step))
        self.lock = threading.Lock()
        self.timings: list[Timing] = []

    def _arguments(self, step: Launch) -> list[object]:
        """(buffer, byte offset) per tensor; a custom layer's kernel takes whole buffers
        (the lowering gave its tensors buffers of their own), then its scalars."""
        if step.plain is not None:
            scalars = [np.int32(v) if isinstance(v, int | np.integer) else np.float32(v) for v in step.plain]
            return [self.location[id(buf)][0] for buf in step.args] + scalars
        args: list[object] = []
        for buf in step.args:
            mem, offset = self.location[id(buf)]
            args += [mem, np.uint32(offset)]
        return args

    def _place(self, buf: Buffer) -> tuple[object, int]:
        import pyopencl as cl

        if buf.kind in ("arena", "scratch"):
            return self.arena, max(buf.offset, 0)
        if buf.kind == "const" and buf.array is not None and buf.array.nbytes:
            flags = cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR
            return cl.Buffer(self.context, flags, hostbuf=np.ascontiguousarray(buf.array)), 0
        return cl.Buffer(self.context, cl.mem_flags.READ_WRITE, max(buf.nbytes, 4)), 0

    def __call__(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        import pyopencl as cl

        with self.lock:
            held = []
            for name, buf, shape, dtype in self.program.inputs:
                array = input_array(name, feeds, shape, dtype)
                held.append(array)
                if array.nbytes:
                    cl.enqueue_copy(self.queue, self.location[id(buf)][0], array, is_blocking=False)
            events = []
            for step in self.steps:
                if isinstance(step, HostStep):
                    self._host(step)
                    continue
                kernel, launch = step
                event = cl.enqueue_nd_range_kernel(self.queue, kernel, launch.global_size, launch.local_size)
                if self.profile:
                    events.append((event, launch))
            outputs = {name: self._read(buf, shape, dtype) for name, buf, shape, dtype in self.program.outputs}
            self.queue.finish()
            if self.profile:
                self.timings = [Timing(launch.tag, launch.flops, (e.profile.end - e.profile.start) * 1e-9) for e, launch in events]
            return outputs

    def _read(self, buf: Buffer, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        import pyopencl as cl

        if buf.kind == "const" and buf.array is not None:
            return np.array(buf.array, dtype).reshape(shape)
        host = np.empty(shape, dtype)
        if host.nbytes:
            mem, offset = self.location[id(buf)]
            cl.enqueue_copy(self.queue, host, mem, src_offset=offset, is_blocking=True)
        return host

    def _host(self, step: HostStep) -> None:
        """A HETERO step: operands device -> host, run on the CPU, results host -> device."""
        import pyopencl as cl

        arrays = [self._read(buf, shape, dtype) for buf, shape, dtype in step.inputs]
        results = step.run(arrays)
        for (buf, shape, dtype), result in zip(step.outputs, results, strict=True):
            array = np.ascontiguousarray(np.asarray(result, dtype).reshape(shape))
            if array.nbytes:
                mem, offset = self.location[id(buf)]
                cl.enqueue_copy(self.queue, mem, array, dst_offset=offset, is_blocking=True)
