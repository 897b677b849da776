"""Seeds and bad values for the code of session 7, added to `fuzz_new_ops`'s sets (so
`fuzz_campaign --focus session7` and `bench/fuzz_numbers.py --only session7` see them):
TensorScatter (KV-cache update), NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss, BitCast,
CausalConvWithState, LinearAttention, 4-bit weights kept i4 / u4 (MatMulNBits, blocked and
per-axis INT4 / UINT4 DequantizeLinear, GatherBlockQuantized), torch `.half()` float16 /
float32 mixes, Cast whose declared output type contradicts `to` (E147) and com.microsoft
FusedMatMul transBatchA / transBatchB.

Two structured mutators go with them: `mutate_onnx_session7` (the new-op edits, plus declared
value types changed, 4-bit tensors given odd or wrong dims and short raw data) and
`mutate_ir_packed` (IR XML of packed i4 / u4 constants: element types, shapes, offsets and
sizes past the end of the .bin).
"""

from __future__ import annotations

import random
import re
from typing import Any

import numpy as np

from irforge.testing.fuzz_session5_ops import MS, _t, _vi  # the same small onnx.helper shorthands


def _model(nodes: list[Any], inputs: list[Any], outputs: list[Any], inits: list[Any] = (), opset: int = 17, ms: bool = False,  # type: ignore[assignment]
           value_info: list[Any] = ()) -> bytes:  # type: ignore[assignment]
    from onnx import helper

    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits), value_info=list(value_info))
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(MS, 1)] if ms else [])  # "" first: the mutator moves opset_import[0]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 11 if opset >= 25 else 10 if opset >= 21 else 8
    return model.SerializeToString()


def _f(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def tensor_scatter() -> bytes:
    """TensorScatter (opset 24): a circular write of update [2, 3, 3, 4] into a cache
    [2, 3, 8, 4] at run-time starts [2]; a linear one along axis 1 without write indices."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("TensorScatter", ["past", "update", "starts"], ["y"], mode="circular", axis=-2),
             helper.make_node("TensorScatter", ["past", "upd1"], ["z"], axis=1)]
    inputs = [_vi("past", T.FLOAT, [2, 3, 8, 4]), _vi("update", T.FLOAT, [2, 3, 3, 4]), _vi("starts", T.INT64, [2]),
              _vi("upd1", T.FLOAT, [2, 2, 8, 4])]
    return _model(nodes, inputs, [_vi("y", T.FLOAT, None), _vi("z", T.FLOAT, None)], opset=24)


def losses() -> bytes:
    """NegativeLogLikelihoodLoss (weighted, ignore_index 2, mean) of x [3, 5, 2] and
    SoftmaxCrossEntropyLoss (sum, log_prob output) of the same scores."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(71)
    nodes = [helper.make_node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["nll"], reduction="mean", ignore_index=2),
             helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["sce", "logp"], reduction="sum")]
    inputs = [_vi("x", T.FLOAT, [3, 5, 2]), _vi("t", T.INT64, [3, 2])]
    outs = [_vi("nll", T.FLOAT, None), _vi("sce", T.FLOAT, None), _vi("logp", T.FLOAT, None)]
    return _model(nodes, inputs, outs, [_t("w", rng.uniform(0.5, 2, 5).astype(np.float32))], opset=13)


def loss_none() -> bytes:
    """SoftmaxCrossEntropyLoss without reduction, 2-D scores [3, 4], a weight per class."""
    from onnx import TensorProto as T
    from onnx import helper

    node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["y"], reduction="none")
    return _model([node], [_vi("x", T.FLOAT, [3, 4]), _vi("t", T.INT64, [3])], [_vi("y", T.FLOAT, None)],
                  [_t("w", np.array([1.0, 0.5, 2.0, 0.0], np.float32))], opset=13)


