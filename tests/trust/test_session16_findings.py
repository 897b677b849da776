"""Findings of session 16 (session 14's open Winograd leftover, and session 15's new CPU code
fuzzed): each input that gave a number other than onnxruntime's (or the reference's), a crash
or an internal error is now the source's number or a one-line coded error."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

from irforge.frontends.onnx import import_onnx
from tests.trust.test_session14_findings import _model, _run_cpu


def _reference(proto: onnx.ModelProto, feeds: dict) -> np.ndarray:
    from irforge.backends.reference import run

    with np.errstate(all="ignore"):
        return run(import_onnx(proto), feeds)["y"]


# -- Winograd: a non-finite input stays local (ops.winograd.NONFINITE_GUARD) ----------------

WINOGRAD_CASES = {
    # name: (C, O, H = W, stride, dilation, group, the layer's tile size by default)
    "f4_s1": (64, 32, 28, 1, 1, 1, 4),
    "f2_s1_odd": (32, 32, 13, 1, 1, 1, 2),
    "f2_s2": (32, 32, 28, 2, 1, 1, 2),
    "f4_s2": (32, 32, 56, 2, 1, 1, 4),
    "dilated": (32, 32, 28, 1, 2, 1, 2),
    "grouped": (64, 64, 28, 1, 1, 2, 4),
    "k_blocks": (400, 24, 28, 1, 1, 1, 4),  # C over the pack's K block (KC = 384): the fix-up reads U across two
}


def _conv_case(name: str, residual: bool, rng: np.random.Generator) -> tuple[onnx.ModelProto, dict, tuple]:
    """Conv(3x3) [+ bias] [-> Add(r) -> Relu] of `WINOGRAD_CASES[name]`, with its geometry."""
    c, o, hw, stride, dilation, group, _ = WINOGRAD_CASES[name]
    w = (rng.standard_normal((o, c // group, 3, 3)) / (3 * c) ** 0.5).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    oh = (hw + 2 * dilation - 2 * dilation - 1) // stride + 1
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c" if residual else "y"], kernel_shape=[3, 3], pads=[dilation] * 4,
                              strides=[stride] * 2, dilations=[dilation] * 2, group=group)]
    inputs = [helper.make_tensor_value_info("x", T.FLOAT, [1, c, hw, hw])]
    feeds = {"x": rng.standard_normal((1, c, hw, hw)).astype(np.float32)}
    if residual:
        nodes += [helper.make_node("Add", ["c", "r"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
        inputs.append(helper.make_tensor_value_info("r", T.FLOAT, [1, o, oh, oh]))
        feeds["r"] = rng.standard_normal((1, o, oh, oh)).astype(np.float32)
    inits = [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(bias, "b")]
    return _model(nodes, inputs, inits), feeds, (c, o, hw, stride, dilation, group, oh)


def _takes_winograd(geometry: tuple, residual: bool) -> int:
    """The layer's Winograd tile size (the test's premise), 0 where it would not take Winograd."""
    from irforge.backends.cpu.codegen.conv import ConvGeometry
    from irforge.backends.cpu.ops.dilated import dilated_winograd_pays, phase_geometry
    from irforge.backends.cpu.ops.winograd import tile_size, winograd_pays
    from irforge.backends.cpu.codegen.epilogue import Epilogue

    c, o, hw, stride, dilation, group, oh = geometry
    g = ConvGeometry(1, c, hw, hw, 3, 3, oh, oh, (stride, stride), (dilation, dilation), (dilation, dilation), group)
    if dilation > 1:
        sub = phase_geometry(g)
        return tile_size(sub, o) if sub is not None and dilated_winograd_pays(g, Epilogue(residual=residual)) else 0
    return tile_size(g, o) if winograd_pays(g, o) else 0


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan, 1e36])
@pytest.mark.parametrize("name", sorted(WINOGRAD_CASES))
def test_a_winograd_layer_keeps_a_non_finite_input_local(monkeypatch: pytest.MonkeyPatch, name: str, value: float) -> None:
    """Session 14's open finding (fuzz_cpu_kernels.py --kinds stride2 --seed 6 #19): a Winograd
    tile mixes all its inputs, zero coefficients too (inf * 0 = NaN), so one inf or NaN input
    made every output of its tile non-finite where the direct window keeps it to the outputs
    that cover it; a finite 1e36 overflowed in the transforms (x 100 and x 361 for F(4x4))
    where the direct sums stay finite. Now the planes holding such a value are flagged before
    the input transform and the tiles that read one recomputed by the direct window
    (`winograd.NONFINITE_GUARD`), with the bias, a residual and ReLU. The values at a tile's
    corner, on the border and in the middle; every kind of layer that takes Winograd (F(2x2),
    F(4x4), stride 2, dilated phases, groups by `GROUPED`), one and two threads."""
    import irforge.backends.cpu.ops.winograd as winograd

    monkeypatch.setattr(winograd, "NONFINITE_GUARD", True)
    monkeypatch.setattr(winograd, "GROUPED", True)  # (the grouped case; others are alike)
    rng = np.random.default_rng(len(name))
    residual = name not in ("dilated",)  # (dilated phases take no residual)
    proto, feeds, geometry = _conv_case(name, residual, rng)
    assert _takes_winograd(geometry, residual) == WINOGRAD_CASES[name][-1]
    hw = geometry[2]
    feeds["x"][0, 5, hw // 2, hw // 2 + 1] = value
    feeds["x"][0, 1, 0, 0] = value
    feeds["x"][0, 2, hw - 1, hw - 3] = value
    want = _reference(proto, feeds)
    assert (~np.isfinite(want)).any() == (not np.isfinite(value)) and np.isfinite(want).mean() > 0.7
    for threads in (1, 2):
        got = _run_cpu(import_onnx(proto), feeds, threads)["y"]
        np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_the_winograd_guard_leaves_finite_inputs_bit_equal(monkeypatch: pytest.MonkeyPatch) -> None:
    """With finite inputs the guard's fix-up writes nothing: the outputs are the Winograd
    layer's bit for bit, guard on or off (`winograd.NONFINITE_GUARD`)."""
    import irforge.backends.cpu.ops.winograd as winograd

    proto, feeds, geometry = _conv_case("f4_s1", True, np.random.default_rng(5))
    assert _takes_winograd(geometry, True) == 4
    outs = {}
    for guard in (False, True):
        monkeypatch.setattr(winograd, "NONFINITE_GUARD", guard)
        outs[guard] = _run_cpu(import_onnx(proto), feeds, 2)["y"]
    np.testing.assert_array_equal(outs[True], outs[False])


