"""LLVM modules to object files, in this process or in worker processes.

llvmlite holds one global lock around every LLVM call, so threads cannot optimise modules in
parallel; processes can. A `Pool` sends modules one at a time to each of `workers - 1` child
processes (this file run alone, importing llvmlite only; through its stdin and stdout,
never the parent's main module as multiprocessing's spawn would import) while modules are
still being submitted, and compiles what is left itself at the end. Every module, here or
there, is parsed, verified, optimised (`optimise`, at O3 unless `OPT_LEVELS` names its kind)
and emitted as an object file by a target machine made by `target_machine`: the JIT loads
those objects like cache hits, so a module compiles the same way whichever process compiled
it. A worker that fails (or cannot start) leaves its modules to the parent.
"""

from __future__ import annotations

import collections
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable

import llvmlite.binding as llvm


PARALLEL_BYTES = 500_000
"""IR text per worker process: a process costs ~0.1 s of CPU to start (Python and llvmlite),
about what LLVM takes to optimise and emit this much IR at O3."""


OPT_LEVELS: dict[str, int] = {"gemm/rolled": 1, "winograd_in": 1, "winograd_out": 1, "finite_fix/rolled": 1}
"""LLVM optimisation level by kernel kind (the lowering's kernel key: gemm, pointwise, ...;
"driver"; a kind + "/rolled": its modules that LLVM does not unroll, `jit.unrolls`); every
other module is optimised at O3. The GEMMs LLVM does not unroll (packed A, register-blocked
by hand: 1x1 convolutions, one-row FCs) at O1: ResNet-50's 16 such modules 1.48 -> 1.03 s of
LLVM, MixNet-S's 24 1.83 -> 1.41; run time even (`cpu_knob_ab.py ... llvm_worker:OPT_LEVELS`,
session 12: ResNet-50 0.995, MobileNetV2 1.000 with depthwise at O1 too). Depthwise
modules stay at O3 (O1: 3.20 -> 2.78 s of MixNet-S's LLVM, their phases 1.002-1.010). The
Winograd transforms at O1 since session 14 (cput; with cpu2's transform forms O1 paid where it
had not in session 13): ResNet-50's 14 transform modules compiled alone 0.82-0.88 -> 0.66-0.75 s
CPU (`bench/cpu_transform_llvm.py`, 6 alternating rounds, min / median), run time: its Winograd phases
0.934 (`cpu_knob_ab.py resnet50 ...llvm_worker:OPT_LEVELS --cpu-time --runs 21 --phases
winograd`, see docs/STATUS.md). The Winograd guard's fix-up (`codegen.winograd_guard`: scalar
loops for inputs with non-finite values only) at O1 too."""


def kind_of(module_name: str) -> str:
    """The kernel kind of the module `module_name` (a kernel's `k<digest>_<kind>`, or "driver")."""
    return module_name.split("_", 1)[1] if module_name.startswith("k") and "_" in module_name else module_name


def opt_level(module_name: str, unroll: bool = True) -> int:
    """The level of the module `module_name` (a kernel's `k<digest>_<kind>`, or "driver");
    `unroll`: whether LLVM may unroll its loops."""
    kind = kind_of(module_name)
    return OPT_LEVELS.get(kind if unroll else f"{kind}/rolled", OPT_LEVELS.get(kind, 3))


EMIT_LEVELS: dict[str, int] = {"winograd_in": 1, "winograd_out": 1, "finite_fix": 1}
"""LLVM code-generation level (the target machine's: instruction selection, scheduling,
register allocation) by kernel kind; every other module is emitted at 3. The Winograd
transforms are straight-line vector code (the kernel is unrolled by hand over a tile row's
a rows and a*a points, up to 500 KB of IR), whose emission dominates their LLVM time and gains
nothing at 3: ResNet-50's 14 transform modules 0.89 -> 0.62 s of emission at 1 (the
optimisation level, `OPT_LEVELS`, changed nothing there then: 1.00 -> 1.07 s at O1); run time even
(session 13, `cpu_knob_ab.py resnet50 ...llvm_worker:EMIT_LEVELS --cpu-time --phases winograd`,
see docs/STATUS.md)."""


def emit_level(module_name: str) -> int:
    """The code-generation level of the module `module_name` (see `EMIT_LEVELS`)."""
    return EMIT_LEVELS.get(kind_of(module_name), 3)



def init_llvm() -> None:
    # llvm.initialize() raises in llvmlite >= 0.45: only the native target is set up.
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


def target_machine(triple: str, cpu: str, features: str, opt: int = 3) -> llvm.TargetMachine:
    """The target machine emitting objects at code-generation level `opt`."""
    return llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features, opt=opt, codemodel="jitdefault")


class Machines:
    """One process's target machines for `target` (triple, cpu, features), one per
    code-generation level, made when first asked for."""

    def __init__(self, target: tuple[str, str, str]) -> None:
        self.target = target
        self.made: dict[int, llvm.TargetMachine] = {}

    def __call__(self, level: int) -> llvm.TargetMachine:
        if level not in self.made:
            self.made[level] = target_machine(*self.target, opt=level)
        return self.made[level]


def optimise(tm: llvm.TargetMachine, mod: llvm.ModuleRef, level: int = 3, unroll: bool = True) -> None:
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = level >= 2
    pto.slp_vectorization = level >= 2
    pto.loop_unrolling = unroll
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)


