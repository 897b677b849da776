"""ir-convert on MXNet files: where the symbol and weights are found, mo.py's MXNet flags,
input shapes, cut points, and the one-line errors (with their codes) for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.mxnet.registry import EXTRACTORS, mxnet_extractor
from irforge.testing.mxnet_models import SymbolBuilder, write_params
from tests.frontends.mxnet.support import import_args

RNG = np.random.default_rng(0)
W = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)
X = RNG.standard_normal((1, 3, 6, 6)).astype(np.float32)


def small(attr_key: str = "attrs", **data_attrs: object) -> tuple[SymbolBuilder, tuple[int, int]]:
    """data -> Convolution -> relu -> _mul_scalar."""
    b = SymbolBuilder(attr_key)
    x = b.var("data", **data_attrs)
    y = b.op("Convolution", "conv", [x, b.param("conv_weight", W), b.param("conv_bias", B)], kernel=(3, 3), num_filter=4, pad=(1, 1))
    y = b.op("Activation", "relu", [y], act_type="relu")
    return b, b.op("_mul_scalar", "out", [y], scalar=2.0)


def expected() -> np.ndarray:
    padded = np.pad(X, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))  # [1, 3, 6, 6, 3, 3]
    conv = np.einsum("nchwij,ocij->nohw", windows, W) + B[None, :, None, None]
    return np.maximum(conv, 0) * 2


def convert(*argv: str) -> np.ndarray:
    return run(import_args(*argv), {"data": X})["out"]


def test_symbol_found_beside_the_weights_or_given(tmp_path: Path) -> None:
    b, y = small()
    params = b.save(tmp_path, "net", [y])
    np.testing.assert_allclose(convert("--input_model", str(params), "--input_shape", "[1,3,6,6]"), expected(), rtol=1e-5, atol=1e-5)
    elsewhere = tmp_path / "topology.json"
    (tmp_path / "net-symbol.json").rename(elsewhere)
    np.testing.assert_allclose(convert("--input_model", str(params), "--input_symbol", str(elsewhere), "--input_shape", "[1,3,6,6]"), expected(), rtol=1e-5, atol=1e-5)
    with pytest.raises(IrforgeError, match="--input_symbol") as e:
        import_args("--input_model", str(params), "--input_shape", "[1,3,6,6]")
    assert e.value.code == "E409"


def test_symbol_as_input_model_and_gluon_files(tmp_path: Path) -> None:
    b, y = small("attr", __shape__=(1, 3, 6, 6))  # an older file: `attr`, and the input's shape
    b.save(tmp_path, "net", [y], prefixed=False, epoch=None)  # gluon: net.params, bare names
    assert (tmp_path / "net.params").exists()
    np.testing.assert_allclose(convert("--input_model", str(tmp_path / "net-symbol.json")), expected(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(convert("--input_model", str(tmp_path / "net.params")), expected(), rtol=1e-5, atol=1e-5)
    model = import_args("--input_model", str(tmp_path / "net.params"), "--batch", "2")
    assert list(model.func.function_type.inputs.data[0].get_shape()) == [2, 3, 6, 6]


def test_param_key_of_old_files(tmp_path: Path) -> None:
    b, y = small("param")
    params = b.save(tmp_path, "old", [y], version="legacy")
    np.testing.assert_allclose(convert("--input_model", str(params), "--input_shape", "[1,3,6,6]"), expected(), rtol=1e-5, atol=1e-5)


def test_nd_files_merged_into_the_pretrained_weights(tmp_path: Path) -> None:
    b, y = small()
    b.save(tmp_path, "base", [y])
    params = b.named_params()
    write_params(tmp_path / "base-0000.params", {"arg:conv_weight": params["arg:conv_weight"]})
    write_params(tmp_path / "extra_args.nd", {"conv_bias": params["arg:conv_bias"]})
    write_params(tmp_path / "extra_auxs.nd", {})
    argv = ["--input_model", str(tmp_path / "base-symbol.json"), "--input_symbol", str(tmp_path / "base-symbol.json"),
            "--nd_prefix_name", "extra", "--pretrained_model_name", str(tmp_path / "base-0000.params"), "--input_shape", "[1,3,6,6]"]  # fmt: skip
    np.testing.assert_allclose(convert(*argv), expected(), rtol=1e-5, atol=1e-5)
    with pytest.raises(IrforgeError, match="come together") as e:
        import_args(*argv[:6], "--input_shape", "[1,3,6,6]")
    assert e.value.code == "E409"


def test_input_shape_required_and_said(tmp_path: Path) -> None:
    b, y = small()
    params = b.save(tmp_path, "net", [y])
    with pytest.raises(IrforgeError, match=r"does not say the shape of input 'data'.*--input_shape") as e:
        import_args("--input_model", str(params))
    assert e.value.code == "E405"


def test_output_cuts_before_an_unsupported_op(tmp_path: Path) -> None:
    b, y = small()
    z = b.op("_contrib_Frobnicate", "frob", [y])
    params = b.save(tmp_path, "net", [z])
    with pytest.raises(IrforgeError, match=r"unsupported MXNet ops: _contrib_Frobnicate x1 \(frob\)") as e:
        import_args("--input_model", str(params), "--input_shape", "[1,3,6,6]")
    assert e.value.code == "E403"
    got = run(import_args("--input_model", str(params), "--input_shape", "[1,3,6,6]", "--output", "out"), {"data": X})
    np.testing.assert_allclose(got["out"], expected(), rtol=1e-5, atol=1e-5)


def test_unsupported_ops_are_listed_together(tmp_path: Path) -> None:
    b = SymbolBuilder()
    x = b.var("data")
    for i, op in enumerate(["Foo", "Bar", "Foo", "Custom"]):
        x = b.op(op, f"n{i}", [x])
    params = b.save(tmp_path, "net", [x])
    with pytest.raises(IrforgeError) as e:
        import_args("--input_model", str(params), "--input_shape", "[1,3]")
    assert "Bar x1 (n1); Custom x1 (n3); Foo x2 (n0, n2)" in str(e.value)


def test_extensions_register_extractors(tmp_path: Path) -> None:
    from irforge.dialects.nn import Activation

    b = SymbolBuilder()
    y = b.op("MyTanh", "t", [b.var("data")])
    params = b.save(tmp_path, "net", [y])
    try:
        mxnet_extractor("MyTanh")(lambda ctx: ctx.value(Activation, [ctx.input(0)], kind="tanh"))
        got = run(import_args("--input_model", str(params), "--input_shape", "[2,3]"), {"data": X[0, 0, :2, :3]})
        np.testing.assert_allclose(got["t"], np.tanh(X[0, 0, :2, :3]), rtol=1e-6)
    finally:
        EXTRACTORS.pop("MyTanh")


@pytest.mark.parametrize(
    "mutate, message, code",
    [
        (lambda b: b.params.pop("conv_bias"), "the weights have no array for conv_bias", "E406"),
        (lambda b: b.params.update(conv_weight=np.zeros((4, 3, 2, 2), np.float32)), "weight 'conv_weight' has shape [4, 3, 2, 2], this node needs [4, 3, 3, 3]", "E404"),
        (lambda b: b.nodes[3]["attrs"].update(frobnicate="1"), "attribute frobnicate='1' not supported", "E413"),
        (lambda b: b.nodes[3]["attrs"].update(layout="NHWC"), "layout NHWC is not supported", "E412"),
        (lambda b: b.nodes[3]["attrs"].update(kernel="(3, x)"), "attribute kernel='(3, x)' is not a tuple of integers", "E411"),
    ],
    ids=["missing-weight", "weight-shape", "unknown-attribute", "layout", "bad-value"],
)
def test_bad_models_are_one_line_errors(tmp_path: Path, mutate, message: str, code: str) -> None:  # type: ignore[no-untyped-def]
    b, y = small()
    mutate(b)
    params = b.save(tmp_path, "net", [y])
    with pytest.raises(IrforgeError) as e:
        import_args("--input_model", str(params), "--input_shape", "[1,3,6,6]")
    assert message in str(e.value) and e.value.code == code


@pytest.mark.parametrize(
    "text, message",
    [
        ("{nodes: []", "bad JSON at line 1"),
        (json.dumps({"nodes": [{"op": "null", "name": "a", "inputs": [[1, 0, 0]]}], "heads": [[0, 0, 0]]}), "reads node #1, which is not an earlier node"),
        (json.dumps({"nodes": [{"op": "null", "name": "a"}], "heads": []}), "no 'heads'"),
        (json.dumps({"nodes": [{"op": "null", "name": "a", "attrs": {"k": 3}}], "heads": [[0, 0, 0]]}), "not strings"),
    ],
)
def test_bad_symbol_files(tmp_path: Path, text: str, message: str) -> None:
    b, y = small()
    params = b.save(tmp_path, "net", [y])
    (tmp_path / "net-symbol.json").write_text(text)
    with pytest.raises(IrforgeError, match=message) as e:
        import_args("--input_model", str(params), "--input_shape", "[1,3,6,6]")
    assert e.value.code == "E410"


def test_ir_convert_exits_2_with_one_line_and_no_output(tmp_path: Path) -> None:
    b, y = small()
    params = b.save(tmp_path, "net", [y])
    params.write_bytes(params.read_bytes()[:50])
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "irforge.tools.ir_convert", "--input_model", str(params), "--input_shape", "[1,3,6,6]", "-o", str(out)],
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "E401" in result.stderr and "not a valid MXNet NDArray file" in result.stderr
    assert not out.exists() or not any(out.iterdir())


def test_mxnet_0_8_files(tmp_path: Path) -> None:
    """The 0.8 layout: op parameters in `param`, user hints (ctx_group, lr_mult) in `attr`,
    [node, output] inputs, BatchNorm without its moving statistics as inputs, legacy NDArrays."""
    rng = np.random.default_rng(5)
    w, bias = rng.standard_normal((6, 4)).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    beta, gamma = rng.standard_normal(6).astype(np.float32), rng.uniform(0.5, 2, 6).astype(np.float32)
    mean, var = rng.standard_normal(6).astype(np.float32), rng.uniform(0.5, 2, 6).astype(np.float32)

    def node(op: str, name: str, inputs: list, **param: str) -> dict:  # type: ignore[type-arg]
        return {"op": op, "param": param, "name": name, "inputs": inputs, "backward_source_id": -1, "attr": {"ctx_group": "stage1", "lr_mult": "0.2"}}

    nodes = [
        node("null", "data", []), node("null", "fc1_weight", []), node("null", "fc1_bias", []),
        node("FullyConnected", "fc1", [[0, 0], [1, 0], [2, 0]], no_bias="False", num_hidden="6"),
        node("null", "bn_gamma", []), node("null", "bn_beta", []),
        node("BatchNorm", "bn", [[3, 0], [4, 0], [5, 0]], eps="0.001", fix_gamma="False", momentum="0.9", use_global_stats="False"),
        node("null", "softmax_label", []),
        node("SoftmaxOutput", "softmax", [[6, 0], [7, 0]], grad_scale="1", ignore_label="-1", multi_output="False", normalization="null",
             out_grad="False", preserve_shape="False", use_ignore="False"),
    ]  # fmt: skip
    (tmp_path / "mlp-symbol.json").write_text(json.dumps({"nodes": nodes, "arg_nodes": [0, 1, 2, 4, 5, 7], "heads": [[8, 0]]}))
    arrays = {"arg:fc1_weight": w, "arg:fc1_bias": bias, "arg:bn_gamma": gamma, "arg:bn_beta": beta, "aux:bn_moving_mean": mean, "aux:bn_moving_var": var}
    params = write_params(tmp_path / "mlp-0000.params", arrays, "legacy")
    x = rng.standard_normal((3, 4)).astype(np.float32)
    got = run(import_args("--input_model", str(params), "--input_shape", "[3,4]"), {"data": x})["softmax"]
    z = (x @ w.T + bias - mean) / np.sqrt(var + 1e-3) * gamma + beta
    want = np.exp(z - z.max(1, keepdims=True))
    np.testing.assert_allclose(got, want / want.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
