"""Whole compiled programs in the cache directory: a cached compile runs no pass, no lowering
and no weight packing.

A program is named by a hash of everything its lowering depends on: the model's printed IR,
the bytes (dtype and shape) of every constant it refers to, the pass pipeline, the code
generator's version, the state of irforge's other sources (`sources_version`) and the target
(`ObjectCache.hash_of`). An entry is two files: `p<key>.bin`,
the constant region (packed weights, 64-byte aligned, exactly as the executable lays it out),
and `p<key>.json`, the rest of the program: buffers (sizes, kinds, liveness, arena offsets,
where each constant lies in the region), phases (kernel symbol, argument buffers), the
model's inputs and outputs, and the object-cache names of the kernel and driver modules. The
JSON is written last, atomically, so a partial entry is never read. On a hit the region is
read straight into huge-page memory (no packing, no copy through numpy), and the objects are
handed to the JIT as they are; if any object is missing the compile falls back to a full one.
The region is copied, never mapped: a mapping of the `.bin` (private or shared) faults with
SIGBUS once another program cuts the file under it, killing the process mid-run (session
13; truncation unmaps even a private mapping's copied pages), and a cache must never crash
the process that reads it.
The JSON holds the SHA-256 of the program's record (and each object file its own, `cache.py`)
and the size and modification time of the `.bin` it was written with: an entry truncated or
changed on disk is a miss (a `.bin` changed in place kept its size and was read as weights,
session 12); one whose phases named a function no object defines crashed the process.

Programs that run Python code outside irforge are never cached: custom layers and extension
passes or dialects (their code is outside the code generator's version). Host steps of
reference kernels are (RoBERTa's CumSum): the JSON holds each one's
symbol and recipe, its op alone as text, and a hit parses the op back and binds the symbol
(`host_steps.rebuild`); a program with any other host step is not saved.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from threading import Lock, Thread

import numpy as np
from xdsl.dialects.builtin import ModuleOp

import irforge
from irforge.backends.cpu.cache import ObjectCache, codegen_version, max_cache_bytes, trim, write_atomic
from irforge.backends.cpu.host_steps import rebuild
from irforge.backends.cpu.lower import Buffer, Phase, Program
from irforge.backends.cpu.memory import Region
from irforge.errors import IrforgeError
from irforge.model import Model

FORMAT = 4
"""Bumped when the entry layout changes (the key includes it)."""
HASH_THREADS = 2
"""Threads hashing the constants (hashlib lets go of the GIL on large buffers)."""


def cacheable(model: Model, pipeline: str) -> bool:
    """Whether the program of `model` depends on nothing but its IR, weights and irforge's
    own sources (see the module docstring)."""
    from irforge.custom.op import CUSTOM_OPS
    from irforge.passes import BUILTIN_PASSES

    passes = [p.split("{")[0].strip() for p in pipeline.split(",") if p.strip()]
    if any(p not in BUILTIN_PASSES for p in passes):
        return False
    for op in model.module.walk():
        if op.name in CUSTOM_OPS or op.name.split(".")[0] not in ("nn", "func", "builtin"):
            return False
    return True


def program_key(model: Model, pipeline: str, cache: ObjectCache) -> str:
    """The name of `model`'s program: its IR text and constants' bytes hashed together. The
    constants are hashed in a thread (hashlib lets go of the GIL on large buffers) while the
    module prints."""
    from irforge.backends.cpu.memory import release_mapped_pages
    from irforge.backends.reference import constant_value
    from irforge.dialects.nn.constant import Constant

    arrays = [np.ascontiguousarray(constant_value(op, model.store)) for op in model.func.body.block.ops if isinstance(op, Constant)]
    # constants alternate between HASH_THREADS digests (ViT-B's 327 MiB took 0.4 s in one)
    digests = [hashlib.sha256() for _ in range(HASH_THREADS)]

    def digest(part: int) -> None:
        for array in arrays[part::HASH_THREADS]:
            digests[part].update(f"{array.dtype.str}{array.shape}".encode())
            digests[part].update(array.reshape(-1).view(np.uint8).data)

    workers = [Thread(target=digest, args=(part,), name="irforge-weight-hash") for part in range(HASH_THREADS)]
    for worker in workers:
        worker.start()
    text = _module_text(model.module)
    for worker in workers:
        worker.join()
    weights = "".join(d.hexdigest() for d in digests)
    release_mapped_pages(arrays)  # the hash read every page of the weight files: not needed again
    return "p" + cache.hash_of(text, weights, pipeline, codegen_version(), sources_version(), f"program{FORMAT}")


@functools.cache
def sources_version() -> str:
    """The state of irforge's whole source tree (path, size and modification time of every
    module) and of numpy and xDSL: a program depends on the passes, the dialects' shape
    inference and the constant folding too, not only on the code generator. Statting the
    ~300 files takes a few ms where hashing their text took 100."""
    import xdsl

    root = Path(irforge.__file__).parent
    digest = hashlib.sha256(f"{np.__version__}|{xdsl.__version__}".encode())
    for path in sorted(root.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(root).as_posix()}|{stat.st_size}|{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:16]


KEY_TEXT = True
"""The program key reads the module through `_key_text` (False: xDSL's printed module; CPU
time min of 5, session 11: BERT-base 0.037 -> 0.020 s, ResNet-50 0.025 -> 0.015 s)."""


def _module_text(module: ModuleOp) -> str:
    return _key_text(module) if KEY_TEXT else str(module)


def _key_text(module: ModuleOp) -> str:
    """Everything an operation holds, for every operation in `module`, in walk order: its
    name, operands (numbered by first appearance), result types, properties and attributes
    (sorted by name), successors and regions (block arguments' types, then the ops). Exact as
    the printed module is (each attribute through its own printer), but each distinct type
    is printed once: a model's ops repeat a handful of tensor types."""
    from xdsl.ir import Attribute, Block, Operation, Region, SSAValue, TypeAttribute

    parts: list[str] = []
    numbers: dict[SSAValue | Block, int] = {}
    printed: dict[Attribute, str] = {}

    def number(item: SSAValue | Block) -> str:
        return str(numbers.setdefault(item, len(numbers)))

    def text(attr: Attribute) -> str:
        if not isinstance(attr, TypeAttribute):  # only types are memoised: equal types print alike
            return str(attr)
        try:
            found = printed.get(attr)
        except TypeError:  # an unhashable type: printed each time
            return str(attr)
        if found is None:
            found = printed[attr] = str(attr)
        return found

    def region(body: Region) -> None:
        parts.append("{")
        for block in body.blocks:
            parts.append(f"^{number(block)}(" + ",".join(f"{number(a)}:{text(a.type)}" for a in block.args) + ")")
            for inner in block.ops:
                operation(inner)
        parts.append("}")

    def operation(op: Operation) -> None:
        parts.append(f"{op.name}(" + ",".join(number(v) for v in op.operands) + ")->("
                     + ",".join(f"{number(r)}:{text(r.type)}" for r in op.results) + ")")
        for kind, table in (("p", op.properties), ("a", op.attributes)):
            for key in sorted(table):
                parts.append(f"{kind}{key}={text(table[key])}")
        if op.successors:
            parts.append("s" + ",".join(number(b) for b in op.successors))
        for body in op.regions:
            region(body)
        parts.append(";")

    operation(module)
    return "\n".join(parts)


@dataclass
class Entry:
    """A cached program, ready for the executable (see `load`)."""

    program: Program
    arena_bytes: int
    unplanned_bytes: int
    constants: Region | None
    objects: list[str]
    """Object-cache names of the kernel modules, then the driver's."""


def _buffer_index(program: Program) -> dict[int, int]:
    used: dict[int, int] = {}
    for buf in [*(p for phase in program.phases for p in phase.args), *(b for _, b, _, _ in program.inputs), *(b for _, b, _, _ in program.outputs)]:
        used.setdefault(id(buf), len(used))
    return used


def saveable(program: Program) -> bool:
    """Whether `program` can be cached: its host steps, if any, all have recipes."""
    return all(getattr(step, "recipe", None) for step in program.host_steps)


def save(directory: Path, key: str, program: Program, arena_bytes: int, unplanned_bytes: int,
         constants: Region | None, objects: list[str]) -> None:
    """Write the entry for `program` (whose constants already lie in `constants`); one whose
    constants reach `BACKGROUND_BYTES` in a thread while the caller runs the model: the region
    stays mapped as long as the thread holds it. The compiled model's `close` (or its
    collection) waits for that thread (`wait_for`): a caller that removes the cache directory
    after closing the model never races the write."""
    assert saveable(program)
    index = _buffer_index(program)
    by_index = {i: b for b in program.buffers for i in [index.get(id(b))] if i is not None}
    by_index.update({index[id(b)]: b for _, b, _, _ in [*program.inputs, *program.outputs]})
    base = 0 if constants is None else constants.data.ctypes.data
    buffers = []
    for i in range(len(index)):
        buf = by_index[i]
        record: dict = {"nbytes": buf.nbytes, "kind": buf.kind, "first": buf.first, "last": buf.last, "offset": buf.offset}
        if buf.kind == "const":
            assert buf.array is not None and constants is not None
            record["at"] = buf.array.ctypes.data - base
            record["dtype"] = buf.array.dtype.str
            record["shape"] = list(buf.array.shape)
        if buf.note:
            record["note"] = buf.note
        buffers.append(record)
    skeleton = {
        "buffers": buffers,
        "phases": [[p.function, [index[id(b)] for b in p.args], p.tag, p.flops] for p in program.phases],
        "inputs": [[n, index[id(b)], list(s), np.dtype(d).str] for n, b, s, d in program.inputs],
        "outputs": [[n, index[id(b)], list(s), np.dtype(d).str] for n, b, s, d in program.outputs],
        "arena": arena_bytes,
        "unplanned": unplanned_bytes,
        "constants": 0 if constants is None else constants.nbytes,
        "objects": objects,
        "host_steps": [[step.symbol, step.recipe] for step in program.host_steps],
    }
    limit = max_cache_bytes()  # here: a bad $IRFORGE_CACHE_MAX_MB is the caller's one-line error

    def write() -> None:
        try:
            if constants is not None:
                path = directory / f"{key}.bin"
                write_atomic(path, lambda f: f.write(constants.data))
                # the record names the .bin it was written with (size and modification time,
                # `_read`): one changed in place since, or another process's of the same key
                # renamed over it before this record lands, is a miss, not other numbers
                skeleton["region_file"] = _file_identity(path)
            body = json.dumps(skeleton)
            text = json.dumps({"sha256": hashlib.sha256(body.encode()).hexdigest(), "program": body}).encode()
            write_atomic(directory / f"{key}.json", lambda f: f.write(text))
            trim(directory, limit)  # the folder grew by a program (and its objects): keep it under the cap
        except OSError:
            pass  # a full or read-only cache directory costs the next compile its time, nothing else
        finally:
            with _LOCK:
                _PENDING.pop(key, None)

    if constants is None or constants.nbytes < BACKGROUND_BYTES:
        write()  # milliseconds: nothing to overlap, and the entry is on disk when compile returns
        return
    # the files are written while the caller runs the model (ResNet-50: 128 MiB, 0.4 s; BERT
    # 414 MiB); a load of the same key in this process waits for them (`wait_for`)
    writer = Thread(target=write, name="irforge-program-save")
    with _LOCK:
        _PENDING[key] = writer
    writer.start()


BACKGROUND_BYTES = 16 << 20
"""An entry with this many bytes of constants or more is written in a thread (`save`)."""
_PENDING: dict[str, Thread] = {}
"""Entries being written, by key (see `save`)."""
_LOCK = Lock()


def wait_for_writes() -> float:
    """Return once every entry this process is writing is on disk; the seconds waited (a
    benchmark timing a cached compile right after the cold one: that compile's `load` would
    wait for its entry's write, which a later process never does)."""
    start = time.perf_counter()
    with _LOCK:
        writers = list(_PENDING.values())
    for writer in writers:
        writer.join()
    return time.perf_counter() - start


def wait_for(key: str) -> None:
    """Return once the entry `key` this process may be writing is on disk."""
    with _LOCK:
        writer = _PENDING.get(key)
    if writer is not None:
        writer.join()


OBJECT_NAME = re.compile(r"[ms][0-9a-f]{40}")
"""An object's name in the cache (`ObjectCache.key` / `spec_key`): nothing else is read."""


def _file_identity(path: Path) -> list[int]:
    """[size, modification time in ns] of `path`: what `load` compares (hashing BERT's 414 MiB
    region at every load would cost more than the rest of a cached compile)."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def _open_entry(path: Path) -> int:
    """A descriptor of the entry file `path` itself, never of what a symbolic link there names
    (OSError, ELOOP: a miss): irforge writes plain files only, and a link planted in the cache
    directory would have a load read a file outside it."""
    return os.open(path, os.O_RDONLY | os.O_NOFOLLOW)


def _read_record(path: Path) -> bytes:
    with os.fdopen(_open_entry(path), "rb") as f:
        return f.read()


def _read(path: Path, nbytes: int, identity: list[int]) -> Region | None:
    """The region's `nbytes` from `path` in fresh memory, or None when the file is not the
    one the record was written with (its size the region's, its size and modification time
    the recorded ones: changed, cut or replaced since) or is shorter than that (cut while
    read). Read into ordinary pages, then handed to khugepaged (`Region.huge_later`): huge
    pages at the first touch stalled a cached compile in compaction (ResNet-50 0.69 s
    against 0.26 s; the goal is <= 0.5 s)."""
    with os.fdopen(_open_entry(path), "rb") as f:
        st = os.fstat(f.fileno())
        if identity[0] != nbytes or [st.st_size, st.st_mtime_ns] != identity:
            return None
        region = Region(nbytes, huge_now=False)
        if f.readinto(region.data) != nbytes:
            return None
    region.huge_later()
    return region


def load(directory: Path, key: str, cache: ObjectCache) -> Entry | None:
    """The cached program `key`, or None (not cached, unreadable, or an object is missing)."""
    wait_for(key)
    try:
        outer = json.loads(_read_record(directory / f"{key}.json"))
        body = outer["program"]
        if hashlib.sha256(body.encode()).hexdigest() != outer["sha256"]:
            return None  # changed or cut since irforge wrote it
        skeleton = json.loads(body)
        if not all(isinstance(name, str) and OBJECT_NAME.fullmatch(name) for name in skeleton["objects"]):
            return None
        if any(cache.path(name) is None or not cache.path(name).is_file() for name in skeleton["objects"]):  # type: ignore[union-attr]
            return None
        constants = None
        if skeleton["constants"]:
            constants = _read(directory / f"{key}.bin", skeleton["constants"], skeleton["region_file"])
            if constants is None:
                return None  # changed, cut or replaced since the record was written
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    buffers = []
    for record in skeleton["buffers"]:
        array = None
        if record["kind"] == "const":
            assert constants is not None
            dtype = np.dtype(record["dtype"])
            size = int(np.prod(record["shape"], dtype=np.int64)) * dtype.itemsize
            array = constants.data[record["at"]:record["at"] + size].view(dtype).reshape(record["shape"])
        # (by keyword: Buffer gained fields before `note`, whose text positionally became a
        # Concat parent and left check words without their message on a hit; the planned
        # offsets already place a buffer stored inside another)
        buffers.append(Buffer(record["nbytes"], record["kind"], array, record["first"], record["last"], record["offset"],
                              note=record.get("note", "")))
    phases = [Phase(fn, [buffers[i] for i in args], tag, flops) for fn, args, tag, flops in skeleton["phases"]]

    def interface(items: list) -> list:
        return [(n, buffers[i], tuple(s), np.dtype(d)) for n, i, s, d in items]

    try:
        host_steps = [rebuild(symbol, recipe) for symbol, recipe in skeleton.get("host_steps", [])]
    except IrforgeError:  # a recipe this irforge no longer parses: compile afresh
        return None
    program = Program([], phases, buffers, interface(skeleton["inputs"]), interface(skeleton["outputs"]), host_steps)
    return Entry(program, skeleton["arena"], skeleton["unplanned"], constants, skeleton["objects"])