@pytest.mark.parametrize(("m", "stride"), [(2, 1), (4, 1), (2, 2), (4, 2)])
def test_the_fix_up_reads_each_tap_back_from_the_transformed_weights(m: int, stride: int) -> None:
    """The fix-up reads the 3x3 weights back from U = G g G^T (`taps_from_points`, a left
    inverse of G of one or two points per tap): exact in fractions, and on f32 U within a few
    ulps of the taps' magnitude (the corners exactly)."""
    from fractions import Fraction

    from irforge.backends.cpu.codegen.winograd import matrices, transform_weights
    from irforge.backends.cpu.codegen.winograd_guard import taps_from_points

    g = matrices(m, stride)[1]
    inverse = taps_from_points(g)
    assert all(1 <= len(row) <= 2 for row in inverse)
    for t, row in enumerate(inverse):
        assert [sum((c * Fraction(g[i][k]) for i, c in row), Fraction(0)) for k in range(3)] == [int(t == k) for k in range(3)]
    w = np.random.default_rng(m + stride).standard_normal((8, 5, 3, 3)).astype(np.float32)
    u = transform_weights(w, m, stride).astype(np.float64)
    a = len(g)
    back = np.zeros_like(w, np.float64)
    for ky in range(3):
        for kx in range(3):
            for px, cy in inverse[ky]:
                for py, cx in inverse[kx]:
                    back[:, :, ky, kx] += float(cy * cx) * u[px * a + py]
    np.testing.assert_allclose(back, w, rtol=0, atol=16 * np.finfo(np.float32).eps * np.abs(w).max())
    corners = (slice(None), slice(None), [0, 0, 2, 2], [0, 2, 0, 2])
    np.testing.assert_array_equal(back[corners].astype(np.float32), w[corners])


def test_the_winograd_guard_keeps_no_second_copy_of_the_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    """Session 16's guard kept the raw 3x3 weights among the program's constants for its
    fix-up (ResNet-50 +43 MiB); it now reads them back from the packed U, so the constants are
    the same guard on or off but for the one-float bound."""
    import irforge.backends.cpu.ops.winograd as winograd
    from irforge.backends.cpu import compile_model

    proto, _, geometry = _conv_case("f4_s1", True, np.random.default_rng(5))
    assert _takes_winograd(geometry, True) == 4
    sizes = {}
    for guard in (False, True):
        monkeypatch.setattr(winograd, "NONFINITE_GUARD", guard)
        compiled = compile_model(import_onnx(proto), threads=1, cache_dir=False)
        sizes[guard] = compiled.stats.constant_bytes
        compiled.close()
    assert sizes[True] - sizes[False] == 4


