"""Detection ops on the CPU backend as host steps (reference kernels called from the native
program between native kernels): Caffe SSD, Faster R-CNN and YOLO heads, CPU against the
reference interpreter."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irforge.backends.cpu.host_steps import HOST_STEP_OPS
from irforge.backends.reference import run
from irforge.dialects.nn import DetectionOutput, Proposal, RegionYolo
from irforge.frontends.caffe import import_caffe
from tests.backends.cpu.conftest import run_cpu
from tests.frontends.caffe.caffe_files import weights, write_caffe
from tests.frontends.caffe.test_caffe_rcnn_yolo import RPN, YOLO_V2
from tests.frontends.caffe.test_caffe_ssd import SSD
from tests.helpers import rand


def header(inputs: dict[str, np.ndarray]) -> str:
    return "".join(f'input: "{n}"\ninput_shape {{ {" ".join(f"dim: {d}" for d in x.shape)} }}\n' for n, x in inputs.items())


def same_on_cpu(tmp_path: Path, text: str, inputs: dict[str, np.ndarray], blobs: dict, cache_dir) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def,type-arg]
    model_path, _ = write_caffe(tmp_path, "net", text, blobs)
    model = import_caffe(model_path)
    want = run(model, inputs)
    got = run_cpu(model, inputs, cache_dir)
    assert list(got) == list(want)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-5)
    return got


def test_detection_ops_are_host_steps() -> None:
    import irforge.backends.cpu.ops  # noqa: F401

    assert {DetectionOutput, Proposal, RegionYolo} <= HOST_STEP_OPS


def test_ssd_head_on_cpu(tmp_path: Path, cache_dir) -> None:  # type: ignore[no-untyped-def]
    blobs = {
        "conv1": [weights(8, 3, 3, 3, seed=1), weights(8, seed=2)],
        "conv1_norm": [np.random.default_rng(3).uniform(5, 20, 8).astype(np.float32)],
        "loc": [weights(16, 8, 3, 3, seed=4, scale=0.02), weights(16, seed=5, scale=0.1)],
        "conf": [weights(12, 8, 3, 3, seed=6, scale=0.2), weights(12, seed=7)],
    }
    got = same_on_cpu(tmp_path, SSD, {"data": rand(1, 3, 32, 32, seed=8)}, blobs, cache_dir)
    assert (got["detection_out"][0, 0, :, 0] == 0).sum() == 20


def test_faster_rcnn_head_on_cpu(tmp_path: Path, cache_dir) -> None:  # type: ignore[no-untyped-def]
    inputs = {
        "rpn_cls_score": rand(1, 12, 5, 7, seed=1, low=-3.0, high=3.0),
        "rpn_bbox_pred": rand(1, 24, 5, 7, seed=2, low=-0.4, high=0.4),
        "im_info": np.array([[40.0, 56.0, 1.0]], np.float32),
        "conv5": rand(1, 4, 5, 7, seed=3),
    }
    same_on_cpu(tmp_path, header(inputs) + RPN, inputs, {}, cache_dir)


def test_yolo_v2_head_on_cpu(tmp_path: Path, cache_dir) -> None:  # type: ignore[no-untyped-def]
    inputs = {"passthrough": rand(1, 4, 6, 8, seed=5, low=-3.0, high=3.0), "head": rand(1, 8, 3, 4, seed=6, low=-3.0, high=3.0)}
    same_on_cpu(tmp_path, header(inputs) + YOLO_V2, inputs, {}, cache_dir)