def compile_one(tm: llvm.TargetMachine, text: str, level: int = 3, unroll: bool = True) -> bytes:
    mod = llvm.parse_assembly(text)
    mod.verify()
    optimise(tm, mod, level, unroll)
    return tm.emit_object(mod)


_LOAD_THIS_FILE = (
    "import importlib.util as u; s = u.spec_from_file_location('llvm_worker', {path!r}); "
    "m = u.module_from_spec(s); s.loader.exec_module(m); m._main()"
)
"""The worker runs this file alone: `-m irforge.backends.cpu.llvm_worker` imported irforge's
packages first (the CPU backend, the reference kernels, the dialects: 0.7 s of CPU per
worker, where llvmlite takes 0.1)."""


Item = tuple[str, str, int, bool, int]
"""(module name, IR text, optimisation level, loop unrolling, code-generation level)"""


class Worker:
    """A child process compiling the modules sent to it, one at a time (see `Pool`)."""

    def __init__(self, target: tuple[str, str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _LOAD_THIS_FILE.format(path=__file__)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},  # finds irforge as we did
        )
        self.ok = self._write(target)

    def _write(self, message: object) -> bool:
        try:
            assert self.process.stdin is not None
            pickle.dump(message, self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.process.stdin.flush()
            return True
        except OSError:
            self.process.kill()
            return False

    def send(self, item: Item) -> bool:
        return self._write(item)

    def receive(self) -> bytes | None:
        """The object of the item sent last, or None when the worker failed."""
        assert self.process.stdout is not None
        try:
            return pickle.load(self.process.stdout)
        except (OSError, EOFError, pickle.UnpicklingError):
            self.process.kill()
            return None

    def close(self) -> None:
        if self._write(None):
            try:
                self.process.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass
        else:
            self.process.kill()
        self.process.wait()


class Pool:
    """Modules compiled while more are submitted: a feeder thread per worker process sends
    it one module at a time (the next when its object is back), and `finish` compiles what
    is left in this process meanwhile. The CPU backend submits each kernel's module as soon
    as its IR is built, so the workers optimise while this process lowers the rest of the
    model (pipes and LLVM let go of the GIL). No worker starts before `PARALLEL_BYTES` of
    IR were submitted, nor another before each `PARALLEL_BYTES` more: a small model compiles
    in this process alone."""

    def __init__(self, target: tuple[str, str, str], workers: int) -> None:
        self.target = target
        self.workers = max(1, workers)
        self.queue: collections.deque[Item] = collections.deque()
        self.cond = threading.Condition()
        self.closing = False
        self.waiting = 0
        self.results: dict[str, bytes] = {}
        self.feeders: list[threading.Thread] = []

    def submit(self, item: Item) -> None:
        with self.cond:
            self.queue.append(item)
            self.waiting += len(item[1])
            self.cond.notify()
        while len(self.feeders) < min(self.workers - 1, self.waiting // PARALLEL_BYTES):
            self._start_feeder()

    def prestart(self) -> None:
        """Start the first worker process now, before any IR is submitted (a large model:
        its ~0.1 s of start-up then overlaps the pass pipeline and the first lowerings,
        and the modules built before `PARALLEL_BYTES` were submitted no longer wait)."""
        if self.workers > 1 and not self.feeders:
            self._start_feeder()

    def _start_feeder(self) -> None:
        feeder = threading.Thread(target=self._feed, name="irforge-llvm-feeder", daemon=True)
        feeder.start()
        self.feeders.append(feeder)

    def _next(self) -> Item | None:
        with self.cond:
            while not self.queue and not self.closing:
                self.cond.wait()
            return self.queue.popleft() if self.queue else None

    def _feed(self) -> None:
        try:
            worker = Worker(self.target)
        except Exception:  # noqa: BLE001  (no worker: this process compiles everything)
            return
        item = None
        try:
            while worker.ok and (item := self._next()) is not None:
                data = worker.receive() if worker.send(item) else None
                if data is None:  # the worker failed: this process compiles the item
                    break
                with self.cond:
                    self.results[item[0]] = data
                item = None
        finally:
            if item is not None:
                with self.cond:
                    self.queue.append(item)
            worker.close()

    def abandon(self) -> None:
        """Drop what is queued and let the workers go (a compile that failed)."""
        with self.cond:
            self.queue.clear()
            self.closing = True
            self.cond.notify_all()

    def finish(self, done: Callable[[str, bytes], None]) -> None:
        """Compile what no worker took; `done(name, object)` for every module, in this thread."""
        with self.cond:
            self.closing = True
            self.cond.notify_all()
        machines = Machines(self.target)
        while True:
            with self.cond:
                item = self.queue.pop() if self.queue else None  # the newest: the feeders take the oldest
            if item is None:
                if any(f.is_alive() for f in self.feeders):
                    for feeder in self.feeders:
                        feeder.join()
                    continue  # a failed worker may have put its item back
                break
            name, text, level, unroll, emit = item
            done(name, compile_one(machines(emit), text, level, unroll))
        for name, data in self.results.items():
            done(name, data)


def _main() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    target = pickle.load(stdin)
    init_llvm()
    machines = Machines(target)
    while (item := pickle.load(stdin)) is not None:
        name, text, level, unroll, emit = item
        pickle.dump(compile_one(machines(emit), text, level, unroll), stdout, protocol=pickle.HIGHEST_PROTOCOL)
        stdout.flush()


if __name__ == "__main__":
    _main()
