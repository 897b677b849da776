"""User-facing errors.

Every problem a user can cause (bad input file, bad flag, unsupported op) is raised as
`IrforgeError`; the tools print it as one line, `irforge: error[E0xx]: what (where); fix`, and
exit with code 2. The code is stable and listed in docs/errors.md (the Model Optimizer FAQ's
role); codes are numbered by area:

    E0xx command line, files and paths     E5xx Kaldi importer
    E1xx ONNX importer                     E6xx IR XML / .mlir / weights reading
    E2xx Caffe importer                    E7xx passes, pipelines, extensions
    E3xx TensorFlow importer               E8xx backends (reference, CPU, OpenCL), ir-run
    E4xx MXNet importer                    E9xx custom layers, ir-extgen
"""

from __future__ import annotations

from collections.abc import Iterable


MAX_LENGTH = 300
"""Longest error line (before the `irforge: error[E...]: ` prefix); longer texts are cut."""


def quoted(name: object, limit: int = 80) -> str:
    """A name from the input as an error shows it: quoted and escaped like repr (a newline
    in a node name cannot split the line), cut to `limit` characters."""
    text = str(name)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return repr(text)


def shorten(items: Iterable[object], limit: int = 8) -> str:
    """`a, b, c`, or the first `limit` and `... and N more`."""
    listed = [str(i) for i in items]
    if len(listed) <= limit:
        return ", ".join(listed)
    return ", ".join(listed[:limit]) + f", ... and {len(listed) - limit} more"


def one_line(text: str) -> str:
    """Control characters (newlines, tabs, escapes) shown escaped instead of acted on."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class IrforgeError(Exception):
    """An error caused by the user's input, with a hint on how to fix it."""

    def __init__(self, what: str, *, where: str | None = None, fix: str | None = None, code: str | None = None):
        self.what = what
        self.where = where
        self.fix = fix
        self.code = code
        super().__init__(self.render())

    def render(self) -> str:
        """One line of about MAX_LENGTH characters at most: what (where); fix. The fix is
        kept whole up to 240 characters; a long `what` loses its middle (a long path, a
        list), so its start and its end (often the point) both stay."""
        where = f" ({_cut_middle(one_line(self.where), 100)})" if self.where else ""
        fix = f"; {_cut_end(one_line(self.fix), 240)}" if self.fix else ""
        what = one_line(self.what)
        room = max(120, MAX_LENGTH - len(where) - len(fix))
        return _cut_middle(what, room) + where + fix


def _cut_middle(text: str, limit: int) -> str:
    """`text` within `limit` characters, its middle elided: a where's path and its layer name,
    a what's start and its point, both stay."""
    if len(text) <= limit:
        return text
    half = (limit - 3) // 2
    return text[:half] + "..." + text[len(text) - (limit - 3 - half):]


def _cut_end(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class NotConstantError(IrforgeError):
    """A value that conversion needs as a constant (a Reshape target, Resize scales) is not one.

    `tensor` names the framework tensor, so a caller can freeze that input to a value
    (as mo.py's --freeze_placeholder_with_value does) and convert again.
    """

    def __init__(self, what: str, tensor: str, *, where: str | None = None, fix: str | None = None, code: str | None = None):
        self.tensor = tensor
        super().__init__(what, where=where, fix=fix, code=code)