def bitcast() -> bytes:
    """BitCast (opset 26): run-time int32 -> uint32 and uint8 -> int8, a constant float32 ->
    int32 folded."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("BitCast", ["a"], ["ua"], to=T.UINT32), helper.make_node("BitCast", ["b"], ["sb"], to=T.INT8),
             helper.make_node("BitCast", ["c"], ["ic"], to=T.INT32)]
    inputs = [_vi("a", T.INT32, [2, 4]), _vi("b", T.UINT8, [3])]
    outs = [_vi("ua", T.UINT32, None), _vi("sb", T.INT8, None), _vi("ic", T.INT32, None)]
    return _model(nodes, inputs, outs, [_t("c", np.array([1.0, -0.0, np.inf, 3.5], np.float32))], opset=26)


def causal_conv() -> bytes:
    """CausalConvWithState (opset 27): x [2, 3, 5], weights [3, 1, 4], bias, past state
    [2, 3, 3], silu."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(72)
    node = helper.make_node("CausalConvWithState", ["x", "w", "b", "past"], ["y", "state"], activation="silu")
    inputs = [_vi("x", T.FLOAT, [2, 3, 5]), _vi("past", T.FLOAT, [2, 3, 3])]
    return _model([node], inputs, [_vi("y", T.FLOAT, None), _vi("state", T.FLOAT, None)], [_t("w", _f(rng, 3, 1, 4)), _t("b", _f(rng, 3))],
                  opset=27)


def linear_attention() -> bytes:
    """LinearAttention (opset 27) gated_delta: q [2, 3, 4*3], k [2, 3, 2*3], v [2, 3, 2*2],
    past state [2, 2, 3, 2], decay per head [2, 3, 2], beta per head."""
    from onnx import TensorProto as T
    from onnx import helper

    node = helper.make_node("LinearAttention", ["q", "k", "v", "past", "decay", "beta"], ["y", "state"], update_rule="gated_delta",
                            q_num_heads=4, kv_num_heads=2)
    inputs = [_vi("q", T.FLOAT, [2, 3, 12]), _vi("k", T.FLOAT, [2, 3, 6]), _vi("v", T.FLOAT, [2, 3, 4]), _vi("past", T.FLOAT, [2, 2, 3, 2]),
              _vi("decay", T.FLOAT, [2, 3, 2]), _vi("beta", T.FLOAT, [2, 3, 2])]
    return _model([node], inputs, [_vi("y", T.FLOAT, None), _vi("state", T.FLOAT, None)], opset=27)


def matmul_nbits4() -> bytes:
    """MatMulNBits, 4 bits, K 32 in blocks of 16, N 8, no zero points (kept u4 in the IR),
    on a float16 activation."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(73)
    q = rng.integers(0, 16, (8, 2, 16), dtype=np.uint8)
    packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)
    node = helper.make_node("MatMulNBits", ["a", "B", "scales"], ["y"], domain=MS, K=32, N=8, bits=4, block_size=16)
    inits = [_t("B", packed), _t("scales", rng.uniform(0.01, 0.1, 16).astype(np.float16))]
    return _model([node], [_vi("a", T.FLOAT16, [2, 32])], [_vi("y", T.FLOAT16, None)], inits, ms=True)


def int4_axis() -> bytes:
    """Per-axis INT4 DequantizeLinear (axis 1, a scale per output column) and blocked UINT4
    (block 3 along axis 0 of 7 rows: a short last block) with UINT4 zero points, feeding
    MatMuls."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(74)
    w = helper.make_tensor("w", T.INT4, [6, 5], rng.integers(-8, 8, 30).tolist())
    u = helper.make_tensor("u", T.UINT4, [7, 3], rng.integers(0, 16, 21).tolist())
    uz = helper.make_tensor("uz", T.UINT4, [3, 3], rng.integers(0, 16, 9).tolist())
    nodes = [helper.make_node("DequantizeLinear", ["w", "s"], ["wf"], axis=1),
             helper.make_node("MatMul", ["x", "wf"], ["y"]),
             helper.make_node("DequantizeLinear", ["u", "us", "uz"], ["uf"], axis=0, block_size=3),
             helper.make_node("MatMul", ["x7", "uf"], ["z"])]
    inits = [w, u, uz, _t("s", rng.uniform(0.01, 0.2, 5).astype(np.float32)), _t("us", rng.uniform(0.01, 0.2, (3, 3)).astype(np.float32))]
    inputs = [_vi("x", T.FLOAT, [2, 6]), _vi("x7", T.FLOAT, [2, 7])]
    return _model(nodes, inputs, [_vi("y", T.FLOAT, None), _vi("z", T.FLOAT, None)], inits, opset=21)