@pytest.mark.parametrize("name", ["f2_s1_odd", "f4_s1"])
def test_weights_whose_transform_would_overflow_take_the_direct_path(name: str) -> None:
    """Weights of 3e38 overflow U = G g G^T (up to 2.25x the largest weight for F(2x2)),
    and the guard's fix-up reads its taps back from U: such a layer takes a direct path
    (`winograd.weights_fit`), whose sums stay finite as the reference's do."""
    from irforge.backends.cpu.ops.winograd import weights_fit

    proto, feeds, geometry = _conv_case(name, False, np.random.default_rng(9))
    w = onnx.numpy_helper.to_array(proto.graph.initializer[0]).copy()
    w[3, 5] = 3e38  # all nine taps: U's middle points sum them (x 0.25 for F(2x2): inf)
    assert not weights_fit(w) and weights_fit(w / 8)
    proto.graph.initializer[0].CopyFrom(onnx.numpy_helper.from_array(w, "w"))
    feeds["x"] = np.random.default_rng(3).uniform(-0.5, 0.5, feeds["x"].shape).astype(np.float32)
    feeds["x"][:, 5] *= 0.05  # the direct sums stay finite
    want = _reference(proto, feeds)
    assert np.isfinite(want).all() and np.abs(want).max() > 1e37
    got = _run_cpu(import_onnx(proto), feeds, 2)["y"]
    np.testing.assert_allclose(got[:, 3], want[:, 3], rtol=1e-4, atol=1e-6 * np.abs(want).max())
    others = [c for c in range(want.shape[1]) if c != 3]
    np.testing.assert_allclose(got[:, others], want[:, others], rtol=1e-4, atol=1e-4)


# -- attention chains: a Where over an added run-time mask -----------------------------------


def test_a_where_over_an_added_run_time_mask_keeps_its_fill(monkeypatch: pytest.MonkeyPatch) -> None:
    """fuzz_attention_chains.py 1601 30 --openvino, #29: softmax(Where(keep, q k^T * 0.35 + a,
    -1e30) / 10) v with a run-time additive mask a holding +1e30 at a key the constant Where
    masks. The source's Where replaces that score, a included, by -1e30 (probability 0); the
    fused op summed the masks (Select(keep, 0, -1e29) + 0.1 a = 0 there): the key kept, on ref,
    cpu and OpenVINO alike (48 of 64 values off). Such chains now stay unfused
    (`attention_chains.FILL_OVER_ADDED_UNFUSED`)."""
    from irforge.passes import apply_pipeline
    from irforge.passes.patterns.subgraphs import attention_chains
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
    from tests.helpers import ort_session_run

    monkeypatch.setattr(attention_chains, "FILL_OVER_ADDED_UNFUSED", True)
    keep = np.ones((1, 1, 4, 6), bool)
    keep[0, 0, :3, 5] = False
    nodes = [helper.make_node("Mul", ["q", "c"], ["qs"]), helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["qs", "kt"], ["s"]), helper.make_node("Add", ["s", "a"], ["x1"]),
             helper.make_node("Where", ["keep", "x1", "fill"], ["x2"]), helper.make_node("Div", ["x2", "ten"], ["x3"]),
             helper.make_node("Softmax", ["x3"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
    inits = [helper.make_tensor("c", T.FLOAT, [], [0.35]), helper.make_tensor("fill", T.FLOAT, [], [-1e30]),
             helper.make_tensor("ten", T.FLOAT, [], [10.0]), onnx.numpy_helper.from_array(keep, "keep")]
    inputs = [helper.make_tensor_value_info(n, T.FLOAT, [1, 2, 4 if n == "q" else 6, 8]) for n in "qkv"]
    inputs.append(helper.make_tensor_value_info("a", T.FLOAT, [1, 1, 1, 6]))
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", T.FLOAT, None)], inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    proto.ir_version = 8
    rng = np.random.default_rng(29)
    feeds = {n: rng.standard_normal((1, 2, 4 if n == "q" else 6, 8)).astype(np.float32) for n in "qkv"}
    feeds["a"] = np.array([0, -1, 0.5, 0, -1, 1e30], np.float32).reshape(1, 1, 1, 6)
    (want,) = ort_session_run(proto, feeds)
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    np.testing.assert_allclose(_reference_model(model, feeds), want, rtol=1e-4, atol=1e-5)
    for threads in (1, 2):
        np.testing.assert_allclose(_run_cpu(model, feeds, threads)["y"], want, rtol=1e-4, atol=1e-5)


def _reference_model(model, feeds: dict) -> np.ndarray:  # type: ignore[no-untyped-def]
    from irforge.backends.reference import run

    with np.errstate(all="ignore"):
        return run(model, feeds)["y"]
