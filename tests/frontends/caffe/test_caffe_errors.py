"""User errors and warnings of the Caffe importer, directly and through ir-convert (exit 2)."""

from __future__ import annotations

import re
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from irforge.errors import IrforgeError
from irforge.frontends.caffe import import_caffe
from irforge.frontends.caffe.loader import load_caffe
from tests.frontends.caffe.caffe_files import weights, write_caffe

RELU_NET = """
input: "data"
input_shape { dim: 1 dim: 2 dim: 3 dim: 3 }
layer { name: "relu" type: "ReLU" bottom: "data" top: "out" relu_param { negative_slope: 0.1 } }
"""


def ir_convert(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "irforge.tools.ir_convert", "--emit", "mlir", *args], capture_output=True, text=True, check=False
    )


def test_missing_caffemodel(tmp_path: Path) -> None:
    (tmp_path / "net.prototxt").write_text(RELU_NET)
    with pytest.raises(IrforgeError, match="caffemodel '.*missing.caffemodel' does not exist"):
        load_caffe(tmp_path / "missing.caffemodel", tmp_path / "net.prototxt")


def test_missing_prototxt_beside_caffemodel(tmp_path: Path) -> None:
    model, proto = write_caffe(tmp_path, "net", RELU_NET, {})
    proto.unlink()
    with pytest.raises(IrforgeError, match="none found beside it .*--input_proto"):
        load_caffe(model, None)


def test_prototxt_found_beside_caffemodel(tmp_path: Path) -> None:
    model, _ = write_caffe(tmp_path, "net", RELU_NET, {})
    x = np.linspace(-1, 1, 18, dtype=np.float32).reshape(1, 2, 3, 3)
    from irforge.backends.reference import run

    out = run(import_caffe(model), {"data": x})["out"]
    np.testing.assert_allclose(out, np.where(x > 0, x, 0.1 * x), rtol=1e-6)


def test_prototxt_without_weights_explains_bare_caffemodel(tmp_path: Path) -> None:
    (tmp_path / "net.prototxt").write_text(RELU_NET)
    with pytest.raises(IrforgeError, match=r"comes without weights.*caffe\.Net\(.*net\.save"):
        load_caffe(tmp_path / "net.prototxt", None)


def test_malformed_prototxt_names_line(tmp_path: Path) -> None:
    bad = RELU_NET.replace('top: "out"', 'top: "out" }\nlayer { name: ')
    model, _ = write_caffe(tmp_path, "net", bad, {})
    with pytest.raises(IrforgeError) as info:
        load_caffe(model, None)
    text = str(info.value)
    assert "malformed prototxt" in text and "net.prototxt:5" in text and "\n" not in text


def test_not_a_caffemodel(tmp_path: Path) -> None:
    model, _ = write_caffe(tmp_path, "net", RELU_NET, {})
    model.write_bytes(b"\xff\xff\xff\xff garbage")
    with pytest.raises(IrforgeError, match="is not a binary Caffe NetParameter"):
        load_caffe(model, None)


