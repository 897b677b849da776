"""The on-disk cache of compiled kernel objects (llvmlite's MCJIT object cache).

A kernel's module is named by a hash of its specification (the key its lowering generates it
for: op, shapes, attributes, fused epilogue), the code generator's version (a hash of the CPU
backend's sources), the settings of the moment (`knob_settings`: module-level knobs such as
`gemm.B_PREFETCH_NEXT_PANEL` change the code without changing a spec), the host CPU name and
features, and the irforge version; on a hit the
kernel's IR is never built, and the object file is loaded as is. Other modules (the driver)
are named by a hash of their IR text. Files are written atomically, so concurrent compiles
never see partial objects, and each holds a SHA-256 of its object: a file truncated or
changed on disk afterwards (a full disk, another tool, a bad sector) is a miss and removed;
LLVM's loader aborted the process on it ("LLVM ERROR: section header table goes past the end
of the file").
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import llvmlite.binding as llvm

import irforge
from irforge.errors import IrforgeError

_BACKEND = Path(__file__).parent
MAGIC = b"irforge-object-1\n"
"""The first bytes of an object file in the cache, then the object's SHA-256, then the object."""


@functools.cache
def codegen_version() -> str:
    """A hash of the CPU backend's sources: any change to how kernels are generated."""
    digest = hashlib.sha256()
    for path in sorted(_BACKEND.rglob("*.py")):
        digest.update(path.relative_to(_BACKEND).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


KNOB_PACKAGES = ("irforge.backends.cpu", "irforge.passes")
"""The packages whose module-level settings name every kernel and program (`knob_settings`)."""


@functools.cache
def _knob_modules() -> tuple[str, ...]:
    """Every module of `KNOB_PACKAGES` (by its file: `codegen` is a namespace package, which
    pkgutil does not walk), imported once (~0.1 s where a compile had not loaded them all):
    the settings hashed must not depend on which modules a process happened to import, or two
    processes would miss each other's objects."""
    root = Path(irforge.__file__).parent.parent
    names = []
    for package in KNOB_PACKAGES:
        for path in sorted((root / package.replace(".", "/")).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            try:
                importlib.import_module(name)
            except ImportError:  # an optional dependency missing: its module cannot run either
                continue
            names.append(name)
    return tuple(names)


def _plain(value: object) -> bool:
    if isinstance(value, (bool, int, float, str, bytes, type(None))):
        return True
    if isinstance(value, dict):  # (`llvm_worker.OPT_LEVELS`, `linear.ROW_BLOCKS`)
        return all(_plain(k) and _plain(v) for k, v in value.items())
    return isinstance(value, (tuple, frozenset)) and all(_plain(v) for v in value)


def _canonical(value: object) -> str:
    """`repr` with sets and dicts in sorted order: a frozenset of strings iterates in an order
    that changes with each process's hash seed, and the key must not."""
    if isinstance(value, dict):
        return "{" + ",".join(sorted(f"{_canonical(k)}:{_canonical(v)}" for k, v in value.items())) + "}"
    if isinstance(value, frozenset):
        return "frozenset(" + ",".join(sorted(_canonical(v) for v in value)) + ")"
    if isinstance(value, tuple):
        return "(" + ",".join(_canonical(v) for v in value) + ",)"
    return repr(value)


def knob_settings() -> str:
    """A hash of the module-level settings of the CPU backend and the passes (public UPPER_CASE
    names bound to plain values: bools, numbers, strings, tuples and dicts of them; a private
    `_NAME` may be state a module keeps), read at each compile
    (~3 ms). A knob that changes generated code or the lowering without changing a kernel's
    spec (a test's monkeypatch, a bench's A/B) then misses the other setting's objects and
    programs instead of loading them."""
    digest = hashlib.sha256()
    for name in _knob_modules():
        for key, value in sorted(vars(sys.modules[name]).items()):
            if key.isupper() and not key.startswith("_") and _plain(value):
                digest.update(f"{name}.{key}={_canonical(value)}\0".encode())
    return digest.hexdigest()[:16]


def default_cache_dir() -> Path:
    """$IRFORGE_CACHE_DIR, else $XDG_CACHE_HOME/irforge/cpu (~/.cache/irforge/cpu)."""
    if os.environ.get("IRFORGE_CACHE_DIR"):
        return Path(os.environ["IRFORGE_CACHE_DIR"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "irforge" / "cpu"


def write_atomic(path: Path, write) -> None:  # type: ignore[no-untyped-def]
    """Write `path` through `write(file)` into a temporary file renamed over it: a reader never
    sees part of it; the temporary file is removed if the write fails."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


DEFAULT_MAX_MB = 4096
"""The cache folder's size cap unless $IRFORGE_CACHE_MAX_MB says otherwise (ccache's order of
size: a few GB; one BERT-base program entry alone holds 414 MiB of packed weights)."""


def max_cache_bytes() -> int | None:
    """$IRFORGE_CACHE_MAX_MB (0: no cap) in bytes, else DEFAULT_MAX_MB's."""
    text = os.environ.get("IRFORGE_CACHE_MAX_MB", "").strip()
    if not text:
        return DEFAULT_MAX_MB << 20
    try:
        mb = int(text)
    except ValueError:
        mb = -1
    if mb < 0:
        raise IrforgeError(f"IRFORGE_CACHE_MAX_MB='{text}' is not a size in MB (a whole number, 0 for no cap)",
                           fix="set IRFORGE_CACHE_MAX_MB to a whole number of MB, or unset it", code="E148")
    return None if mb == 0 else mb << 20


CACHE_FILE = re.compile(r"\.?[msp][0-9a-f]{16,64}\.(o|json|bin)(\.[A-Za-z0-9_]+)?")
"""irforge's cache file names: objects [ms]<hex>.o, programs p<hex>.json / .bin, and the
temporary files `write_atomic` leaves only when the process dies mid-write."""


def trim(directory: Path, limit: int | None) -> int:
    """Remove the least recently used cache files (atime or mtime, the later) until the
    folder's cache files take at most 3/4 of `limit`, when they take more than `limit`;
    returns the bytes removed. Nothing else than irforge's own names is touched (objects,
    program records and constants, their temporary files); a file another process removes or
    maps meanwhile is skipped or stays readable through its mapping, and a program whose
    object went is a miss (`program_cache.load`)."""
    if limit is None:
        return 0
    files = []
    now = time.time()
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if not CACHE_FILE.fullmatch(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if entry.name.startswith(".") and now - st.st_mtime < 3600:
                    continue  # a temporary file some compile may be writing now
                if entry.is_file(follow_symlinks=False):
                    files.append((max(st.st_atime, st.st_mtime), st.st_size, entry.path))
    except OSError:
        return 0
    total = sum(size for _, size, _ in files)
    if total <= limit:
        return 0
    removed = 0
    for _, size, path in sorted(files):
        if total - removed <= limit * 3 // 4:
            break
        try:
            os.unlink(path)
            removed += size
        except OSError:
            pass
    return removed


class ObjectCache:
    """Objects by module name; counts hits and misses of the current compile."""

    def __init__(self, directory: Path | None, target: str) -> None:
        self.directory = directory
        self.target = target
        self.settings = knob_settings()
        self.hits = 0
        self.misses = 0
        self.loaded: dict[str, bytes] = {}
        """Objects read for modules added without IR, kept until the engine asks for them."""
        if directory is not None:
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError as error:  # a file (/dev/null), a path under a file, a symlink loop
                raise IrforgeError(f"the CPU backend's cache directory '{directory}' cannot be made ({type(error).__name__}: "
                                   f"{error.strerror or error})", fix="set IRFORGE_CACHE_DIR to a folder irforge may write, or unset it",
                                   code="E127") from None
            if not directory.is_dir():
                raise IrforgeError(f"the CPU backend's cache directory '{directory}' is not a folder",
                                   fix="set IRFORGE_CACHE_DIR to a folder irforge may write, or unset it", code="E127")

    def key(self, ir_text: str) -> str:
        return "m" + self.hash_of(ir_text)

    def spec_key(self, spec: str) -> str:
        """The name of a kernel's module from its specification (see the module docstring)."""
        return "s" + self.hash_of(spec, codegen_version())

    def hash_of(self, *parts: str) -> str:
        """A hash of `parts`, the settings, the target, the irforge version and the file format (MAGIC): an
        irforge from before the framed format, sharing the folder, never finds a framed file
        under its key and hands it to LLVM's loader raw (which aborts the process)."""
        digest = hashlib.sha256()
        for part in (*parts, self.settings, self.target, irforge.__version__, MAGIC.decode()):
            digest.update(part.encode())
            digest.update(b"\0")
        return digest.hexdigest()[:40]

    def path(self, key: str) -> Path | None:
        return None if self.directory is None else self.directory / f"{key}.o"

    def lookup(self, key: str) -> bytes | None:
        path = self.path(key)
        data = None if path is None else read_object(path)
        if data is None:
            self.misses += 1
            return None
        self.hits += 1
        return data

    def notify(self, module: llvm.ModuleRef, data: bytes) -> None:
        if module.name[:1] in ("m", "s"):  # not the engine's empty first module
            self.store(module.name, data)

    def store(self, key: str, data: bytes) -> None:
        """Write the object `key` (atomically: concurrent compiles never see part of one)."""
        path = self.path(key)
        if path is None or path.exists():
            return
        try:
            write_atomic(path, lambda f: f.write(MAGIC + hashlib.sha256(data).digest() + data))
        except OSError:
            pass  # a full or read-only cache directory costs the next compile its time, nothing else

    def getbuffer(self, module: llvm.ModuleRef) -> bytes | None:
        if module.name in self.loaded:
            return self.loaded.pop(module.name)
        path = self.path(module.name)
        return None if path is None else read_object(path)


def read_object(path: Path) -> bytes | None:
    """The object in cache file `path`, or None: missing, unreadable, or not as written (its
    SHA-256 differs: truncated or changed since; then removed, so the next store rewrites it)."""
    try:
        if not path.is_file():
            return None
        framed = path.read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + 32
    data = framed[head:]
    if framed[:len(MAGIC)] == MAGIC and framed[len(MAGIC):head] == hashlib.sha256(data).digest():
        return data
    try:
        path.unlink()
    except OSError:
        pass
    return None
