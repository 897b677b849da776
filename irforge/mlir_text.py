"""Checks on textual IR before xDSL's lexer sees it.

xDSL lexes a string literal with a regular expression that backtracks exponentially when the
closing quote is missing (24 characters take a second, 32 over a minute). The scan here finds
every string literal in linear time (comments skipped, one character per step, possessive
repetition so nothing is retried) and refuses the text with a one-line error pointing at the
first string that is not closed on its line or holds an escape MLIR does not have. Text that
is not UTF-8 is refused here too.
"""

from __future__ import annotations

import re

from irforge.errors import IrforgeError

# a comment, or a string literal as MLIR allows it; the closing quote is optional so that an
# unterminated string matches (group "end" empty) instead of sending the scan backtracking
_TOKEN = re.compile(r'//[^\n]*|"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+(?P<end>"?)')


def check_mlir_text(text: str | bytes, source: str) -> str:
    """`text` as a str, if every string literal in it is well formed; else an IrforgeError."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise IrforgeError(
                f"{source!r} is not UTF-8 text (byte {e.start})",
                fix="give a textual .mlir file in UTF-8",
                code="E601",
            ) from None
    for match in _TOKEN.finditer(text):
        if match.group(0).startswith('"') and not match.group("end"):
            line = text.count("\n", 0, match.start()) + 1
            column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
            raise IrforgeError(
                f"unterminated string literal or bad escape in it",
                where=f"{source}:{line}:{column}",
                fix='close the string with " on the same line; escapes are \\n \\t \\\\ \\" and two hex digits',
                code="E602",
            )
    return text