def gather_block_quantized4() -> bytes:
    """GatherBlockQuantized: a 4-bit table [6, 32] in blocks of 16, no zero points, float16
    scales, indices [3]."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(75)
    inits = [_t("data", rng.integers(0, 256, (6, 16)).astype(np.uint8)), _t("scales", rng.uniform(0.1, 1, (6, 2)).astype(np.float16))]
    node = helper.make_node("GatherBlockQuantized", ["data", "ids", "scales"], ["y"], domain=MS, bits=4, block_size=16)
    return _model([node], [_vi("ids", T.INT64, [3])], [_vi("y", T.FLOAT16, None)], inits, ms=True)


def half_mix() -> bytes:
    """torch `.half()` residue: float32 + float16 (Add), LayerNormalization of float32 with
    float16 scale / bias, declared value types of each step."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(76)
    nodes = [helper.make_node("Mul", ["h", "w"], ["hw"]),
             helper.make_node("Cast", ["h"], ["h32"], to=T.FLOAT),
             helper.make_node("Add", ["h32", "hw"], ["s"]),
             helper.make_node("LayerNormalization", ["s", "scale", "bias"], ["y"], axis=-1, epsilon=1e-5),
             helper.make_node("Cast", ["y"], ["y16"], to=T.FLOAT16)]
    inits = [_t("w", rng.choice([-2.0, 0.5, 1.0], 8).astype(np.float16)), _t("scale", rng.standard_normal(8).astype(np.float16)),
             _t("bias", rng.standard_normal(8).astype(np.float16))]
    value_info = [_vi("hw", T.FLOAT16, [2, 3, 8]), _vi("h32", T.FLOAT, [2, 3, 8]), _vi("s", T.FLOAT, [2, 3, 8])]
    return _model(nodes, [_vi("h", T.FLOAT16, [2, 3, 8])], [_vi("y", T.FLOAT, None), _vi("y16", T.FLOAT16, None)], inits,
                  value_info=value_info)


