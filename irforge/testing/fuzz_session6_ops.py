"""Seeds and bad attribute values for the ONNX extractors of session 6, added to
`fuzz_new_ops`'s sets (so `fuzz_campaign --focus new-ops|session6` and
`bench/fuzz_numbers.py --only session6` see them): com.microsoft GroupQueryAttention,
MultiHeadAttention, RotaryEmbedding, GatherBlockQuantized and Attention with past/present;
ONNX RotaryEmbedding-23, DeformConv, STFT and the window / MelWeightMatrix generators,
sequences and optionals (also appended in a Loop), Unique, Compress, Det, Bitwise* /
BitShift, ReverseSequence, CenterCropPad, AffineGrid, Swish, CumProd, packed INT4 / UINT4
constants with blocked DequantizeLinear, and old-opset forms (Upsample-7, BatchNormalization
is_test / spatial, Scan-8, Resize-10, ImageScaler, Crop, LpPool, MaxUnpool, Hardmax).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irforge.testing.fuzz_session5_ops import MS, _t, _vi  # the same small onnx.helper shorthands


def _model(nodes: list[Any], inputs: list[Any], outputs: list[Any], inits: list[Any] = (), opset: int = 17, ms: bool = False) -> bytes:  # type: ignore[assignment]
    from onnx import helper

    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(MS, 1)] if ms else [])  # "" first: the mutator moves opset_import[0]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10 if opset >= 21 else (3 if opset <= 8 else 8)
    return model.SerializeToString()


def _f(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _rotary_cache(rows: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    angles = np.arange(rows)[:, None] * (1.0 / 10000 ** (np.arange(width) / width))[None, :]
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def gqa() -> bytes:
    """GroupQueryAttention: a follow-up prompt, q [1, 3, 4*16], k / v [1, 3, 2*16], past
    [1, 2, 2, 16], seqlens_k, total_sequence_length 5, rotary over the whole head; y, present
    key / value."""
    from onnx import TensorProto as T
    from onnx import helper

    cos, sin = _rotary_cache(16, 8)
    node = helper.make_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "seqlens", "total", "cos", "sin"], ["y", "pres_k", "pres_v"],
                            domain=MS, num_heads=4, kv_num_heads=2, do_rotary=1)
    inputs = [_vi("q", T.FLOAT, [1, 3, 64]), _vi("k", T.FLOAT, [1, 3, 32]), _vi("v", T.FLOAT, [1, 3, 32]), _vi("pk", T.FLOAT, [1, 2, 2, 16]),
              _vi("pv", T.FLOAT, [1, 2, 2, 16]), _vi("seqlens", T.INT32, [1])]
    inits = [_t("total", np.array(5, np.int32)), _t("cos", cos), _t("sin", sin)]
    outs = [_vi(n, T.FLOAT, None) for n in ("y", "pres_k", "pres_v")]
    return _model([node], inputs, outs, inits, ms=True)


def gqa_packed() -> bytes:
    """GroupQueryAttention decoding one token of packed QKV [1, 1, (2+2*1)*8] over a past of 4,
    a local window of 3, softcap 2."""
    from onnx import TensorProto as T
    from onnx import helper

    node = helper.make_node("GroupQueryAttention", ["qkv", "", "", "pk", "pv", "seqlens", "total"], ["y", "pres_k", "pres_v"], domain=MS,
                            num_heads=2, kv_num_heads=1, local_window_size=3, softcap=2.0, scale=0.3)
    inputs = [_vi("qkv", T.FLOAT, [1, 1, 32]), _vi("pk", T.FLOAT, [1, 1, 4, 8]), _vi("pv", T.FLOAT, [1, 1, 4, 8])]
    inits = [_t("seqlens", np.array([4], np.int32)), _t("total", np.array(5, np.int32))]
    return _model([node], inputs, [_vi(n, T.FLOAT, None) for n in ("y", "pres_k", "pres_v")], inits, ms=True)


def mha() -> bytes:
    """MultiHeadAttention: q/k/v [2, 3, 16] (2 heads), packed bias, a raw 2-D key padding mask,
    past [2, 2, 2, 8], unidirectional; present outputs."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(61)
    node = helper.make_node("MultiHeadAttention", ["q", "k", "v", "bias", "mask", "", "pk", "pv"], ["y", "pres_k", "pres_v"], domain=MS,
                            num_heads=2, unidirectional=1)
    inputs = [_vi("q", T.FLOAT, [2, 3, 16]), _vi("k", T.FLOAT, [2, 3, 16]), _vi("v", T.FLOAT, [2, 3, 16]), _vi("mask", T.INT32, [2, 5]),
              _vi("pk", T.FLOAT, [2, 2, 2, 8]), _vi("pv", T.FLOAT, [2, 2, 2, 8])]
    return _model([node], inputs, [_vi(n, T.FLOAT, None) for n in ("y", "pres_k", "pres_v")], [_t("bias", _f(rng, 48))], ms=True)


