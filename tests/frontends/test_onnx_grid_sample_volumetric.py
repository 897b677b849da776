"""ONNX GridSample-20 on 5-D input (volumetric: x [N, C, D, H, W], grid [N, Do, Ho, Wo, 3]):
composed of existing nn ops at import (OpenVINO's GridSample-9 is 4-D only); every mode x
padding_mode x align_corners against onnxruntime on ref, cpu and OpenVINO, grids beyond
[-1, 1], pixel centres and half-way points included."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.frontends.test_onnx_grid_sample import grid_sample_model
from tests.helpers import ort_session_run

RNG = np.random.default_rng(20)
X = RNG.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
GRID = RNG.uniform(-1.7, 1.7, (2, 3, 4, 5, 3)).astype(np.float32)
# borders, exact centres and half-way points (0.0 -> 2.5 on x: exact in float32, so an FMA
# cannot move it off the tie as it can a computed -1/3), far out
GRID[0, 0, 0, :, 0] = [-1.0, 1.0, 0.0, -0.5, 3.0]
GRID[0, 0, 0, :, 1] = [-1.0, 1.0, -0.5, 0.2, -3.0]
GRID[0, 0, 0, :, 2] = [-1.0, 1.0, 0.25, -0.75, 2.5]
FEEDS = {"x": X, "grid": GRID}
SHAPES = {"x_shape": X.shape, "grid_shape": GRID.shape}

CASES = [pytest.param(mode, padding, align, id=f"{mode}-{padding}-align{align}")
         for mode in ("linear", "nearest") for padding in ("zeros", "border", "reflection") for align in (0, 1)]  # fmt: skip


@pytest.mark.parametrize(("mode", "padding", "align"), CASES)
def test_volumetric_grid_sample_matches_onnxruntime(tmp_path, mode, padding, align):
    from tests.backends.ir_xml_support import run_openvino

    proto = grid_sample_model(opset=20, mode=mode, padding_mode=padding, align_corners=align, **SHAPES)
    (want,) = ort_session_run(proto, FEEDS)
    model = import_onnx(proto)
    assert "nn.grid_sample" not in [op.name for op in model.func.body.block.ops]
    np.testing.assert_allclose(run(model, FEEDS)["y"], want, rtol=1e-5, atol=1e-5, err_msg="ref")
    np.testing.assert_allclose(compile_model(model)(FEEDS)["y"], want, rtol=1e-5, atol=1e-5, err_msg="cpu")
    write_ir_xml(model, tmp_path / "m.xml")
    np.testing.assert_allclose(run_openvino(tmp_path / "m.xml", FEEDS)["y"], want, rtol=1e-5, atol=1e-5, err_msg="openvino")


def test_volumetric_cubic_is_refused():
    proto = grid_sample_model(opset=20, mode="cubic", **SHAPES)
    with pytest.raises(IrforgeError) as err:
        import_onnx(proto)
    assert "cubic" in err.value.what and "rank-5" in err.value.what
