"""Fuzz findings of session 9 (irforge/testing/fuzz_session8_ops.py's seeds of session 8's code,
mutated: `bench/fuzz_campaign.py --focus session8`, `bench/fuzz_numbers.py --only session8`;
and hand probes of the command-line front door): each input that gave an internal error, a
number other than onnxruntime's or a write over the user's own files is now a one-line coded
error or onnxruntime's number."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.frontends.onnx.importer import import_onnx
from irforge.testing.fuzz import run_tool_in_process
from irforge.testing.onnx_models import resnet
from tests.helpers import ort_session_run


@pytest.fixture(scope="module")
def small_onnx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("model")
    path = folder / "m.onnx"
    path.write_bytes(resnet(blocks=(1,), width=4, size=8).SerializeToString())
    return path


def _fails(tool: str, argv: list[str], code: str, match: str) -> None:
    exit_code, err, escaped = run_tool_in_process(tool, argv, timeout=60)
    assert (exit_code, escaped) == (2, ""), err
    assert err.strip().splitlines()[-1].startswith(f"irforge: error[{code}]: ") and match in err, err


# -- outputs that would replace an input or a device -----------------------------------------------
def test_ir_run_output_over_its_model_is_refused(small_onnx: Path, tmp_path: Path) -> None:
    """`ir-run m.onnx --output m.onnx` replaced the model with the .npz of its outputs."""
    model = tmp_path / "m.onnx"
    model.write_bytes(small_onnx.read_bytes())
    _fails("ir-run", [str(model), "--output", str(model)], "E012", "it is an input of this command")
    assert model.read_bytes() == small_onnx.read_bytes()


def test_ir_convert_and_ir_opt_over_their_input_are_refused(small_onnx: Path, tmp_path: Path) -> None:
    """ir-convert of an IR XML into its own folder and `ir-opt m.mlir -o m.mlir` rewrote their
    input (and its .bin / .weights) in place."""
    assert run_tool_in_process("ir-convert", ["-m", str(small_onnx), "-o", str(tmp_path), "--emit", "mlir"])[0] == 0
    assert run_tool_in_process("ir-convert", ["-m", str(small_onnx), "-o", str(tmp_path)])[0] == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    _fails("ir-convert", ["-m", str(tmp_path / "m.xml"), "--output_model", str(tmp_path / "m.xml")], "E012", "is an input")
    _fails("ir-opt", [str(tmp_path / "m.mlir"), "-p", "canonicalize", "-o", str(tmp_path / "m.mlir")], "E012", "is an input")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    out = tmp_path / "o"
    out.mkdir()
    assert run_tool_in_process("ir-opt", [str(tmp_path / "m.mlir"), "-p", "canonicalize", "-o", str(out / "m.mlir")])[0] == 0


def test_output_onto_a_pipe_is_refused_and_the_pipe_stays(small_onnx: Path, tmp_path: Path) -> None:
    """`--output /dev/full` (as root) put a regular file in place of the device: outputs are
    renamed into place whole, so a device, pipe or socket target is refused."""
    fifo = tmp_path / "out.npz"
    os.mkfifo(fifo)
    _fails("ir-run", [str(small_onnx), "--output", str(fifo)], "E012", "not a regular file")
    assert fifo.is_fifo()


# -- ir-run and ir-convert values ---------------------------------------------------------------
def test_input_npz_that_is_no_zip_is_a_read_error(small_onnx: Path, tmp_path: Path) -> None:
    """An --input FILE.npz of other bytes gave BadZipFile (an internal error)."""
    junk = tmp_path / "a.npz"
    junk.write_bytes(b"PK\x03\x04junk")
    _fails("ir-run", [str(small_onnx), "--input", f"data={junk}", "--output", str(tmp_path / "o.npz")], "E021", "cannot read input")


@pytest.mark.parametrize(("flags", "code", "match"), [
    (["--mean_values", "data[1e39,0,0]"], "E745", "beyond the range of its float32 type"),   # inf in float32: every output inf / NaN
    (["--scale_values", "data[1e-39,1,1]"], "E745", "beyond the range of its float32 type"),  # a subnormal: its reciprocal overflows
    (["--scale", "1e39"], "E745", "beyond the range"),
    (["--mean_values", "[1,2,3],[4,5,6]"], "E030", "gives two lists for every input"),        # the second replaced the first
    (["--scale_values", "data[1,2,3],data[4,5,6]"], "E030", "gives two lists for input 'data'"),
])  # fmt: skip
def test_preprocessing_values_the_input_type_cannot_hold_are_refused(small_onnx, tmp_path, flags, code, match):
    _fails("ir-convert", ["-m", str(small_onnx), "-o", str(tmp_path), *flags], code, match)
    assert not list(tmp_path.iterdir())


# -- numbers ------------------------------------------------------------------------------------
def _softmax_model(op: str) -> onnx.ModelProto:
    node = helper.make_node(op, ["x"], ["y"], axis=-1)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4, 3])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_of_a_row_holding_plus_inf_is_nan_throughout(op: str) -> None:
    """A row holding +inf: onnxruntime (ONNX's x - max(x)) gives NaN for the whole row; ref and
    cpu gave 0 beside the inf, so a differential attention's `Where(IsNaN(p), -1e4, p)` guard
    (a mutated mask fill of +inf) came out 4.5e4 off."""
    x = np.array([[1.0, np.inf, 2.0], [np.inf, np.inf, 0.0], [-np.inf, -np.inf, -np.inf], [1.0, 2.0, 3.0]], np.float32)
    proto = _softmax_model(op)
    (want,) = ort_session_run(proto, {"x": x})
    from irforge.backends.opencl import compile_model as compile_opencl

    model = import_onnx(proto)
    for got in (run(model, {"x": x})["y"], compile_model(model)({"x": x})["y"], compile_opencl(model)({"x": x})["y"]):
        np.testing.assert_allclose(got, want, rtol=1e-5, equal_nan=True)


def test_guarded_attention_with_a_plus_inf_mask_fill_matches_onnxruntime() -> None:
    from irforge.testing.fuzz_session8_ops import attention_shared

    proto = onnx.load_from_string(attention_shared())
    for init in proto.graph.initializer:
        if init.name in ("ninf", "zf"):
            init.CopyFrom(numpy_helper.from_array(np.array(np.inf if init.name == "ninf" else -1e4, np.float32), init.name))
    rng = np.random.default_rng(3)
    feeds = {n: rng.standard_normal((1, 2, 6, 8)).astype(np.float32) for n in ("q", "k", "v0", "v1")}
    feeds["keep"] = rng.random((1, 1, 6, 6)) < 0.7
    (want,) = ort_session_run(proto, feeds)
    np.testing.assert_allclose(run(import_onnx(proto), feeds)["y"], want, rtol=1e-5, atol=1e-3)


def test_ir_run_output_over_the_models_external_data_is_refused(small_onnx: Path, tmp_path: Path) -> None:
    """`ir-run m.onnx --output m.onnx.data` replaced the weights the model reads."""
    proto = onnx.load(str(small_onnx))
    onnx.save_model(proto, str(tmp_path / "m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="m.onnx.data", size_threshold=0)
    data = (tmp_path / "m.onnx.data").read_bytes()
    _fails("ir-run", [str(tmp_path / "m.onnx"), "--output", str(tmp_path / "m.onnx.data")], "E012", "is an input")
    assert (tmp_path / "m.onnx.data").read_bytes() == data


@pytest.mark.parametrize("location", ["../secret.bin", "/etc/hostname", "link.bin"])
def test_external_data_outside_the_models_folder_is_refused(small_onnx: Path, tmp_path: Path, location: str) -> None:
    """External data may not leave the model's folder: `..`, an absolute path, or a symlink
    inside the folder that points out of it (pinned: already E110)."""
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 4096)
    os.symlink(tmp_path / "secret.bin", folder / "link.bin")
    proto = onnx.load(str(small_onnx))
    init = proto.graph.initializer[0]
    onnx.external_data_helper.set_external_data(init, location, offset=0, length=init.ByteSize())
    init.data_location = onnx.TensorProto.EXTERNAL
    init.ClearField("raw_data")
    init.ClearField("float_data")
    (folder / "m.onnx").write_bytes(proto.SerializeToString())
    _fails("ir-convert", ["-m", str(folder / "m.onnx"), "-o", str(tmp_path / "out")], "E110", "outside the model's folder")


# -- the fuzz seeds of session 8's code, mutated ---------------------------------------------------
def _s8(name: str) -> onnx.ModelProto:
    from irforge.testing import fuzz_session8_ops as s8

    return onnx.load_from_string(s8.SEEDS[name]())


def _set_attr(model: onnx.ModelProto, output: str, **attrs: object) -> onnx.ModelProto:
    node = next(n for n in model.graph.node if n.output[0] == output)
    for name, value in attrs.items():
        for attr in [a for a in node.attribute if a.name == name]:
            node.attribute.remove(attr)
        node.attribute.append(helper.make_attribute(name, value))
    return model


def _constant(model: onnx.ModelProto, name: str, array: np.ndarray) -> onnx.ModelProto:
    next(t for t in model.graph.initializer if t.name == name).CopyFrom(numpy_helper.from_array(array, name))
    return model


def _refused(model: onnx.ModelProto, match: str, code: str = "E041") -> None:
    from irforge.errors import IrforgeError

    with pytest.raises(IrforgeError, match=match) as err:
        import_onnx(model)
    assert err.value.code == code and "\n" not in str(err.value)


@pytest.mark.parametrize(("attrs", "match"), [
    ({"mode": "nearest"}, "apply to the linear and cubic modes, not mode 'nearest'"),  # onnx's reference: RuntimeError
    ({"mode": "area"}, "not mode 'area'"),                                               # ValueError: Unexpected value
    ({"mode": "linear", "antialias": 0}, "exclude_outside with mode linear needs antialias=1"),  # onnxruntime refuses it too
])  # fmt: skip
def test_resize_antialias_modes_onnx_does_not_define_are_refused(attrs, match):
    _refused(_set_attr(_s8("resizeaa.onnx"), "y", **attrs), match)


@pytest.mark.parametrize("scales", [[1, 1, np.inf, 0.5], [1, 1, 0.5, np.nan], [1, 1, 0.5, -2.0]])
def test_resize_antialias_scales_that_give_no_size_are_refused(scales):
    """A scale of inf: OverflowError (cannot convert float infinity to integer)."""
    _refused(_constant(_s8("resizeaa.onnx"), "scales", np.array(scales, np.float32)), "must be finite and positive")


def test_resize_antialias_sizes_of_a_huge_matrix_are_refused():
    _refused(_constant(_s8("resizeaa.onnx"), "sizes", np.array([1, 2, 3, 2**31], np.int64)), "a weight matrix beyond")


def test_pad_with_float_pads_is_refused():
    """Constant pads of float NaN: ValueError (cannot convert float NaN to integer)."""
    _refused(_constant(_s8("padneg.onnx"), "pads2", np.array([np.nan, 1, 0, -1], np.float32)), "pads \\(input #1\\) must be an integer tensor")


def test_ir_xml_split_axis_beyond_the_rank_is_refused(tmp_path: Path) -> None:
    """The Pad-12 seed's IR XML with the Slice of its pads_end half retyped VariadicSplit (its
    start, 2, read as the axis of a 1-D tensor): IndexError."""
    from irforge.testing import fuzz_session8_ops as s8

    (tmp_path / "padrt.onnx").write_bytes(s8.pad_run_time())
    assert run_tool_in_process("ir-convert", ["-m", str(tmp_path / "padrt.onnx"), "-o", str(tmp_path)])[0] == 0
    xml = (tmp_path / "padrt.xml").read_text()
    layer = 'name="Pad_a/pads_end" type="Slice"'
    assert layer in xml
    (tmp_path / "padrt.xml").write_text(xml.replace(layer, 'name="Pad_a/pads_end" type="VariadicSplit"'))
    _fails("ir-run", [str(tmp_path / "padrt.xml")], "E640", "VariadicSplit axis 2 is out of range for an input of rank 1")


@pytest.mark.parametrize(("output", "attrs"), [("c", {"keepdims": 2}), ("b", {"select_last_index": 2}), ("a", {"keepdims": -1})])
def test_argmax_flags_other_than_0_or_1_are_refused(output, attrs):
    """ArgMax keepdims=2: onnxruntime drops the axis (it reads keepdims == 1), ref and cpu kept it."""
    _refused(_set_attr(_s8("argtypes.onnx"), output, **attrs), "must be 0 or 1")


def test_resize_antialias_float_sizes_are_refused():
    """sizes of float inf: OverflowError in the antialias path (the plain path checked them)."""
    _refused(_constant(_s8("resizeaa.onnx"), "sizes", np.array([np.inf], np.float32)), "sizes \\(input #3\\) must be an integer tensor")


def _expand(target: np.ndarray) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Expand", ["x", "shape"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3, 1])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)], [numpy_helper.from_array(target, "shape")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_expand_to_a_scalar_shape_is_refused():
    """The node suite's test_expand_dim_changed with its shape made 0-d: TypeError (iteration over a 0-d array)."""
    _refused(_expand(np.array(2**62, np.int64)), "must be a 1-D tensor, got shape \\[\\]")


