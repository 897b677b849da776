"""Where the tools write, and how: checked paths and outputs that appear all at once.

A model is written as a pair of files (NAME.xml + NAME.bin, NAME.mlir + NAME.weights). Each
part goes to a temporary file beside its target first; only when every part is complete are
they renamed into place, and if a rename fails the parts already renamed are removed, so a
failed run leaves nothing behind. Temporary files still pending when the process gets
SIGINT or SIGTERM are removed by the handler `install_signal_cleanup` installs.

The checks here refuse names that would put outputs outside `--output_dir` (a `--model_name`
with a path separator or `..`), targets that cannot be written (a folder, a missing
parent), targets that are no regular file (a device or a pipe: as root, the rename would put
a file in place of /dev/null) and targets that are one of the run's own inputs (the files a
tool names with `protect_inputs`: `ir-run m.onnx --output m.onnx` would replace the model),
with one-line errors instead of OSError tracebacks.
"""

from __future__ import annotations

import os
import signal
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import IO

from irforge.errors import IrforgeError, one_line

_PENDING: set[str] = set()
"""Temporary files written but not yet renamed into place (removed on a signal)."""

_INPUTS: set[tuple[int, int]] = set()
"""(device, inode) of the files the running command reads: no output may replace one."""

_IN_COMMAND = [False]
"""Whether a command (ir-convert, ir-run, ir-opt) is running: library calls protect nothing."""

_COMPANIONS = {".xml": ".bin", ".mlir": ".weights"}
"""The weights file read beside a model file of that suffix."""


def protect_inputs(*paths: str | os.PathLike[str] | None) -> None:
    """Remember the files a command reads (and the weights file beside an .xml / .mlir), so
    that `check_target` refuses to write over one of them (E012); only while a command runs."""
    if not _IN_COMMAND[0]:
        return
    for path in paths:
        if not path:
            continue
        candidates = [Path(path)]
        if candidates[0].suffix.lower() in _COMPANIONS:
            candidates.append(candidates[0].with_suffix(_COMPANIONS[candidates[0].suffix.lower()]))
        for candidate in candidates:
            try:
                info = candidate.stat()
            except (OSError, ValueError):  # missing, unreadable, or a name with NUL: nothing to protect
                continue
            if stat.S_ISREG(info.st_mode):
                _INPUTS.add((info.st_dev, info.st_ino))


def command_started() -> None:
    """A command starts (tools run in process one after another, as the fuzz campaign does)."""
    _INPUTS.clear()
    _IN_COMMAND[0] = True


def command_ended() -> None:
    _INPUTS.clear()
    _IN_COMMAND[0] = False


def check_model_name(name: str) -> str:
    """A base name for output files: no folder part, nothing that leaves --output_dir."""
    bad = (
        not name
        or name in (".", "..")
        or "/" in name
        or "\\" in name
        or "\0" in name
        or os.sep in name
        or (os.altsep is not None and os.altsep in name)
    )
    if bad:
        raise IrforgeError(
            f"bad --model_name {name!r}: it must be a plain file name",
            fix="give a name without '/', '\\' or '..' and put the folder into --output_dir",
            code="E010",
        )
    return name


def prepare_output_dir(path: str | os.PathLike[str]) -> Path:
    """Create --output_dir if needed; refuse a path that is a file or cannot be created."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise IrforgeError(
            f"--output_dir {str(out)!r} is not a folder",
            fix="give a folder (it is created if missing)",
            code="E011",
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise IrforgeError(
            f"cannot create --output_dir {str(out)!r} ({e.strerror or type(e).__name__})",
            fix="give a folder you can write to",
            code="E011",
        ) from None
    return out


def check_target(path: str | os.PathLike[str]) -> Path:
    """An output file path whose folder exists and which is not itself a folder."""
    target = Path(path)
    parent = target.parent
    try:
        target.is_dir()
        info = os.lstat(target) if os.path.lexists(target) else None
    except (OSError, ValueError) as e:  # a name longer than the file system takes, or with a NUL
        raise IrforgeError(
            f"cannot write {str(target)!r} ({getattr(e, 'strerror', None) or one_line(str(e))})",
            fix="give a shorter name" if isinstance(e, OSError) else "give a plain file name",
            code="E012",
        ) from None
    if info is not None and not stat.S_ISLNK(info.st_mode) and not stat.S_ISDIR(info.st_mode):
        # a symbolic link itself is replaced by the rename, never the file it points to
        if not stat.S_ISREG(info.st_mode):
            raise IrforgeError(
                f"cannot write {str(target)!r}: it is a device, pipe or socket, not a regular file",
                fix="give the path of a file to create (outputs replace the file whole)",
                code="E012",
            )
        if (info.st_dev, info.st_ino) in _INPUTS:
            raise IrforgeError(
                f"cannot write {str(target)!r}: it is an input of this command (it would replace the model or weights read)",
                fix="write the output to another file name or folder",
                code="E012",
            )
    if not parent.is_dir():
        raise IrforgeError(
            f"cannot write {str(target)!r}: folder {str(parent)!r} does not exist",
            fix="create the folder first or write elsewhere",
            code="E012",
        )
    if target.is_dir():
        raise IrforgeError(
            f"cannot write {str(target)!r}: it is a folder",
            fix="give a file name, or remove the folder",
            code="E012",
        )
    return target


def _temp_beside(target: Path) -> str:
    """A temporary file in the target's folder (so os.replace is atomic), with the
    permissions a plain open() would give (mkstemp makes it private)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as e:
        raise IrforgeError(
            f"cannot write in {str(target.parent)!r} ({e.strerror or type(e).__name__})",
            fix="give a folder you can write to",
            code="E012",
        ) from None
    _PENDING.add(tmp)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    return tmp


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
    _PENDING.discard(path)


Writer = Callable[[IO[bytes]], None]


def write_files(parts: list[tuple[str | os.PathLike[str], Writer]]) -> None:
    """Write every (target, writer) part, all or none.

    Each writer gets a binary file opened on a temporary file beside its target; the
    temporary files are renamed into place only when all writers have finished. A failure
    at any point (also in a rename) removes the temporaries and the targets renamed so far.
    """
    targets = [check_target(target) for target, _ in parts]
    temps: list[str] = []
    placed: list[Path] = []
    try:
        for target, (_, writer) in zip(targets, parts):
            tmp = _temp_beside(target)
            temps.append(tmp)
            with open(tmp, "wb") as f:
                writer(f)
        for target, tmp in zip(targets, temps):
            os.replace(tmp, target)
            _PENDING.discard(tmp)
            placed.append(target)
    except BaseException as e:
        for tmp in temps:
            _remove(tmp)
        for target in placed:
            _remove(str(target))
        if isinstance(e, OSError):
            raise IrforgeError(
                f"cannot write {str(targets[len(placed)])!r} ({e.strerror or str(e) or type(e).__name__})",
                fix="check that the output folder is writable and has space",
                code="E012",
            ) from None
        raise


def write_text_file(target: str | os.PathLike[str], text: str) -> None:
    """One text file, atomically."""
    data = text.encode("utf-8")
    write_files([(target, lambda f: f.write(data))])


def _cleanup_and_reraise(signum: int, frame: FrameType | None) -> None:
    for tmp in list(_PENDING):
        _remove(tmp)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def install_signal_cleanup() -> None:
    """On SIGINT/SIGTERM remove pending temporary files, then end as the signal would."""
    if sys.platform == "win32":
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(signum, _cleanup_and_reraise)
        except ValueError:  # not the main thread (e.g. called from a library user's worker)
            return