def mha_cross() -> bytes:
    """MultiHeadAttention cross-attention: keys [2, 2, 5, 8] heads-first, attention_bias
    [1, 2, 3, 5], scale 0.3."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(62)
    node = helper.make_node("MultiHeadAttention", ["q", "k", "v", "", "", "ab"], ["y"], domain=MS, num_heads=2, scale=0.3)
    inputs = [_vi("q", T.FLOAT, [2, 3, 16]), _vi("k", T.FLOAT, [2, 2, 5, 8]), _vi("v", T.FLOAT, [2, 2, 5, 8])]
    return _model([node], inputs, [_vi("y", T.FLOAT, None)], [_t("ab", _f(rng, 1, 2, 3, 5))], ms=True)


def rotary_ms() -> bytes:
    """com.microsoft RotaryEmbedding of x [2, 3, 2*16] with position ids [2, 3], interleaved."""
    from onnx import TensorProto as T
    from onnx import helper

    cos, sin = _rotary_cache(20, 8)
    node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=MS, interleaved=1)
    inputs = [_vi("x", T.FLOAT, [2, 3, 32]), _vi("pos", T.INT64, [2, 3])]
    return _model([node], inputs, [_vi("y", T.FLOAT, None)], [_t("cos", cos), _t("sin", sin)], ms=True)


def rotary_23() -> bytes:
    """ONNX RotaryEmbedding-23 of x [2, 2, 3, 16] (4-D), partial rotation over 8, position ids."""
    from onnx import TensorProto as T
    from onnx import helper

    cos, sin = _rotary_cache(20, 4)
    node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], rotary_embedding_dim=8, num_heads=2)
    inputs = [_vi("x", T.FLOAT, [2, 2, 3, 16]), _vi("pos", T.INT64, [2, 3])]
    return _model([node], inputs, [_vi("y", T.FLOAT, None)], [_t("cos", cos), _t("sin", sin)], opset=23)


def gather_block_quantized() -> bytes:
    """GatherBlockQuantized: a 4-bit table [10, 64] in blocks of 32 with packed zero points."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(63)
    inits = [_t("data", rng.integers(0, 256, (10, 32)).astype(np.uint8)), _t("scales", rng.uniform(0.1, 1, (10, 2)).astype(np.float32)),
             _t("zp", rng.integers(0, 256, (10, 1)).astype(np.uint8))]
    node = helper.make_node("GatherBlockQuantized", ["data", "ids", "scales", "zp"], ["y"], domain=MS, bits=4, block_size=32)
    return _model([node], [_vi("ids", T.INT64, [2, 3])], [_vi("y", T.FLOAT, None)], inits, ms=True)


def ms_attention_past() -> bytes:
    """com.microsoft Attention with past [2, 2, 2, 2, 8] and present, unidirectional, hidden 16."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(64)
    node = helper.make_node("Attention", ["x", "w", "b", "", "past"], ["y", "present"], domain=MS, num_heads=2, unidirectional=1)
    inits = [_t("w", (_f(rng, 16, 48) * 0.3).astype(np.float32)), _t("b", _f(rng, 48))]
    inputs = [_vi("x", T.FLOAT, [2, 3, 16]), _vi("past", T.FLOAT, [2, 2, 2, 2, 8])]
    return _model([node], inputs, [_vi("y", T.FLOAT, None), _vi("present", T.FLOAT, None)], inits, ms=True)


def deform_conv() -> bytes:
    """DeformConv (opset 19): x [1, 4, 6, 6], weights [4, 2, 3, 3] (group 2), offset group 2,
    offsets and mask [1, 2*2*9 | 2*9, 3, 3], bias, stride 2, pads 1."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(65)
    node = helper.make_node("DeformConv", ["x", "w", "off", "b", "m"], ["y"], group=2, offset_group=2, strides=[2, 2], pads=[1, 1, 1, 1],
                            kernel_shape=[3, 3], dilations=[1, 1])
    inputs = [_vi("x", T.FLOAT, [1, 4, 6, 6]), _vi("off", T.FLOAT, [1, 36, 3, 3]), _vi("m", T.FLOAT, [1, 18, 3, 3])]
    return _model([node], inputs, [_vi("y", T.FLOAT, None)], [_t("w", _f(rng, 4, 2, 3, 3)), _t("b", _f(rng, 4))], opset=19)


