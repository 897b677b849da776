"""Nothing is read or written outside the input's and output's folders; bad output paths are
one-line errors; outputs appear as whole pairs or not at all."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx.importer import import_onnx

CLI = [sys.executable, "-m"]


def tool(name: str, *args: str, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, f"irforge.tools.{name}", *args], capture_output=True, text=True, timeout=120, **kw)


def external_model(folder: Path, location: str, offset: str | None = None, length: str | None = None) -> Path:
    """An Add of the input and a 4-float initializer stored at `location`."""
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            w.external_data.add(key=key, value=value)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w],
    )
    path = folder / "m.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    return path


@pytest.fixture
def secret(tmp_path) -> Path:
    """16 bytes outside the model's folder that must never be read."""
    path = tmp_path / "secret.bin"
    path.write_bytes(np.arange(4, dtype=np.float32).tobytes())
    return path


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink", "symlinked_dir"])
def test_external_data_outside_the_model_folder_is_refused(tmp_path, secret, kind):
    models = tmp_path / "models"
    models.mkdir()
    location = {"dotdot": "../secret.bin", "absolute": str(secret), "symlink": "link.bin", "symlinked_dir": "d/secret.bin"}[kind]
    (models / "link.bin").symlink_to(secret)
    (models / "d").symlink_to(tmp_path)
    path = external_model(models, location)
    with pytest.raises(IrforgeError, match="outside the model's folder") as info:
        import_onnx(path)
    assert info.value.code == "E110"


def test_external_data_inside_the_folder_is_read(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "w.bin").write_bytes(np.arange(8, dtype=np.float32).tobytes())
    model = import_onnx(external_model(tmp_path, "sub/w.bin", offset="16"))
    (y,) = run(model, {"x": np.zeros(4, np.float32)}).values()
    np.testing.assert_array_equal(y, [4, 5, 6, 7])


@pytest.mark.parametrize("offset,length", [("-16", None), ("0", "-16"), ("x", None), ("99999999999999999999999", None)])
def test_bad_external_data_offsets_are_refused(tmp_path, offset, length):
    (tmp_path / "w.bin").write_bytes(bytes(64))
    with pytest.raises(IrforgeError, match="bad (offset|length)") as info:
        import_onnx(external_model(tmp_path, "w.bin", offset=offset, length=length))
    assert info.value.code == "E112"


@pytest.fixture(scope="module")
def tiny_onnx(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tiny")
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 4], np.eye(4, dtype=np.float32).ravel())
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [w],
    )
    path = folder / "tiny.onnx"
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


@pytest.mark.parametrize("name", ["../escaped", "a/b", "/tmp/x", "..", "a\\b"])
def test_model_name_with_a_folder_is_refused(tmp_path, tiny_onnx, name):
    out = tmp_path / "out"
    result = tool("ir_convert", "-m", str(tiny_onnx), "-o", str(out), "-n", name)
    assert result.returncode == 2, result.stderr
    assert "error[E010]" in result.stderr and "--model_name" in result.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == []


def test_output_dir_that_is_a_file_is_refused(tmp_path, tiny_onnx):
    (tmp_path / "f").write_text("x")
    result = tool("ir_convert", "-m", str(tiny_onnx), "-o", str(tmp_path / "f"))
    assert result.returncode == 2 and "error[E011]" in result.stderr, result.stderr
    result = tool("ir_convert", "-m", str(tiny_onnx), "-o", str(tmp_path / "f" / "sub"))
    assert result.returncode == 2 and "error[E011]" in result.stderr, result.stderr


@pytest.mark.parametrize("emit,first,second", [("xml", "tiny.xml", "tiny.bin"), ("mlir", "tiny.mlir", "tiny.weights")])
def test_output_pair_is_all_or_nothing(tmp_path, tiny_onnx, emit, first, second):
    """With one part of the pair a folder, the other part must not be left behind."""
    (tmp_path / first).mkdir()
    result = tool("ir_convert", "-m", str(tiny_onnx), "-o", str(tmp_path), "--emit", emit)
    assert result.returncode == 2 and "error[E012]" in result.stderr, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [first]


def test_ir_opt_output_that_is_a_folder_is_refused(tmp_path, tiny_onnx):
    assert tool("ir_convert", "-m", str(tiny_onnx), "-o", str(tmp_path), "--emit", "mlir").returncode == 0
    (tmp_path / "existing_dir").mkdir()
    result = tool("ir_opt", str(tmp_path / "tiny.mlir"), "-o", str(tmp_path / "existing_dir"))
    assert result.returncode == 2 and "error[E012]" in result.stderr, result.stderr
    assert not (tmp_path / "existing_dir.weights").exists()
    result = tool("ir_opt", str(tmp_path / "tiny.mlir"), "-o", str(tmp_path / "missing" / "o.mlir"))
    assert result.returncode == 2 and "error[E012]" in result.stderr, result.stderr


def test_sigterm_removes_pending_temporary_files(tmp_path):
    """A run killed while writing leaves no `.NAME.bin.XXXX` behind."""
    script = (
        "import os, signal, sys\n"
        "from irforge.output_files import install_signal_cleanup, write_files\n"
        "install_signal_cleanup()\n"
        "def slow(f):\n"
        "    f.write(b'x'); f.flush(); print('writing', flush=True); signal.pause()\n"
        f"write_files([({str(tmp_path / 'a.bin')!r}, slow)])\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    assert any(p.name.startswith(".a.bin.") for p in tmp_path.iterdir())
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGTERM
    assert list(tmp_path.iterdir()) == []


def test_ir_run_refuses_a_fifo_input_and_a_negative_seed(tmp_path, tiny_onnx):
    fifo = tmp_path / "x.npy"
    os.mkfifo(fifo)
    result = tool("ir_run", str(tiny_onnx), "--input", f"x={fifo}")
    assert result.returncode == 2 and "error[E021]" in result.stderr, result.stderr
    result = tool("ir_run", str(tiny_onnx), "--seed", "-1")
    assert result.returncode == 2 and "error[E022]" in result.stderr, result.stderr


def test_ir_run_output_in_a_missing_folder_is_refused(tmp_path, tiny_onnx):
    result = tool("ir_run", str(tiny_onnx), "--output", str(tmp_path / "missing" / "o.npz"))
    assert result.returncode == 2 and "error[E012]" in result.stderr, result.stderr
    assert tool("ir_run", str(tiny_onnx), "--output", str(tmp_path / "o.npz")).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.npz"]
