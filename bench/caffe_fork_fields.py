"""The fork fields that once changed numbers silently, each in a small net against OpenCV's
Caffe importer: Pooling ceil_mode: false, DetectionOutput clip: true, Dropout scale_train:
false (outside CI: needs OpenCV).

    PYTHONPATH=. /work/zoo-venv/bin/python bench/caffe_fork_fields.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from irforge.backends.reference import run
from irforge.frontends.caffe import import_caffe
from irforge.frontends.caffe.schema import message_classes

NETS = {
    "ceil_mode: false": (
        'input: "x"\ninput_shape { dim: 1 dim: 2 dim: 112 dim: 112 }\n'
        'layer { name: "pool1" type: "Pooling" bottom: "x" top: "pool1" pooling_param { pool: MAX kernel_size: 3 stride: 2 pad: 1 ceil_mode: false } }\n',
        {"x": (1, 2, 112, 112)},
    ),
    "scale_train: false": (
        'input: "x"\ninput_shape { dim: 1 dim: 8 }\n'
        'layer { name: "drop7" type: "Dropout" bottom: "x" top: "drop7" dropout_param { dropout_ratio: 0.5 scale_train: false } }\n',
        {"x": (1, 8)},
    ),
    "clip: true": (
        'input: "loc"\ninput_shape { dim: 1 dim: 64 }\ninput: "conf"\ninput_shape { dim: 1 dim: 32 }\n'
        'input: "priors"\ninput_shape { dim: 1 dim: 2 dim: 64 }\n'
        'layer { name: "detection_out" type: "DetectionOutput" bottom: "loc" bottom: "conf" bottom: "priors" top: "detection_out"\n'
        "  detection_output_param { num_classes: 2 share_location: true background_label_id: 0 keep_top_k: 16 code_type: CENTER_SIZE\n"
        "    confidence_threshold: 0.1 nms_param { nms_threshold: 0.45 top_k: 16 } clip: true } }\n",
        {"loc": (1, 64), "conf": (1, 32), "priors": (1, 2, 64)},
    ),
}


def feeds_for(shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    feeds = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}
    if "priors" in feeds:  # 16 priors straddling the image border, variances 0.1/0.2
        centres = rng.uniform(-0.1, 1.1, (16, 2))
        sizes = rng.uniform(0.1, 0.5, (16, 2))
        boxes = np.concatenate([centres - sizes / 2, centres + sizes / 2], axis=1).reshape(-1)
        feeds["priors"] = np.stack([boxes, np.tile([0.1, 0.1, 0.2, 0.2], 16)])[None].astype(np.float32)
        feeds["conf"] = rng.uniform(0, 1, (1, 32)).astype(np.float32)
    return feeds


def main() -> int:
    import cv2

    with tempfile.TemporaryDirectory() as work:
        for what, (text, shapes) in NETS.items():
            proto, model = Path(work) / "net.prototxt", Path(work) / "net.caffemodel"
            proto.write_text(text)
            model.write_bytes(message_classes()["NetParameter"]().SerializeToString())
            feeds = feeds_for(shapes)
            ours = run(import_caffe(model, proto), feeds)
            (name,) = ours
            net = cv2.dnn.readNetFromCaffe(str(proto), str(model))
            for key, value in feeds.items():
                net.setInput(value, key)
            want = np.asarray(net.forward(name))
            got = ours[name]
            if name == "detection_out":
                # valid rows: image id >= 0 (OpenCV pads to keep_top_k with all-zero rows, score 0)
                got, want = (a.reshape(-1, 7)[(a.reshape(-1, 7)[:, 0] >= 0) & (a.reshape(-1, 7)[:, 2] > 0)] for a in (got, want))
                got, want = (a[np.lexsort(np.round(a[:, ::-1], 4).T)] for a in (got, want))
            same_shape = got.shape == want.shape
            error = float(np.abs(got - want).max()) if same_shape and got.size else float("nan")
            print(f"{what}: shape {list(got.shape)} (OpenCV {list(want.shape)}), max |error| {error:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
