"""The on-disk cache of compiled kernel objects (llvmlite's MCJIT object cache).

A kernel's module is named by a hash of its specification (the key its lowering generates it
for: op, shapes, attributes, fused epilogue), the code generator's version (a hash of the CPU
backend's sources), the host CPU name and features, and the irforge version; on a hit the
kernel's IR is never built, and the object file is loaded as is. Other modules (the driver)
are named by a hash of their IR text. Files are written atomically, so concurrent compiles
never see partial objects.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path

import llvmlite.binding as llvm

import irforge

_BACKEND = Path(__file__).parent


@functools.cache
def codegen_version() -> str:
    """A hash of the CPU backend's sources: any change to how kernels are generated."""
    digest = hashlib.sha256()
    for path in sorted(_BACKEND.rglob("*.py")):
        digest.update(path.relative_to(_BACKEND).as_posix().encode())
        digest.update(path.read_bytes())
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


class ObjectCache:
    """Objects by module name; counts hits and misses of the current compile."""

    def __init__(self, directory: Path | None, target: str) -> None:
        self.directory = directory
        self.target = target
        self.hits = 0
        self.misses = 0
        self.loaded: dict[str, bytes] = {}
        """Objects read for modules added without IR, kept until the engine asks for them."""
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)

    def key(self, ir_text: str) -> str:
        return "m" + self.hash_of(ir_text)

    def spec_key(self, spec: str) -> str:
        """The name of a kernel's module from its specification (see the module docstring)."""
        return "s" + self.hash_of(spec, codegen_version())

    def hash_of(self, *parts: str) -> str:
        """A hash of `parts`, the target and the irforge version."""
        digest = hashlib.sha256()
        for part in (*parts, self.target, irforge.__version__):
            digest.update(part.encode())
            digest.update(b"\0")
        return digest.hexdigest()[:40]

    def path(self, key: str) -> Path | None:
        return None if self.directory is None else self.directory / f"{key}.o"

    def lookup(self, key: str) -> bytes | None:
        path = self.path(key)
        if path is None or not path.is_file():
            self.misses += 1
            return None
        self.hits += 1
        return path.read_bytes()

    def notify(self, module: llvm.ModuleRef, data: bytes) -> None:
        if module.name[:1] in ("m", "s"):  # not the engine's empty first module
            self.store(module.name, data)

    def store(self, key: str, data: bytes) -> None:
        """Write the object `key` (atomically: concurrent compiles never see part of one)."""
        path = self.path(key)
        if path is None or path.exists():
            return
        try:
            write_atomic(path, lambda f: f.write(data))
        except OSError:
            pass  # a full or read-only cache directory costs the next compile its time, nothing else

    def getbuffer(self, module: llvm.ModuleRef) -> bytes | None:
        if module.name in self.loaded:
            return self.loaded.pop(module.name)
        path = self.path(module.name)
        if path is None or not path.is_file():
            return None
        return path.read_bytes()
