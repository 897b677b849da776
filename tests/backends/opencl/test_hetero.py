"""HETERO: ops without an OpenCL kernel run on the CPU with explicit transfers, reported."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from irforge.backends.opencl import compile_model
import irforge.backends.opencl.ops  # noqa: F401  (registers the lowerings)
from irforge.backends.opencl.lower import CPU_ONLY, LOWERINGS
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import OPS, Convolution, FullyConnected, Reshape, ReLU
from irforge.errors import IrforgeError
from irforge.extensions import load_extension
from irforge.model import save_model
from tests.helpers import rand

EXTENSION = textwrap.dedent(
    '''
    """A test-only op with a reference kernel and no other: y = x * x + 1."""
    from xdsl.dialects.builtin import TensorType
    from xdsl.ir import Dialect
    from xdsl.irdl import irdl_op_definition, operand_def, result_def

    from irforge.backends.reference import kernel
    from irforge.dialects.nn.base import NNOp
    from irforge.extensions import register_dialect


    @irdl_op_definition
    class SquarePlusOne(NNOp):
        name = "hetero_test.square_plus_one"
        input = operand_def(TensorType)
        output = result_def(TensorType)

        def infer_shapes(self):
            return [self.operand_type(0)]


    register_dialect(Dialect("hetero_test", [SquarePlusOne], []))


    @kernel(SquarePlusOne)
    def square_plus_one(op, x):
        return x * x + 1
    '''
)


@pytest.fixture(scope="module")
def extension(tmp_path_factory):  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("ext") / "hetero_test_ext.py"
    path.write_text(EXTENSION)
    module = load_extension(str(path))
    return path, module.SquarePlusOne


def conv_custom_fc_model(custom_op):  # type: ignore[no-untyped-def]
    """conv -> relu -> custom op -> reshape -> fc: GPU, CPU, GPU again."""
    b = ModelBuilder()
    x = b.input("x", (2, 3, 6, 6))
    conv = b.add(Convolution, [x, b.constant(rand(4, 3, 3, 3, seed=1), "w"), b.constant(rand(4, seed=2), "b")])
    act = b.add(ReLU, [conv.output])
    custom = b.add(custom_op, [act.output])
    flat = b.add(Reshape, [custom.output], shape=[2, 64])
    fc = b.add(FullyConnected, [flat.output, b.constant(rand(5, 64, seed=3), "fw"), b.constant(rand(5, seed=4), "fb")])
    b.output(fc.output, "y")
    return b.finish()


def test_every_op_has_an_opencl_kernel_or_is_cpu_only():
    ops = {cls for cls in OPS if cls.name != "nn.constant"}
    assert ops <= set(LOWERINGS) | set(CPU_ONLY)
    assert not set(LOWERINGS) & set(CPU_ONLY)


def test_custom_op_falls_back_to_its_reference_kernel(extension):  # type: ignore[no-untyped-def]
    _, custom_op = extension
    model = conv_custom_fc_model(custom_op)
    compiled = compile_model(model)
    assert [f.describe() for f in compiled.fallbacks] == [
        "hetero_test.square_plus_one -> numpy reference kernel (no OpenCL kernel for hetero_test.square_plus_one)"
    ]
    x = rand(2, 3, 6, 6)
    np.testing.assert_allclose(compiled({"x": x})["y"], run(model, {"x": x})["y"], rtol=1e-4, atol=1e-5)


def test_op_placed_on_cpu_runs_on_the_cpu_backend(extension):  # type: ignore[no-untyped-def]
    _, custom_op = extension
    model = conv_custom_fc_model(custom_op)
    compiled = compile_model(model, cpu_ops={"nn.fully_connected", "nn.relu"})
    by_op = {f.op: f for f in compiled.fallbacks}
    assert by_op["nn.fully_connected"].executor == "cpu"
    assert by_op["nn.relu"].executor == "cpu"  # not absorbed into the GPU convolution
    assert by_op["nn.fully_connected"].reason == "placed on the CPU by the caller"
    assert [s.tag for s in compiled._executable.program.steps if not hasattr(s, "run")] == ["nn.convolution"]
    x = rand(2, 3, 6, 6, seed=7)
    np.testing.assert_allclose(compiled({"x": x})["y"], run(model, {"x": x})["y"], rtol=1e-4, atol=1e-5)


def test_ir_run_on_gpu_reports_fallbacks(extension, tmp_path):  # type: ignore[no-untyped-def]
    path, custom_op = extension
    save_model(conv_custom_fc_model(custom_op), str(tmp_path / "m.mlir"))
    ran = subprocess.run(
        [sys.executable, "-m", "irforge.tools.ir_run", str(tmp_path / "m.mlir"), "--device", "gpu", "--extensions", str(path)],
        capture_output=True, text=True, timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    assert "fallback: hetero_test.square_plus_one -> numpy reference kernel" in ran.stdout
    assert "y: shape=[2, 5]" in ran.stdout


def test_bad_opencl_device_is_a_one_line_error(tmp_path):  # type: ignore[no-untyped-def]
    with pytest.raises(IrforgeError, match="no OpenCL device named like 'no-such-device'"):
        compile_model(ModelBuilder().finish(), device="no-such-device")
    b = ModelBuilder()
    b.output(b.input("x", (2,)), "y")
    save_model(b.finish(), str(tmp_path / "m.mlir"))
    ran = subprocess.run(
        [sys.executable, "-m", "irforge.tools.ir_run", str(tmp_path / "m.mlir"), "--device", "gpu", "--opencl-device", "99"],
        capture_output=True, text=True, timeout=120,
    )
    assert ran.returncode == 2
    assert re.match(r"irforge: error\[E\d{3}\]: no OpenCL device 99", ran.stderr) and ran.stderr.count("\n") == 1