def audio() -> bytes:
    """A log-mel front end: HannWindow(16) -> STFT(x [1, 64, 1], step 8, onesided) -> power ->
    MelWeightMatrix(8 bins, 16 samples, 16 kHz, 0..8 kHz) -> log; Hamming and Blackman windows
    added to an input."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [
        helper.make_node("HannWindow", ["n"], ["window"]),
        helper.make_node("STFT", ["x", "hop", "window", "n"], ["spec"], onesided=1),
        helper.make_node("Mul", ["spec", "spec"], ["square"]),
        helper.make_node("ReduceSum", ["square", "last"], ["power"], keepdims=0),
        helper.make_node("MelWeightMatrix", ["bins", "n", "rate", "low", "high"], ["mel"]),
        helper.make_node("MatMul", ["power", "mel"], ["mel_power"]),
        helper.make_node("Add", ["mel_power", "eps"], ["floored"]),
        helper.make_node("Log", ["floored"], ["y"]),
        helper.make_node("HammingWindow", ["n"], ["ham"], periodic=0),
        helper.make_node("BlackmanWindow", ["n"], ["black"], output_datatype=T.DOUBLE),
        helper.make_node("Cast", ["black"], ["black32"], to=T.FLOAT),
        helper.make_node("Add", ["ham", "black32"], ["windows"]),
    ]
    inits = [_t("n", np.array(16, np.int64)), _t("hop", np.array(8, np.int64)), _t("last", np.array([-1], np.int64)),
             _t("bins", np.array(8, np.int64)), _t("rate", np.array(16000, np.int64)), _t("low", np.array(0.0, np.float32)),
             _t("high", np.array(8000.0, np.float32)), _t("eps", np.array(1e-6, np.float32))]
    return _model(nodes, [_vi("x", T.FLOAT, [1, 64, 1])], [_vi("y", T.FLOAT, None), _vi("windows", T.FLOAT, None)], inits, opset=17)


def sequences() -> bytes:
    """SplitToSequence / SequenceLength / SequenceAt / SequenceErase / SequenceInsert /
    ConcatFromSequence (new_axis too) / SequenceConstruct of x [2, 6]."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [
        helper.make_node("SplitToSequence", ["x", "three"], ["parts"], axis=1),
        helper.make_node("SequenceLength", ["parts"], ["n"]),
        helper.make_node("SequenceAt", ["parts", "minus_one"], ["last"]),
        helper.make_node("SequenceErase", ["parts", "one"], ["erased"]),
        helper.make_node("SequenceInsert", ["erased", "last", "zero"], ["front"]),
        helper.make_node("ConcatFromSequence", ["front"], ["y"], axis=-1),
        helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
        helper.make_node("ConcatFromSequence", ["rows"], ["z"], axis=-1, new_axis=1),
        helper.make_node("SequenceConstruct", ["x", "x"], ["pair"]),
        helper.make_node("SequenceAt", ["pair", "one"], ["second"]),
    ]
    inits = [_t("three", np.array([2, 3, 1], np.int64)), _t("minus_one", np.array(-1, np.int64)), _t("one", np.array(1, np.int64)),
             _t("zero", np.array(0, np.int64))]
    outs = [_vi("y", T.FLOAT, None), _vi("z", T.FLOAT, None), _vi("n", T.INT64, None), _vi("second", T.FLOAT, None)]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 6])], outs, inits)


def sequence_loop() -> bytes:
    """A Loop of 3 steps appending x * i + y to a sequence (SequenceEmpty, SequenceInsert in the
    body), then ConcatFromSequence with a new axis and SequenceAt(-2)."""
    from onnx import TensorProto as T
    from onnx import helper

    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["i_f"], to=T.FLOAT), helper.make_node("Mul", ["x", "i_f"], ["xi"]),
         helper.make_node("Add", ["xi", "y"], ["item"]), helper.make_node("SequenceInsert", ["seq_in", "item"], ["seq_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [_vi("i", T.INT64, []), _vi("cond_in", T.BOOL, []), helper.make_tensor_sequence_value_info("seq_in", T.FLOAT, None)],
        [_vi("cond_out", T.BOOL, []), helper.make_tensor_sequence_value_info("seq_out", T.FLOAT, None)])
    nodes = [helper.make_node("SequenceEmpty", [], ["empty"], dtype=T.FLOAT),
             helper.make_node("Loop", ["n", "yes", "empty"], ["items"], body=body),
             helper.make_node("ConcatFromSequence", ["items"], ["stacked"], axis=1, new_axis=1),
             helper.make_node("SequenceAt", ["items", "minus_two"], ["second_last"])]
    inits = [_t("n", np.array(3, np.int64)), _t("yes", np.array(True)), _t("minus_two", np.array(-2, np.int64))]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 3]), _vi("y", T.FLOAT, [2, 3])], [_vi("stacked", T.FLOAT, None), _vi("second_last", T.FLOAT, None)],
                  inits)


