"""What every irforge command shares: one-line errors with exit code 2, never a traceback."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import NoReturn

from irforge.errors import IrforgeError, one_line
from irforge.output_files import command_ended, command_started, install_signal_cleanup

EXIT_USAGE = 2


def fail(message: str, code: str | None = None) -> NoReturn:
    label = f"error[{code}]" if code else "error"
    print(f"irforge: {label}: {message}", file=sys.stderr)
    sys.exit(EXIT_USAGE)


def _argparse_error(self: argparse.ArgumentParser, message: str) -> NoReturn:
    fail(f"{self.prog}: {one_line(message)}; see {self.prog} --help", code="E031")


def exit_on_error(body: Callable[[], None]) -> None:
    """Run a command body; user errors become `irforge: error: ...` and exit code 2.

    Command-line mistakes too: argparse's two-line usage error is replaced by one line
    (patched process-wide, as each tool is its own process).
    """
    argparse.ArgumentParser.error = _argparse_error  # type: ignore[method-assign]
    install_signal_cleanup()
    command_started()
    try:
        body()
    except IrforgeError as e:
        fail(e.render(), e.code)
    except KeyboardInterrupt:
        fail("interrupted", code="E002")
    except MemoryError as e:  # the input asks for more memory than there is: not a bug
        fail(f"out of memory ({str(e)[:120]}); use smaller shapes (--input_shape, --batch) or a bigger machine", code="E004")
    except RecursionError:  # an input nested past Python's stack (a prototxt, .mlir, XML)
        fail("the input is nested too deeply to read; flatten it or check that the file is not corrupt",
             code="E005")
    except BrokenPipeError:
        sys.exit(0)
    except SystemExit as e:
        if exit_is_ours(e):
            raise
        # an extension's pass, extractor or kernel ended the process: not a successful run
        fail(f"an extension or library called sys.exit({e.code!r}) during the run; "
             "extensions must raise irforge.errors.IrforgeError instead", code="E711")
    except Exception as e:  # a bug in irforge, not in the input: say so in one line
        if os.environ.get("IRFORGE_TRACEBACK"):
            raise
        print(
            f"irforge: internal error: {type(e).__name__}: {one_line(str(e))[:200]}; this is a bug in irforge, "
            "rerun with IRFORGE_TRACEBACK=1 and report the traceback",
            file=sys.stderr,
        )
        sys.exit(1)
    except BaseException as e:  # GeneratorExit aside, only user code raises these (xDSL's
        # ArgSpecParseError is handled where pipelines are parsed)
        if os.environ.get("IRFORGE_TRACEBACK"):
            raise
        fail(f"an extension raised {type(e).__name__}: {one_line(str(e))[:120]}; "
             "extensions must raise irforge.errors.IrforgeError or an Exception", code="E712")
    finally:  # a library call after the command (tests, the fuzz campaign) may write anywhere
        command_ended()


def exit_is_ours(e: SystemExit) -> bool:
    """Whether sys.exit came from argparse (--help, usage errors), xDSL's own option handling
    or `fail` here, rather than from an extension's code."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return True
    filename = tb.tb_frame.f_code.co_filename
    return filename in (__file__, argparse.__file__) or f"{os.sep}xdsl{os.sep}" in filename
