"""The live progress display: tqdm on a terminal's stderr, silent elsewhere or when asked."""

import io
import re
import time

import onnx
import pytest

import irforge.tools.progress as progress
from irforge.testing.onnx_models import resnet
from irforge.tools.ir_convert import convert

pytest.importorskip("tqdm")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch):
    """A terminal as stderr; tests call it in their body (pytest's capture replaces
    sys.stderr again after the fixtures' setup)."""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "TICK", 0.01)

    def install() -> Terminal:
        stream = Terminal()
        monkeypatch.setattr("sys.stderr", stream)
        return stream

    return install


@pytest.fixture(scope="module")
def onnx_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "net.onnx"
    onnx.save_model(resnet(blocks=(1,), width=8, size=16), str(path))
    return path


def slow_steps(step) -> None:  # type: ignore[no-untyped-def]
    for name in ("first", "second"):
        step(name)
        time.sleep(0.1)


def test_bar_names_steps_on_a_terminal_only(terminal):
    terminal = terminal()
    progress.Progress("tool").stage_steps("passes", 2, slow_steps)
    shown = terminal.getvalue()
    assert "[tool] passes:" in shown and "1/2" in shown and "second" in shown
    quiet = io.StringIO()  # not a terminal: timing line only, no bar
    progress.Progress("tool", stream=quiet).stage_steps("passes", 2, slow_steps)
    assert "passes:" not in quiet.getvalue()


def test_ir_convert_shows_progress_unless_silenced(terminal, tmp_path, onnx_path, capsys, monkeypatch):
    import irforge.tools.ir_convert as ir_convert

    imported = ir_convert.import_model

    def slow_import(*args):  # type: ignore[no-untyped-def]  # longer than the display's first tick
        time.sleep(0.1)
        return imported(*args)

    monkeypatch.setattr(ir_convert, "import_model", slow_import)
    terminal = terminal()
    convert([str(onnx_path), "-o", str(tmp_path)])
    assert "[ir-convert] import:" in terminal.getvalue()  # the elapsed-time display of the import stage
    for quiet in (["--no-progress"], ["--log_level", "ERROR"]):
        terminal.seek(0)
        terminal.truncate()
        convert([str(onnx_path), "-o", str(tmp_path), *quiet])
        assert "%|" not in terminal.getvalue() and ": 00:0" not in terminal.getvalue()
    capsys.readouterr()


def test_timings_wait_for_success():
    """A run that fails after a slow stage shows its one-line error alone: the stage timings
    are held until `report()`, which the tools call once the run has succeeded."""
    stream = io.StringIO()
    run = progress.Progress("tool", stream=stream)
    run.start -= 2.0  # the run has taken over a second
    run.stage("import", lambda: None)
    assert stream.getvalue() == ""
    run.report()
    assert re.fullmatch(r"\[tool\] import +\d+\.\d\d s\n", stream.getvalue())
    verbose = io.StringIO()
    progress.Progress("tool", verbose=True, stream=verbose).stage("import", lambda: None)
    assert "[tool] import" in verbose.getvalue()  # --log_level INFO: as each stage ends
    fast = io.StringIO()
    quick = progress.Progress("tool", stream=fast)
    quick.stage("import", lambda: None)
    quick.report()
    assert fast.getvalue() == ""  # a run under a second prints no timings