def optional() -> bytes:
    """Optional(bias) -> OptionalHasElement -> If: then OptionalGetElement + Add, else x * 2."""
    from onnx import TensorProto as T
    from onnx import helper

    then = helper.make_graph([helper.make_node("OptionalGetElement", ["bias_opt"], ["b"]), helper.make_node("Add", ["x", "b"], ["then_y"])],
                             "then", [], [_vi("then_y", T.FLOAT, [2, 3])])
    other = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["else_y"])], "else", [], [_vi("else_y", T.FLOAT, [2, 3])],
                              [_t("two", np.array(2.0, np.float32))])
    nodes = [helper.make_node("Optional", ["bias"], ["bias_opt"]), helper.make_node("OptionalHasElement", ["bias_opt"], ["given"]),
             helper.make_node("If", ["given"], ["y"], then_branch=then, else_branch=other)]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 3]), _vi("bias", T.FLOAT, [2, 3])], [_vi("y", T.FLOAT, None)], opset=18)


def selection_ops() -> bytes:
    """Unique (sorted, axis 0, four outputs), Compress (axis 1 and flat), Det of [2, 3, 3],
    ReverseSequence, CenterCropPad."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(66)
    nodes = [
        helper.make_node("Unique", ["u"], ["uy", "ui", "uinv", "ucount"], sorted=1, axis=0),
        helper.make_node("Compress", ["x", "cond"], ["c1"], axis=1),
        helper.make_node("Compress", ["x", "cond"], ["c0"]),
        helper.make_node("Det", ["m"], ["det"]),
        helper.make_node("ReverseSequence", ["x", "lens"], ["rev"], batch_axis=0, time_axis=1),
        helper.make_node("CenterCropPad", ["img", "crop"], ["ccp"], axes=[1, 2]),
    ]
    inits = [_t("cond", np.array([True, False, True, True])), _t("lens", np.array([4, 2, 1], np.int64)), _t("crop", np.array([3, 6], np.int64)),
             _t("m", _f(rng, 2, 3, 3))]
    inputs = [_vi("u", T.FLOAT, [5, 2]), _vi("x", T.FLOAT, [3, 4]), _vi("img", T.FLOAT, [1, 5, 4, 2])]
    outs = [_vi(n, T.FLOAT, None) for n in ("uy", "c1", "c0", "det", "rev", "ccp")] + [_vi(n, T.INT64, None) for n in ("ui", "uinv", "ucount")]
    return _model(nodes, inputs, outs, inits, opset=18)


def bitwise() -> bytes:
    """BitwiseAnd / Or / Xor / Not and BitShift (LEFT, RIGHT) of int32 / uint8 inputs."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("BitwiseAnd", ["a", "b"], ["and"]), helper.make_node("BitwiseOr", ["and", "b"], ["or"]),
             helper.make_node("BitwiseXor", ["or", "a"], ["xor"]), helper.make_node("BitwiseNot", ["xor"], ["y"]),
             helper.make_node("BitShift", ["p", "q"], ["left"], direction="LEFT"), helper.make_node("BitShift", ["left", "q"], ["right"], direction="RIGHT")]
    inputs = [_vi("a", T.INT32, [2, 3]), _vi("b", T.INT32, [3]), _vi("p", T.UINT8, [4])]
    return _model(nodes, inputs, [_vi("y", T.INT32, None), _vi("right", T.UINT8, None)], [_t("q", np.array([1, 2, 3, 7], np.uint8))], opset=18)


