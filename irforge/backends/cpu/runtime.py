"""Running a lowered model: the generated driver, its chunk claims, and the thread team.

The whole model runs as one native call per thread: the driver `irforge_run(tables, tid,
nth, sync)` goes through the phases in order. A phase's work is `nth` chunks (a kernel
called as thread c of nth does chunk c); a thread first claims its own chunk (c = tid),
runs it, then claims any chunk no thread took yet, and waits until the phase's chunks are
all done before the next phase (spinning with `pause`, then yielding the core with
sched_yield). A thread that is not running (the core shared with another process, or
with another engine's spinning pool) holds nobody up: the running threads take its
chunks. A static split with a barrier per phase (every thread must arrive) ran MobileNetV2
on 2 threads 2x slower than on one beside onnxruntime's spinning pool (57.9 vs 28.8 ms at
load 1.6, interleaved vs alone).

Claims need no reset between runs: each run has an epoch E (1, 2, ...; sync[0]); a chunk's
flag holds the epoch that last claimed it, so claiming is cmpxchg(flag, E - 1, E), and a
phase's done counter only grows (E * nth when run E has done it). A worker that wakes late
with an old epoch finds every flag taken and every counter past its target, and returns.

The `threads - 1` workers never return to Python between inferences: each sits in the
generated `irforge_worker` loop, waiting for the launch word to change (spinning with
`pause` for about a millisecond, then sleeping in futex(2)), and runs the driver on the
tables the caller published. The caller's `irforge_launch` bumps the epoch, publishes the
tables, bumps the word, wakes sleepers, and runs thread 0. An empty 2-thread program took
100 us per run with workers woken by Python semaphores, 4 us with this loop (back-to-back
runs; ~110 us after the workers went to sleep).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Mapping

import numpy as np
from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import I32, I64, VOID, KernelBuilder, i64
from irforge.backends.common import input_array, view_at
from irforge.backends.cpu.lower import Program
from irforge.backends.cpu.memory import Region, release_freed_memory
from irforge.backends.reference.run_time_sizes import memory_bytes
from irforge.errors import IrforgeError

DRIVER = "irforge_run"
WORKER = "irforge_worker"
LAUNCH = "irforge_launch"
SPINS_BEFORE_WAIT = 4000
"""pause instructions a thread spins on a phase's done counter before futex(2) sleep."""
SPINS_BEFORE_SLEEP = 20000
"""pause instructions (~50 ns each here) a worker spins on the launch word before futex(2)."""
BOUND_CALL = True
"""`Executable.__call__` on what its constructor bound once: the launch's addresses, each
input's table slots, a view of each output lying at a fixed address (arena or constant).
False: the addresses and output views made again every call (`.ctypes.data`, ctypes arrays:
~20 us of a 28 us call of a one-op model, 6 us of it native)."""
SYS_FUTEX, FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE = 202, 128, 129
_LAUNCH_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p)
_WORKER_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)


