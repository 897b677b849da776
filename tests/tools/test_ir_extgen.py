"""ir-extgen: the generated extension and test work as generated, for every framework."""

import subprocess
import sys

import pytest


def ir_extgen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "irforge.tools.ir_extgen", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("framework, extra", [("onnx", ["--domain", "com.example"]), ("caffe", []), ("tf", [])])
def test_generated_test_passes_as_generated(tmp_path, framework, extra):
    result = ir_extgen("new", "--op", "MyScale", "--framework", framework, *extra, "--attr", "alpha:float=0.5", "--attr", "axes:ints=[1,2]", "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    module = (tmp_path / "my_scale.py").read_text()
    assert "YOUR MATH" in module and '"alpha": Attr(float, 0.5)' in module and '"axes": Attr("ints", [1, 2])' in module
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_my_scale.py")], capture_output=True, text=True, timeout=300)
    assert tests.returncode == 0, tests.stdout + tests.stderr


def test_the_generated_test_checks_the_math(tmp_path):
    """Change forward without updating `expected`: the generated test must fail."""
    assert ir_extgen("new", "--op", "Twice", "--framework", "onnx", "-o", str(tmp_path)).returncode == 0
    module = tmp_path / "twice.py"
    module.write_text(module.read_text().replace("return x.copy()", "return 2 * x"))
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_twice.py")], capture_output=True, text=True, timeout=300)
    assert tests.returncode != 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--op", "My-Op", "--framework", "onnx"], "bad --op 'My-Op'"),
        (["--op", "X", "--framework", "onnx", "--attr", "alpha"], "bad --attr 'alpha'"),
        (["--op", "X", "--framework", "onnx", "--attr", "n:int=two"], "'two' is not a int"),
        (["--op", "X", "--framework", "caffe", "--domain", "d"], "--domain applies to ONNX"),
        (["--op", "X", "--framework", "mxnet"], "invalid choice"),
    ],
)
def test_bad_arguments(tmp_path, args, message):
    result = ir_extgen("new", *args, "-o", str(tmp_path))
    assert result.returncode == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_existing_files_are_kept(tmp_path):
    assert ir_extgen("new", "--op", "X", "--framework", "tf", "-o", str(tmp_path)).returncode == 0
    (tmp_path / "x.py").write_text("mine")
    result = ir_extgen("new", "--op", "X", "--framework", "tf", "-o", str(tmp_path))
    assert result.returncode == 2 and "already exist" in result.stderr and (tmp_path / "x.py").read_text() == "mine"


@pytest.mark.parametrize("flag, old, new", [
    ("--cpu", "lambda b, x: x)", "lambda b, x: b.fadd(x, x))"),
    ("--gpu", "y[i] = x[i];", "y[i] = 2.0f * x[i];"),
])
def test_the_native_kernels_are_the_ones_that_run(tmp_path, flag, old, new):
    """Change only the native kernel's math: the generated test must fail on that device."""
    assert ir_extgen("new", "--op", "Native", "--framework", "onnx", flag, "-o", str(tmp_path)).returncode == 0
    module = tmp_path / "native.py"
    assert old in module.read_text()
    module.write_text(module.read_text().replace(old, new))
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_native.py")], capture_output=True, text=True, timeout=300)
    assert tests.returncode != 0 and ("cpu" if flag == "--cpu" else "gpu") in tests.stdout