def fused_matmul_batch() -> bytes:
    """com.microsoft FusedMatMul with transBatchA (a [5, 2, 3, 4]) and transBatchB, alpha 0.5;
    and transBatchA with transA."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, alpha=0.5, transBatchA=1, transBatchB=1),
             helper.make_node("FusedMatMul", ["c", "d"], ["z"], domain=MS, transBatchA=1, transA=1)]
    inputs = [_vi("a", T.FLOAT, [5, 2, 3, 4]), _vi("b", T.FLOAT, [4, 2, 3, 6]), _vi("c", T.FLOAT, [4, 2, 3, 5]), _vi("d", T.FLOAT, [2, 3, 4, 6])]
    return _model(nodes, inputs, [_vi("y", T.FLOAT, None), _vi("z", T.FLOAT, None)], ms=True)


SEEDS = {"tscatter.onnx": tensor_scatter, "losses.onnx": losses, "lossnone.onnx": loss_none, "bitcast.onnx": bitcast,
         "causalconv.onnx": causal_conv, "linattn.onnx": linear_attention, "nbits4.onnx": matmul_nbits4, "int4axis.onnx": int4_axis,
         "gbq4.onnx": gather_block_quantized4, "halfmix.onnx": half_mix, "fmmbatch.onnx": fused_matmul_batch}
IR_SEEDS = ("nbits4", "int4axis", "gbq4")
"""Seeds whose IR XML (i4 / u4 constants) `mutate_ir_packed` edits."""

_REDUCTION = [("reduction", "MEAN"), ("reduction", "avg"), ("reduction", ""), ("ignore_index", 2**40), ("ignore_index", -2**40)]
BAD_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "TensorScatter": [("mode", "wrap"), ("mode", ""), ("mode", "CIRCULAR"), ("axis", 0), ("axis", 4), ("axis", -5), ("axis", 2**40),
                      ("axis", 3)],
    "NegativeLogLikelihoodLoss": _REDUCTION,
    "SoftmaxCrossEntropyLoss": _REDUCTION,
    "BitCast": [("to", 1), ("to", 7), ("to", 16), ("to", 0), ("to", 99), ("to", 8), ("to", 22), ("to", None)],
    "CausalConvWithState": [("activation", "gelu"), ("activation", ""), ("activation", "SILU"), ("kernel_size", 3), ("ndim", 2)],
    "LinearAttention": [("update_rule", "bogus"), ("update_rule", "gated"), ("update_rule", "delta"), ("update_rule", "linear"),
                        ("q_num_heads", 3), ("q_num_heads", 0), ("q_num_heads", -4), ("q_num_heads", None), ("kv_num_heads", 3),
                        ("kv_num_heads", 0), ("kv_num_heads", 8), ("kv_num_heads", None), ("scale", 0.0), ("scale", float("nan")),
                        ("scale", float("inf")), ("chunk_size", 2)],
    "MatMulNBits": [("bits", 3), ("bits", 8), ("bits", 2), ("K", 31), ("K", 33), ("K", 0), ("K", 64), ("N", 7), ("N", 9), ("N", 0),
                    ("block_size", 8), ("block_size", 32), ("block_size", 15), ("block_size", 0), ("accuracy_level", 4)],
    "DequantizeLinear": [("block_size", 4), ("block_size", 7), ("block_size", 1), ("axis", 1), ("axis", 0), ("axis", -1), ("axis", 2),
                         ("output_dtype", 10), ("output_dtype", 1)],
    "GatherBlockQuantized": [("block_size", 32), ("block_size", 64), ("bits", 8), ("quantize_axis", 1), ("quantize_axis", -1)],
    "LayerNormalization": [("axis", 3), ("axis", -4), ("stash_type", 10), ("epsilon", float("nan"))],
    "Cast": [("to", 10), ("to", 1), ("to", 11), ("to", 0), ("to", 8), ("to", 99), ("saturate", 0)],
    "FusedMatMul": [("transBatchA", 2), ("transBatchB", -1), ("transA", 2), ("alpha", float("nan")), ("transBatchA", 1), ("transBatchB", 1),
                    ("transB", 1), ("alpha", 0.0)],
}

VALID_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "TensorScatter": [("mode", "linear"), ("mode", "circular"), ("axis", 2), ("axis", -3), ("axis", 1)],
    "NegativeLogLikelihoodLoss": [("reduction", "none"), ("reduction", "sum"), ("reduction", "mean"), ("ignore_index", 0),
                                  ("ignore_index", -1)],
    "SoftmaxCrossEntropyLoss": [("reduction", "none"), ("reduction", "mean"), ("ignore_index", 1), ("ignore_index", 4)],
    "BitCast": [("to", 6), ("to", 12), ("to", 3), ("to", 2)],
    "CausalConvWithState": [("activation", "none"), ("activation", "swish"), ("activation", "silu")],
    "LinearAttention": [("update_rule", "gated_delta"), ("scale", 0.25), ("scale", -1.0)],
    "DequantizeLinear": [("axis", -1), ("block_size", 3)],
    "FusedMatMul": [("alpha", 2.0), ("transBatchA", 0), ("transBatchB", 0), ("transA", 0)],
    "LayerNormalization": [("axis", 2), ("axis", -2), ("epsilon", 0.5)],
}

BAD_CONSTANTS = [
    np.zeros([8, 2, 7], np.uint8), np.zeros([8, 3, 8], np.uint8), np.zeros([16], np.float16), np.zeros([15], np.float32),
    np.zeros([6, 1], np.float16), np.zeros([6, 16], np.int8), np.zeros([6, 5], np.int8), np.zeros([3, 3], np.float32),
    np.array([1.0, 2.0], np.float64), np.zeros([3, 1, 5], np.float32), np.zeros([3, 2, 4], np.float32), np.array([9, -9], np.int64),
]
BAD_INPUT_TYPES = [  # (elem_type, shape)
    (1, [2, 3, 9, 4]), (1, [2, 3, 3]), (7, [3]), (6, [2]), (7, [2, 1]), (1, [2, 3, 4]), (1, [3, 5]), (7, [3, 3]), (6, [3, 2]),
    (10, [2, 32]), (1, [2, 31]), (10, [2, 3, 8]), (11, [2, 3, 8]), (1, [2, 3, 8]), (12, [2, 4]), (3, [3]), (1, [2, 3, 13]),
    (1, [2, 4, 12]), (1, [2, 2, 3, 3]), (1, [2, 3, 1]), (7, [3, 2, 1]), (1, [6, 2, 3, 4]), (1, [2, 4, 3, 6]), (1, [2, 3, 5]),
]


def mutate_onnx_session7(data: bytes, rng: random.Random) -> bytes:
    """A third of the time an edit of declared types or 4-bit tensors: a value_info's / output's
    element type changed (Cast contradictions, float16 / float32 mixes), an INT4 / UINT4
    initializer given odd or swapped dims or truncated raw data, a packed uint8 table cut;
    else `fuzz_new_ops.mutate_onnx_new_ops`."""
    import onnx
    from google.protobuf.message import DecodeError

    from irforge.testing.fuzz_new_ops import mutate_onnx_new_ops

    if rng.random() >= 0.35:
        return mutate_onnx_new_ops(data, rng)
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except DecodeError:
        return data
    graph = model.graph
    declared = list(graph.value_info) + list(graph.output)
    if rng.random() < 0.4 and declared:
        vi = rng.choice(declared)
        vi.type.tensor_type.elem_type = rng.choice([1, 10, 11, 16, 6, 7, 2, 3, 22, 21, 0, 99])
        if rng.random() < 0.3 and vi.type.tensor_type.HasField("shape"):
            del vi.type.tensor_type.shape.dim[-1:]
        return model.SerializeToString()
    if not graph.initializer:
        return data
    init = rng.choice(list(graph.initializer))
    how = rng.randrange(5)
    if how == 0 and init.dims:  # dims that no longer match the element count
        init.dims[rng.randrange(len(init.dims))] += rng.choice([-1, 1, 7])
    elif how == 1:  # the element type swapped among the 4-bit / 8-bit ones
        init.data_type = rng.choice([21, 22, 2, 3, 16, 10])
    elif how == 2 and init.raw_data:  # raw data cut short or grown
        init.raw_data = init.raw_data[: rng.randrange(len(init.raw_data))] if rng.random() < 0.7 else init.raw_data + b"\x7f"
    elif how == 3 and init.int32_data:  # INT4 / UINT4 from helper.make_tensor: packed int32_data
        del init.int32_data[rng.randrange(len(init.int32_data)):]
    else:  # dims reversed (a [K, N] table read as [N, K])
        dims = list(init.dims)[::-1]
        del init.dims[:]
        init.dims.extend(dims)
    return model.SerializeToString()


_CONST = re.compile(rb'<layer id="\d+" name="[^"]*" type="Const"[^>]*>\s*<data ([^/]*)/>\s*<output>\s*<port id="\d+"[^>]*>(.*?)</port>',
                    re.S)
_PACKED_VALUES = [b"u4", b"i4", b"u8", b"i8", b"u1", b"nf4", b"f4e2m1", b"u3", b"f16", b"", b"U4"]


def mutate_ir_packed(data: bytes, rng: random.Random) -> bytes:
    """One or two edits of an IR XML holding i4 / u4 constants: a Const's element_type, shape,
    offset or size changed (odd element counts, offsets past the end of the .bin, sizes of
    the unpacked bytes), or its output dims changed against `shape`."""
    out = data
    for _ in range(rng.randint(1, 2)):
        consts = list(_CONST.finditer(out))
        if not consts:
            return out
        match = rng.choice([m for m in consts if b'"u4"' in m.group(1) or b'"i4"' in m.group(1)] or consts)
        a, b = match.span(1)
        attrs = match.group(1)
        key = rng.choice([b"element_type", b"shape", b"offset", b"size", b"dims"])
        if key == b"dims":
            dims = list(re.finditer(rb"<dim>(\d+)</dim>", match.group(2)))
            if not dims:
                continue
            d = rng.choice(dims)
            da, db = match.start(2) + d.start(1), match.start(2) + d.end(1)
            out = out[:da] + str(int(d.group(1)) + rng.choice([-1, 1, 2])).encode() + out[db:]
            continue
        found = re.search(rb'\b' + key + rb'="([^"]*)"', attrs)
        if not found:
            continue
        old = found.group(1)
        if key == b"element_type":
            new = rng.choice(_PACKED_VALUES)
        elif key == b"shape":
            dims = [int(x) for x in old.split(b",") if x.strip().isdigit()]
            if dims and rng.random() < 0.6:
                dims[rng.randrange(len(dims))] += rng.choice([-1, 1, 3])
            new = rng.choice([b",".join(str(d).encode() for d in dims), b"", b"-1", b"3,", b"99999999,99999999"])
        else:
            n = int(old) if old.isdigit() else 0
            new = str(rng.choice([n + 1, n - 1, n * 2, n + 10**6, 0, 2**63, -1, n // 2])).encode()
        at = a + found.start(1)
        out = out[:at] + new + out[at + len(old):]
    return out


__all__ = ["VALID_ATTRIBUTES", "BAD_ATTRIBUTES", "BAD_CONSTANTS", "BAD_INPUT_TYPES", "SEEDS", "IR_SEEDS", "mutate_onnx_session7",
           "mutate_ir_packed"]
