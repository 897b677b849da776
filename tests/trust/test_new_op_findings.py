"""Findings of the fuzz campaign over the newer ops (`irforge/testing/fuzz_new_ops.py`,
`bench/fuzz_campaign.py --focus new-ops`, `bench/fuzz_numbers.py`), each re-checked by name:
a one-line coded error (exit 2, nothing written) where an extractor or a kernel raised a
Python exception or silently picked another axis, and the numbers where irforge disagreed
with onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

from irforge.testing import fuzz_new_ops
from irforge.tools import ir_convert, ir_run


def load(data: bytes) -> onnx.ModelProto:
    model = onnx.ModelProto()
    model.ParseFromString(data)
    return model


def set_attribute(node: onnx.NodeProto, name: str, value: object) -> None:
    for attr in list(node.attribute):
        if attr.name == name:
            node.attribute.remove(attr)
    empty = onnx.AttributeProto.INTS if value == [] else None  # helper cannot infer an empty list's type
    node.attribute.append(helper.make_attribute(name, value, attr_type=empty))


def set_initializer(model: onnx.ModelProto, name: str, value: np.ndarray) -> None:
    (init,) = [t for t in model.graph.initializer if t.name == name]
    init.CopyFrom(numpy_helper.from_array(np.asarray(value), name))


def single(op: str, shape: list, opset: int, **attrs: object) -> onnx.ModelProto:
    """y = op(x) for x of `shape`."""
    node = helper.make_node(op, ["x"], ["y"])
    for name, value in attrs.items():
        set_attribute(node, name, value)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", T.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def convert_error(tmp_path, capsys, model: onnx.ModelProto) -> str:  # type: ignore[no-untyped-def]
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    with pytest.raises(SystemExit) as info:
        ir_convert.main(["-m", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2, err
    assert len(err.splitlines()) == 1 and "internal error" not in err, err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    return err


def col2im(**attrs: object) -> onnx.ModelProto:
    model = load(fuzz_new_ops.col2im())
    for name, value in attrs.items():
        set_attribute(model.graph.node[0], name, value)
    return model


@pytest.mark.parametrize("edit, message", [
    ({"pads": [1, 1]}, "pads [1, 1] must hold 2, 2 and 4 values"),
    ({"strides": [0, 1]}, "must be >= 1"),
    ({"dilations": [0, 1]}, "must be >= 1"),
    ({"pads": [-1, 0, 0, 0]}, "pads [-1, 0, 0, 0] >= 0"),
])  # fmt: skip
def test_col2im_attributes_out_of_range(tmp_path, capsys, edit, message):
    assert message in convert_error(tmp_path, capsys, col2im(**edit))


def test_col2im_of_another_rank_and_bad_shapes(tmp_path, capsys):
    model = col2im()
    model.graph.input[0].CopyFrom(helper.make_tensor_value_info("x", T.FLOAT, [8, 9]))
    assert "has rank 2 (shape [8, 9]), this op needs rank 3" in convert_error(tmp_path, capsys, model)
    model = col2im()
    set_initializer(model, "block", np.array([2, 0], np.int64))
    assert "block_shape [2, 0] has a value below 1" in convert_error(tmp_path, capsys, model)
    model = col2im()
    set_initializer(model, "image", np.array([4, 4, 4], np.int64))
    assert "must name the same number" in convert_error(tmp_path, capsys, model)
    model = col2im()
    set_initializer(model, "block", np.array([2.0, 2.0], np.float32))
    assert "block_shape must be int64, got float32" in convert_error(tmp_path, capsys, model)


@pytest.mark.parametrize("op, attrs, message", [
    ("MeanVarianceNormalization", {"axes": [5]}, "axes value 5 is out of range for an input of rank 3"),
    ("MeanVarianceNormalization", {"axes": []}, "axes is empty"),
    ("LpNormalization", {"axis": 3}, "axis 3 is out of range for an input of rank 3"),
    ("LpNormalization", {"axis": -4}, "axis -4 is out of range"),
])  # fmt: skip
def test_normalisation_axes_out_of_range_are_errors_not_another_axis(tmp_path, capsys, op, attrs, message):
    # `axis % rank` silently normalised over another axis
    model = single(op, [2, 3, 4], 18, **attrs)
    assert message in convert_error(tmp_path, capsys, model)


def test_rms_normalization_of_a_scalar(tmp_path, capsys):
    model = load(fuzz_new_ops.compositions_24())
    model.graph.input[0].CopyFrom(helper.make_tensor_value_info("x", T.FLOAT, []))
    assert "axis -1 is out of range for an input of rank 0" in convert_error(tmp_path, capsys, model)  # was ZeroDivisionError


def test_eye_like_of_rank_one_and_unknown_dtype(tmp_path, capsys):
    model = single("EyeLike", [3], 18)
    assert "this op needs rank 2" in convert_error(tmp_path, capsys, model)  # was IndexError
    model = single("EyeLike", [3, 3], 18, dtype=99)
    assert "dtype=99 is not a numeric ONNX element type" in convert_error(tmp_path, capsys, model)  # was KeyError


@pytest.mark.parametrize("length, message", [
    (np.array(np.nan, np.float32), "dft_length must be one int64 value >= 1"),
    (np.array(0, np.int64), "dft_length must be one int64 value >= 1"),
    (np.array([], np.int64), "dft_length must be one int64 value >= 1"),
    (np.array(2**40, np.int64), "over 134217728 elements"),
])  # fmt: skip
def test_dft_length_that_is_not_a_positive_int(tmp_path, capsys, length, message):
    model = load(fuzz_new_ops.dft())
    set_initializer(model, "len", length)
    assert message in convert_error(tmp_path, capsys, model)


def test_dft_axis_out_of_range(tmp_path, capsys):
    model = load(fuzz_new_ops.dft())
    set_attribute(model.graph.node[0], "axis", 5)
    assert "axis 5 is out of range for an input of rank 3" in convert_error(tmp_path, capsys, model)


def test_constants_of_floats_or_empty_where_ints_are_read(tmp_path, capsys):
    model = load(fuzz_new_ops.slice_runtime())
    set_initializer(model, "axes", np.array([np.inf], np.float32))
    assert "axes must be an integer tensor, got float32" in convert_error(tmp_path, capsys, model)  # was OverflowError
    model = load(fuzz_new_ops.detection())
    set_initializer(model, "max_out", np.array([np.inf], np.float32))
    assert "max_output_boxes_per_class must be an integer tensor" in convert_error(tmp_path, capsys, model)
    model = load(fuzz_new_ops.detection())
    set_initializer(model, "iou", np.array([], np.float32))
    assert "iou_threshold must be one number" in convert_error(tmp_path, capsys, model)  # was IndexError


def test_loop_trip_count_of_a_float(tmp_path, capsys):
    model = load(fuzz_new_ops.outer_reads())
    set_initializer(model, "n", np.array(np.inf, np.float32))
    assert "the trip count M must be one int64 value, got float32" in convert_error(tmp_path, capsys, model)


def static_detection() -> bytes:
    """The detection seed with 2 boxes (the CPU backend compiles static shapes only)."""
    model = load(fuzz_new_ops.detection())
    for vi in model.graph.input:
        if vi.name in ("rois", "batch"):
            vi.type.tensor_type.shape.dim[0].dim_value = 2
    return model.SerializeToString()


def run_error(tmp_path, capsys, model: bytes, arrays: dict[str, np.ndarray], device: str = "ref") -> str:  # type: ignore[no-untyped-def]
    (tmp_path / "m.onnx").write_bytes(model)
    argv = [str(tmp_path / "m.onnx"), "--device", device, "--output", str(tmp_path / "o.npz")]
    for name, array in arrays.items():
        np.save(tmp_path / f"{name}.npy", array)
        argv += ["--input", f"{name}={tmp_path / name}.npy"]
    with pytest.raises(SystemExit) as info:
        ir_run.main(argv)
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1, err
    assert not (tmp_path / "o.npz").exists()
    return err


def test_run_time_resize_sizes_past_the_machines_memory(tmp_path, capsys):
    err = run_error(tmp_path, capsys, fuzz_new_ops.resize_runtime(), {"sizes": np.array([1, 1, 2**62, 1], np.int64)})
    assert err.startswith("irforge: error[E877]: nn.resample_to 'Resize_y': a run-time output of shape [1, 1, 4611686018427387904, 1]"), err


@pytest.mark.parametrize("device", ["ref", "cpu"])
def test_roi_align_of_nan_boxes(tmp_path, capsys, device):
    arrays = {"rois": np.full((2, 4), np.nan, np.float32), "batch": np.zeros(2, np.int64)}
    err = run_error(tmp_path, capsys, static_detection(), arrays, device)
    assert "error[E876]: nn.roi_align 'RoiAlign_pooled': rois hold NaN or infinite values" in err  # was IndexError at -2**63


def test_softmax_of_an_empty_run_time_tensor(tmp_path, capsys):
    (tmp_path / "m.onnx").write_bytes(fuzz_new_ops.flatten_dynamic())
    np.save(tmp_path / "x.npy", np.ones((2, 3, 0, 2), np.float32))
    ir_run.main([str(tmp_path / "m.onnx"), "--input", f"x={tmp_path / 'x.npy'}", "--output", str(tmp_path / "o.npz")])
    with np.load(tmp_path / "o.npz") as z:
        assert z["y"].shape == (6, 0)  # was ValueError from np.max over an empty axis


@pytest.mark.parametrize("device", ["ref", "cpu"])
def test_roi_align_adaptive_grid_of_a_box_of_negative_height_is_zero_as_onnxruntime(tmp_path, device):
    """sampling_ratio 0 and a box whose height is negative: ceil(h / pooled_h) <= 0 samples;
    onnxruntime (and ONNX's reference) average over max(count, 1) samples: 0. irforge took one
    sample (a number onnxruntime does not give)."""
    ort = pytest.importorskip("onnxruntime")
    model = load(static_detection())
    (roi,) = [n for n in model.graph.node if n.op_type == "RoiAlign"]
    set_attribute(roi, "sampling_ratio", 0)
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    rng = np.random.default_rng(0)
    feeds = {"scores": rng.random((1, 1, 6), np.float32), "k": np.array([2], np.int64), "feat": rng.standard_normal((1, 2, 8, 8)).astype(np.float32),
             "rois": np.array([[0.0, 3.0, 5.0, 1.0], [1.0, 1.0, 6.0, 5.0]], np.float32), "batch": np.zeros(2, np.int64)}
    argv = [str(tmp_path / "m.onnx"), "--device", device, "--output", str(tmp_path / "o.npz")]
    for name, array in feeds.items():
        np.save(tmp_path / f"{name}.npy", array)
        argv += ["--input", f"{name}={tmp_path / name}.npy"]
    ir_run.main(argv)
    want = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"]).run(["pooled"], feeds)[0]
    with np.load(tmp_path / "o.npz") as z:
        got = z["pooled"]
    assert np.all(want[0] == 0) and np.any(want[1] != 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis", [5, -3])
def test_split_axis_out_of_range_is_an_error_not_another_axis(tmp_path, capsys, axis):
    # `axis % rank` split [2, 7] along axis 1 for axis=5 (onnxruntime refuses the model)
    model = load(fuzz_new_ops.split_runtime())
    set_attribute(model.graph.node[0], "axis", axis)
    assert f"axis {axis} is out of range for an input of rank 2" in convert_error(tmp_path, capsys, model)


def resize_with_constant(name: str, value: np.ndarray) -> onnx.ModelProto:
    """The run-time Resize seed with its sizes (or scales) a constant."""
    model = load(fuzz_new_ops.resize_runtime())
    node = model.graph.node[0]
    if name == "scales":
        node.input[2], node.input[3] = "sizes", ""
    model.graph.initializer.append(numpy_helper.from_array(value, "sizes"))
    del model.graph.input[1]
    return model


@pytest.mark.parametrize("name, value, message", [
    ("sizes", np.array(7, np.int64), "sizes needs 4 values (one per axis), got 1"),  # was TypeError (a 0-d array)
    ("sizes", np.array([1, 1, np.nan, 3], np.float32), "sizes must be an integer tensor, got float32"),  # was ValueError
    ("scales", np.array([1, 1, np.nan, 2], np.float32), "scales values must be > 0, got [1, 1, nan, 2]"),  # was ValueError
    ("scales", np.array([1, 1, 1e30, 2], np.float32), "holds more than 2**50 elements"),  # was an IR with a dim of 4e30
])  # fmt: skip
def test_resize_constant_sizes_and_scales(tmp_path, capsys, name, value, message):
    assert message in convert_error(tmp_path, capsys, resize_with_constant(name, value))


def test_layer_normalization_axis_out_of_range(tmp_path, capsys):
    model = single("LayerNormalization", [2, 3, 4], 17, axis=3)
    model.graph.node[0].input.append("scale")
    model.graph.initializer.append(numpy_helper.from_array(np.ones(4, np.float32), "scale"))
    assert "axis 3 is out of range for an input of rank 3" in convert_error(tmp_path, capsys, model)  # was normalising over axis 0..


def test_shrink_of_integers_with_a_nan_bias(tmp_path, capsys):
    model = single("Shrink", [2, 3], 18, bias=float("nan"))
    model.graph.input[0].type.tensor_type.elem_type = T.INT32
    assert "attribute value nan has no int32 equivalent" in convert_error(tmp_path, capsys, model)  # was ValueError


def test_ir_xml_result_without_its_input(tmp_path, capsys):
    from irforge.tools import ir_opt

    (tmp_path / "m.onnx").write_bytes(fuzz_new_ops.col2im())
    ir_convert.main(["-m", str(tmp_path / "m.onnx"), "-o", str(tmp_path)])
    text = (tmp_path / "m.xml").read_text()
    start = text.index('type="Result"')
    port_start = text.index("<input>", start)
    port_end = text.index("</input>", port_start) + len("</input>")
    (tmp_path / "m.xml").write_text(text[:port_start] + text[port_end:])
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        ir_opt.main([str(tmp_path / "m.xml"), "-p", "infer-shapes", "-o", str(tmp_path / "o.mlir")])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and "Result) must have one input" in err and "error[E641]" in err, err  # was IndexError


@pytest.mark.parametrize("batch", [[0, 3], [-1, 0]])
def test_roi_align_batch_index_outside_the_batch(tmp_path, capsys, batch):
    # [0, 3] was an IndexError, [-1, 0] silently pooled the last image (onnxruntime refuses both)
    arrays = {"rois": np.array([[0, 0, 4, 4], [1, 2, 6, 7]], np.float32), "batch": np.array(batch, np.int64)}
    err = run_error(tmp_path, capsys, fuzz_new_ops.detection(), arrays)
    assert f"error[E875]: nn.roi_align 'RoiAlign_pooled': batch indices {batch} name an image outside the batch of 1" in err


@pytest.mark.parametrize("edit", ["axis past the rank", "sizes of floats"])
def test_ir_xml_interpolate_sizes_that_do_not_fit_its_axes(tmp_path, capsys, edit):
    """Interpolate-11 by constant sizes: an axis past the rank resized axis % rank, a NaN size
    raised ValueError in int()."""
    from irforge.tools import ir_opt

    model = resize_with_constant("sizes", np.array([1, 1, 8, 8], np.int64))
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    ir_convert.main(["-m", str(tmp_path / "m.onnx"), "-o", str(tmp_path)])
    text, weights = (tmp_path / "m.xml").read_text(), bytearray((tmp_path / "m.bin").read_bytes())
    assert 'name="Resize_y/sizes" type="Const" version="opset1">\n\t\t\t<data element_type="i64" shape="4" offset="0"' in text
    assert 'name="Resize_y/axes" type="Const" version="opset1">\n\t\t\t<data element_type="i64" shape="4" offset="32"' in text
    if edit == "axis past the rank":
        weights[32:64] = np.array([0, 1, 2, 7], np.int64).tobytes()
    else:
        weights[0:32] = np.array([1, 1, np.nan, 8], np.float64).tobytes()
        text = text.replace('name="Resize_y/sizes" type="Const" version="opset1">\n\t\t\t<data element_type="i64"',
                            'name="Resize_y/sizes" type="Const" version="opset1">\n\t\t\t<data element_type="f64"')
        text = text.replace('<port id="0" precision="I64">\n\t\t\t\t\t<dim>4</dim>', '<port id="0" precision="FP64">\n\t\t\t\t\t<dim>4</dim>', 1)
    (tmp_path / "m.xml").write_text(text)
    (tmp_path / "m.bin").write_bytes(bytes(weights))
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        ir_opt.main([str(tmp_path / "m.xml"), "-p", "infer-shapes", "-o", str(tmp_path / "o.mlir")])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1 and "do not fit axes" in err, err


def test_flatten_of_an_empty_batch_writes_an_ir_openvino_reads(tmp_path):
    """Flatten of a [0, 4, 1, 1] tensor was Reshape [0, -1]: OpenVINO resolves the -1 of an
    empty tensor to 1 ([0, 1]) and refused the MatMul after it."""
    ov = pytest.importorskip("openvino")
    from irforge.testing.onnx_models import resnet

    model = resnet(blocks=(1,), width=4, size=8)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 0
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    ir_convert.main(["-m", str(tmp_path / "m.onnx"), "-o", str(tmp_path)])
    read = ov.Core().read_model(str(tmp_path / "m.xml"))
    assert [list(o.get_partial_shape().to_shape()) for o in read.outputs] == [[0, 10]]


def test_ctrl_c_inside_a_cpu_host_step_is_not_a_failed_step():
    """A KeyboardInterrupt raised in a host step (Ctrl-C during a long loop on --device cpu)
    came back as E843 'the forward of nn.loop failed'; it stays a KeyboardInterrupt (E002)."""
    from irforge.backends.cpu.host_steps import HostStep
    from irforge.errors import IrforgeError

    def interrupted() -> None:
        raise KeyboardInterrupt

    step = HostStep("nn.loop", interrupted, [], [])
    step(None, 0, 1)
    with pytest.raises(KeyboardInterrupt):
        step.raise_pending()
    failing = HostStep("nn.loop", lambda: 1 / 0, [], [])
    failing(None, 0, 1)
    with pytest.raises(IrforgeError, match="the forward of nn.loop failed: ZeroDivisionError"):
        failing.raise_pending()