def record_words(threads: int) -> int:
    """i64 words of one phase's sync record: its done counter, its sleeper count and a claim
    flag per chunk, padded to whole cache lines (records of different phases share no line)."""
    return -(-(threads + 2) // 8) * 8


def sync_words(phases: int, threads: int) -> int:
    """i64 words of a program's sync array: the epoch's line, then one record per phase."""
    return 8 + phases * record_words(threads)


def driver_module(module: ir.Module, phases: list[str]) -> None:
    """`irforge_run(i8*** tables, i64 tid, i64 nth, i64* sync)`: the phases in order (see the
    module docstring), and the team's `irforge_worker` and `irforge_launch` around it."""
    table_t = ir.PointerType(ir.PointerType(ir.PointerType(ir.IntType(8))))
    fn_type = ir.FunctionType(VOID, [table_t, I64, I64, ir.PointerType(I64)])
    run_phase = _phase_function(module)
    kb = KernelBuilder(module, DRIVER, fn_type)
    tables, tid, nth, sync = kb.fn.args
    from irforge.backends.cpu.codegen.irutil import KERNEL_TYPE

    b = kb.b
    epoch = b.load_atomic(sync, "acquire", 8)  # written by thread 0 before the launch word
    words = b.mul(b.sdiv(b.add(nth, i64(9)), i64(8)), i64(8))  # record_words(nth)
    for index, name in enumerate(phases):
        fn = module.globals.get(name) or ir.Function(module, KERNEL_TYPE, name)
        record = kb.at(sync, b.add(i64(8), b.mul(i64(index), words)))
        b.call(run_phase, [record, fn, kb.at(tables, index), tid, nth, epoch])
    kb.finish()
    _worker_function(module, kb.fn)
    _launch_function(module, kb.fn)


def _phase_function(module: ir.Module) -> ir.Function:
    """`irforge_phase(record, kernel, table slot, tid, nth, epoch)`: this thread's share of one
    phase (its own chunk, then unclaimed ones), then the wait for all of them."""
    from irforge.backends.cpu.codegen.irutil import KERNEL_TYPE

    table_slot_t = ir.PointerType(ir.PointerType(ir.PointerType(ir.IntType(8))))
    fn_type = ir.FunctionType(VOID, [ir.PointerType(I64), ir.PointerType(KERNEL_TYPE), table_slot_t, I64, I64, I64])
    kb = KernelBuilder(module, "irforge_phase", fn_type)
    kb.fn.linkage = "internal"
    # one call per phase costs nothing; inlined into every phase's call site, LLVM optimised
    # ~90 copies of its loops (ResNet-50's driver: 0.80 s of LLVM at O3, 0.07 s with one copy)
    kb.fn.attributes.add("noinline")
    record, kernel, slot, tid, nth, epoch = kb.fn.args
    b = kb.b
    pause = kb.intrinsic("llvm.x86.sse2.pause", VOID, [])
    done_word = b.bitcast(record, ir.PointerType(I32))  # futex(2) waits on the counter's low half
    sleepers = kb.at(record, 1)
    with b.if_else(b.icmp_signed(">", nth, i64(1))) as (team, alone):
        with alone:
            b.call(kernel, [b.load(slot), i64(0), i64(1)])
        with team:
            with kb.loop(0, nth, name="claim") as k:
                chunk = b.add(tid, k)
                chunk = b.select(b.icmp_signed(">=", chunk, nth), b.sub(chunk, nth), chunk)
                flag = kb.at(record, b.add(chunk, i64(2)))
                # the table is read only after a claim: a late worker reads nothing of this run
                claimed = b.extract_value(b.cmpxchg(flag, b.sub(epoch, i64(1)), epoch, "acq_rel", "monotonic"), 1)
                with b.if_then(claimed):
                    b.call(kernel, [b.load(slot), chunk, nth])
                    b.atomic_rmw("add", record, i64(1), "seq_cst")
                    # a sleeper counted before this add is woken; one counted after it sees the add
                    with b.if_then(b.icmp_signed(">", b.load_atomic(sleepers, "seq_cst", 8), i64(0))):
                        _futex(kb, done_word, FUTEX_WAKE_PRIVATE, ir.Constant(I32, 2**31 - 1))
            target = b.mul(epoch, nth)
            with kb.loop(0, 1 << 62, name="spin") as spins:
                seen = b.load_atomic(record, "acquire", 8)
                exit_block = b.append_basic_block("spin.exit")
                cont = b.append_basic_block("spin.wait")
                b.cbranch(b.icmp_signed(">=", seen, target), exit_block, cont)
                b.position_at_end(exit_block)
                b.ret_void()
                b.position_at_end(cont)
                with b.if_else(b.icmp_signed("<", spins, i64(SPINS_BEFORE_WAIT))) as (spin, rest):
                    with spin:
                        b.call(pause, [])
                    with rest:  # sleep: the core goes to a thread of ours the load preempted
                        b.atomic_rmw("add", sleepers, i64(1), "seq_cst")
                        again = b.load_atomic(record, "seq_cst", 8)
                        with b.if_then(b.icmp_signed("<", again, target)):
                            _futex(kb, done_word, FUTEX_WAIT_PRIVATE, b.trunc(again, I32))
                        b.atomic_rmw("sub", sleepers, i64(1), "seq_cst")
    kb.finish()
    return kb.fn


def _futex(kb: KernelBuilder, word: ir.Value, op: int, value: ir.Value) -> None:
    syscall = kb.module.globals.get("syscall") or ir.Function(
        kb.module, ir.FunctionType(I64, [I64], var_arg=True), "syscall")
    null = ir.Constant(ir.PointerType(ir.IntType(8)), None)
    kb.b.call(syscall, [i64(SYS_FUTEX), word, ir.Constant(I32, op), value, null])


def _worker_function(module: ir.Module, driver: ir.Function) -> None:
    """`irforge_worker(i64* control, tid, nth, sync)`: run the driver each time the launch
    word control[0] (i32, 0 when the team starts) changes; return when it changes with
    control[2] (stop) set."""
    fn_type = ir.FunctionType(VOID, [ir.PointerType(I64), I64, I64, ir.PointerType(I64)])
    kb = KernelBuilder(module, WORKER, fn_type)
    control, tid, nth, state = kb.fn.args
    b = kb.b
    word = b.bitcast(control, ir.PointerType(I32))
    pause = kb.intrinsic("llvm.x86.sse2.pause", VOID, [])
    seen = b.alloca(I32)
    spins = b.alloca(I64)
    b.store(ir.Constant(I32, 0), seen)  # the word's value at start: a launch before this thread runs is not missed
    b.store(i64(0), spins)
    wait, idle, launched, stop, run = (b.append_basic_block(n) for n in ("wait", "idle", "launched", "stop", "run"))
    b.branch(wait)
    b.position_at_end(wait)
    current = b.load_atomic(word, "acquire", 4)
    b.cbranch(b.icmp_unsigned("!=", current, b.load(seen)), launched, idle)
    b.position_at_end(idle)
    count = b.load(spins)
    b.store(b.add(count, i64(1)), spins)
    with b.if_else(b.icmp_signed("<", count, i64(SPINS_BEFORE_SLEEP))) as (spin, sleep):
        with spin:
            b.call(pause, [])
        with sleep:
            _futex(kb, word, FUTEX_WAIT_PRIVATE, b.load(seen))
    b.branch(wait)
    b.position_at_end(launched)
    b.store(current, seen)
    b.store(i64(0), spins)
    b.cbranch(b.icmp_signed("!=", b.load_atomic(kb.at(control, 2), "acquire", 8), i64(0)), stop, run)
    b.position_at_end(run)
    tables = b.inttoptr(b.load_atomic(kb.at(control, 1), "acquire", 8), driver.args[0].type)
    b.call(driver, [tables, tid, nth, state])
    b.branch(wait)
    b.position_at_end(stop)
    kb.finish()


def _launch_function(module: ir.Module, driver: ir.Function) -> None:
    """`irforge_launch(i64* control, tables, nth, sync)`: bump the epoch, publish the tables, bump the
    launch word and wake sleeping workers (when there are any), run thread 0 (null tables:
    only the wake-up, which stops the workers once control[2] is set)."""
    fn_type = ir.FunctionType(VOID, [ir.PointerType(I64), driver.args[0].type, I64, ir.PointerType(I64)])
    kb = KernelBuilder(module, LAUNCH, fn_type)
    control, tables, nth, state = kb.fn.args
    b = kb.b
    with kb.if_(b.icmp_signed(">", nth, i64(1))):
        with kb.if_(b.icmp_unsigned("!=", b.ptrtoint(state, I64), i64(0))):  # null on close
            b.store_atomic(b.add(b.load_atomic(state, "monotonic", 8), i64(1)), state, "release", 8)
        b.store_atomic(b.ptrtoint(tables, I64), kb.at(control, 1), "release", 8)
        word = b.bitcast(control, ir.PointerType(I32))
        b.atomic_rmw("add", word, ir.Constant(I32, 1), "release")
        _futex(kb, word, FUTEX_WAKE_PRIVATE, ir.Constant(I32, 2**31 - 1))
    with kb.if_(b.icmp_unsigned("!=", b.ptrtoint(tables, I64), i64(0))):
        b.call(driver, [tables, i64(0), nth, state])
    kb.finish()


class ThreadTeam:
    """`threads - 1` persistent workers in the native worker loop; the caller is thread 0."""

    def __init__(self, address: Callable[[str], int], threads: int, sync: np.ndarray) -> None:
        self.address = address  # the running workers keep the JIT (their code) alive through it
        self.launch = _LAUNCH_TYPE(address(LAUNCH))
        self.worker = _WORKER_TYPE(address(WORKER))
        self.threads = threads
        self.sync = sync
        self.control = np.zeros(8, np.int64)
        self._control_at, self._sync_at = self.control.ctypes.data, sync.ctypes.data
        self.workers = [
            threading.Thread(target=self._work, args=(tid,), daemon=True, name=f"irforge-cpu-{tid}")
            for tid in range(1, threads)
        ]
        for worker in self.workers:
            worker.start()

    def _work(self, tid: int) -> None:
        self.worker(self.control.ctypes.data, tid, self.threads, self.sync.ctypes.data)

    def run(self, tables: int) -> None:
        self.launch(self._control_at, tables, self.threads, self._sync_at)

    def close(self) -> None:
        """Stop the workers: they see the stop flag at the next launch word change."""
        if not self.workers:
            return
        self.control[2] = 1
        self.launch(self.control.ctypes.data, None, self.threads, None)
        for worker in self.workers:
            worker.join()
        self.workers = []


TRIM_BYTES = 32 << 20
"""The heap's free pages go back to the OS after every this many bytes of constants moved
into the region: glibc keeps the freed arrays (most under its 32 MiB mmap threshold), so
the packed weights were resident twice at the end of the move (ViT-B/16's 327 MiB: a cold
compile's peak RSS growth 745 -> 446 MiB)."""


def _gather_constants(program: Program) -> Region | None:
    """Move the constant buffers (packed weights) into one huge-page region, each 64-byte
    aligned: a 64-byte vector load from a misaligned panel touches two cache lines (an
    aligned copy ran a packed GEMM 10% faster). Constants no phase reads (weights that only
    their packed copy serves) stay out: the region would hold every weight twice."""
    consts = [b for b in program.buffers if b.kind == "const" and b.array is not None and b.first >= 0]
    offsets, total = [], 0
    for buf in consts:
        offsets.append(total)
        total += -(-buf.array.nbytes // 64) * 64
    if not consts:
        return None
    region = Region(total)
    moved = 0
    for buf, offset in zip(consts, offsets):
        moved += buf.array.nbytes
        buf.array = region.view(offset, buf.array)
        if moved >= TRIM_BYTES:
            release_freed_memory()
            moved = 0
    return region


def gather_constants_meanwhile(program: Program) -> Callable[[], Region | None]:
    """`_gather_constants(program)` in a thread; the returned function waits for its region.
    The copies (and the new region's page faults: ResNet-50's 134 MB of packed weights,
    0.2-0.4 s) run while LLVM compiles the last modules (numpy's copies and LLVM let go of
    the GIL), not after them with the other core idle."""
    result: list = []

    def gather() -> None:
        try:
            result.append(_gather_constants(program))
        except BaseException as error:  # noqa: BLE001  (raised again by the caller's wait)
            result.append(error)

    thread = threading.Thread(target=gather, name="irforge-constants", daemon=True)
    thread.start()

    def wait() -> Region | None:
        thread.join()
        if isinstance(result[0], BaseException):
            raise result[0]
        return result[0]

    return wait


class Executable:
    """Argument tables and arena of a program, ready to run with a thread team."""

    def __init__(self, program: Program, arena_size: int, address: Callable[[str], int], threads: int,
                 constants: Region | None = None) -> None:
        """`constants`: the region the program's constants already lie in (a cached program),
        else they are gathered into a new one."""
        self.program = program
        # the kernels' per-chunk workspaces (`Lowering.workspace`): one slice per thread of the
        # largest, after the arena, shared by every phase
        work = max((b.nbytes for b in program.buffers if b.kind == "workspace" and b.first >= 0), default=0)
        work_at = -(-arena_size // 64) * 64
        total = work_at + work * threads if work else arena_size
        if total > memory_bytes():  # mapped lazily, it would be written page by page into swap (a Pad to 2**31 rows)
            raise MemoryError(f"the CPU backend's arena needs {total / 2**30:.3g} GiB, more than this machine's memory")
        self._arena_region = Region(total)
        self.arena = self._arena_region.data[:arena_size // 4 * 4].view(np.float32)
        base = self.arena.ctypes.data
        self._const_region = constants if constants is not None else _gather_constants(program)
        self.checks = [(b, np.zeros(2, np.int64)) for b in program.buffers if b.kind == "check" and b.first >= 0]
        self.address = {id(b): base + work_at if b.kind == "workspace" else self._address(b, base) for b in program.buffers}
        self.address.update({id(b): words.ctypes.data for b, words in self.checks})
        self.tables = [np.array([self.address[id(b)] for b in p.args] or [0], np.uint64) for p in program.phases]
        self.table_of_tables = np.array([t.ctypes.data for t in self.tables] or [0], np.uint64)
        self.input_slots = {
            name: [(t, i) for t, p in zip(self.tables, program.phases) for i, b in enumerate(p.args) if b is buf]
            for name, buf, _, _ in program.inputs
        }
        words = sync_words(len(program.phases), threads)
        self._sync_storage = np.zeros(words + 8, np.int64)  # + a line: the records start on one
        skip = (-self._sync_storage.ctypes.data % 64) // 8
        self.sync = self._sync_storage[skip:skip + words]
        self.lock = threading.Lock()
        self.team = ThreadTeam(address, threads, self.sync)
        self.bound = BOUND_CALL
        self._tables_at = self.table_of_tables.ctypes.data
        # an output not in an input's place lies at one address for good: its view is made
        # once, and each call hands out a copy of it (the next run overwrites the arena)
        self._output_views = {
            name: view_at(self.address[id(buf)], shape, dtype)
            for name, buf, shape, dtype in program.outputs
            if buf.kind != "input" and self.address[id(buf)] != 0
        }

    @staticmethod
    def _address(buf, base: int) -> int:  # type: ignore[no-untyped-def]
        if buf.kind == "const":
            return buf.array.ctypes.data
        if buf.kind == "input" or buf.offset < 0:
            return 0
        return base + buf.offset

    def __call__(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        if self.bound:
            return self._bound_call(feeds)
        with self.lock:
            held = []
            for name, buf, shape, dtype in self.program.inputs:
                array = input_array(name, feeds, shape, dtype)
                held.append(array)
                self.address[id(buf)] = array.ctypes.data
                for table, index in self.input_slots[name]:
                    table[index] = array.ctypes.data
            for _, words in self.checks:
                words[:] = 0
            if self.program.phases:
                self.team.run(self.table_of_tables.ctypes.data)
            for step in self.program.host_steps:
                step.raise_pending()
            self._raise_checks()
            return {name: self._read(buf, shape, dtype) for name, buf, shape, dtype in self.program.outputs}

    def _bound_call(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """`__call__` on the addresses and views bound once (`BOUND_CALL`)."""
        with self.lock:
            held = []
            for name, buf, shape, dtype in self.program.inputs:
                array = input_array(name, feeds, shape, dtype)
                held.append(array)  # the tables hold its address until this run is done
                at = array.ctypes.data
                self.address[id(buf)] = at
                for table, index in self.input_slots[name]:
                    table[index] = at
            for _, words in self.checks:
                words[:] = 0
            if self.program.phases:
                self.team.run(self._tables_at)
            for step in self.program.host_steps:
                step.raise_pending()
            self._raise_checks()
            views = self._output_views
            return {name: views[name].copy() if name in views else self._read(buf, shape, dtype)
                    for name, buf, shape, dtype in self.program.outputs}

    def _raise_checks(self) -> None:
        """The error of the first check word a kernel set (bad run-time data; `Lowering.check_word`)."""
        for buf, words in self.checks:
            if words[0]:
                code, _, message = buf.note.partition(" ")
                head, _, tail = message.rpartition("{}")  # the op's label before it may hold braces
                raise IrforgeError(f"{head}{int(words[1])}{tail}", fix="check the indices the model computes", code=code)

    def _read(self, buf, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:  # type: ignore[no-untyped-def]
        return view_at(self.address[id(buf)], shape, dtype).copy()

