"""Seeds and bad attribute values for the ONNX extractors of session 5, added to
`fuzz_new_ops`'s sets (so `fuzz_campaign --focus new-ops` and `bench/fuzz_numbers.py` see
them): ONNX Attention (opsets 23/24: 3-D and 4-D, GQA, masks, past key/value, nonpad),
the com.microsoft contrib ops (Gelu family, BiasAdd, Skip(Simplified)LayerNormalization,
FusedMatMul / FusedConv / FusedGemm, MatMulNBits), com.microsoft Attention and
EmbedLayerNormalization, and Asin..Atanh.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MS = "com.microsoft"


def _vi(name: str, elem: int, shape: list[Any] | None) -> Any:
    from onnx import helper

    return helper.make_tensor_value_info(name, elem, shape)


def _t(name: str, array: Any) -> Any:
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(array), name)


def _model(nodes: list[Any], inputs: list[Any], outputs: list[Any], inits: list[Any] = (), opset: int = 17, ms: bool = False) -> bytes:  # type: ignore[assignment]
    from onnx import helper

    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(MS, 1)] if ms else [])  # "" first: the mutator moves opset_import[0]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10 if opset >= 21 else 8
    return model.SerializeToString()


def attention_gqa_cache() -> bytes:
    """ONNX Attention (opset 23), 3-D q [2, 3, 4*4] with 2 kv heads, a bool mask [3, 5],
    past key/value of 2 steps, is_causal, softcap; y, present_key, present_value."""
    from onnx import TensorProto as T
    from onnx import helper

    node = helper.make_node("Attention", ["q", "k", "v", "mask", "pk", "pv"], ["y", "pres_k", "pres_v"], q_num_heads=4, kv_num_heads=2,
                            is_causal=1, softcap=2.0)
    inputs = [_vi("q", T.FLOAT, [2, 3, 16]), _vi("k", T.FLOAT, [2, 3, 8]), _vi("v", T.FLOAT, [2, 3, 8]), _vi("mask", T.BOOL, [3, 5]),
              _vi("pk", T.FLOAT, [2, 2, 2, 4]), _vi("pv", T.FLOAT, [2, 2, 2, 4])]
    return _model([node], inputs, [_vi("y", T.FLOAT, None), _vi("pres_k", T.FLOAT, None), _vi("pres_v", T.FLOAT, None)], opset=23)


def attention_nonpad() -> bytes:
    """ONNX Attention (opset 24), 4-D [2, 2, 3, 4] / [2, 2, 5, 4], a float mask constant
    [2, 1, 3, 5], nonpad_kv_seqlen [5, 3], scale 0.4."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(24)
    node = helper.make_node("Attention", ["q", "k", "v", "mask", "", "", "nonpad"], ["y"], scale=0.4)
    inits = [_t("mask", rng.uniform(-1, 1, (2, 1, 3, 5)).astype(np.float32)), _t("nonpad", np.array([5, 3], np.int64))]
    inputs = [_vi("q", T.FLOAT, [2, 2, 3, 4]), _vi("k", T.FLOAT, [2, 2, 5, 4]), _vi("v", T.FLOAT, [2, 2, 5, 4])]
    return _model([node], inputs, [_vi("y", T.FLOAT, None)], inits, opset=24)


