"""What every irforge command shares: one-line errors with exit code 2, never a traceback."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import NoReturn

from irforge.errors import IrforgeError
from irforge.output_files import install_signal_cleanup

EXIT_USAGE = 2


def fail(message: str, code: str | None = None) -> NoReturn:
    label = f"error[{code}]" if code else "error"
    print(f"irforge: {label}: {message}", file=sys.stderr)
    sys.exit(EXIT_USAGE)


def _argparse_error(self: argparse.ArgumentParser, message: str) -> NoReturn:
    fail(f"{self.prog}: {message}; see {self.prog} --help")


def exit_on_error(body: Callable[[], None]) -> None:
    """Run a command body; user errors become `irforge: error: ...` and exit code 2.

    Command-line mistakes too: argparse's two-line usage error is replaced by one line
    (patched process-wide, as each tool is its own process).
    """
    argparse.ArgumentParser.error = _argparse_error  # type: ignore[method-assign]
    install_signal_cleanup()
    try:
        body()
    except IrforgeError as e:
        fail(e.render(), e.code)
    except KeyboardInterrupt:
        fail("interrupted", "E002")
    except MemoryError as e:  # the input asks for more memory than there is: not a bug
        fail(f"out of memory ({str(e)[:120]}); use smaller shapes (--input_shape, --batch) or a bigger machine", "E003")
    except BrokenPipeError:
        sys.exit(0)
    except Exception as e:  # a bug in irforge, not in the input: say so in one line
        if os.environ.get("IRFORGE_TRACEBACK"):
            raise
        print(
            f"irforge: internal error: {type(e).__name__}: {e}; this is a bug in irforge, "
            "rerun with IRFORGE_TRACEBACK=1 and report the traceback",
            file=sys.stderr,
        )
        sys.exit(1)
