"""Running a lowered model: the generated driver, its native barrier, and the thread team.

The whole model runs as one native call per thread: the driver `irforge_run(tables, tid,
nthreads, barrier)` calls every phase's kernel with that phase's argument table, and waits
at a barrier in generated code (an atomic counter and generation word, spinning with
`pause`, then yielding the core with sched_yield so an oversubscribed machine still makes
progress). Python only wakes the team once per inference: `threads - 1` worker threads
block on semaphores and call the driver through ctypes (which releases the GIL), the
calling thread runs thread 0. A Python-side barrier per layer would cost 10-35% on small
layers; this costs one wake-up per inference.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Mapping

import numpy as np
from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import I32, I64, VOID, KernelBuilder, i64
from irforge.backends.common import input_array
from irforge.backends.cpu.lower import Program

DRIVER = "irforge_run"
SPINS_BEFORE_YIELD = 4000
_DRIVER_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)


def driver_module(module: ir.Module, phases: list[str]) -> None:
    """`irforge_run(i8*** tables, i64 tid, i64 nth, i64* barrier)`: phases with barriers."""
    table_t = ir.PointerType(ir.PointerType(ir.PointerType(ir.IntType(8))))
    fn_type = ir.FunctionType(VOID, [table_t, I64, I64, ir.PointerType(I64)])
    barrier = _barrier_function(module)
    kb = KernelBuilder(module, DRIVER, fn_type)
    tables, tid, nth, state = kb.fn.args
    from irforge.backends.cpu.codegen.irutil import KERNEL_TYPE

    for index, name in enumerate(phases):
        fn = module.globals.get(name) or ir.Function(module, KERNEL_TYPE, name)
        kb.b.call(fn, [kb.b.load(kb.at(tables, index)), tid, nth])
        if index + 1 < len(phases):
            kb.b.call(barrier, [state, nth])
    kb.finish()


def _barrier_function(module: ir.Module) -> ir.Function:
    """Sense-counting barrier: state[0] counts arrivals, state[8] is the generation."""
    kb = KernelBuilder(module, "irforge_barrier", ir.FunctionType(VOID, [ir.PointerType(I64), I64]))
    kb.fn.linkage = "internal"
    state, nth = kb.fn.args
    b = kb.b
    pause = kb.intrinsic("llvm.x86.sse2.pause", VOID, [])
    yield_ = kb.intrinsic("sched_yield", I32, [])
    with kb.if_(b.icmp_signed(">", nth, i64(1))):
        gen_ptr = kb.at(state, 8)
        gen = b.load_atomic(gen_ptr, "acquire", 8)
        arrived = b.atomic_rmw("add", state, i64(1), "acq_rel")
        last = b.icmp_signed("==", arrived, b.sub(nth, i64(1)))
        with b.if_else(last) as (then, otherwise):
            with then:
                b.store_atomic(i64(0), state, "monotonic", 8)
                b.store_atomic(b.add(gen, i64(1)), gen_ptr, "release", 8)
            with otherwise:
                with kb.loop(0, 1 << 62, name="spin") as spins:
                    done = b.icmp_signed("!=", b.load_atomic(gen_ptr, "acquire", 8), gen)
                    exit_block = b.append_basic_block("spin.exit")
                    cont = b.append_basic_block("spin.wait")
                    b.cbranch(done, exit_block, cont)
                    b.position_at_end(exit_block)
                    b.ret_void()
                    b.position_at_end(cont)
                    with b.if_else(b.icmp_signed("<", spins, i64(SPINS_BEFORE_YIELD))) as (spin, rest):
                        with spin:
                            b.call(pause, [])
                        with rest:
                            b.call(yield_, [])
    kb.finish()
    return kb.fn


class ThreadTeam:
    """`threads - 1` persistent workers that run the driver when the caller does."""

    def __init__(self, driver: int, threads: int) -> None:
        self.fn = _DRIVER_TYPE(driver)
        self.threads = threads
        self.args: tuple[int, int] = (0, 0)
        self.go = [threading.Semaphore(0) for _ in range(threads - 1)]
        self.done = threading.Semaphore(0)
        self.closing = False
        for tid in range(1, threads):
            threading.Thread(target=self._work, args=(tid,), daemon=True, name=f"irforge-cpu-{tid}").start()

    def _work(self, tid: int) -> None:
        while True:
            self.go[tid - 1].acquire()
            if self.closing:
                return
            self.fn(self.args[0], tid, self.threads, self.args[1])
            self.done.release()

    def run(self, tables: int, barrier: int) -> None:
        self.args = (tables, barrier)
        for go in self.go:
            go.release()
        self.fn(tables, 0, self.threads, barrier)
        for _ in self.go:
            self.done.acquire()

    def close(self) -> None:
        self.closing = True
        for go in self.go:
            go.release()


class Executable:
    """Argument tables and arena of a program, ready to run with a thread team."""

    def __init__(self, program: Program, arena_size: int, driver: int, threads: int) -> None:
        self.program = program
        self.arena = np.zeros(arena_size // 4 + 16, np.float32)
        base = -(-self.arena.ctypes.data // 64) * 64
        self.address = {id(b): self._address(b, base) for b in program.buffers}
        self.tables = [np.array([self.address[id(b)] for b in p.args] or [0], np.uint64) for p in program.phases]
        self.table_of_tables = np.array([t.ctypes.data for t in self.tables] or [0], np.uint64)
        self.input_slots = {
            name: [(t, i) for t, p in zip(self.tables, program.phases) for i, b in enumerate(p.args) if b is buf]
            for name, buf, _, _ in program.inputs
        }
        self.barrier = np.zeros(16, np.int64)
        self.lock = threading.Lock()
        self.team = ThreadTeam(driver, threads)

    @staticmethod
    def _address(buf, base: int) -> int:  # type: ignore[no-untyped-def]
        if buf.kind == "const":
            return buf.array.ctypes.data
        if buf.kind == "input" or buf.offset < 0:
            return 0
        return base + buf.offset

    def __call__(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        with self.lock:
            held = []
            for name, buf, shape, dtype in self.program.inputs:
                array = input_array(name, feeds, shape, dtype)
                held.append(array)
                self.address[id(buf)] = array.ctypes.data
                for table, index in self.input_slots[name]:
                    table[index] = array.ctypes.data
            if self.program.phases:
                self.team.run(self.table_of_tables.ctypes.data, self.barrier.ctypes.data)
            for step in self.program.host_steps:
                step.raise_pending()
            return {name: self._read(buf, shape, dtype) for name, buf, shape, dtype in self.program.outputs}

    def _read(self, buf, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:  # type: ignore[no-untyped-def]
        count = int(np.prod(shape, dtype=np.int64))
        raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(self.address[id(buf)])
        return np.frombuffer(raw, dtype, count).reshape(shape).copy()