def test_unknown_fields_warn_only_when_inference_neutral(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    neutral = RELU_NET + 'layer { name: "drop" type: "Dropout" bottom: "out" top: "out" param { share_mode: STRICT } }\n'
    model, _ = write_caffe(tmp_path, "net", neutral, {})
    with caplog.at_level(logging.WARNING, logger="irforge.caffe"):
        source = load_caffe(model, None)
        assert import_caffe(source).func.function_type.outputs.data[0].get_shape() == (1, 2, 3, 3)
    assert source.warnings == ["field 'param' ignored in 1 layer(s) ('drop'): learning-rate and decay multipliers (training only)"]
    assert "'param' ignored" in caplog.text
    changing = RELU_NET + 'layer { name: "drop" type: "Dropout" bottom: "out" top: "out" dropout_param { mystery_scale: false } }\n'
    model, _ = write_caffe(tmp_path, "net", changing, {})
    with pytest.raises(IrforgeError, match=r"unknown field 'dropout_param.mystery_scale' in layer 'drop'.*net.prototxt:5"):
        load_caffe(model, None)


def test_unknown_layer_types_listed_together(tmp_path: Path) -> None:
    text = RELU_NET + "".join(
        f'layer {{ name: "{n}" type: "{t}" bottom: "out" top: "{n}" {extra} }}\n'
        for n, t, extra in [
            ("a", "Mystery", ""),
            ("b", "Mystery", ""),
            ("py", "Python", 'python_param { module: "my.proposal_layer" layer: "ProposalLayer" }'),
        ]
    )
    model, _ = write_caffe(tmp_path, "net", text, {})
    with pytest.raises(IrforgeError) as info:
        import_caffe(model)
    text = str(info.value)
    assert "unsupported Caffe layer types: Mystery x2 (a, b); Python x1 (py = my.proposal_layer.ProposalLayer)" in text
    assert "caffe_extractor" in text and "--extensions" in text


def test_missing_blob_names_layer(tmp_path: Path) -> None:
    text = RELU_NET + 'layer { name: "fc" type: "InnerProduct" bottom: "out" top: "fc" inner_product_param { num_output: 2 } }\n'
    model, _ = write_caffe(tmp_path, "net", text, {"fc": [weights(2, 18, seed=0)]})
    with pytest.raises(IrforgeError, match="blob #1 is needed.*Caffe layer 'fc' of type InnerProduct"):
        import_caffe(model)


def test_undefined_bottom(tmp_path: Path) -> None:
    model, _ = write_caffe(tmp_path, "net", RELU_NET.replace('bottom: "data"', 'bottom: "nowhere"'), {})
    with pytest.raises(IrforgeError, match="bottom blob 'nowhere' is produced by no earlier layer"):
        import_caffe(model)


def test_ir_convert_caffe(tmp_path: Path) -> None:
    model, proto = write_caffe(tmp_path, "net", RELU_NET, {})
    out = tmp_path / "out"
    result = ir_convert("--input_model", str(model), "--input_proto", str(proto), "--output_dir", str(out), "--batch", "3")
    assert result.returncode == 0, result.stderr
    text = (out / "net.mlir").read_text()
    assert "nn.relu" in text and "tensor<3x2x3x3xf32>" in text


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("prototxt_only", "comes without weights"),
        ("missing", "does not exist"),
        ("malformed", "malformed prototxt"),
        ("unknown_layer", "unsupported Caffe layer types: Mystery x1"),
    ],
)
def test_ir_convert_errors_exit_2(tmp_path: Path, case: str, expected: str) -> None:
    text = {"malformed": RELU_NET + "layer {", "unknown_layer": RELU_NET + 'layer { name: "m" type: "Mystery" bottom: "out" top: "m" }'}
    model, proto = write_caffe(tmp_path, "net", text.get(case, RELU_NET), {})
    target = {"prototxt_only": proto, "missing": tmp_path / "gone.caffemodel"}.get(case, model)
    result = ir_convert("--input_model", str(target), "--input_proto", str(proto), "--output_dir", str(tmp_path / "out"))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and re.match(r"irforge: error\[E\d{3}\]: ", lines[0]) and expected in lines[0]
    assert not (tmp_path / "out" / "net.mlir").exists()


@pytest.mark.parametrize("layer", ["Convolution", "Deconvolution"])
def test_convolution_of_a_rank_1_input_is_a_clean_error(tmp_path: Path, layer: str) -> None:
    """Found by the fuzz campaign: an IndexError before."""
    net = f"""name: "t"
input: "data"
input_shape {{ dim: 8 }}
layer {{ name: "conv" type: "{layer}" bottom: "data" top: "conv" convolution_param {{ num_output: 2 kernel_size: 3 }} }}
"""
    model, _ = write_caffe(tmp_path, "net", net, {"conv": [np.ones((2, 8, 3, 3), np.float32), np.zeros(2, np.float32)]})
    with pytest.raises(IrforgeError, match=r"needs an input of rank 3 or more .* got shape \[8\]"):
        import_caffe(model)
