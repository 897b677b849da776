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

SHARED_PIPELINE = "widen-f16,dequantize-weights,infer-shapes,canonicalize,fuse-linear-ops"
"""widen-f16 first: the kernels compute in f32, and so does a half-precision model here;
dequantize-weights: compressed (INT8 / INT4) weights become f32 constants at compile time.
The OpenCL backend runs this one."""
PIPELINE = SHARED_PIPELINE + ",channels-first-mlp"
"""channels-first-mlp: ConvNeXt's transposed MLP as 1x1 convolutions on NCHW, no transposes
(`passes.channels_first_mlp.ENABLED`; measured on this backend only)."""
EAGER_WORKER_OPS = 64
"""A model of this many ops or more (after the pipeline) starts its first LLVM worker process
before lowering (`Jit.start(eager=True)`): such a model compiles enough IR to keep it busy
(ResNet-50: ~200 ops), and the worker no longer waits for `llvm_worker.PARALLEL_BYTES` of IR."""


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
    weight_bytes: int = 0
    """Bytes of the model's own constants (its weights, as given to `compile_model`)."""
    program_cached: bool = False
    """The whole program came from the cache directory (`program_cache`): no pass, lowering
    or packing ran."""


class CompiledModel:
    """A model compiled for this CPU: call it with a dict of input arrays by name."""

    def __init__(self, executable, stats: CompileStats, cache_key: str | None = None) -> None:  # type: ignore[no-untyped-def]
        self._executable = executable
        self.stats = stats
        self.threads = executable.team.threads
        # workers wait in generated code and keep the JIT alive: stop them when this goes away;
        # the cache entry may still be being written (`program_cache.save`): wait for it first
        self._finalizer = weakref.finalize(self, _release, executable.team, cache_key)

    def __call__(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self._executable(feeds)

    def close(self) -> None:
        """Stop the worker threads and finish writing this model's cache entry now (else when
        this object is collected, or at exit): after `close` the cache directory may go."""
        self._finalizer()

    def __enter__(self) -> "CompiledModel":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _release(team, cache_key: str | None) -> None:  # type: ignore[no-untyped-def]
    from irforge.backends.cpu import program_cache

    if cache_key is not None:
        program_cache.wait_for(cache_key)
    team.close()


def copy_model(model: Model) -> Model:
    """A copy to run the backend's pipeline on: the weights it folds go to a branch of the
    store (they would stay in the caller's model, one more copy of the weights per compile)."""
    return Model(model.module.clone(), model.store.branch())


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
    from irforge.backends.cpu import program_cache
    from irforge.backends.cpu.cache import default_cache_dir, max_cache_bytes
    from irforge.backends.cpu.jit import Jit

    start = time.perf_counter()
    threads = threads or os.cpu_count() or 1
    directory = None if cache_dir is False else Path(cache_dir) if cache_dir else default_cache_dir()
    if directory is not None:
        max_cache_bytes()  # a bad $IRFORGE_CACHE_MAX_MB is E148 now, not after the whole compile (at the save)
    jit = Jit(directory)
    key = None
    # a model with data-dependent shapes runs as segments (each cached on its own): hashing
    # its weights for a whole-program key that is never saved would be wasted work
    if directory is not None and program_cache.cacheable(model, pipeline) and not has_data_dependent_shapes(model):
        key = program_cache.program_key(model, pipeline, jit.cache)
        compiled = _load_cached(model, key, jit, threads, start)
        if compiled is not None:
            return compiled
        jit = Jit(directory)  # a fresh engine and counts: the entry was missing or incomplete
    return _compile(model, jit, threads, pipeline, track, key, start, cache_dir)


def _load_cached(model: Model, key: str, jit, threads: int, start: float) -> CompiledModel | None:  # type: ignore[no-untyped-def]
    """The program `key` from the cache directory (see `program_cache`), or None."""
    from irforge.backends.cpu import program_cache
    from irforge.backends.cpu.runtime import Executable

    entry = program_cache.load(jit.cache.directory, key, jit.cache)
    if entry is None:
        return None
    objects = [jit.cache.lookup(name) for name in entry.objects]
    if any(data is None for data in objects):
        return None
    for name, data in zip(entry.objects, objects):
        jit.add_object(name, data)  # type: ignore[arg-type]
    jit.finalize()
    executable = Executable(entry.program, entry.arena_bytes, jit.address, threads, entry.constants)
    executable.jit = jit
    program = entry.program
    stats = CompileStats(
        time.perf_counter() - start, len(entry.objects) - 1, len(program.phases), jit.cache.hits, jit.cache.misses,
        entry.arena_bytes, entry.unplanned_bytes, _constant_bytes(program), weight_bytes(model), program_cached=True,
    )
    return CompiledModel(executable, stats)


def _compile(model: Model, jit, threads: int, pipeline: str, track, key: str | None, start: float, cache_dir: str | os.PathLike[str] | None | bool = None) -> CompiledModel | SegmentedModel:  # type: ignore[no-untyped-def]
    """Pipeline, lowering, planning, JIT; the program is saved under `key` when given. A model
    with data-dependent shapes after the pipeline runs as segments (`backends/segments.py`)."""
    from irforge.backends.cpu import program_cache
    from irforge.backends.cpu.lower import lower
    from irforge.backends.cpu.memory import release_freed_memory, release_mapped_pages
    from irforge.backends.cpu.planner import naive_size, plan
    from irforge.backends.cpu.runtime import Executable, driver_module, gather_constants_meanwhile
    from irforge.passes import apply_pipeline

    work = copy_model(model)
    if pipeline:  # the backend's own pipeline is verified once, after its last pass (~0.1 s of ResNet-50's compile)
        apply_pipeline(work.module, pipeline, verify_each=pipeline != PIPELINE)
    if has_data_dependent_shapes(work):
        return compile_segmented(
            work, lambda op: runs_natively(work, op, cache_dir),
            lambda part: compile_model(part, threads, cache_dir, pipeline="", track=track),
        )  # fmt: skip
    jit.start(_compile_workers(), eager=len(work.func.body.block.ops) >= EAGER_WORKER_OPS)
    try:
        program = lower(work, jit.module, jit.submit)  # LLVM starts on each kernel as its IR is built
        arena = plan(program.buffers)
        constants = gather_constants_meanwhile(program)
        driver = jit.module("driver")
        driver_module(driver, [p.function for p in program.phases])
        jit.add_all([*program.modules, driver], track=track)
    except BaseException:
        jit.abandon()
        raise
    jit.finalize()
    executable = Executable(program, arena, jit.address, threads, constants())
    executable.jit = jit  # keeps the engine (and the code) alive as long as the executable
    unplanned = naive_size(program.buffers)
    saved = key is not None and program_cache.saveable(program)
    if saved:
        program_cache.save(jit.cache.directory, key, program, arena, unplanned, executable._const_region, jit.object_names)
    stats = CompileStats(
        time.perf_counter() - start, len(program.modules), len(program.phases),
        jit.cache.hits, jit.cache.misses, arena, unplanned, _constant_bytes(program), weight_bytes(model),
    )
    release_freed_memory()
    release_mapped_pages(model_constants(model))  # packed into the executable's region by now
    return CompiledModel(executable, stats, key if saved else None)


def model_constants(model: Model) -> list[np.ndarray]:
    """The arrays of `model`'s constants (views of its weight file where it is mapped)."""
    from irforge.backends.reference import constant_value
    from irforge.dialects.nn.constant import Constant

    return [constant_value(op, model.store) for op in model.module.walk() if isinstance(op, Constant)]


def weight_bytes(model: Model) -> int:
    """Bytes of the constants `model` holds."""
    from irforge.backends.reference import constant_value
    from irforge.dialects.nn.constant import Constant

    return sum(constant_value(op, model.store).nbytes for op in model.module.walk() if isinstance(op, Constant))


def memory_report(stats: CompileStats) -> str:
    """One line: compile time and what the compiled model holds, with this process's peak RSS."""
    import resource

    mib = 1 << 20
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    how = "program from the cache" if stats.program_cached else f"{stats.cache_hits} cached + {stats.cache_misses} compiled modules"
    return (
        f"cpu: compiled in {stats.seconds:.2f} s ({how}; {stats.kernels} kernels, {stats.phases} phases); "
        f"weights {stats.weight_bytes / mib:.1f} MiB, packed constants {stats.constant_bytes / mib:.1f} MiB, "
        f"arena {stats.arena_bytes / mib:.1f} MiB (unplanned {stats.unplanned_bytes / mib:.1f}), peak RSS {peak / mib:.1f} MiB"
    )


def _compile_workers() -> int:
    """Processes compiling kernels: $IRFORGE_COMPILE_WORKERS (1: none besides this one), else
    the cores this process may run on."""
    if os.environ.get("IRFORGE_COMPILE_WORKERS", "").isdigit():
        return max(1, int(os.environ["IRFORGE_COMPILE_WORKERS"]))
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _constant_bytes(program) -> int:  # type: ignore[no-untyped-def]
    return sum(b.array.nbytes for b in program.buffers if b.kind == "const" and b.array is not None and b.first >= 0)
