"""onnxruntime's fused contrib ops (what its transformer optimizer, offline graph optimisation
and 4-bit quantizer write) against onnxruntime on ref and cpu, a few through our IR on
OpenVINO; attributes irforge does not read are refused by name."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

MS = "com.microsoft"
RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 5, 16)).astype(np.float32)


def f32(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def contrib_model(op, inputs, initializers=(), outputs=("y",), domain=MS, **attrs):  # type: ignore[no-untyped-def]
    """One `op` node; `inputs` maps feed names to arrays, `initializers` are constants."""
    names = [*inputs, *(n for n, _ in initializers)]
    node = helper.make_node(op, names if not attrs.get("_names") else attrs.pop("_names"), list(outputs), domain=domain, **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in inputs.items()],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs if o],
        [numpy_helper.from_array(a, n) for n, a in initializers],
    )  # fmt: skip
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]
    return helper.make_model(graph, opset_imports=opsets), inputs


def nbits_weights(k: int, n: int, bits: int, block: int, zero_points: str):  # type: ignore[no-untyped-def]
    """Random `bits`-bit blocks packed as onnxruntime's quantizer packs them (low bits first)."""
    blocks = -(-k // block)
    q = RNG.integers(0, 1 << bits, (n, blocks, block), dtype=np.uint8)
    per_byte = 8 // bits
    packed = np.zeros((n, blocks, block // per_byte), np.uint8)
    for i in range(per_byte):
        packed |= (q[..., i::per_byte] << (i * bits)).astype(np.uint8)
    scales = RNG.uniform(0.01, 0.1, (n * blocks,)).astype(np.float32)
    inits = [("B", packed), ("scales", scales)]
    if zero_points == "packed":
        zp = RNG.integers(0, 1 << bits, (n, blocks), dtype=np.uint8)
        zp_bytes = -(-blocks * bits // 8)
        padded = np.zeros((n, zp_bytes * per_byte), np.uint8)
        padded[:, :blocks] = zp
        packed_zp = np.zeros((n, zp_bytes), np.uint8)
        for i in range(per_byte):
            packed_zp |= (padded[:, i::per_byte] << (i * bits)).astype(np.uint8)
        inits.append(("zp", packed_zp.reshape(-1)))
    elif zero_points == "float":
        inits.append(("zp", RNG.uniform(0, (1 << bits) - 1, (n * blocks,)).astype(np.float32)))
    return inits


CASES = {
    "Gelu": lambda: contrib_model("Gelu", {"x": X}),
    "BiasGelu": lambda: contrib_model("BiasGelu", {"x": X}, [("b", f32(16))]),
    "FastGelu": lambda: contrib_model("FastGelu", {"x": X}, [("b", f32(16))]),
    "FastGelu-no-bias": lambda: contrib_model("FastGelu", {"x": X}),
    "QuickGelu": lambda: contrib_model("QuickGelu", {"x": X}, alpha=1.5),
    "BiasAdd": lambda: contrib_model("BiasAdd", {"x": X, "skip": f32(2, 5, 16)}, [("b", f32(16))], _names=["x", "b", "skip"]),
    "SkipLayerNormalization": lambda: contrib_model(
        "SkipLayerNormalization", {"x": X, "skip": f32(2, 5, 16)}, [("gamma", f32(16)), ("beta", f32(16)), ("bias", f32(16))],
        outputs=("y", "", "", "sum"), epsilon=1e-5),
    "SkipLayerNormalization-stats": lambda: contrib_model(
        "SkipLayerNormalization", {"x": X, "skip": f32(5, 16)}, [("gamma", f32(16))], outputs=("y", "mean", "inv_std")),
    "SkipSimplifiedLayerNormalization": lambda: contrib_model(
        "SkipSimplifiedLayerNormalization", {"x": X, "skip": f32(2, 5, 16)}, [("gamma", f32(16)), ("bias", f32(16))],
        outputs=("y", "", "", "sum"), epsilon=1e-6),
    "SimplifiedLayerNormalization": lambda: contrib_model("SimplifiedLayerNormalization", {"x": X}, [("scale", f32(16))], domain="",
                                                          epsilon=1e-6),
    "FusedMatMul": lambda: contrib_model("FusedMatMul", {"a": X, "b": f32(2, 7, 16)}, alpha=0.5, transB=1),
    # onnxruntime's level-2 fusion of torch MHA's `view(L, B*H, D).transpose(0, 1)` (torchvision ViT):
    # the first axis moved to the row axis ([d0, d1, .., d_{r-1}] -> [d1, .., d0, d_{r-1}])
    "FusedMatMul-transBatchA": lambda: contrib_model("FusedMatMul", {"a": f32(5, 6, 4), "b": f32(6, 4, 3)}, alpha=0.5, transBatchA=1),
    "FusedMatMul-transBatchA-transA": lambda: contrib_model("FusedMatMul", {"a": f32(4, 2, 3, 5), "b": f32(2, 3, 4, 6)}, transBatchA=1, transA=1),
    "FusedMatMul-transBatchB-transB": lambda: contrib_model("FusedMatMul", {"a": f32(2, 3, 5, 4), "b": f32(6, 2, 3, 4)}, transBatchB=1, transB=1),
    "FusedMatMul-transBatch-both": lambda: contrib_model("FusedMatMul", {"a": f32(5, 2, 3, 4), "b": f32(4, 2, 3, 6)}, transBatchA=1, transBatchB=1),
    "FusedConv": lambda: contrib_model("FusedConv", {"x": f32(1, 3, 8, 8), "z": f32(1, 4, 8, 8)}, [("w", f32(4, 3, 3, 3)), ("bias", f32(4))],
                                       _names=["x", "w", "bias", "z"], pads=[1, 1, 1, 1], activation="LeakyRelu", activation_params=[0.1]),
    "FusedConv-clip": lambda: contrib_model("FusedConv", {"x": f32(1, 3, 8, 8)}, [("w", f32(4, 3, 3, 3))], strides=[2, 2], activation="Clip",
                                            activation_params=[-0.5, 0.5]),
    "FusedGemm": lambda: contrib_model("FusedGemm", {"a": f32(3, 16)}, [("b", f32(8, 16)), ("c", f32(8))], transB=1, alpha=0.7,
                                       activation="Relu"),
    "MatMulNBits-4": lambda: contrib_model("MatMulNBits", {"a": X}, nbits_weights(16, 24, 4, 16, "none"), K=16, N=24, bits=4, block_size=16),
    "MatMulNBits-4-zp-bias": lambda: contrib_model(
        "MatMulNBits", {"a": f32(2, 5, 40)}, [*nbits_weights(40, 6, 4, 16, "packed"), ("g_idx", np.zeros(0, np.int32)), ("bias", f32(6))],
        _names=["a", "B", "scales", "zp", "", "bias"], K=40, N=6, bits=4, block_size=16),
    "MatMulNBits-8-zp": lambda: contrib_model("MatMulNBits", {"a": f32(3, 32)}, nbits_weights(32, 5, 8, 32, "packed"), K=32, N=5,
                                              bits=8, block_size=32),
    "MatMulNBits-4-float-zp": lambda: contrib_model("MatMulNBits", {"a": f32(3, 64)}, nbits_weights(64, 5, 4, 32, "float"), K=64, N=5,
                                                    bits=4, block_size=32),
}


def _run_ort(proto, feeds):  # type: ignore[no-untyped-def]
    node = proto.graph.node[0]
    if node.op_type == "BiasAdd":  # onnxruntime has it on CUDA only: its definition in numpy
        bias = numpy_helper.to_array(proto.graph.initializer[0])
        return {"y": feeds["x"] + bias + feeds["skip"]}
    return dict(zip([o.name for o in proto.graph.output], ort_session_run(proto, feeds)))


@pytest.mark.parametrize("case", list(CASES))
def test_contrib_op_matches_onnxruntime_on_ref_and_cpu(case):
    proto, feeds = CASES[case]()
    if case == "MatMulNBits-4-zp-bias":  # an empty g_idx input, as the quantizer writes none: drop it
        node = proto.graph.node[0]
        node.input[4] = ""
        del proto.graph.initializer[3]
    want = _run_ort(proto, feeds)
    model = import_onnx(proto)
    for got in (run(model, feeds), compile_model(model, cache_dir=False)(feeds)):
        for name, expected in want.items():
            np.testing.assert_allclose(got[name], expected, rtol=1e-4, atol=1e-5, err_msg=f"{case}: {name}")


@pytest.mark.parametrize("case", ["SkipLayerNormalization", "FastGelu", "MatMulNBits-4-zp-bias", "FusedConv", "FusedMatMul-transBatch-both"])
def test_contrib_op_through_openvino(tmp_path, case):
    from tests.backends.ir_xml_support import run_openvino

    proto, feeds = CASES[case]()
    if case == "MatMulNBits-4-zp-bias":
        proto.graph.node[0].input[4] = ""
        del proto.graph.initializer[3]
    want = _run_ort(proto, feeds)
    xml = tmp_path / "m.xml"
    write_ir_xml(import_onnx(proto), xml)
    got = run_openvino(xml, feeds)
    for name, expected in want.items():
        np.testing.assert_allclose(got[name], expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("make", "named"),
    [
        (lambda: contrib_model("QuickGelu", {"x": X}, beta=2.0), "beta"),
        (lambda: contrib_model("FusedConv", {"x": f32(1, 3, 8, 8)}, [("w", f32(4, 3, 3, 3))], activation="Selu"), "Selu"),
        (lambda: contrib_model("FusedMatMul", {"a": f32(5, 16), "b": f32(16, 7)}, transBatchA=1), "transBatchA"),  # rank 2: no batch axes
        (lambda: contrib_model("MatMulNBits", {"a": X}, nbits_weights(16, 24, 4, 16, "none"), K=16, N=24, bits=3, block_size=16), "bits=3"),
    ],
)
def test_contrib_refusals_name_the_attribute(make, named):
    with pytest.raises(IrforgeError) as err:
        import_onnx(make()[0])
    assert named in err.value.what
