"""Whole Kaldi models (nnet1, nnet2, nnet3; binary and text) written by irforge's own writer:
the imported whole-utterance graph against numpy per-frame references, through the reference
interpreter, the CPU backend and OpenVINO's runtime reading irforge's IR."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import irforge
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.kaldi import import_kaldi
from irforge.frontends.kaldi.postprocess import read_counts
from irforge.testing import kaldi_models as km
from tests.backends.ir_xml_support import run_openvino
from tests.frontends.kaldi import reference as ref

FRAMES = 13


def utterance(dim: int, frames: int = FRAMES, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((frames, dim)).astype(np.float32)


def nnet1_case(binary: bool) -> tuple[bytes, int, Callable[[np.ndarray], np.ndarray]]:
    layers = km.nnet1_model()
    return km.write_nnet1(layers, binary), 5, lambda x: ref.run_nnet1(layers, x)


def nnet2_case(binary: bool) -> tuple[bytes, int, Callable[[np.ndarray], np.ndarray]]:
    layers, priors = km.nnet2_model()
    return km.write_nnet2(layers, priors, binary), 6, lambda x: ref.run_nnet2(layers, x)


def nnet3_case(binary: bool, mdl: bool = False) -> tuple[bytes, int, Callable[[np.ndarray], np.ndarray]]:
    spec = km.tdnn_model()
    return km.write_nnet3(spec, binary, mdl), 4, lambda x: ref.run_nnet3(spec, x)


def tdnnf_case(binary: bool) -> tuple[bytes, int, Callable[[np.ndarray], np.ndarray]]:
    spec = km.tdnnf_model()
    return km.write_nnet3(spec, binary), 4, lambda x: ref.run_nnet3(spec, x)


def lstm_case(binary: bool) -> tuple[bytes, int, Callable[[np.ndarray], np.ndarray]]:
    layers = km.lstm_nnet1_model()
    return km.write_nnet1(layers, binary), 4, lambda x: ref.run_nnet1(layers, x)


def nnet3_lstm_case(binary: bool) -> tuple[bytes, int, Callable[[np.ndarray], np.ndarray]]:
    spec = km.lstm_nnet3_model()
    return km.write_nnet3(spec, binary), 4, lambda x: ref.run_lstm_nnet3(spec, x)


def cnn_pool_case(binary: bool) -> tuple[bytes, int, Callable[[np.ndarray], np.ndarray]]:
    spec = km.cnn_pool_model()
    return km.write_nnet3(spec, binary), 12, lambda x: ref.run_nnet3(spec, x)


def cnn_tdnn_case(binary: bool) -> tuple[bytes, int, Callable[[np.ndarray], np.ndarray]]:
    spec = km.cnn_tdnn_model()
    return km.write_nnet3(spec, binary), 12, lambda x: ref.run_nnet3(spec, x)


CASES = {
    "nnet3-cnn.raw": cnn_tdnn_case,
    "nnet3-maxpool.raw": cnn_pool_case,
    "nnet3-lstm.raw": nnet3_lstm_case,
    "nnet1-lstm.nnet": lstm_case,
    "nnet3-tdnnf.raw": tdnnf_case,
    "nnet1.nnet": nnet1_case,
    "nnet2.mdl": nnet2_case,
    "nnet3.raw": nnet3_case,
    "nnet3.mdl": lambda binary: nnet3_case(binary, mdl=True),
}


def write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "text"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_reference_interpreter_matches_numpy(tmp_path: Path, case: str, binary: bool) -> None:
    data, dim, reference = CASES[case](binary)
    assert data.startswith(b"\0B") == binary
    x = utterance(dim)
    got = run(import_kaldi(write(tmp_path, case, data), frames=FRAMES), {"input": x})["output"]
    np.testing.assert_allclose(got, reference(x), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", sorted(CASES))
def test_openvino_and_cpu_run_the_whole_utterance(tmp_path: Path, case: str) -> None:
    """OpenVINO's runtime on irforge's IR, irforge's CPU backend and the reference agree
    with numpy to 1e-3 on every frame (the edge frames use Kaldi's repeated edge frames)."""
    data, dim, reference = CASES[case](True)
    x = utterance(dim)
    model = import_kaldi(write(tmp_path, case, data), frames=FRAMES)
    write_ir_xml(model, tmp_path / "net.xml", "FP32")
    want = reference(x)
    openvino = run_openvino(tmp_path / "net.xml", {"input": x})["output"]
    cpu = irforge.compile(model, "cpu")({"input": x})["output"]
    interpreted = run(model, {"input": x})["output"]
    assert openvino.shape == (FRAMES, want.shape[1])
    for got in (openvino, cpu, interpreted):
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(cpu, interpreted, rtol=1e-4, atol=1e-5)


def test_short_utterance_repeats_edge_frames(tmp_path: Path) -> None:
    """An utterance shorter than the model's context (nnet3 TDNN: 7 frames each side)."""
    data, dim, reference = nnet3_case(True)
    x = utterance(dim, frames=2)
    got = run(import_kaldi(write(tmp_path, "short.raw", data), frames=2), {"input": x})["output"]
    np.testing.assert_allclose(got, reference(x), rtol=1e-4, atol=1e-4)


def test_nnet1_parallel_component_copy_and_length_norm(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    branch_a = [km.Layer("<AffineTransform>", [("<Linearity>", km.rng_weights(rng, 3, 2)), ("<Bias>", km.rng_weights(rng, 3))], (3, 2)), km.Layer("<Tanh>", [], (3, 3))]
    branch_b = [km.Layer("<Splice>", [("<Offsets>", km.Ints((-1, 1)))], (8, 4)), km.Layer("<Sigmoid>", [], (8, 8))]
    layers = [
        km.Layer("<Copy>", [("<Indices>", km.Ints((6, 1, 2, 3, 4, 5)))], (6, 6)),
        km.Layer("<ParallelComponent>", [], (11, 6), nested=[branch_a, branch_b]),
        km.Layer("<AffineTransform>", [("<Linearity>", km.rng_weights(rng, 4, 11)), ("<Bias>", km.rng_weights(rng, 4))], (4, 11)),
        km.Layer("<LengthNormComponent>", [], (4, 4)),
        km.Layer("<Softmax>", [], (4, 4)),
    ]
    x = utterance(6, frames=5)
    for binary in (True, False):
        path = write(tmp_path, "par.nnet", km.write_nnet1(layers, binary))
        got = run(import_kaldi(path, frames=5), {"input": x})["output"]
        np.testing.assert_allclose(got, ref.run_nnet1(layers, x), rtol=1e-4, atol=1e-5)


def test_counts_subtract_log_priors_before_the_softmax(tmp_path: Path) -> None:
    """mo's --counts: log(count / total) subtracted from the logits under the output softmax;
    with --remove_output_softmax the shifted logits are the output."""
    layers = km.nnet1_model()
    path = write(tmp_path, "m.nnet", km.write_nnet1(layers, True))
    counts_file = tmp_path / "counts.txt"
    counts = np.array([10, 0, 30, 5, 1, 7, 2], np.float64)
    counts_file.write_text("[ " + " ".join(str(int(c)) for c in counts) + " ]\n")
    log_priors = read_counts(str(counts_file))
    x = utterance(5)
    logits = ref.run_nnet1(layers[:-1], x)
    want = logits - log_priors
    removed = run(import_kaldi(path, frames=FRAMES, counts=log_priors, remove_output_softmax=True), {"input": x})["output"]
    np.testing.assert_allclose(removed[:, [0, 2, 3, 4, 5, 6]], want[:, [0, 2, 3, 4, 5, 6]], rtol=1e-5, atol=1e-4)
    assert (removed[:, 1] < -1e37).all()  # a pdf never seen is never chosen
    with_softmax = run(import_kaldi(path, frames=FRAMES, counts=log_priors), {"input": x})["output"]
    np.testing.assert_allclose(with_softmax, ref.softmax(want), rtol=1e-5, atol=1e-6)
    plain = run(import_kaldi(path, frames=FRAMES, remove_output_softmax=True), {"input": x})["output"]
    np.testing.assert_allclose(plain, logits, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["nnet2.mdl", "nnet3.mdl", "nnet3-tdnnf.raw"])
def test_ir_convert_pipeline_keeps_the_numbers(tmp_path: Path, case: str) -> None:
    """ir-convert's whole pipeline (folding, linear-op fusion) on a Kaldi model, run by OpenVINO."""
    from irforge.tools.ir_convert import convert

    data, dim, reference = CASES[case](True)
    x = utterance(dim)
    convert(["--input_model", write(tmp_path, case, data), "--input_shape", f"[{FRAMES},{dim}]", "-o", str(tmp_path / "out"), "-n", "net"])
    got = run_openvino(tmp_path / "out" / "net.xml", {"input": x})["output"]
    np.testing.assert_allclose(got, reference(x), rtol=1e-3, atol=1e-3)


def test_nnet1_splice_offsets_as_float_vector(tmp_path: Path) -> None:
    """Early nnet1 binaries wrote Splice offsets as a float vector (FV), not integers."""
    layers = km.nnet1_model()
    legacy = [km.Layer(layers[0].kind, [("<Offsets>", np.array([-2, -1, 0, 1, 2], np.float32))], layers[0].dims), *layers[1:]]
    x = utterance(5)
    got = run(import_kaldi(write(tmp_path, "old.nnet", km.write_nnet1(legacy, True)), frames=FRAMES), {"input": x})["output"]
    np.testing.assert_allclose(got, ref.run_nnet1(layers, x), rtol=1e-4, atol=1e-5)


def test_counts_from_the_models_priors(tmp_path: Path) -> None:
    """mo's `--counts ""`: the priors stored in the .mdl; after a final log-softmax (mo moves
    them only before a plain SoftMax), before a final softmax."""
    from irforge.tools.ir_convert import convert

    spec = km.tdnn_model()
    x = utterance(4)
    path = write(tmp_path, "tdnn.mdl", km.write_nnet3(spec, True, mdl=True))
    convert(["--input_model", path, "--input_shape", f"[{FRAMES},4]", "--counts", "", "-o", str(tmp_path / "out"), "-n", "net"])
    got = run_openvino(tmp_path / "out" / "net.xml", {"input": x})["output"]
    assert spec.priors is not None
    np.testing.assert_allclose(got, ref.run_nnet3(spec, x) - np.log(spec.priors / spec.priors.sum()), rtol=1e-3, atol=1e-3)

    layers, priors = km.nnet2_model()
    x2 = utterance(6)
    model = import_kaldi(write(tmp_path, "p.mdl", km.write_nnet2(layers, priors, False)), frames=FRAMES, counts_from_model=True)
    logits = ref.run_nnet2(layers[:-1], x2)
    np.testing.assert_allclose(run(model, {"input": x2})["output"], ref.softmax(logits - np.log(priors / priors.sum())), rtol=1e-4, atol=1e-5)
    with pytest.raises(IrforgeError, match="does not contain Priors"):
        import_kaldi(write(tmp_path, "n.raw", km.write_nnet3(spec, True)), frames=FRAMES, counts_from_model=True)


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "text"])
def test_nnet1_without_end_markers(tmp_path: Path, binary: bool) -> None:
    """nnet1 files before 2015: no <!EndOfComponent> after each component, no </Nnet> at the end."""
    layers = km.nnet1_model()
    data = km.write_nnet1(layers, binary).replace(b"<!EndOfComponent> ", b"")
    data = data[: data.rindex(b"</Nnet>")]
    x = utterance(5)
    got = run(import_kaldi(write(tmp_path, "old.nnet", data), frames=FRAMES), {"input": x})["output"]
    np.testing.assert_allclose(got, ref.run_nnet1(layers, x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", ["nnet2.mdl", "nnet3-tdnnf.raw"])
def test_opencl_backend_runs_the_whole_utterance(tmp_path: Path, case: str) -> None:
    data, dim, reference = CASES[case](True)
    x = utterance(dim)
    model = import_kaldi(write(tmp_path, case, data), frames=FRAMES)
    got = irforge.compile(model, "gpu")({"input": x})["output"]
    np.testing.assert_allclose(got, reference(x), rtol=1e-3, atol=1e-3)
