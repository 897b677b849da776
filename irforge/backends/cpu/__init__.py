"""The native CPU backend: `nn` ops compiled to LLVM through llvmlite, run by native threads.

Pipeline: the model (a copy) is optimised with `infer-shapes,canonicalize,fuse-linear-ops`
(BatchNorm/ScaleShift folded into convolutions), lowered op by op into kernels specialised
to static shapes (`lower.py`, `ops/`, `codegen/`), buffers are placed by a liveness planner
(`planner.py`), modules are optimised at O3 for the host CPU and JIT-compiled, with an on-disk
object cache (`jit.py`, `cache.py`), and the generated driver runs all phases in one native
call per thread (`runtime.py`).

Data-dependent shapes (NonZero, NonMaxSuppression, a TopK with a run-time k, and the ops
downstream of them that still see the dynamic dim) cannot be planned: such a model runs as
segments (`irforge/backends/segments.py`): maximal groups of static ops compiled as above,
each one native program, and the ops touching a dynamic dim run between them on the host
with their numpy reference kernels, so their results take the size the data gives. Ops of
static shape without a native kernel run there as host steps inside the program
(`host_steps.py`).
"""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Operation

from irforge.backends.segments import SegmentedModel, compile_segmented, has_data_dependent_shapes
from irforge.model import Model

PIPELINE = "infer-shapes,canonicalize,fuse-linear-ops"


@dataclass
class CompileStats:
    seconds: float
    kernels: int
    phases: int
    cache_hits: int
    cache_misses: int
    arena_bytes: int
    unplanned_bytes: int
    constant_bytes: int = 0
    """Bytes of the constants the compiled code reads (packed weights and the like)."""


class CompiledModel:
    """A model compiled for this CPU: call it with a dict of input arrays by name."""

    def __init__(self, executable, stats: CompileStats) -> None:  # type: ignore[no-untyped-def]
        self._executable = executable
        self.stats = stats
        self.threads = executable.team.threads
        # workers wait in generated code and keep the JIT alive: stop them when this goes away
        weakref.finalize(self, executable.team.close)

    def __call__(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self._executable(feeds)

    def close(self) -> None:
        """Stop the worker threads now (else when this object is collected, or at exit)."""
        self._executable.team.close()


def copy_model(model: Model) -> Model:
    return Model(model.module.clone(), model.store)


def runs_natively(model: Model, op: Operation, cache_dir: str | os.PathLike[str] | None | bool = None) -> bool:
    """Whether the CPU backend compiles `op` (of `model`): it has a lowering, and where the
    op is not all f32 (the kernels' type; shape arithmetic on i64 in detection heads), the
    op alone compiles. Asked for the ops of a segmented model only."""
    import irforge.backends.cpu.ops  # noqa: F401  (registers the lowerings lowering_of reads)
    from irforge.backends.cpu.lower import lowering_of
    from irforge.backends.segments import op_model
    from irforge.errors import IrforgeError

    if lowering_of(op) is None:
        return False
    if all(isinstance(v.type, TensorType) and v.type.element_type == f32 for v in (*op.operands, *op.results)):
        return True
    try:
        compile_model(op_model(model, op), threads=1, cache_dir=cache_dir, pipeline="").close()
    except IrforgeError:
        return False
    return True


def compile_model(
    model: Model,
    threads: int | None = None,
    cache_dir: str | os.PathLike[str] | None | bool = None,
    pipeline: str = PIPELINE,
    track: Callable[[list[Any], str], Iterable[Any]] | None = None,
) -> CompiledModel | SegmentedModel:
    """Compile `model` (left unchanged). `cache_dir=False` disables the object cache;
    None uses the default directory (see `cache.default_cache_dir`). `track(items, what)`
    yields the LLVM modules as they are optimised (a tool's progress bar counts them)."""
    from irforge.backends.cpu.cache import default_cache_dir
    from irforge.backends.cpu.jit import Jit
    from irforge.backends.cpu.lower import lower
    from irforge.backends.cpu.planner import naive_size, plan
    from irforge.backends.cpu.runtime import Executable, driver_module
    from irforge.passes import apply_pipeline

    start = time.perf_counter()
    threads = threads or os.cpu_count() or 1
    work = copy_model(model)
    if pipeline:
        apply_pipeline(work.module, pipeline)
    if has_data_dependent_shapes(work):
        return compile_segmented(
            work, lambda op: runs_natively(work, op, cache_dir),
            lambda part: compile_model(part, threads, cache_dir, pipeline="", track=track),
        )  # fmt: skip
    directory = None if cache_dir is False else Path(cache_dir) if cache_dir else default_cache_dir()
    jit = Jit(directory)
    program = lower(work, jit.module)
    arena = plan(program.buffers)
    driver = jit.module("driver")
    driver_module(driver, [p.function for p in program.phases])
    modules = [*program.modules, driver]
    for module in track(modules, "compile cpu") if track is not None else modules:
        jit.add(module)
    jit.finalize()
    executable = Executable(program, arena, jit.address, threads)
    executable.jit = jit  # keeps the engine (and the code) alive as long as the executable
    stats = CompileStats(
        time.perf_counter() - start, len(program.modules), len(program.phases),
        jit.cache.hits, jit.cache.misses, arena, naive_size(program.buffers),
        sum(b.array.nbytes for b in program.buffers if b.kind == "const" and b.array is not None and b.first >= 0),
    )
    return CompiledModel(executable, stats)
