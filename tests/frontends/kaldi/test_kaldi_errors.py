"""Bad Kaldi files: the FAQ's one-line errors (E5xx), and a fuzz of the token reader
(truncations, flipped bytes, huge sizes, wrong tokens) that must never escape as a traceback."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from irforge.errors import IrforgeError
from irforge.frontends.kaldi import import_kaldi
from irforge.frontends.kaldi.tokens import KaldiReader
import irforge.frontends.plugins  # noqa: F401  (fills the frontend table)
from irforge.frontends.registry import frontend_for
from irforge.testing import kaldi_models as km


def files() -> dict[str, bytes]:
    layers, priors = km.nnet2_model()
    return {
        "nnet1-binary": km.write_nnet1(km.nnet1_model(), True),
        "nnet1-text": km.write_nnet1(km.nnet1_model(), False),
        "nnet2-binary": km.write_nnet2(layers, priors, True),
        "nnet2-text": km.write_nnet2(layers, priors, False),
        "nnet3-binary": km.write_nnet3(km.tdnn_model(), True, mdl=True),
        "nnet3-text": km.write_nnet3(km.tdnn_model(), False, mdl=True),
    }


def import_error(tmp_path: Path, data: bytes, name: str = "m.mdl") -> IrforgeError:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(IrforgeError) as e:
        import_kaldi(str(path), frames=7)
    assert "\n" not in str(e.value)
    return e.value


@pytest.mark.parametrize("name", sorted(files()))
def test_fuzzed_files_fail_with_one_line(tmp_path: Path, name: str) -> None:
    """Every truncation point class and random byte changes: an IrforgeError or a model, never
    another exception (the sizes of arrays are checked against the bytes left first)."""
    data = files()[name]
    rng = np.random.default_rng(len(name))
    variants = [data[:cut] for cut in np.linspace(0, len(data) - 1, 40).astype(int)]
    for i in range(40):
        corrupt = bytearray(data)
        for position in rng.integers(len(data), size=1 + i % 3):
            corrupt[position] = rng.integers(256)
        variants.append(bytes(corrupt))
    path = tmp_path / "fuzz.mdl"
    failures = 0
    for variant in variants:
        path.write_bytes(variant)
        try:
            import_kaldi(str(path), frames=7)
        except IrforgeError as e:
            assert "\n" not in str(e) and e.code and e.code.startswith("E5"), str(e)
            failures += 1
    assert failures >= 40  # every truncation fails


def test_huge_matrix_size_is_checked_before_allocating(tmp_path: Path) -> None:
    data = files()["nnet1-binary"]
    at = data.index(b"FM ") + 3
    huge = data[:at] + b"\x04" + struct.pack("<i", 1 << 30) + data[at + 5 :]
    error = import_error(tmp_path, huge, "m.nnet")
    assert error.code == "E502" and "does not fit" in str(error)
    at = data.index(b"<Splice> ")
    offsets = at + len("<Splice> ") + 10  # the integer vector of offsets after the two dims
    error = import_error(tmp_path, data[:offsets + 1] + struct.pack("<i", 1 << 29) + data[offsets + 5 :], "m.nnet")
    assert error.code == "E502" and "does not fit" in str(error)


def test_wrong_token_names_both(tmp_path: Path) -> None:
    data = files()["nnet2-text"].replace(b"</Components>", b"</Componentz>")
    error = import_error(tmp_path, data)
    assert error.code == "E502" and "expected token </Components>, has </Componentz>" in str(error)


def test_not_a_kaldi_file(tmp_path: Path) -> None:
    error = import_error(tmp_path, b"\x89PNG\r\n\x1a\n....", "m.nnet")
    assert error.code == "E500" and "does not appear to be a Kaldi file (magic number does not match)" in str(error)


@pytest.mark.parametrize("start", [b"\0B<Transition> ", b"<Network>\n"])
def test_model_without_nnet_tag(tmp_path: Path, start: bytes) -> None:
    error = import_error(tmp_path, start + b"<Foo> ", "m.nnet")
    assert error.code == "E501" and "Kaldi model should start with <Nnet> tag" in str(error)


def test_parallel_component_without_end(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    nested = [km.Layer("<AffineTransform>", [("<Linearity>", km.rng_weights(rng, 2, 2)), ("<Bias>", km.rng_weights(rng, 2))], (2, 2))]
    data = km.write_nnet1([km.Layer("<ParallelComponent>", [], (2, 2), nested=[nested])], False)
    error = import_error(tmp_path, data.replace(b"</ParallelComponent>", b"<Sigmoid>"), "m.nnet")
    assert error.code == "E506" and "Expected token </ParallelComponent>, has <Sigmoid>" in str(error)


def test_unsupported_components_listed_together(tmp_path: Path) -> None:
    layers = km.nnet1_model()
    layers[4] = km.Layer("<BlstmProjected>", [], (12, 12))
    layers[6] = km.Layer("<BlockSoftmax>", [], (12, 12))
    error = import_error(tmp_path, km.write_nnet1(layers, True), "m.nnet")
    assert error.code == "E510" and "<BlockSoftmax> x1, <BlstmProjected> x1" in str(error)


def test_dimension_mismatch_names_the_component(tmp_path: Path) -> None:
    layers = km.nnet1_model()
    layers[1] = km.Layer("<AddShift>", [("<Shift>", np.zeros(24, np.float32))], (25, 25))
    error = import_error(tmp_path, km.write_nnet1(layers, False), "m.nnet")
    assert error.code == "E508" and "component 1 <AddShift>" in str(error)


def test_text_and_binary_readers_share_one_interface() -> None:
    for binary in (True, False):
        w = km.KaldiWriter(binary).token("<A>").int(-3).float(0.25).bool(True).token("<B>")
        w.matrix(np.arange(6, dtype=np.float32).reshape(2, 3)).vector(np.array([1.5, -2.0])).int_vector([4, -5])
        r = KaldiReader(w.bytes(), "x")
        assert r.binary == binary
        r.expect("<A>")
        assert (r.int(), r.float(), r.bool()) == (-3, 0.25, True)
        r.expect("<B>")
        np.testing.assert_array_equal(r.matrix(), np.arange(6).reshape(2, 3))
        np.testing.assert_array_equal(r.vector(), [1.5, -2.0])
        np.testing.assert_array_equal(r.int_vector(), [4, -5])
        assert r.at_end()


def ir_convert(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "irforge.tools.ir_convert", *args], capture_output=True, text=True, check=False)


def test_ir_convert_sniffs_and_converts(tmp_path: Path) -> None:
    model = tmp_path / "final.bin"  # no telling suffix: the first bytes \0B<Nnet> say Kaldi
    model.write_bytes(files()["nnet1-binary"])
    assert frontend_for(str(model)).name == "kaldi"
    result = ir_convert("--input_model", str(model), "--input_shape", "[9,5]", "-o", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert "<dim>9</dim>" in (tmp_path / "out" / "final.xml").read_text()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), "error[E504]: a Kaldi model needs the number of frames"),
        (("--input_shape", "[9,4]"), "error[E504]: --input_shape [9, 4] does not fit"),
        (("--input_shape", "[9,5]", "--counts", "missing.txt"), "error[E505]: Model Optimizer is not able to read counts file"),
        (("--input_shape", "[9,5]", "--counts", "COUNTS"), "error[E505]: Expect counts file to be one-line file"),
    ],
)
def test_ir_convert_errors_exit_2(tmp_path: Path, args: tuple[str, ...], expected: str) -> None:
    model = tmp_path / "m.nnet"
    model.write_bytes(files()["nnet1-text"])
    counts = tmp_path / "counts.txt"
    counts.write_text("[ 1 2 3\n4 5 6 7 ]\n")
    args = tuple(str(counts) if a == "COUNTS" else a for a in args)
    result = ir_convert("--input_model", str(model), "-o", str(tmp_path / "out"), *args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], result.stderr
    assert not (tmp_path / "out" / "m.xml").exists()


def test_unsupported_component_without_end_marker(tmp_path: Path) -> None:
    data = km.write_nnet1([km.Layer("<Sigmoid>", [], (5, 5)), km.Layer("<KlHmm>", [], (5, 5))], True).replace(b"<!EndOfComponent> ", b"")
    error = import_error(tmp_path, data, "m.nnet")
    assert error.code == "E510" and "<KlHmm> x1" in str(error)
