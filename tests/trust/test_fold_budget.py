"""Constant folding stays within a size budget: a tiny model that fills a huge tensor is kept
as the op that fills it (a small .bin), never a 1 GB weight file or a MemoryError."""

import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from irforge.backends.reference import run
from irforge.frontends.onnx.importer import import_onnx
from irforge.model import Model
from irforge.passes import apply_pipeline


def constant_of_shape_model(path, dims, add_input=True):
    shape = helper.make_tensor("shape", TensorProto.INT64, [len(dims)], dims)
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["c"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [2.0])),
             helper.make_node("Add", ["c", "x"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)], [shape],
    )
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


def test_big_constant_of_shape_stays_an_op(tmp_path, monkeypatch):
    monkeypatch.setenv("IRFORGE_FOLD_LIMIT_MB", "0.001")  # 1 KiB: a 4 KiB fill is over it
    model = import_onnx(constant_of_shape_model(tmp_path / "m.onnx", [1024]))
    assert "nn.tile" in [op.name for op in model.func.body.block.ops]
    apply_pipeline(model.module, "infer-shapes,canonicalize")
    assert "nn.tile" in [op.name for op in model.func.body.block.ops]
    (y,) = run(model, {"x": np.ones(1, np.float32)}).values()
    np.testing.assert_array_equal(y, np.full(1024, 3.0, np.float32))


def test_small_constant_of_shape_is_folded(tmp_path):
    model = import_onnx(constant_of_shape_model(tmp_path / "m.onnx", [1024]))
    assert "nn.tile" not in [op.name for op in model.func.body.block.ops]


def test_canonicalize_keeps_big_results_as_ops(monkeypatch):
    from irforge.builder import ModelBuilder
    from irforge.dialects.nn.shape import Tile

    b = ModelBuilder()
    x = b.input("x", [1])
    c = b.constant(np.ones((1, 1), np.float32), "c")
    t = b.add(Tile, [c], name="t", repeats=[64, 64]).output
    b.output(t, "y")
    model: Model = b.finish()
    monkeypatch.setenv("IRFORGE_FOLD_LIMIT_MB", "0.001")
    apply_pipeline(model.module, "canonicalize")
    assert "nn.tile" in [op.name for op in model.func.body.block.ops]
    monkeypatch.delenv("IRFORGE_FOLD_LIMIT_MB")
    apply_pipeline(model.module, "canonicalize")
    assert "nn.tile" not in [op.name for op in model.func.body.block.ops]


@pytest.mark.parametrize("dims", [[250_000_000], [1 << 21, 1 << 21]])  # 1 GB, 16 TiB
def test_huge_fill_is_a_small_ir_or_a_clean_error(tmp_path, dims):
    path = constant_of_shape_model(tmp_path / "m.onnx", dims)
    assert path.stat().st_size < 256
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "irforge.tools.ir_convert", "-m", str(path), "-o", str(out)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode in (0, 2), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert sum(p.stat().st_size for p in out.rglob("*")) < 1 << 20


def test_running_a_model_too_big_for_memory_is_a_clean_error(tmp_path):
    path = constant_of_shape_model(tmp_path / "m.onnx", [1 << 21, 1 << 21])
    result = subprocess.run([sys.executable, "-m", "irforge.tools.ir_run", str(path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "error[E004]" in result.stderr, result.stderr