def affine_grid() -> bytes:
    """AffineGrid (2-D, align_corners) feeding GridSample: theta [2, 2, 3] over size [2, 3, 4, 5]."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=1), helper.make_node("GridSample", ["x", "grid"], ["y"])]
    inputs = [_vi("theta", T.FLOAT, [2, 2, 3]), _vi("x", T.FLOAT, [2, 3, 6, 6])]
    return _model(nodes, inputs, [_vi("y", T.FLOAT, None), _vi("grid", T.FLOAT, None)], [_t("size", np.array([2, 3, 4, 5], np.int64))], opset=20)


def int4_dequantize() -> bytes:
    """Packed INT4 weights [8, 6] and UINT4 zero points dequantized in blocks of 2 along axis 1
    (DequantizeLinear-21 block_size), then MatMul; and a per-tensor UINT4 dequantize."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(67)
    w = helper.make_tensor("w", T.INT4, [8, 6], rng.integers(-8, 8, 48).tolist())
    zp = helper.make_tensor("zp", T.INT4, [8, 3], rng.integers(-2, 3, 24).tolist())
    u = helper.make_tensor("u", T.UINT4, [6], rng.integers(0, 16, 6).tolist())
    nodes = [helper.make_node("DequantizeLinear", ["w", "s", "zp"], ["wf"], axis=1, block_size=2),
             helper.make_node("MatMul", ["x", "wf"], ["y"]),
             helper.make_node("DequantizeLinear", ["u", "us"], ["uf"]),
             helper.make_node("Add", ["y", "uf"], ["z"])]
    inits = [w, zp, u, _t("s", rng.uniform(0.01, 0.1, (8, 3)).astype(np.float32)), _t("us", np.array(0.5, np.float32))]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 8])], [_vi("z", T.FLOAT, None)], inits, opset=21)


