"""nnet3 graphs beyond a plain TDNN: every descriptor (Append, Offset, Sum, Scale, IfDefined,
ReplaceIndex, Const), dim-range nodes, a second input, recurrences, and the config parser's errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.kaldi import import_kaldi
from irforge.frontends.kaldi.nnet3_config import parse_descriptor
from irforge.testing import kaldi_models as km
from tests.backends.ir_xml_support import run_openvino

CONFIG = [
    "input-node name=input dim=3",
    "input-node name=ivector dim=2",
    "component-node name=a component=a input=Append(input, IfDefined(Offset(input, -2)), ReplaceIndex(ivector, t, 0))",
    "dim-range-node name=a.low input-node=a dim-offset=0 dim=3",
    "dim-range-node name=a.high input-node=a dim-offset=3 dim=3",
    "component-node name=b component=b input=Sum(Offset(a.low, 1), Scale(0.5, a.high))",
    "component-node name=out component=out input=Append(b, Const(1.5, 2))",
    "output-node name=output input=out objective=linear",
]


def descriptor_model() -> tuple[km.Nnet3Spec, dict[str, np.ndarray]]:
    rng = np.random.default_rng(5)
    w = {"a": km.rng_weights(rng, 6, 8), "ab": km.rng_weights(rng, 6), "o": km.rng_weights(rng, 4, 5), "ob": km.rng_weights(rng, 4)}
    layers = [
        km.Layer("<AffineComponent>", [("<LinearParams>", w["a"]), ("<BiasParams>", w["ab"])], name="a"),
        km.Layer("<RectifiedLinearComponent>", km.nonlinear("", 3).fields, name="b"),
        km.Layer("<AffineComponent>", [("<LinearParams>", w["o"]), ("<BiasParams>", w["ob"])], name="out"),
    ]
    return km.Nnet3Spec(CONFIG, layers), w


def descriptor_reference(w: dict[str, np.ndarray], x: np.ndarray, iv: np.ndarray) -> np.ndarray:
    """By hand, Kaldi's semantics: context L = 0, R = 1 (from Offset(a.low, 1)); the input is
    padded to frames [0, T]; IfDefined(Offset(input, -2)) is zero where t - 2 < -L = 0."""
    frames = len(x)
    t = np.arange(frames + 1)
    shifted = np.where((t - 2 >= 0)[:, None], x[np.clip(t - 2, 0, frames - 1)], 0.0)
    a_in = np.concatenate([x[np.clip(t, 0, frames - 1)], shifted, np.repeat(iv[:1], frames + 1, axis=0)], axis=1)
    a = a_in @ w["a"].T + w["ab"]
    b = np.maximum(a[1:, :3] + 0.5 * a[:-1, 3:], 0)
    return np.concatenate([b, np.full((frames, 2), 1.5)], axis=1) @ w["o"].T + w["ob"]


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "text"])
def test_descriptors_dim_range_and_second_input(tmp_path: Path, binary: bool) -> None:
    spec, w = descriptor_model()
    path = tmp_path / "desc.raw"
    path.write_bytes(km.write_nnet3(spec, binary))
    rng = np.random.default_rng(0)
    x, iv = rng.standard_normal((6, 3)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    model = import_kaldi(str(path), input_shapes={"input": [6, 3], "ivector": [4, 2]})
    want = descriptor_reference(w, x, iv)
    got = run(model, {"input": x, "ivector": iv})["output"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    if binary:
        write_ir_xml(model, tmp_path / "desc.xml", "FP32")
        np.testing.assert_allclose(run_openvino(tmp_path / "desc.xml", {"input": x, "ivector": iv})["output"], want, rtol=1e-3, atol=1e-3)


def test_descriptor_parser() -> None:
    d = parse_descriptor("Append(Offset(tdnn1.relu, -3), Sum(a, Scale(0.5, b-c)), ReplaceIndex(iv, t, 0))", 1, "f")
    assert d.kind == "Append" and [p.kind for p in d.parts] == ["Offset", "Sum", "ReplaceIndex"]
    assert d.parts[0].numbers == (-3,) and d.parts[0].parts[0].name == "tdnn1.relu"
    assert d.parts[1].parts[1].numbers == (0.5,) and d.parts[1].parts[1].parts[0].name == "b-c"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("component-node name=a component=a input=Append(input, ", "the descriptor ends early"),
        ("component-node name=a component=a input=Round(input, 3)", "Round(...) is not supported"),
        ("component-node name=a component=a input=Offset(input, x)", "expected a number"),
        ("weird-node name=a", "unknown line type 'weird-node'"),
        ("component-node component=a input=input", "has no name="),
    ],
)
def test_config_errors_name_the_line(tmp_path: Path, line: str, expected: str) -> None:
    spec, _ = descriptor_model()
    spec.config = ["input-node name=input dim=3", line, "output-node name=output input=a"]
    path = tmp_path / "bad.raw"
    path.write_bytes(km.write_nnet3(spec, True))
    with pytest.raises(IrforgeError) as e:
        import_kaldi(str(path), frames=4)
    assert e.value.code == "E507" and "config line 2" in str(e.value) and expected in str(e.value)


def test_simple_recurrence_unrolled(tmp_path: Path) -> None:
    """b(t) = relu(x(t) + b(t-1)), b(-1) = 0 through IfDefined; a cycle at the same frame is E511."""
    spec, _ = descriptor_model()
    spec.config = [
        "input-node name=input dim=3",
        "component-node name=b component=b input=Sum(input, IfDefined(Offset(b, -1)))",
        "output-node name=output input=b",
    ]
    path = tmp_path / "rnn.raw"
    path.write_bytes(km.write_nnet3(spec, False))
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    want, state = [], np.zeros(3)
    for frame in x:
        state = np.maximum(frame + state, 0)
        want.append(state)
    np.testing.assert_allclose(run(import_kaldi(str(path), frames=5), {"input": x})["output"], np.array(want), rtol=1e-6, atol=1e-6)
    spec.config[1] = "component-node name=b component=b input=Sum(input, b)"
    path.write_bytes(km.write_nnet3(spec, False))
    with pytest.raises(IrforgeError, match="depends on itself") as e:
        import_kaldi(str(path), frames=4)
    assert e.value.code == "E511"


def test_ir_convert_names_each_input(tmp_path: Path) -> None:
    """Two input nodes: ir-convert needs --input with one --input_shape each; without, E504."""
    from irforge.tools.ir_convert import convert

    spec, w = descriptor_model()
    path = tmp_path / "desc.raw"
    path.write_bytes(km.write_nnet3(spec, True))
    with pytest.raises(IrforgeError, match="its input 'ivector'") as e:
        convert(["--input_model", str(path), "--input_shape", "[6,3]", "-o", str(tmp_path)])
    assert e.value.code == "E504"
    convert(["--input_model", str(path), "--input", "input,ivector", "--input_shape", "[6,3],[4,2]", "-o", str(tmp_path), "-n", "net"])
    rng = np.random.default_rng(0)
    x, iv = rng.standard_normal((6, 3)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    got = run_openvino(tmp_path / "net.xml", {"input": x, "ivector": iv})["output"]
    np.testing.assert_allclose(got, descriptor_reference(w, x, iv), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("model", ["tdnn", "tdnnf", "cnn", "descriptors"])
def test_frame_by_frame_matches_whole_ranges(tmp_path: Path, model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The unrolled form recurrent graphs get gives a feed-forward graph's numbers too (Offsets,
    TdnnComponent and convolution windows, IfDefined edges, ReplaceIndex, Const, dim ranges)."""
    from irforge.frontends.kaldi.nnet3_graph import Nnet3Graph

    spec = {"tdnn": km.tdnn_model, "tdnnf": km.tdnnf_model, "cnn": km.cnn_tdnn_model, "descriptors": lambda: descriptor_model()[0]}[model]()
    path = tmp_path / "m.raw"
    path.write_bytes(km.write_nnet3(spec, True))
    dim = {"descriptors": 3, "cnn": 12}.get(model, 4)
    shapes = {"input": [7, dim], "ivector": [2, 2]}
    rng = np.random.default_rng(2)
    feeds = {"input": rng.standard_normal((7, dim)).astype(np.float32), "ivector": rng.standard_normal((2, 2)).astype(np.float32)}
    if model != "descriptors":
        del shapes["ivector"], feeds["ivector"]
    ranges = run(import_kaldi(str(path), input_shapes=shapes), feeds)["output"]
    monkeypatch.setattr(Nnet3Graph, "recurrent", lambda self: True)
    frames = run(import_kaldi(str(path), input_shapes=shapes), feeds)["output"]
    np.testing.assert_allclose(frames, ranges, rtol=1e-5, atol=1e-5)