def ort_contrib() -> bytes:
    """The com.microsoft activations and normalisations in one chain over x [2, 5, 16]."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(1)

    def f(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    nodes = [
        helper.make_node("Gelu", ["x"], ["g"], domain=MS),
        helper.make_node("BiasGelu", ["g", "b1"], ["bg"], domain=MS),
        helper.make_node("FastGelu", ["bg", "b2"], ["fg"], domain=MS),
        helper.make_node("QuickGelu", ["fg"], ["qg"], domain=MS, alpha=1.5),
        helper.make_node("Add", ["qg", "b3"], ["ba"]),  # BiasAdd: onnxruntime has it on CUDA only (seed bias_add)
        helper.make_node("SkipLayerNormalization", ["ba", "x", "gamma", "beta", "bias"], ["sl", "", "", "sum"], domain=MS, epsilon=1e-5),
        helper.make_node("SkipSimplifiedLayerNormalization", ["sl", "sum", "gamma"], ["ss"], domain=MS, epsilon=1e-6),
        helper.make_node("SimplifiedLayerNormalization", ["ss", "gamma"], ["y"], epsilon=1e-6),
    ]
    inits = [_t(n, f(16)) for n in ("b1", "b2", "b3", "gamma", "beta", "bias")]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 5, 16])], [_vi("y", T.FLOAT, None), _vi("sum", T.FLOAT, None)], inits, ms=True)


def bias_add() -> bytes:
    """com.microsoft BiasAdd (x + bias + skip) of x [2, 5, 16] (onnxruntime runs it on CUDA only)."""
    from onnx import TensorProto as T
    from onnx import helper

    node = helper.make_node("BiasAdd", ["x", "b", "skip"], ["y"], domain=MS)
    inputs = [_vi("x", T.FLOAT, [2, 5, 16]), _vi("skip", T.FLOAT, [2, 5, 16])]
    return _model([node], inputs, [_vi("y", T.FLOAT, None)], [_t("b", np.linspace(-1, 1, 16, dtype=np.float32))], ms=True)


def ort_fused() -> bytes:
    """FusedMatMul (transB, alpha), FusedGemm (Relu), FusedConv (LeakyRelu, with z)."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(2)
    nodes = [
        helper.make_node("FusedMatMul", ["a", "bm"], ["mm"], domain=MS, alpha=0.5, transB=1),
        helper.make_node("FusedGemm", ["g", "bg", "cg"], ["gm"], domain=MS, transB=1, alpha=0.7, activation="Relu"),
        helper.make_node("FusedConv", ["x", "w", "wb", "z"], ["cv"], domain=MS, pads=[1, 1, 1, 1], activation="LeakyRelu",
                         activation_params=[0.1]),
    ]
    inits = [_t("bm", rng.standard_normal((2, 7, 16)).astype(np.float32)), _t("bg", rng.standard_normal((8, 16)).astype(np.float32)),
             _t("cg", rng.standard_normal(8).astype(np.float32)), _t("w", rng.standard_normal((4, 3, 3, 3)).astype(np.float32)),
             _t("wb", rng.standard_normal(4).astype(np.float32))]
    inputs = [_vi("a", T.FLOAT, [2, 5, 16]), _vi("g", T.FLOAT, [3, 16]), _vi("x", T.FLOAT, [1, 3, 8, 8]), _vi("z", T.FLOAT, [1, 4, 8, 8])]
    return _model(nodes, inputs, [_vi("mm", T.FLOAT, None), _vi("gm", T.FLOAT, None), _vi("cv", T.FLOAT, None)], inits, ms=True)


def matmul_nbits() -> bytes:
    """MatMulNBits, 4 bits, K 40 in blocks of 16 (3 blocks, the last one padded), N 6,
    packed uint8 zero points and a bias."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(4)
    n, k, bits, block = 6, 40, 4, 16
    blocks = -(-k // block)
    q = rng.integers(0, 16, (n, blocks, block), dtype=np.uint8)
    packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)
    zp = rng.integers(0, 16, (n, 4), dtype=np.uint8)  # 3 blocks padded to 4 nibbles = 2 bytes per row
    zp_packed = (zp[:, 0::2] | (zp[:, 1::2] << 4)).astype(np.uint8).reshape(-1)
    inits = [_t("B", packed), _t("scales", rng.uniform(0.01, 0.1, n * blocks).astype(np.float32)), _t("zp", zp_packed),
             _t("bias", rng.standard_normal(n).astype(np.float32))]
    node = helper.make_node("MatMulNBits", ["a", "B", "scales", "zp", "", "bias"], ["y"], domain=MS, K=k, N=n, bits=bits, block_size=block)
    return _model([node], [_vi("a", T.FLOAT, [2, 5, 40])], [_vi("y", T.FLOAT, None)], inits, ms=True)


def ort_attention() -> bytes:
    """com.microsoft EmbedLayerNormalization (word, position, segment embeddings, mask) feeding
    com.microsoft Attention (2 heads over hidden 16) through its mask_index."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(6)
    h = 16
    nodes = [helper.make_node("EmbedLayerNormalization", ["ids", "seg", "words", "pos", "segemb", "gamma", "beta", "mask"],
                              ["e", "mask_index", "sum"], domain=MS, epsilon=1e-5),
             helper.make_node("Attention", ["e", "w", "b", "mask_index"], ["y"], domain=MS, num_heads=2)]
    inits = [_t("words", rng.standard_normal((50, h)).astype(np.float32)), _t("pos", rng.standard_normal((16, h)).astype(np.float32)),
             _t("segemb", rng.standard_normal((2, h)).astype(np.float32)), _t("gamma", rng.uniform(0.5, 1.5, h).astype(np.float32)),
             _t("beta", rng.standard_normal(h).astype(np.float32)), _t("w", (rng.standard_normal((h, 3 * h)) * 0.3).astype(np.float32)),
             _t("b", rng.standard_normal(3 * h).astype(np.float32))]
    inputs = [_vi("ids", T.INT32, [2, 5]), _vi("seg", T.INT32, [2, 5]), _vi("mask", T.INT32, [2, 5])]
    return _model(nodes, inputs, [_vi("y", T.FLOAT, None), _vi("sum", T.FLOAT, None)], inits, ms=True)