def legacy_forms() -> bytes:
    """Opset-6 forms: BatchNormalization is_test=1 spatial=1 consumed_inputs, broadcast Add
    with axis, ImageScaler, Crop, Upsample-1 heights, Pad-2, LpPool, Hardmax."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(68)
    nodes = [
        helper.make_node("BatchNormalization", ["x", "sc", "bi", "mean", "var"], ["bn"], is_test=1, spatial=1, epsilon=1e-5),
        helper.make_node("Add", ["bn", "cb"], ["add"], broadcast=1, axis=1),
        helper.make_node("ImageScaler", ["add"], ["scaled"], scale=0.5, bias=[0.1, 0.2, 0.3]),
        helper.make_node("Crop", ["scaled"], ["crop"], border=[1, 1, 1, 1]),
        helper.make_node("Upsample", ["crop"], ["up"], height_scale=2.0, width_scale=2.0, mode="NEAREST"),
        helper.make_node("Pad", ["up"], ["pad"], pads=[0, 0, 1, 1, 0, 0, 1, 1], mode="constant", value=0.0),
        helper.make_node("LpPool", ["pad"], ["lp"], kernel_shape=[2, 2], strides=[2, 2], p=2),
        helper.make_node("Hardmax", ["lp"], ["y"], axis=1),
    ]
    inits = [_t("sc", rng.uniform(0.5, 1.5, 3).astype(np.float32)), _t("bi", _f(rng, 3)), _t("mean", _f(rng, 3)),
             _t("var", rng.uniform(0.5, 1.5, 3).astype(np.float32)), _t("cb", _f(rng, 3))]
    return _model(nodes, [_vi("x", T.FLOAT, [1, 3, 6, 6])], [_vi("y", T.FLOAT, None)], inits, opset=6)


def legacy_scan() -> bytes:
    """Scan-8 (a batch axis, no sequence_lens) summing the rows of x [1, 4, 3], and Upsample-7
    (scales attribute, linear)."""
    from onnx import TensorProto as T
    from onnx import helper

    body = helper.make_graph([helper.make_node("Add", ["acc", "row"], ["acc_out"]), helper.make_node("Identity", ["acc_out"], ["row_out"])],
                             "body", [_vi("acc", T.FLOAT, [3]), _vi("row", T.FLOAT, [3])], [_vi("acc_out", T.FLOAT, [3]), _vi("row_out", T.FLOAT, [3])])
    nodes = [helper.make_node("Scan", ["", "init", "x"], ["final", "rows"], body=body, num_scan_inputs=1),
             helper.make_node("Upsample", ["img"], ["big"], mode="linear", scales=[1.0, 1.0, 2.0, 2.0])]
    inputs = [_vi("init", T.FLOAT, [1, 3]), _vi("x", T.FLOAT, [1, 4, 3]), _vi("img", T.FLOAT, [1, 2, 3, 3])]
    return _model(nodes, inputs, [_vi("final", T.FLOAT, None), _vi("rows", T.FLOAT, None), _vi("big", T.FLOAT, None)], opset=8)


def legacy_resize_unpool() -> bytes:
    """Resize-10 nearest with constant scales, MaxUnpool of p [1, 2, 3, 3] with indices of
    each 2x2 window's corner, Scan-9 (reversed) over x [4, 3]."""
    from onnx import TensorProto as T
    from onnx import helper

    body = helper.make_graph([helper.make_node("Add", ["acc", "row"], ["acc_out"]), helper.make_node("Identity", ["acc_out"], ["row_out"])],
                             "body", [_vi("acc", T.FLOAT, [3]), _vi("row", T.FLOAT, [3])], [_vi("acc_out", T.FLOAT, [3]), _vi("row_out", T.FLOAT, [3])])
    nodes = [helper.make_node("Resize", ["img", "scales"], ["big"], mode="nearest"),
             helper.make_node("MaxUnpool", ["p", "idx"], ["un"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Scan", ["init", "x"], ["final", "rows"], body=body, num_scan_inputs=1, scan_input_directions=[1])]
    c, i, j = np.meshgrid(np.arange(2), np.arange(3), np.arange(3), indexing="ij")
    idx = (c * 36 + (2 * i + (j % 2)) * 6 + 2 * j + (i % 2)).reshape(1, 2, 3, 3).astype(np.int64)
    inputs = [_vi("img", T.FLOAT, [1, 2, 3, 3]), _vi("p", T.FLOAT, [1, 2, 3, 3]), _vi("init", T.FLOAT, [3]), _vi("x", T.FLOAT, [4, 3])]
    outs = [_vi("big", T.FLOAT, None), _vi("un", T.FLOAT, None), _vi("final", T.FLOAT, None), _vi("rows", T.FLOAT, None)]
    return _model(nodes, inputs, outs, [_t("scales", np.array([1, 1, 2, 2], np.float32)), _t("idx", idx)], opset=10)


def swish_cumprod() -> bytes:
    """Swish (opset 24, alpha 1.5) and CumProd (opset 26, exclusive, reverse) of x [3, 4]."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("Swish", ["x"], ["sw"], alpha=1.5), helper.make_node("CumProd", ["x", "ax"], ["cp"], exclusive=1, reverse=1)]
    return _model(nodes, [_vi("x", T.FLOAT, [3, 4])], [_vi("sw", T.FLOAT, None), _vi("cp", T.FLOAT, None)], [_t("ax", np.array(1, np.int64))],
                  opset=26)


SEEDS = {"gqa.onnx": gqa, "gqapacked.onnx": gqa_packed, "mha.onnx": mha, "mhacross.onnx": mha_cross, "rotms.onnx": rotary_ms,
         "rot23.onnx": rotary_23, "gbq.onnx": gather_block_quantized, "msattnpast.onnx": ms_attention_past, "deform.onnx": deform_conv,
         "audio.onnx": audio, "seqs.onnx": sequences, "seqloop.onnx": sequence_loop, "optional.onnx": optional, "select.onnx": selection_ops,
         "bitwise.onnx": bitwise, "affgrid.onnx": affine_grid, "int4.onnx": int4_dequantize, "legacy.onnx": legacy_forms,
         "legacyscan.onnx": legacy_scan, "legacyresize.onnx": legacy_resize_unpool, "swishcp.onnx": swish_cumprod}

_HEADS = [("num_heads", 3), ("num_heads", 0), ("num_heads", -1), ("num_heads", 2**40), ("num_heads", None)]
# (name, None): the attribute removed
BAD_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "GroupQueryAttention": _HEADS + [("kv_num_heads", 3), ("kv_num_heads", 0), ("kv_num_heads", 8), ("kv_num_heads", None), ("do_rotary", 2),
                                     ("do_rotary", 1), ("rotary_interleaved", 5), ("local_window_size", 0), ("local_window_size", -5),
                                     ("local_window_size", 2**40), ("softcap", -1.0), ("softcap", float("nan")), ("scale", 0.0),
                                     ("scale", float("inf")), ("smooth_softmax", 3), ("qk_output", 1)],
    "MultiHeadAttention": _HEADS + [("unidirectional", 2), ("unidirectional", -1), ("mask_filter_value", float("nan")), ("scale", float("nan")),
                                    ("scale", -1.0)],
    "RotaryEmbedding": [("interleaved", 2), ("interleaved", -1), ("rotary_embedding_dim", 7), ("rotary_embedding_dim", 64),
                        ("rotary_embedding_dim", -8), ("num_heads", 3), ("num_heads", 0), ("num_heads", -2), ("scale", 2.0),
                        ("is_packed_batching", 1)],
    "GatherBlockQuantized": [("bits", 3), ("bits", 0), ("bits", 2), ("bits", 8), ("block_size", 16), ("block_size", 0), ("block_size", 15),
                             ("block_size", 2**40), ("gather_axis", 1), ("gather_axis", 5), ("quantize_axis", 0), ("quantize_axis", -3),
                             ("bits", None), ("block_size", None)],
    "DeformConv": [("group", 3), ("group", 0), ("group", -1), ("offset_group", 3), ("offset_group", 0), ("strides", [0, 1]), ("strides", [2]),
                   ("pads", [1, 1]), ("pads", [-1, 0, 0, 0]), ("dilations", [0, 1]), ("kernel_shape", [5, 5]), ("kernel_shape", [3]),
                   ("dilations", [2, 2, 2])],
    "STFT": [("onesided", 2), ("onesided", -1)],
    "HannWindow": [("periodic", 2), ("output_datatype", 8), ("output_datatype", 99), ("output_datatype", 0)],
    "HammingWindow": [("periodic", -1), ("output_datatype", 9), ("output_datatype", 7)],
    "BlackmanWindow": [("output_datatype", 8), ("output_datatype", 16), ("periodic", 7)],
    "MelWeightMatrix": [("output_datatype", 8), ("output_datatype", 3), ("output_datatype", 0)],
    "SplitToSequence": [("axis", 2), ("axis", -3), ("keepdims", 2), ("keepdims", -1)],
    "ConcatFromSequence": [("axis", 3), ("axis", -4), ("new_axis", 2), ("axis", None), ("new_axis", -1)],
    "SequenceEmpty": [("dtype", 8), ("dtype", 99), ("dtype", 0)],
    "Optional": [("type", 1)],
    "Loop": [],
    "Unique": [("axis", 2), ("axis", -3), ("sorted", 2), ("sorted", -1)],
    "Compress": [("axis", 2), ("axis", -3), ("axis", 2**40)],
    "Det": [],
    "ReverseSequence": [("batch_axis", 1), ("time_axis", 0), ("batch_axis", 2), ("time_axis", -1), ("batch_axis", 5)],
    "CenterCropPad": [("axes", [1, 1]), ("axes", [4]), ("axes", [-5]), ("axes", [0, 1, 2]), ("axes", [])],
    "Swish": [("alpha", float("nan")), ("alpha", float("inf"))],
    "CumProd": [("exclusive", 2), ("reverse", -1), ("exclusive", 7)],
    "BitwiseAnd": [], "BitwiseOr": [], "BitwiseXor": [], "BitwiseNot": [],
    "BitShift": [("direction", "UP"), ("direction", ""), ("direction", None), ("direction", "left")],
    "AffineGrid": [("align_corners", 2), ("align_corners", -1)],
    "DequantizeLinear": [("block_size", 3), ("block_size", 0), ("block_size", -2), ("block_size", 2**40), ("axis", 2), ("axis", -3),
                         ("axis", 0), ("output_dtype", 8), ("output_dtype", 6)],
    "BatchNormalization": [("is_test", 0), ("spatial", 0), ("is_test", 2), ("epsilon", -1.0), ("momentum", float("nan"))],
    "ImageScaler": [("bias", [0.1]), ("bias", []), ("scale", float("nan")), ("bias", None)],
    "Crop": [("border", [1, 1]), ("border", [9, 9, 9, 9]), ("border", [-1, 0, 0, 0]), ("scale", [2, 2]), ("scale", [99, 99]), ("scale", [0])],
    "Upsample": [("height_scale", 0.0), ("width_scale", -2.0), ("height_scale", float("nan")), ("mode", "CUBIC"), ("mode", "bogus"),
                 ("scales", [1.0, 1.0, 2.0]), ("scales", [1.0, 1.0, 2.0, 2.0])],
    "Pad": [("paddings", [1, 1]), ("paddings", [-9, 0, 0, 0, 0, 0, 0, 0]), ("mode", "wrap"), ("mode", "nope"), ("pads", [0, 0, 1, 1])],
    "LpPool": [("p", 0), ("p", -1), ("kernel_shape", [9, 9]), ("kernel_shape", [0, 0]), ("strides", [0, 1]), ("auto_pad", "VALID"),
               ("pads", [1, 1, 1, 1])],
    "Hardmax": [("axis", 4), ("axis", -5)],
    "Scan": [("num_scan_inputs", 2), ("num_scan_inputs", 0), ("directions", [1]), ("directions", [2]), ("scan_input_axes", [1]),
             ("num_scan_inputs", -1)],
    "Resize": [("mode", "cubic"), ("mode", "linear"), ("mode", "bogus"), ("coordinate_transformation_mode", "tf_crop_and_resize")],
    "MaxUnpool": [("kernel_shape", [3, 3]), ("strides", [1, 1]), ("kernel_shape", [0, 2]), ("pads", [1, 1, 1, 1])],
    "MaxPool": [("kernel_shape", [9, 9]), ("storage_order", 1)],
    "Attention": [("num_heads", 3), ("num_heads", 0), ("unidirectional", 2), ("past_present_share_buffer", 1), ("do_rotary", 1)],
}

# values the ops define (bench/fuzz_numbers.py compares these variants' numbers with onnxruntime's)
VALID_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "GroupQueryAttention": [("do_rotary", 0), ("rotary_interleaved", 1), ("local_window_size", 2), ("local_window_size", -1), ("softcap", 0.0),
                            ("softcap", 3.0), ("scale", 0.2), ("smooth_softmax", 1)],
    "MultiHeadAttention": [("unidirectional", 0), ("scale", 0.5), ("mask_filter_value", -1000.0)],
    "RotaryEmbedding": [("interleaved", 0), ("interleaved", 1)],
    "DeformConv": [("pads", [0, 0, 0, 0]), ("strides", [1, 1]), ("dilations", [2, 2])],
    "STFT": [("onesided", 0)],
    "HannWindow": [("periodic", 0)], "HammingWindow": [("periodic", 1)], "BlackmanWindow": [("periodic", 0)],
    "SplitToSequence": [("axis", 0), ("axis", -1), ("keepdims", 1)],
    "ConcatFromSequence": [("axis", 0), ("new_axis", 1), ("axis", -2)],
    "Unique": [("sorted", 0), ("axis", 1), ("axis", -1)],
    "Compress": [("axis", 0), ("axis", -1)],
    "ReverseSequence": [("batch_axis", 1), ("time_axis", 0)],
    "Swish": [("alpha", 0.5), ("alpha", -1.0)],
    "CumProd": [("exclusive", 0), ("reverse", 0)],
    "AffineGrid": [("align_corners", 0)],
    "Hardmax": [("axis", 0), ("axis", 3)],
}

# extra replacement constants: window sizes, crop sizes, rotary caches, packed tables, sequence lengths, positions
BAD_CONSTANTS = [
    np.array(0, np.int64), np.array(-3, np.int64), np.array(10**12, np.int64), np.array(1.5, np.float32), np.array([16, 8], np.int64),
    np.array(5, np.int32), np.array(-1, np.int32), np.zeros([3, 4], np.float32), np.zeros([20, 9], np.float32), np.zeros([2, 5], np.uint8),
    np.array([0, 9, -4], np.int64), np.array([3, 6, 7], np.int64), np.array([True]), np.zeros([4, 2], np.int32), np.array([2, 3, 4], np.int64),
    np.array([0.0, 8000.0], np.float32), np.array(9000.0, np.float32), np.full([2, 2], np.nan, np.float32), np.array([[[1, 0, 0], [0, 1, 0]]], np.float32),
]
BAD_INPUT_TYPES = [  # (elem_type, shape)
    (1, [2, 3, 31]), (1, [2, 3, 24]), (1, [2, 2, 3, 8]), (1, [1, 2, 2, 8]), (1, [2, 1, 2, 8]), (6, [3]), (6, [2]), (7, [2]), (1, [2]),
    (1, [2, 3, 16]), (1, [2, 3]), (1, [1, 36, 2, 2]), (1, [1, 5, 6, 6]), (1, [1, 4, 6]), (1, [64]), (1, [2, 64]), (11, [1, 64]),
    (6, [2, 3]), (3, [2, 3]), (2, [4]), (7, [2, 3]), (1, [2, 3, 3, 3]), (1, [3, 4]), (1, [2, 2, 3]), (1, [2, 3, 4]), (1, [1, 3]),
    (7, [2, 3, 2]), (1, [0, 3]), (1, [2, 2, 2, 2, 8]), (1, [3, 2, 2, 2, 8]), (6, [2, 5]), (1, [2, 4]),
]

__all__ = ["VALID_ATTRIBUTES", "BAD_ATTRIBUTES", "BAD_CONSTANTS", "BAD_INPUT_TYPES", "SEEDS"]
