"""LLVM modules to object files, in this process or in worker processes.

llvmlite holds one global lock around every LLVM call, so threads cannot optimise modules in
parallel; processes can. `compile_objects` sends a share of the modules (balanced by IR size)
to each of `workers - 1` child processes (this file run alone, importing llvmlite only; one
batch each through its stdin and stdout, never the parent's main module as multiprocessing's
spawn would import) and compiles the rest itself meanwhile. Every module, here or there, is
parsed, verified, optimised (`optimise`, at O3 unless `OPT_LEVELS` names its kind) and emitted as an object file by a target
machine made by `target_machine`: the JIT loads those objects like cache hits, so a module
compiles the same way whichever process compiled it. A worker that fails (or cannot start)
leaves its share to the parent.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Callable

import llvmlite.binding as llvm


PARALLEL_BYTES = 500_000
"""IR text per worker process: a process costs ~0.1 s of CPU to start (Python and llvmlite),
about what LLVM takes to optimise and emit this much IR at O3."""


OPT_LEVELS: dict[str, int] = {}
"""LLVM optimisation level by kernel kind (the lowering's kernel key: gemm, pointwise, ...;
"driver"); every other module is optimised at O3."""


def opt_level(module_name: str) -> int:
    """The level of the module `module_name` (a kernel's `k<digest>_<kind>`, or "driver")."""
    kind = module_name.split("_", 1)[1] if module_name.startswith("k") and "_" in module_name else module_name
    return OPT_LEVELS.get(kind, 3)


def init_llvm() -> None:
    # llvm.initialize() raises in llvmlite >= 0.45: only the native target is set up.
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


def target_machine(triple: str, cpu: str, features: str) -> llvm.TargetMachine:
    return llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features, opt=3, codemodel="jitdefault")


def optimise(tm: llvm.TargetMachine, mod: llvm.ModuleRef, level: int = 3) -> None:
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = level >= 2
    pto.slp_vectorization = level >= 2
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)


def compile_one(tm: llvm.TargetMachine, text: str, level: int = 3) -> bytes:
    mod = llvm.parse_assembly(text)
    mod.verify()
    optimise(tm, mod, level)
    return tm.emit_object(mod)


_LOAD_THIS_FILE = (
    "import importlib.util as u; s = u.spec_from_file_location('llvm_worker', {path!r}); "
    "m = u.module_from_spec(s); s.loader.exec_module(m); m._main()"
)
"""The worker runs this file alone: `-m irforge.backends.cpu.llvm_worker` imported irforge's
packages first (the CPU backend, the reference kernels, the dialects: 0.7 s of CPU per
worker, where llvmlite takes 0.1)."""


class Worker:
    """A child process compiling one batch (see the module docstring)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _LOAD_THIS_FILE.format(path=__file__)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},  # finds irforge as we did
        )

    def send(self, target: tuple[str, str, str], batch: list[tuple[str, str, int]]) -> bool:
        try:
            assert self.process.stdin is not None
            pickle.dump((target, batch), self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.process.stdin.close()
            return True
        except OSError:
            self.process.kill()
            return False

    def receive(self) -> dict[str, bytes] | None:
        assert self.process.stdout is not None
        try:
            objects = pickle.load(self.process.stdout)
        except (OSError, EOFError, pickle.UnpicklingError):
            objects = None
        self.process.stdout.close()
        return objects if self.process.wait() == 0 else None


def compile_objects(
    modules: list[tuple[str, str, int]], target: tuple[str, str, str], workers: int,
    done: Callable[[str, bytes], None],
) -> None:
    """Compile `(name, IR text)` pairs for `target` (triple, cpu, features) with up to
    `workers` processes (this one included); `done(name, object)` is called for each, in
    this process."""
    total = sum(len(text) for _, text, _ in modules)
    workers = min(workers, len(modules), 1 + total // PARALLEL_BYTES)
    shares: list[list[tuple[str, str, int]]] = [[] for _ in range(max(1, workers))]
    loads = [0] * len(shares)
    for item in sorted(modules, key=lambda m: -len(m[1])):  # largest first onto the least loaded
        least = loads.index(min(loads))
        shares[least].append(item)
        loads[least] += len(item[1])
    children: list[tuple[Worker, list[tuple[str, str, int]]]] = []
    own = shares[0]
    for share in shares[1:]:
        try:
            worker = Worker()
        except OSError:
            own = own + share
            continue
        if worker.send(target, share):
            children.append((worker, share))
        else:
            own = own + share
    tm = target_machine(*target)
    for name, text, level in own:
        done(name, compile_one(tm, text, level))
    for worker, share in children:
        objects = worker.receive()
        for name, text, level in share:
            data = objects.get(name) if objects is not None else None
            done(name, data if data is not None else compile_one(tm, text, level))


def _main() -> None:
    target, batch = pickle.load(sys.stdin.buffer)
    init_llvm()
    tm = target_machine(*target)
    objects = {name: compile_one(tm, text, level) for name, text, level in batch}
    pickle.dump(objects, sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    _main()