def inverse_trig() -> bytes:
    """Asin, Acos, Atan, Asinh, Acosh, Atanh of x [2, 3] (Acosh of 1 + x*x, in its domain)."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("Mul", ["x", "half"], ["h"]), helper.make_node("Asin", ["h"], ["a"]), helper.make_node("Acos", ["h"], ["b"]),
             helper.make_node("Atan", ["x"], ["c"]), helper.make_node("Asinh", ["x"], ["d"]), helper.make_node("Mul", ["x", "x"], ["sq"]),
             helper.make_node("Add", ["sq", "one"], ["sq1"]), helper.make_node("Acosh", ["sq1"], ["e"]), helper.make_node("Atanh", ["h"], ["f"])]
    outs = [_vi(n, T.FLOAT, None) for n in "abcdef"]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 3])], outs, [_t("half", np.float32(0.3)), _t("one", np.float32(1.0))], opset=9)


SEEDS = {"attn23.onnx": attention_gqa_cache, "attn24.onnx": attention_nonpad, "contrib.onnx": ort_contrib, "biasadd.onnx": bias_add, "fused.onnx": ort_fused,
         "nbits.onnx": matmul_nbits, "msattn.onnx": ort_attention, "trig.onnx": inverse_trig}

# (name, None): the attribute removed
BAD_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "Attention": [("q_num_heads", 3), ("kv_num_heads", 3), ("q_num_heads", 0), ("kv_num_heads", -2), ("q_num_heads", 2**40),
                  ("is_causal", 2), ("is_causal", -1), ("softcap", -1.0), ("softcap", float("nan")), ("scale", 0.0), ("scale", float("inf")),
                  ("softmax_precision", 10), ("softmax_precision", 99), ("qk_matmul_output_mode", 3), ("qk_matmul_output_mode", -1),
                  ("num_heads", 3), ("num_heads", 0), ("num_heads", 5), ("unidirectional", 2), ("qkv_hidden_sizes", [16, 16]),
                  ("qkv_hidden_sizes", [16, 16, 7]), ("qkv_hidden_sizes", [0, 0, 0]), ("mask_filter_value", float("nan")),
                  ("past_present_share_buffer", 1), ("do_rotary", 1), ("local_window_size", 2), ("num_heads", None),
                  ("q_num_heads", None), ("kv_num_heads", None)],
    "Gelu": [("approximate", "tanh"), ("approximate", "nope")],
    "QuickGelu": [("alpha", float("nan")), ("alpha", 0.0), ("alpha", -1.0)],
    "SkipLayerNormalization": [("epsilon", -1.0), ("epsilon", float("nan")), ("epsilon", 0.0)],
    "SkipSimplifiedLayerNormalization": [("epsilon", -1.0), ("epsilon", float("nan"))],
    "SimplifiedLayerNormalization": [("axis", 3), ("axis", -4), ("axis", 0), ("stash_type", 10), ("epsilon", -1.0)],
    "FusedMatMul": [("transA", 1), ("transB", 2), ("alpha", float("nan")), ("transBatchA", 1), ("transBatchB", 1), ("alpha", 0.0)],
    "FusedGemm": [("activation", "Nope"), ("activation", "LeakyRelu"), ("activation_alpha", float("nan")), ("transA", 1), ("beta", 0.0),
                  ("activation", "HardSigmoid"), ("activation", "")],
    "FusedConv": [("activation", "Nope"), ("activation", "Clip"), ("activation_params", []), ("activation_params", [1.0, -1.0]),
                  ("group", 2), ("group", 0), ("pads", [1, 1]), ("strides", [0, 1]), ("auto_pad", "SAME_UPPER"), ("dilations", [2, 2]),
                  ("kernel_shape", [5, 5])],
    "MatMulNBits": [("K", 32), ("K", 48), ("K", 0), ("N", 5), ("N", 7), ("N", -1), ("bits", 8), ("bits", 3), ("bits", 2), ("bits", 0),
                    ("block_size", 8), ("block_size", 32), ("block_size", 15), ("block_size", 0), ("accuracy_level", 4),
                    ("block_size", 2**40), ("K", None), ("N", None), ("bits", None), ("block_size", None)],
    "EmbedLayerNormalization": [("epsilon", -1.0), ("epsilon", float("nan")), ("mask_index_type", 0), ("mask_index_type", 2)],
    "Asin": [], "Acos": [], "Atan": [], "Asinh": [], "Acosh": [], "Atanh": [],
}

# values the ops define (bench/fuzz_numbers.py compares these variants' numbers with onnxruntime's)
VALID_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "Attention": [("is_causal", 0), ("is_causal", 1), ("softcap", 0.0), ("softcap", 5.0), ("scale", 0.2), ("softmax_precision", 1),
                  ("unidirectional", 1), ("mask_filter_value", -1000.0), ("qk_matmul_output_mode", 0)],
    "QuickGelu": [("alpha", 1.0), ("alpha", 2.5)],
    "SkipLayerNormalization": [("epsilon", 1e-3), ("epsilon", 1e-12)],
    "SkipSimplifiedLayerNormalization": [("epsilon", 1e-2)],
    "SimplifiedLayerNormalization": [("epsilon", 1e-2), ("axis", -1), ("axis", 2), ("stash_type", 1)],
    "FusedMatMul": [("alpha", 2.0), ("alpha", -1.0), ("transB", 1)],
    "FusedGemm": [("activation", "Sigmoid"), ("activation", "Tanh"), ("activation", "LeakyRelu"), ("activation_alpha", 0.2), ("alpha", 1.0),
                  ("beta", 0.5)],
    "FusedConv": [("activation", "Relu"), ("activation", "Sigmoid"), ("activation", "Tanh"), ("activation_params", [0.3]),
                  ("strides", [2, 2]), ("dilations", [2, 2]), ("pads", [2, 2, 2, 2])],
    "EmbedLayerNormalization": [("epsilon", 1e-3)],
}

# extra replacement constants: packed weights / scales / zero points of odd dtypes and sizes, masks
BAD_CONSTANTS = [
    np.zeros([6, 3, 4], np.uint8), np.zeros([6, 3, 8], np.int8), np.zeros([6, 3], np.uint8), np.zeros([18], np.float16),
    np.zeros([17], np.float32), np.zeros([5], np.int32), np.zeros([12], np.uint8), np.zeros([6, 2], np.int64), np.zeros([0], np.uint8),
    np.ones([3, 5], np.bool_), np.ones([5, 5], np.float32), np.ones([2, 2, 3, 5], np.float16), np.array([9, 3], np.int64),
    np.array([5], np.int64), np.array([-1, 2], np.int64), np.zeros([2, 7, 8], np.float32), np.zeros([16, 47], np.float32),
]
BAD_INPUT_TYPES = [  # (elem_type, shape)
    (1, [2, 3, 15]), (1, [2, 3, 12]), (1, [2, 3, 8]), (1, [2, 2, 3]), (1, [2, 2, 3, 4, 1]), (9, [3, 4]), (9, [5, 5]), (9, [1, 3, 5]),
    (1, [3, 5]), (10, [3, 5]), (7, [3, 5]), (1, [2, 2, 9, 4]), (1, [2, 1, 2, 4]), (1, [2, 2, 2]), (1, [2, 5, 40]), (1, [2, 5, 39]),
    (6, [2, 5]), (6, [2]), (6, [2, 6]), (7, [2, 5]), (6, [1, 5]), (1, [2, 5, 17]), (10, [2, 5, 16]), (11, [2, 3]), (1, [0, 3, 16]),
]

__all__ = ["VALID_ATTRIBUTES", "BAD_ATTRIBUTES", "BAD_CONSTANTS", "BAD_INPUT_TYPES", "SEEDS"]
