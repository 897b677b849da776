"""The on-disk cache of compiled kernel objects (llvmlite's MCJIT object cache).

Each LLVM module is named by a hash of its IR text, the host CPU name and features, and the
irforge version; the IR text itself is a function of the op, its shapes, attributes and
fused epilogue. On a hit the object file is loaded as is: no optimisation, no code
generation. Files are written atomically, so concurrent compiles never see partial objects.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import llvmlite.binding as llvm

import irforge


def default_cache_dir() -> Path:
    """$IRFORGE_CACHE_DIR, else $XDG_CACHE_HOME/irforge/cpu (~/.cache/irforge/cpu)."""
    if os.environ.get("IRFORGE_CACHE_DIR"):
        return Path(os.environ["IRFORGE_CACHE_DIR"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "irforge" / "cpu"


class ObjectCache:
    """Objects by module name; counts hits and misses of the current compile."""

    def __init__(self, directory: Path | None, target: str) -> None:
        self.directory = directory
        self.target = target
        self.hits = 0
        self.misses = 0
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)

    def key(self, ir_text: str) -> str:
        digest = hashlib.sha256()
        for part in (ir_text, self.target, irforge.__version__):
            digest.update(part.encode())
            digest.update(b"\0")
        return "m" + digest.hexdigest()[:40]

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
        path = self.path(module.name)
        if path is None or path.exists():
            return
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)

    def getbuffer(self, module: llvm.ModuleRef) -> bytes | None:
        path = self.path(module.name)
        if path is None or not path.is_file():
            return None
        return path.read_bytes()
