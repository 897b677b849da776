"""Fuzz findings of session 11 (irforge/testing/fuzz_session10_ops.py's seeds of session 10's code,
mutated: `bench/fuzz_campaign.py --focus session10`, `bench/fuzz_numbers.py --only session10`;
the front door and fresh campaigns over every format): each input that gave a number other than
onnxruntime's, an internal error or a multi-line error is now onnxruntime's number or a
one-line coded error."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.helpers import ort_session_run


def _masked_then_scaled(constant_rows: bool, factor: float) -> onnx.ModelProto:
    """softmax(Where(keep, q @ k^T, -1e4) * factor) @ v, keep a run-time or constant condition."""
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Where", ["keep", "s", "fill"], ["w"]), helper.make_node("Mul", ["w", "factor"], ["x"]),
             helper.make_node("Softmax", ["x"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
    inits = [helper.make_tensor("fill", T.FLOAT, [], [-1e4]), helper.make_tensor("factor", T.FLOAT, [], [factor])]
    inputs = [helper.make_tensor_value_info(n, T.FLOAT, [1, 2, 4 if n == "q" else 3, 8]) for n in "qkv"]
    if constant_rows:
        rows = np.ones((1, 1, 4, 3), bool)
        rows[..., 0, :] = False  # a row masked throughout, and two keys of the next
        rows[..., 1, 1:] = False
        inits.append(onnx.numpy_helper.from_array(rows, "keep"))
    else:
        inputs.append(helper.make_tensor_value_info("keep", T.BOOL, [1, 1, 4, 3]))
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", T.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize(("constant_rows", "factor"), [(False, -0.5), (True, -0.25), (False, -1.0)])
def test_a_negative_factor_after_a_where_mask_is_not_fused(constant_rows: bool, factor: float) -> None:
    """Where(keep, s, -1e4) * -0.5: the fill becomes the row's largest logit, so the masked keys
    share the row equally (onnxruntime); the attention fusion took it as -0.5 * s + mask, the
    masked keys then weighted by exp(-0.5 * s): 20 of 40 values 0.72-0.76 off on ref, cpu and
    OpenVINO (fuzz_session10_ops.masked_rows). A Where whose fill reaches the softmax times a
    negative factor is left as it is."""
    proto = _masked_then_scaled(constant_rows, factor)
    rng = np.random.default_rng(11)
    feeds = {n: rng.standard_normal((1, 2, 4 if n == "q" else 3, 8)).astype(np.float32) * 3 for n in "qkv"}
    if not constant_rows:
        feeds["keep"] = rng.random((1, 1, 4, 3)) < 0.5
    (want,) = ort_session_run(proto, feeds)
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    assert not any(op.name == "nn.scaled_dot_product_attention" for op in model.func.body.block.ops)
    np.testing.assert_allclose(run(model, feeds)["y"], want, rtol=1e-5, atol=1e-6)


def _padding_mask() -> onnx.ModelProto:
    """Emformer's padding mask through dynamo: Where(Range(0, max(lengths)) >= lengths, -1e8, s)
    over [N, H, L, L] scores; the mask's last size is max(lengths), known only at run time."""
    n, h, length, e = 2, 2, 4, 8
    ints = lambda name, values: helper.make_tensor(name, T.INT64, [len(values)] if isinstance(values, list) else [], values if isinstance(values, list) else [values])  # noqa: E731
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]), helper.make_node("MatMul", ["q", "kt"], ["s0"]),
             helper.make_node("Reshape", ["s0", "split"], ["s"]), helper.make_node("ReduceMax", ["lengths"], ["longest"], keepdims=0),
             helper.make_node("Range", ["zero", "longest", "one"], ["keys"]), helper.make_node("Unsqueeze", ["lengths", "col"], ["lc"]),
             helper.make_node("GreaterOrEqual", ["keys", "lc"], ["pad0"]), helper.make_node("Unsqueeze", ["pad0", "heads"], ["pad"]),
             helper.make_node("Where", ["pad", "fill", "s"], ["x0"]), helper.make_node("Reshape", ["x0", "join"], ["x"]),
             helper.make_node("Softmax", ["x"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
    inits = [ints("split", [n, h, length, -1]), ints("join", [n * h, length, -1]), ints("zero", 0), ints("one", 1), ints("col", [1]),
             ints("heads", [1, 2]), helper.make_tensor("fill", T.FLOAT, [], [-1e8])]
    inputs = [helper.make_tensor_value_info(x, T.FLOAT, [n * h, length, e]) for x in "qkv"]
    inputs.append(helper.make_tensor_value_info("lengths", T.INT64, [n]))
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", T.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("device", ["ref", "cpu"])
def test_run_time_sizes_that_do_not_fit_are_a_clean_error(tmp_path, device: str) -> None:
    """lengths [3, 8] make the padding mask [2, 1, 1, 8] for [2, 2, 4, 4] scores (onnxruntime
    refuses them at run time): the fused attention's numpy broadcast raised ValueError, an
    internal error on ref and cpu (its host segments); a plain Add of two named dims fed [3]
    and [4] too. Now E122 naming the shapes (fuzz_session10_ops.padded_lengths, ir-run's
    random lengths)."""
    from irforge.testing.fuzz import run_tool_in_process

    onnx.save(_padding_mask(), tmp_path / "m.onnx")
    rng = np.random.default_rng(12)
    argv = [str(tmp_path / "m.onnx"), "--device", device, "--output", str(tmp_path / "o.npz")]
    for name in "qkv":
        np.save(tmp_path / f"{name}.npy", rng.standard_normal((4, 4, 8)).astype(np.float32))
        argv += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    np.save(tmp_path / "lengths.npy", np.array([3, 8], np.int64))
    code, err, _ = run_tool_in_process("ir-run", [*argv, "--input", f"lengths={tmp_path / 'lengths.npy'}"], timeout=120)
    assert code == 2 and "error[E122]" in err and "[2, 1, 1, 8]" in err, err
    assert not (tmp_path / "o.npz").exists()


def test_named_dims_fed_sizes_that_do_not_broadcast_are_a_clean_error(tmp_path) -> None:
    from irforge.testing.fuzz import run_tool_in_process

    graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "g",
                              [helper.make_tensor_value_info("a", T.FLOAT, ["n"]), helper.make_tensor_value_info("b", T.FLOAT, ["m"])],
                              [helper.make_tensor_value_info("y", T.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "add.onnx")
    np.save(tmp_path / "a.npy", np.zeros(3, np.float32))
    np.save(tmp_path / "b.npy", np.zeros(4, np.float32))
    code, err, _ = run_tool_in_process("ir-run", [str(tmp_path / "add.onnx"), "--input", f"a={tmp_path / 'a.npy'}", "--input",
                                                  f"b={tmp_path / 'b.npy'}", "--output", str(tmp_path / "o.npz")], timeout=60)
    assert code == 2 and "error[E122]" in err and "[3], [4]" in err, err


def _runtime_kt(q: np.ndarray) -> onnx.ModelProto:
    """q @ k^T with dynamo's k^T of a dynamic-axes k [B, 2, L, 8]: reshapes to [-1, L, 8] and
    [B, 2, 8, L], slices of Shape(k)."""
    ints = lambda name, v: helper.make_tensor(name, T.INT64, [1], [v])  # noqa: E731
    nodes = [helper.make_node("Shape", ["k"], ["shape"]),
             helper.make_node("Slice", ["shape", "m2", "m1"], ["rows"]), helper.make_node("Slice", ["shape", "m1", "big"], ["width"]),
             helper.make_node("Slice", ["shape", "mbig", "m2"], ["lead"]),
             helper.make_node("Concat", ["rest", "rows", "width"], ["t1"], axis=0), helper.make_node("Reshape", ["k", "t1"], ["flat"]),
             helper.make_node("Transpose", ["flat"], ["ft"], perm=[0, 2, 1]),
             helper.make_node("Concat", ["lead", "width", "rows"], ["t2"], axis=0), helper.make_node("Reshape", ["ft", "t2"], ["kt"]),
             helper.make_node("MatMul", ["q", "kt"], ["y"])]
    inits = [ints("m2", -2), ints("m1", -1), ints("big", 2**62), ints("mbig", -(2**62)), ints("rest", -1), onnx.numpy_helper.from_array(q, "q")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("k", T.FLOAT, ["B", 2, "L", 8])],
                              [helper.make_tensor_value_info("y", T.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_sizes_read_from_slices_of_a_shape_are_known_at_conversion(tmp_path) -> None:
    """A [5, 5] q times dynamo's run-time k^T of a [B, 2, L, 8] k: no input makes it run
    (onnxruntime fails at run time); irforge wrote an IR with exit 0 that OpenVINO refused to
    read (its shape inference knows the slices of Shape(k): 5 columns against 8 rows). The
    sizes a slice of a shape holds are now known (`indexing.known_elements`): E041 at
    conversion; with a [1, 2, 5, 8] q the product converts with its static sizes."""
    from irforge.testing.fuzz import run_tool_in_process

    onnx.save(_runtime_kt(np.ones((5, 5), np.float32)), tmp_path / "bad.onnx")
    code, err, _ = run_tool_in_process("ir-convert", ["-m", str(tmp_path / "bad.onnx"), "-o", str(tmp_path / "bad")], timeout=60)
    assert code == 2 and "error[E041]" in err and "5 columns but b has 8 rows" in err, err
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())
    model = import_onnx(_runtime_kt(np.ones((1, 2, 5, 8), np.float32)))
    (y,) = model.func.body.block.ops.last.operands  # type: ignore[union-attr]
    assert list(y.type.get_shape())[1:3] == [2, 5]


def test_a_bad_cache_cap_is_refused_before_the_compile(tmp_path, monkeypatch) -> None:
    """IRFORGE_CACHE_MAX_MB='1e3' was E148 only when the compiled program was saved: after the
    whole compile, with its objects already in the folder. Now before anything is compiled."""
    from irforge.backends.cpu import compile_model
    from irforge.errors import IrforgeError

    monkeypatch.setenv("IRFORGE_CACHE_MAX_MB", "1e3")
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", T.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with pytest.raises(IrforgeError, match="IRFORGE_CACHE_MAX_MB") as caught:
        compile_model(import_onnx(model), cache_dir=tmp_path / "cache")
    assert caught.value.code == "E148"
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


@pytest.mark.parametrize(("lift", "fused"), [(2e4, False), (1e5, False), (50.0, True), (-5e3, True)])
def test_a_constant_mask_that_lifts_a_where_fill_is_not_fused(lift: float, fused: bool) -> None:
    """GPT-Neo's softmax(Where(keep, s, -1e4) + mask) with a constant mask of +2e4 on two
    masked keys: their logits are then the row's largest and equal (uniform between them);
    fused as s + (Where(keep, 0, -1e4) + mask) they were weighted by exp(s): 3.8 off on ref.
    A constant mask that lifts the fill above -1e3 keeps the graph as it is (both the export
    pattern and the chain pattern); a relative-position bias of +50 still fuses."""
    keep = np.tril(np.ones((4, 4), bool))
    mask = np.zeros((1, 1, 4, 4), np.float32)
    mask[..., 2:] = lift
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Where", ["keep", "s", "fill"], ["w"]), helper.make_node("Add", ["w", "m"], ["x"]),
             helper.make_node("Softmax", ["x"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
    inits = [onnx.numpy_helper.from_array(keep, "keep"), helper.make_tensor("fill", T.FLOAT, [], [-1e4]),
             onnx.numpy_helper.from_array(mask, "m")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, T.FLOAT, [1, 2, 4, 8]) for n in "qkv"],
                              [helper.make_tensor_value_info("y", T.FLOAT, None)], inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    proto.ir_version = 8
    rng = np.random.default_rng(13)
    feeds = {n: rng.standard_normal((1, 2, 4, 8)).astype(np.float32) * 3 for n in "qkv"}
    (want,) = ort_session_run(proto, feeds)
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    assert any(op.name == "nn.scaled_dot_product_attention" for op in model.func.body.block.ops) == fused
    np.testing.assert_allclose(run(model, feeds)["y"], want, rtol=1e-5, atol=1e-5)
