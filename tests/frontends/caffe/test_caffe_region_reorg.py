"""YOLO v2 Caffe forks' `Region` (darknet's forward_region_layer, shape kept) and `Reorg` with
reverse: true (darknet's reorg_cpu with forward = 1), against numpy written from the forks'
C++ loops; on the reference interpreter, the CPU backend and OpenVINO running the written IR."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.caffe import import_caffe
from tests.backends.cpu.conftest import cache_dir, run_cpu  # noqa: F401  (cache_dir: the fixture)
from tests.backends.ir_xml_support import run_openvino
from tests.frontends.caffe.caffe_files import write_caffe


def fork_region(x: np.ndarray, num: int, coords: int, classes: int) -> np.ndarray:
    """The forks' RegionLayer::Forward_cpu: entry_index(b, n * w * h, entry) = b * outputs +
    n * w * h * (coords + classes + 1) + entry * w * h; sigmoid over the 2 * w * h values of x, y
    and the w * h of the objectness; softmax over classes with stride w * h."""
    batch, channels, h, w = x.shape
    flat = x.astype(np.float64).ravel().copy()
    grid, outputs = w * h, h * w * num * (classes + coords + 1)
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))  # noqa: E731
    for b in range(batch):
        for n in range(num):
            base = b * outputs + n * grid * (coords + classes + 1)
            flat[base : base + 2 * grid] = sig(flat[base : base + 2 * grid])
            at = base + coords * grid
            flat[at : at + grid] = sig(flat[at : at + grid])
            for loc in range(grid):
                first = base + (coords + 1) * grid + loc
                scores = flat[first : first + classes * grid : grid]
                e = np.exp(scores - scores.max())
                flat[first : first + classes * grid : grid] = e / e.sum()
    return flat.reshape(x.shape).astype(np.float32)


def fork_reorg_reverse(x: np.ndarray, stride: int) -> np.ndarray:
    """reorg_cpu(bottom, w, h, c, batch, stride, forward = 1, top): top[out_index] = bottom[in_index]."""
    batch, c, h, w = x.shape
    src, out = x.ravel(), np.empty(x.size, x.dtype)
    out_c = c // (stride * stride)
    for b in range(batch):
        for k in range(c):
            for j in range(h):
                for i in range(w):
                    in_index = i + w * (j + h * (k + c * b))
                    c2, offset = k % out_c, k // out_c
                    w2, h2 = i * stride + offset % stride, j * stride + offset // stride
                    out[w2 + w * stride * (h2 + h * stride * (c2 + out_c * b))] = src[in_index]
    return out.reshape(batch, out_c, h * stride, w * stride)


def model_of(tmp_path: Path, shape: tuple[int, ...], kind: str, params: str):  # type: ignore[no-untyped-def]
    text = f'input: "x"\ninput_shape {{ {" ".join(f"dim: {d}" for d in shape)} }}\n'
    text += f'layer {{ name: "l" type: "{kind}" bottom: "x" top: "y" {params} }}'
    model, _ = write_caffe(tmp_path, "net", text, {})
    return import_caffe(model)


REGION = "region_param { classes: 3 coords: 4 num: 2 softmax: true anchors: [1.0, 2.0, 3.0, 4.0] }"
REORG = "reorg_param { stride: 2 reverse: true }"


def x_of(*shape: int) -> np.ndarray:
    return np.random.default_rng(3).uniform(-4, 4, shape).astype(np.float32)


def test_region_on_ref_cpu_and_openvino(tmp_path: Path, cache_dir) -> None:  # type: ignore[no-untyped-def]
    x = x_of(2, 2 * (4 + 1 + 3), 3, 5)
    want = fork_region(x, 2, 4, 3)
    model = model_of(tmp_path, x.shape, "Region", REGION)
    np.testing.assert_allclose(run(model, {"x": x})["y"], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run_cpu(model, {"x": x}, cache_dir)["y"], want, rtol=1e-5, atol=1e-6)
    xml, _ = write_ir_xml(model, tmp_path / "net.xml")
    np.testing.assert_allclose(run_openvino(xml, {"x": x})["y"], want, rtol=1e-5, atol=1e-6)


def test_reorg_reverse_on_ref_cpu_and_openvino(tmp_path: Path, cache_dir) -> None:  # type: ignore[no-untyped-def]
    x = x_of(2, 12, 3, 4)
    want = fork_reorg_reverse(x, 2)
    model = model_of(tmp_path, x.shape, "Reorg", REORG)
    np.testing.assert_array_equal(run(model, {"x": x})["y"], want)
    np.testing.assert_array_equal(run_cpu(model, {"x": x}, cache_dir)["y"], want)
    xml, _ = write_ir_xml(model, tmp_path / "net.xml")
    np.testing.assert_array_equal(run_openvino(xml, {"x": x})["y"], want)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("region_param { classes: 3 coords: 4 boxes_of_each_grid: 2 }", "boxes_of_each_grid"),
        ("region_param { classes: 3 coords: 4 num: 2 softmax: false }", "softmax: false"),
        ("region_param { classes: 3 coords: 4 num: 2 anchors: [1.0, 2.0] }", "2 anchor values, expected 2 \\* num = 4"),
        ("region_param { classes: 3 coords: 4 num: 2 nms_threshold: 0.4 }", "nms_threshold"),
        ("region_param { classes: 3 coords: 4 num: 3 }", "channels"),
        ("region_param { classes: 3 coords: 4 softmax: true }", "neither num nor anchors"),
    ],
)
def test_region_forms_irforge_cannot_honour_are_refused(tmp_path: Path, params: str, message: str) -> None:
    with pytest.raises(IrforgeError, match=message):
        model_of(tmp_path, (1, 16, 3, 3), "Region", params)
