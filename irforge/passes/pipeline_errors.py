"""A pass pipeline that does not parse, as one line.

xDSL reports a malformed pipeline with `ArgSpecParseError`, which derives from BaseException
(so `except Exception` misses it) and spans several lines with a caret; unknown pass names and
bad option values come as ValueError. Both become one `IrforgeError` naming the column.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.utils.exceptions import ArgSpecParseError

from irforge.errors import IrforgeError, quoted, shorten

PIPELINE_ERRORS = (ValueError, ArgSpecParseError)


def bad_pipeline(spec: str, error: BaseException, passes: Sequence[str]) -> IrforgeError:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    # ArgSpecParseError: header, "pass-pipeline:1:COL", the spec, a caret line, the message
    where = next((line for line in lines if line.startswith("pass-pipeline:")), None)
    message = lines[-1] if lines else type(error).__name__
    if where is not None:
        message = f"{message} at column {where.rsplit(':', 1)[-1]}"
    fix = "write passes as name{option=value} separated by commas, quoting values with '.', '/' or spaces: replace-subgraph{config=\"x.json\"}"
    if isinstance(error, ValueError):
        fix = f"passes are: {shorten(passes, 12)}"
    return IrforgeError(f"bad pass pipeline {quoted(spec)}: {message}", fix=fix, code="E701")
