"""Fuzz findings of session 10 (irforge/testing/fuzz_session9_ops.py's seeds of session 9's code,
mutated: `bench/fuzz_campaign.py --focus session9`, `bench/fuzz_numbers.py --only session9`;
the front door and fresh campaigns over every format): each input that gave an internal error,
a number other than onnxruntime's or a write over the user's own files is now a one-line coded
error or onnxruntime's number."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper
from onnx import TensorProto as T

from irforge.testing.fuzz import run_tool_in_process
from tests.helpers import ort_session_run


def _vi(name: str, elem: int, shape: list[int] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[str], inits: list[onnx.TensorProto]) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, [_vi(n, T.FLOAT, None) for n in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _scores() -> list[onnx.NodeProto]:
    return [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), helper.make_node("MatMul", ["q", "kt"], ["s"])]


def _qkv(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {n: rng.standard_normal((1, 2, 5, 4)).astype(np.float32) for n in "qkv"}


def _matches_onnxruntime(proto: onnx.ModelProto, feeds: dict[str, np.ndarray], folder: Path) -> None:
    """ir-run (the default passes: the attention fusion) on ref and cpu against onnxruntime."""
    (want,) = ort_session_run(proto, feeds)
    argv = [str(_save(proto, folder))]
    for name, array in feeds.items():
        np.save(folder / f"{name}.npy", array)
        argv += ["--input", f"{name}={folder / f'{name}.npy'}"]
    for device in ("ref", "cpu"):
        code, err, _ = run_tool_in_process("ir-run", [*argv, "--device", device, "--output", str(folder / f"{device}.npz")], timeout=120)
        assert code == 0, err
        with np.load(folder / f"{device}.npz") as got:
            np.testing.assert_allclose(got["y"], want, rtol=1e-5, atol=1e-6, err_msg=device)


# -- numbers: the attention fusion --------------------------------------------------------------
def test_causal_product_with_a_row_masked_throughout_stays_uniform(tmp_path: Path) -> None:
    """GPT-1's w * b + -1e4 * (1 - b) with b's first row all zeros: that row's logits are all
    -1e4 (uniform probabilities); fused as c * s + M it was softmax(s): 8 of 40 values 1.26 off
    on ref and cpu."""
    b = np.tril(np.ones((5, 5), np.float32), k=-1)
    nodes = [*_scores(), helper.make_node("Mul", ["s", "b"], ["sb"]), helper.make_node("Add", ["sb", "fill"], ["x"]),
             helper.make_node("Softmax", ["x"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
    inits = [numpy_helper.from_array(b, "b"), numpy_helper.from_array((-1e4 * (1 - b)).astype(np.float32), "fill")]
    _matches_onnxruntime(_model(nodes, [_vi(n, T.FLOAT, [1, 2, 5, 4]) for n in "qkv"], ["y"], inits), _qkv(np.random.default_rng(1)), tmp_path)


def test_where_fill_of_minus_1e4_with_a_run_time_mask_keeps_masked_rows_uniform(tmp_path: Path) -> None:
    """Where(keep, s, -1e4) with a run-time keep masking a whole row: softmax of that row is
    uniform; fused as s + Where(keep, 0, -1e4) it was softmax(s) (8 of 40 values 0.885 off).
    float32's min as the fill absorbs s and still fuses (checked: the same numbers)."""
    for fill in (-1e4, float(np.finfo(np.float32).min)):
        nodes = [*_scores(), helper.make_node("Mul", ["s", "c"], ["sc"]), helper.make_node("Where", ["keep", "sc", "fill"], ["x"]),
                 helper.make_node("Softmax", ["x"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
        inits = [numpy_helper.from_array(np.float32(0.5), "c"), numpy_helper.from_array(np.float32(fill), "fill")]
        inputs = [_vi(n, T.FLOAT, [1, 2, 5, 4]) for n in "qkv"] + [_vi("keep", T.BOOL, [1, 1, 5, 5])]
        feeds = _qkv(np.random.default_rng(2))
        keep = np.tril(np.ones((5, 5), bool))[None, None]
        keep[0, 0, 0, :] = False
        feeds["keep"] = keep
        _matches_onnxruntime(_model(nodes, inputs, ["y"], inits), feeds, tmp_path)


# -- the IR: SoftMax stays one layer ------------------------------------------------------------
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_is_written_as_one_layer_as_ovc_writes_it(op: str, tmp_path: Path) -> None:
    """OpenVINO 2026.4.1's SoftMax of a row holding +inf or NaN gives [0, NaN, 0] where ONNX
    gives a NaN row. A guard (y + 0 * the row's sum) would make it agree, at three more layers
    on every classifier head than ovc writes; the lead chose ovc's form (STATUS, session 10
    trust paragraph): both answers flag a row that overflowed, finite rows are unchanged."""
    proto = _model([helper.make_node(op, ["x"], ["y"], axis=-1)], [_vi("x", T.FLOAT, [4, 3])], ["y"], [])
    assert run_tool_in_process("ir-convert", ["-m", str(_save(proto, tmp_path)), "-o", str(tmp_path)])[0] == 0
    text = (tmp_path / "m.xml").read_text()
    assert text.count("<layer ") == 3 and "Reduce" not in text


def _save(proto: onnx.ModelProto, folder: Path) -> Path:
    path = folder / "m.onnx"
    path.write_bytes(proto.SerializeToString())
    return path


def test_attention_with_a_short_one_dim_mask_compiles_on_openvino(tmp_path: Path) -> None:
    """ONNX Attention-23 with a mask [4] shorter than S = 6 (padded to [6]): OpenVINO's shape
    inference refused the written SDPA's 1-D mask; now [1, 6], and the numbers are ref's."""
    from irforge.frontends.onnx.importer import import_onnx
    from irforge.backends.reference import run
    from tests.backends.ir_xml_support import run_openvino

    mask = numpy_helper.from_array(np.array([0.5, -np.inf, 0.0, -1.0], np.float32), "m")
    node = helper.make_node("Attention", ["q", "k", "v", "m"], ["y"], scale=0.5)
    graph = helper.make_graph([node], "g", [_vi("q", T.FLOAT, [1, 2, 3, 4]), _vi("k", T.FLOAT, [1, 2, 6, 4]), _vi("v", T.FLOAT, [1, 2, 6, 5])],
                              [_vi("y", T.FLOAT, None)], [mask])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    proto.ir_version = 10
    rng = np.random.default_rng(4)
    feeds = {"q": rng.standard_normal((1, 2, 3, 4)), "k": rng.standard_normal((1, 2, 6, 4)), "v": rng.standard_normal((1, 2, 6, 5))}
    feeds = {n: a.astype(np.float32) for n, a in feeds.items()}
    assert run_tool_in_process("ir-convert", ["-m", str(_save(proto, tmp_path)), "-o", str(tmp_path)])[0] == 0
    np.testing.assert_allclose(run_openvino(tmp_path / "m.xml", feeds)["y"], run(import_onnx(proto), feeds)["y"], rtol=1e-5, atol=1e-6)


# -- the CPU backend's cache directory ----------------------------------------------------------
def _small_model():  # type: ignore[no-untyped-def]
    from irforge.frontends.onnx.importer import import_onnx
    from irforge.testing.onnx_models import resnet

    proto = resnet(blocks=(1,), width=4, size=8)
    return import_onnx(proto), proto.graph.input[0].name


def test_cache_entries_cut_or_changed_on_disk_are_misses(tmp_path: Path) -> None:
    """An object file cut short in the cache killed the process in LLVM's loader ("LLVM ERROR:
    section header table goes past the end of the file"); a program record changed on disk
    named functions no object defines. Both are misses now (checksums), and compile afresh."""
    from irforge.backends.cpu import compile_model

    model, name = _small_model()
    feeds = {name: np.random.default_rng(5).standard_normal((1, 3, 8, 8)).astype(np.float32)}
    want = compile_model(model, threads=1, cache_dir=tmp_path)(feeds)
    from irforge.backends.cpu import program_cache

    program_cache.wait_for_writes()
    objects, records = sorted(tmp_path.glob("*.o")), sorted(tmp_path.glob("p*.json"))
    assert objects and records
    for path in objects:
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    for path in records:
        path.write_bytes(path.read_bytes().replace(b"phases", b"phasez"))
    second = compile_model(model, threads=1, cache_dir=tmp_path)
    assert not second.stats.program_cached
    for key, value in second(feeds).items():
        np.testing.assert_array_equal(value, want[key])


def test_cache_keys_name_the_file_format(tmp_path: Path) -> None:
    """An irforge from before the framed object files, sharing the cache folder, read a framed
    file under the same key and handed it to LLVM raw ("LLVM ERROR: The file was not
    recognized as a valid object file": the process aborted). The format is in the key now."""
    import hashlib

    import irforge
    from irforge.backends.cpu.cache import ObjectCache

    cache = ObjectCache(tmp_path, "x86_64-unknown-linux-gnu")
    unframed = hashlib.sha256()
    for part in ("ir", cache.target, irforge.__version__):
        unframed.update(part.encode() + b"\0")
    assert cache.key("ir") != "m" + unframed.hexdigest()[:40]


@pytest.mark.parametrize("kind", ["file", "under_file", "device"])
def test_a_cache_directory_that_cannot_be_one_is_refused(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """IRFORGE_CACHE_DIR naming a file, a path under a file or /dev/null: FileExistsError /
    NotADirectoryError as internal errors; now E127 naming the variable."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    target = {"file": afile, "under_file": afile / "sub", "device": Path("/dev/null")}[kind]
    monkeypatch.setenv("IRFORGE_CACHE_DIR", str(target))
    model = _save(_model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", T.FLOAT, [2, 3])], ["y"], []), tmp_path)
    code, err, escaped = run_tool_in_process("ir-run", [str(model), "--device", "cpu", "--output", str(tmp_path / "o.npz")], timeout=120)
    assert (code, escaped) == (2, ""), err
    assert err.strip().splitlines()[-1].startswith("irforge: error[E127]: ") and "IRFORGE_CACHE_DIR" in err, err
    assert afile.read_text() == "x"


# -- the front door -------------------------------------------------------------------------------
def test_npy_input_whose_header_claims_more_than_the_file_holds(tmp_path: Path) -> None:
    """A 128-byte .npy whose header says shape (2**40,): numpy allocated 4 TiB first ('out of
    memory', E004, a misleading cause; a smaller lie a real allocation). Now E021 naming both."""
    import io

    out = io.BytesIO()
    np.save(out, np.zeros(4, np.float32))
    lies = tmp_path / "lies.npy"
    lies.write_bytes(out.getvalue().replace(b"(4,)", b"(1099511627776,)"))
    model = _save(_model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", T.FLOAT, [4])], ["y"], []), tmp_path)
    code, err, escaped = run_tool_in_process("ir-run", [str(model), "--input", f"x={lies}", "--output", str(tmp_path / "o.npz")], timeout=60)
    assert (code, escaped) == (2, ""), err
    assert "error[E021]" in err and "header describes a float32 array of shape [1099511627776]" in err, err
    assert not (tmp_path / "o.npz").exists()


def test_saved_model_variables_are_never_written(tmp_path: Path) -> None:
    """irforge reads frozen graphs only: a SavedModel folder (or its saved_model.pb) is refused
    before any output is written, so `--output variables/variables.data-*` leaves it alone."""
    folder = tmp_path / "sm"
    (folder / "variables").mkdir(parents=True)
    (folder / "saved_model.pb").write_bytes(b"\x08\x01\x12\x04\x12\x02\x0a\x00")
    data = folder / "variables" / "variables.data-00000-of-00001"
    data.write_bytes(b"weights!")
    for tool, argv in (("ir-run", [str(folder / "saved_model.pb"), "--output", str(data)]), ("ir-convert", ["-m", str(folder), "-o", str(folder / "variables")])):
        code, err, escaped = run_tool_in_process(tool, argv, timeout=60)
        assert (code, escaped) == (2, "") and err.strip().startswith("irforge: error[E"), err
    assert data.read_bytes() == b"weights!" and sorted(p.name for p in (folder / "variables").iterdir()) == [data.name]


def test_points_replacement_without_a_required_choice_is_refused(tmp_path: Path) -> None:
    """--transformations_config replacing conv_2 .. relu_8 by an nn.activation with no
    custom_attributes: xdsl's lookup of the missing required `kind` raised KeyError (an
    internal error); now E744 naming the property and its choices."""
    from irforge.testing.onnx_models import resnet

    model = tmp_path / "m.onnx"
    model.write_bytes(resnet(blocks=(1,), width=4, size=8).SerializeToString())
    config = tmp_path / "t.json"
    config.write_text('[{"id": "X", "match_kind": "points", "op": "nn.activation", '
                      '"instances": {"start_points": ["conv_2"], "end_points": ["relu_8"]}}]')
    code, err, escaped = run_tool_in_process("ir-convert", ["-m", str(model), "-o", str(tmp_path / "out"), "--transformations_config", str(config)])
    assert (code, escaped) == (2, ""), err
    assert "error[E744]" in err and "kind is required: one of" in err, err
