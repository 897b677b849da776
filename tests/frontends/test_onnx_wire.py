"""The zero-copy loader: weights cut from the mapped file equal what onnx itself reads."""

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from irforge.errors import IrforgeError
from irforge.frontends.onnx.loader import load_onnx_file, tensor_to_array
from irforge.frontends.onnx.wire import WireFormatError, split_weights
from irforge.testing.onnx_models import transformer_encoder, vgg


@pytest.mark.parametrize("build", [vgg, transformer_encoder])
def test_weights_equal_onnx_load(tmp_path, build):
    path = tmp_path / "m.onnx"
    onnx.save_model(build(), str(path))
    reference = onnx.load(str(path))
    loaded = load_onnx_file(path)
    assert len(loaded.raw_data) == len(reference.graph.initializer)
    assert [n.op_type for n in loaded.proto.graph.node] == [n.op_type for n in reference.graph.node]
    for tensor, ref in zip(loaded.proto.graph.initializer, reference.graph.initializer):
        assert not tensor.HasField("raw_data")  # cut out of the parsed skeleton
        array = tensor_to_array(tensor, tmp_path, loaded.raw_data)
        np.testing.assert_array_equal(array, numpy_helper.to_array(ref))
        assert array.dtype == numpy_helper.to_array(ref).dtype


def test_skeleton_is_small(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save_model(vgg(), str(path))
    skeleton, spans = split_weights(path.read_bytes())
    assert len(skeleton) < 0.05 * path.stat().st_size
    assert all(s is not None for s in spans)


def test_malformed_bytes_are_rejected():
    with pytest.raises(WireFormatError):
        split_weights(b"\x3a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")
    with pytest.raises(WireFormatError, match="past the end"):
        split_weights(b"\x3a\x10abc")


def test_truncated_model_file_is_a_clear_error(tmp_path):
    path = tmp_path / "t.onnx"
    data = vgg().SerializeToString()
    path.write_bytes(data[: len(data) - 1000])
    with pytest.raises(IrforgeError, match="not a valid ONNX model|no ONNX graph"):
        load_onnx_file(path)
