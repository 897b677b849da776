"""Progress on long work, for the tools: a live tqdm display on stderr, only on a terminal.

    [ir-convert] import: 12.3 s                    a stage of unknown length: elapsed time
    [ir-convert] passes:  40%|####  | 4/10 [fuse-linear-ops]
    [ir-run] compile cpu:  71%|####### | 120/169

Nothing shows for work that ends within `DELAY` seconds, nor when stderr is not a terminal
(logs, pipes, tests), nor with `--no-progress` or `--log_level ERROR|CRITICAL` given. The
stage timing lines (`[ir-convert] import  24.44 s`) are printed when the whole run takes over
a second, by `report()` once the run has succeeded (a run that fails shows its one-line error
alone, however long it took), or as each stage ends at `--log_level INFO`.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any, TypeVar

T = TypeVar("T")

DELAY = 1.0
"""Seconds of work before a display appears: short runs stay quiet."""
TICK = 0.25


def wanted(no_progress: bool, log_level: str | None) -> bool:
    """Whether the flags allow a display: not with --no-progress, nor with an explicit quiet
    --log_level (the default, None, allows it)."""
    return not no_progress and log_level not in ("ERROR", "CRITICAL")


def _have_tqdm() -> bool:
    """tqdm is a dependency; an environment without it (an old venv) runs without the display."""
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


class Progress:
    """Live displays and stage timings of one tool run."""

    def __init__(self, tool: str, verbose: bool = False, enabled: bool = True, stream: IO[str] | None = None,
                 timings: bool = True) -> None:
        self.tool = tool
        self.timings = timings
        self.verbose = verbose
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.live = enabled and callable(isatty) and bool(isatty()) and _have_tqdm()
        self.start = time.perf_counter()
        self.pending: list[str] = []

    def stage(self, name: str, body: Callable[[], T]) -> T:
        """Run `body` under an elapsed-time display; then its timing line (see the module doc)."""
        return self.stage_steps(name, None, lambda step: body())

    def stage_steps(self, name: str, total: int | None, body: Callable[[Callable[[str], None]], T]) -> T:
        """`stage` for work of `total` steps: `body` calls the step function it is given with
        each step's name as the step starts (the bar counts and names them)."""
        began = time.perf_counter()
        with self._display(name, total) as display:
            result = body(display.step)
        now = time.perf_counter()
        if self.timings:
            line = f"[{self.tool}] {name:14} {now - began:7.2f} s"
            if self.verbose:
                print(line, file=self.stream)
            else:
                self.pending.append(line)
        return result

    def report(self) -> None:
        """Print the held stage timings if the run took over a second (call once it succeeded)."""
        if self.pending and time.perf_counter() - self.start > 1.0:
            print("\n".join(self.pending), file=self.stream)
        self.pending = []

    def track(self, items: Iterable[T], name: str, total: int | None = None, label: Callable[[T], str] | None = None) -> Iterator[T]:
        """Yield `items` while a bar counts them (`label` names the one in progress)."""
        items = list(items) if total is None else items
        count = total if total is not None else len(items)  # type: ignore[arg-type]
        with self._display(name, count) as bar:
            for item in items:
                if label is not None:
                    bar.label(label(item))
                yield item
                bar.advance()

    @contextmanager
    def _display(self, name: str, total: int | None) -> Iterator[_Display]:
        display = _Display(f"[{self.tool}] {name}", total, self.stream if self.live else None)
        try:
            yield display
        finally:
            display.close()


class _Display:
    """A tqdm bar created only once the work has taken DELAY seconds, refreshed by a
    background thread so that the elapsed time moves while one long step runs."""

    def __init__(self, desc: str, total: int | None, stream: IO[str] | None) -> None:
        self.desc, self.total, self.stream = desc, total, stream
        self.done, self.current = 0, ""
        self.bar: Any = None
        self.began = time.perf_counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if stream is not None:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()

    def label(self, text: str) -> None:
        self.current = text

    def advance(self) -> None:
        self.done += 1

    def step(self, text: str) -> None:
        """A new step starts: the one before it is done."""
        if self.current:
            self.done += 1
        self.current = text

    def _tick(self) -> None:
        while not self._stop.wait(TICK):
            if time.perf_counter() - self.began >= DELAY:
                with self._lock:
                    self._draw()

    def _draw(self) -> None:
        if self.bar is None:
            from tqdm import tqdm

            fmt = "{desc}: {elapsed}" if self.total is None else "{desc}: {percentage:3.0f}%|{bar:20}| {n_fmt}/{total_fmt} {elapsed}{postfix}"
            self.bar = tqdm(total=self.total, desc=self.desc, file=self.stream, leave=False,
                            bar_format=fmt, dynamic_ncols=True, mininterval=0)
        if self.total is not None:
            self.bar.n = self.done
            self.bar.set_postfix_str(self.current, refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self.bar is not None:
                self.bar.close()
