"""Findings of session 12 (the wrong numbers session 11 left open, and fuzz_session11_ops.py's
seeds of session 11's code, mutated): each input that gave a number other than onnxruntime's,
an internal error or a multi-line error is now onnxruntime's number or a one-line coded error."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx


def _model(nodes: list, inputs: list, inits: list | None = None, opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", T.FLOAT, None)], inits or [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _gather(elements: bool, index_type: int) -> onnx.ModelProto:
    """Gather (axis 1) or GatherElements (axis 1) of a [2, 5, 3] tensor by run-time indices."""
    op = "GatherElements" if elements else "Gather"
    shape = [2, 4, 3] if elements else [2, 3]
    return _model([helper.make_node(op, ["x", "i"], ["y"], axis=1)],
                  [helper.make_tensor_value_info("x", T.FLOAT, [2, 5, 3]), helper.make_tensor_value_info("i", index_type, shape)])


@pytest.mark.parametrize("elements", [False, True])
@pytest.mark.parametrize(("index_type", "dtype"), [(T.INT64, np.int64), (T.INT32, np.int32)])
@pytest.mark.parametrize("bad", [5, -6, 1 << 40])
def test_native_gather_of_an_index_out_of_range_is_e880(tmp_path, elements: bool, index_type: int, dtype, bad: int) -> None:
    """The native Gather / GatherElements kernels gave 0 for an index outside [-5, 5) where the
    reference and onnxruntime raise: a silent number on cpu. The kernel now sets a check word
    and the executable raises the reference's error after the run (Gather's E858,
    GatherElements' E880); in-range indices (negative
    ones from the end) still give onnxruntime's numbers, and the next run with good indices
    is not reported."""
    from irforge.backends.cpu import compile_model
    from irforge.backends.reference import run

    if index_type == T.INT32 and bad == 1 << 40:
        bad = -(1 << 31)
    proto = _gather(elements, index_type)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 3)).astype(np.float32)
    shape = (2, 4, 3) if elements else (2, 3)
    good = rng.integers(-5, 5, shape).astype(dtype)
    compiled = compile_model(import_onnx(proto), threads=2, cache_dir=tmp_path / "cache")
    try:
        from tests.helpers import ort_session_run

        (want,) = ort_session_run(proto, {"x": x, "i": good})
        np.testing.assert_array_equal(compiled({"x": x, "i": good})["y"], want)
        wrong = good.copy()
        wrong.flat[-2] = bad
        with pytest.raises(IrforgeError) as caught:
            compiled({"x": x, "i": wrong})
        with pytest.raises(IrforgeError) as expected:
            run(import_onnx(proto), {"x": x, "i": wrong})
        assert caught.value.code == expected.value.code == ("E880" if elements else "E858")
        text = f"index {bad} is out of range for a dim of size 5" if elements else f"indices must be in [-5, 4] for axis 1 (index {bad})"
        assert text in str(caught.value), caught.value
        np.testing.assert_array_equal(compiled({"x": x, "i": good})["y"], want)
    finally:
        compiled.close()


def test_native_gather_error_survives_the_program_cache(tmp_path) -> None:
    """A cached program (no lowering) still has the check word and its message."""
    from irforge.backends.cpu import compile_model

    proto = _gather(False, T.INT64)
    x = np.ones((2, 5, 3), np.float32)
    for _ in range(2):  # the second compile is a program-cache hit
        compiled = compile_model(import_onnx(proto), threads=1, cache_dir=tmp_path / "cache")
        try:
            with pytest.raises(IrforgeError, match=r"\(index 7\)") as caught:
                compiled({"x": x, "i": np.array([[0, 1, 7], [0, 0, 0]], np.int64)})
            assert caught.value.code == "E858"
        finally:
            compiled.close()


def _where_then_mask(fill: float, factor: float | None) -> onnx.ModelProto:
    """softmax(Where(keep, q @ k^T, fill) [* factor] + mask) @ v: keep a constant causal mask
    (every row keeps a key), mask a run-time input."""
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Where", ["keep", "s", "fill"], ["w"])]
    keep = np.tril(np.ones((4, 6), bool), 2).reshape(1, 1, 4, 6)
    inits = [helper.make_tensor("fill", T.FLOAT, [], [fill]), onnx.numpy_helper.from_array(keep, "keep")]
    if factor is not None:
        nodes.append(helper.make_node("Mul", ["w", "factor"], ["ws"]))
        inits.append(helper.make_tensor("factor", T.FLOAT, [], [factor]))
    nodes += [helper.make_node("Add", ["ws" if factor is not None else "w", "mask"], ["x"]),
              helper.make_node("Softmax", ["x"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
    inputs = [helper.make_tensor_value_info(n, T.FLOAT, [1, 2, 4 if n == "q" else 6, 8]) for n in "qkv"]
    inputs.append(helper.make_tensor_value_info("mask", T.FLOAT, [1, 1, 1, 6]))
    return _model(nodes, inputs, inits, opset=18)


@pytest.mark.parametrize(("fill", "factor", "fused"), [(-1e4, None, False), (-1e4, 0.125, False), (-1e9, None, False),
                                                       (float(np.finfo(np.float32).min), None, True)])
def test_a_positive_run_time_mask_after_a_where_is_honoured(fill: float, factor: float | None, fused: bool) -> None:
    """softmax(Where(keep, s, -1e4) + mask) with a run-time mask of +2e4 on two keys: their
    masked logits are the row's largest and equal in the source (onnxruntime), weighted by
    exp(s) fused (the fusion took a run-time mask as 0 or very negative). A run-time mask
    after a fill that does not absorb the scores is no longer fused (the export pattern and
    the chain pattern); after float32's min (HF's causal Where, then the padding mask) it
    still is, and equal."""
    rng = np.random.default_rng(5)
    feeds = {n: rng.standard_normal((1, 2, 4 if n == "q" else 6, 8)).astype(np.float32) for n in "qkv"}
    feeds["mask"] = np.array([0, 2e4, 0, 2e4, -1e4, 0], np.float32).reshape(1, 1, 1, 6)
    _check_fused(_where_then_mask(fill, factor), feeds, fused=fused)


def test_int4_weights_grouped_along_the_output_axis_compile_on_openvino(tmp_path) -> None:
    """int4.onnx's weights [8, 6] blocked by 2 along axis 1 (N of x @ w) were written as
    OpenVINO's grouped decompression [8, 3, 2]: OpenVINO reads it, but its CPU plugin (2026.4,
    ConvertFullyConnectedToFullyConnectedCompressed, which groups along K only) failed to
    compile it ("Incompatible MatMul matrix dimension 8 / 24"). Such weights are dequantized
    at conversion; blocks along K stay 4-bit (test_onnx_int4.py)."""
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.testing.fuzz_session6_ops import int4_dequantize
    from tests.backends.ir_xml_support import run_openvino
    from tests.helpers import ort_session_run

    proto = onnx.load_from_string(int4_dequantize())
    feeds = {"x": np.random.default_rng(2).standard_normal((2, 8)).astype(np.float32)}
    (want,) = ort_session_run(proto, feeds)
    xml, _ = write_ir_xml(import_onnx(proto), tmp_path / "int4.xml")
    assert 'precision="I4"' not in xml.read_text()
    np.testing.assert_allclose(run_openvino(xml, feeds)["z"], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("bound", "text"), [(np.array([0.0, 30.0], np.float32), "must be a scalar"),
                                             (np.array([1 << 40], np.int64), "is i64, its input f32")])
def test_clip_bounds_that_are_not_scalars_of_the_input_type_are_refused(bound: np.ndarray, text: str) -> None:
    """fuzz_session11_ops.gathers with Clip's min replaced by a [2] tensor, or an int64 [1]
    one for a float input (onnxruntime refuses both): float() of it raised TypeError, an
    internal error. Now E041 naming the bound; a [1] float bound is still taken."""
    clip = [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])]
    x = [helper.make_tensor_value_info("x", T.FLOAT, [2, 3])]
    hi = onnx.numpy_helper.from_array(np.array(1.0, np.float32), "hi")
    with pytest.raises(IrforgeError, match=text) as caught:
        import_onnx(_model(clip, x, [onnx.numpy_helper.from_array(bound, "lo"), hi]))
    assert caught.value.code == "E041"
    import_onnx(_model(clip, x, [onnx.numpy_helper.from_array(np.array([-1.0], np.float32), "lo"), hi]))


FMIN = float(np.finfo(np.float32).min)


def _where_attention(scale: float, after: str | None) -> onnx.ModelProto:
    """softmax(Where(keep, (q * scale) @ k^T, float32's min) [* 0.125 | + mask]) @ v, keep a
    run-time [1, 1, 4, 6] condition (rows of it may be all False)."""
    nodes = [helper.make_node("Mul", ["q", "c"], ["qs"]), helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["qs", "kt"], ["s"]), helper.make_node("Where", ["keep", "s", "fill"], ["w"])]
    inits = [helper.make_tensor("c", T.FLOAT, [], [scale]), helper.make_tensor("fill", T.FLOAT, [], [FMIN])]
    inputs = [helper.make_tensor_value_info(n, T.FLOAT, [1, 2, 4 if n == "q" else 6, 8]) for n in "qkv"]
    inputs.append(helper.make_tensor_value_info("keep", T.BOOL, [1, 1, 4, 6]))
    last = "w"
    if after == "scaled":
        nodes.append(helper.make_node("Mul", ["w", "eighth"], ["x"]))
        inits.append(helper.make_tensor("eighth", T.FLOAT, [], [0.125]))
        last = "x"
    elif after == "mask":
        nodes.append(helper.make_node("Add", ["w", "mask"], ["x"]))
        inputs.append(helper.make_tensor_value_info("mask", T.FLOAT, [1, 1, 1, 6]))
        last = "x"
    nodes += [helper.make_node("Softmax", [last], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
    return _model(nodes, inputs, inits, opset=18)


def _check_fused(proto: onnx.ModelProto, feeds: dict, tmp_path=None, fused: bool = True) -> None:  # type: ignore[no-untyped-def]
    """ref and cpu (1 thread, no cache) against onnxruntime, the attention fused or not as
    `fused` says; OpenVINO on the written IR too when given a folder."""
    from irforge.backends.cpu import compile_model
    from irforge.backends.reference import run
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
    from tests.helpers import ort_session_run

    (want,) = ort_session_run(proto, feeds)
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    assert any(op.name == "nn.scaled_dot_product_attention" for op in model.func.body.block.ops) == fused
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(run(model, feeds)["y"], want, rtol=1e-5, atol=1e-5)
        compiled = compile_model(model, threads=1, cache_dir=False)
        try:
            np.testing.assert_allclose(compiled(feeds)["y"], want, rtol=1e-4, atol=1e-5)
        finally:
            compiled.close()
    if tmp_path is not None:
        from irforge.backends.ir_xml import write_ir_xml
        from tests.backends.ir_xml_support import run_openvino

        xml, _ = write_ir_xml(model, tmp_path / "a.xml")  # (the fused graph)
        text = xml.read_text()  # the fused op: its opset layer, or its layers where its fill selects (session 15)
        assert "ScaledDotProductAttention" in text or '/logits" type="Select"' in text
        np.testing.assert_allclose(run_openvino(xml, feeds)["y"], want, rtol=1e-4, atol=1e-5)


def _feeds(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    feeds = {n: rng.standard_normal((1, 2, 4 if n == "q" else 6, 8)).astype(np.float32) for n in "qkv"}
    keep = np.tril(np.ones((4, 6), bool), 1)
    keep[2] = False  # a row masked throughout (a padded query)
    feeds["keep"] = keep.reshape(1, 1, 4, 6)
    return feeds


@pytest.mark.parametrize("after", [None, "scaled"])
@pytest.mark.parametrize(("scale", "poison"), [(1e37, None), (0.35, np.inf), (0.35, np.nan)])
def test_a_row_masked_throughout_is_the_mean_of_v_whatever_its_scores(tmp_path, after: str | None, scale: float, poison: float | None) -> None:  # type: ignore[no-untyped-def]
    """rtkeys.onnx #18: scores that overflow (q * 1e37) or are inf / NaN (in q) on a row a
    run-time Where(keep, s, float32's min) masks throughout: onnxruntime's row is the fill
    alone, uniform, the mean of v; fused, s + fill was NaN or softmax(s) there (the fill
    absorbs only |s| < 1e22). Such rows are now taken from the mean of v (the export pattern,
    and the chain pattern for a Where scaled after it)."""
    feeds = _feeds(7)
    if poison is not None:
        feeds["q"][0, :, 2, 3] = poison  # the masked row's query
    _check_fused(_where_attention(scale, after), feeds, tmp_path)


@pytest.mark.parametrize("value", [1e30, 1e38, float(np.nextafter(np.float32(np.finfo(np.float32).max), np.float32(0)))])
def test_a_huge_run_time_mask_after_a_float32_min_fill(tmp_path, value: float) -> None:  # type: ignore[no-untyped-def]
    """Where(keep, s, float32's min) + mask with a run-time mask of 1e30 and more at masked and
    kept keys (two keys of each row, the row masked throughout included): fill + mask stays at
    or below -2e31 for every float32 below float32's max, absorbing s, so the fused s + (fill +
    mask) is the source's logit; equal to onnxruntime on ref and cpu."""
    feeds = _feeds(9)
    feeds["mask"] = np.array([0, value, 0, 0, value, 0], np.float32).reshape(1, 1, 1, 6)
    _check_fused(_where_attention(0.35, "mask"), feeds, tmp_path)


def test_attention_over_no_keys_is_zero_on_the_reference() -> None:
    """rtkeys.onnx #79 (fuzz_numbers --only session10 --seed 131): queries and keys cut to
    max(lengths) = 0 at run time, fused into one attention: the reference's softmax took the
    max of empty rows (internal error); onnxruntime's unfused graph gives p @ v = 0."""
    from irforge.backends.reference import run
    from irforge.passes import apply_pipeline
    from irforge.testing.fuzz_session10_ops import runtime_keys
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
    from tests.helpers import ort_session_run

    proto = onnx.load_from_string(runtime_keys())
    rng = np.random.default_rng(3)
    feeds = {"q": rng.standard_normal((2, 2, 5, 8)), "k": rng.standard_normal((2, 2, 3, 8)), "v": rng.standard_normal((2, 2, 3, 8)),
             "bias": rng.standard_normal((2, 1, 5, 3)), "qbias": rng.standard_normal((2, 2, 5, 5))}
    feeds = {n: a.astype(np.float32) for n, a in feeds.items()}
    feeds["keep"] = np.ones((2, 1, 1, 3), bool)
    feeds["lengths"] = np.zeros(2, np.int64)
    want = ort_session_run(proto, feeds)
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    got = run(model, feeds)
    for expected, name in zip(want, [o.name for o in proto.graph.output]):
        np.testing.assert_allclose(got[name], expected, rtol=1e-5, atol=1e-6)