def test_a_node_result_beyond_1_pib_is_refused():
    """Expand of [3, 1] to [2**62, 1, 6]: converted, then numpy's 'array is too big' on ref and a
    CPU compile that never ended."""
    _refused(_expand(np.array([2**62, 1, 6], np.int64)), "more than 1 PiB", code="E144")


def test_nonzero_of_a_scalar_is_refused():
    """The run-time Expand seed's NonZero given the 0-d threshold: numpy's 'Calling nonzero on 0d
    arrays' (onnxruntime answers [1, n], ONNX's shape inference [0, n])."""
    model = _s8("expandrt.onnx")
    next(n for n in model.graph.node if n.op_type == "NonZero").input[0] = "thr"
    _refused(model, "NonZero of a scalar")


def test_expand_to_a_2d_shape_is_refused():
    """A [1, 2] target shape: TypeError (only 0-dimensional arrays can be converted)."""
    _refused(_expand(np.array([[2, 3]], np.int64)), "must be a 1-D tensor, got shape \\[1, 2\\]")


def test_cpu_refuses_a_result_beyond_memory_before_lowering_it():
    """The negative-Pad seed padded by 2**40 columns (96 TiB, below E144's 1 PiB): ref raised
    MemoryError (E004), cpu spent minutes building the pad's per-element index table."""
    model = import_onnx(_constant(_s8("padneg.onnx"), "pads2", np.array([1, 2, 3, 2**40], np.int64)))
    with pytest.raises(MemoryError, match="nn.pad result of shape .* more than this machine's memory"):
        compile_model(model)
