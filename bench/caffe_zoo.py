"""Published Caffe deploy files, as their authors ship them, with random weights: irforge's
conversion run by OpenVINO, irforge's reference interpreter and its CPU backend, against
OpenCV's Caffe importer (`cv2.dnn.readNetFromCaffe`). A classifier's final Softmax is dropped
(random weights saturate it), so its logits are compared. Outside CI (needs OpenCV, OpenVINO,
and the prototxts).

    PYTHONPATH=. /work/zoo-venv/bin/python bench/caffe_zoo.py --zoo DIR [--only NAME ...] [--no-cpu]

DIR holds the prototxts named as in ZOO (their sources are listed there: copy them from the
repositories at those paths). Weights are random (He-scaled convolutions, BatchNorm
statistics near identity) and written as a caffemodel both importers read. Per net: max |error|
of each runtime against OpenCV, divided by max |OpenCV output| (detections: the valid rows as
a set, sorted). A net OpenCV cannot read (a Python layer) is compared with a copy whose Python
proposal layer is OpenCV's built-in Proposal with py-faster-rcnn's settings.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from irforge.errors import IrforgeError
from irforge.frontends.caffe.loader import load_caffe
from irforge.frontends.caffe.registry import LayerContext

ZOO = [
    # (file, source repository : path, licence)
    ("squeezenet11.prototxt", "forresti/SqueezeNet : SqueezeNet_v1.1/deploy.prototxt", "BSD-2"),
    ("mobilenet_v1.prototxt", "shicai/MobileNet-Caffe : mobilenet_deploy.prototxt", "BSD-3"),
    ("mobilenet_v2.prototxt", "shicai/MobileNet-Caffe : mobilenet_v2_deploy.prototxt", "BSD-3"),
    ("resnet50.prototxt", "KaimingHe/deep-residual-networks : prototxt/ResNet-50-deploy.prototxt", "MIT"),
    ("densenet121.prototxt", "shicai/DenseNet-Caffe : DenseNet_121.prototxt", "see repository"),
    ("se_resnet50.prototxt", "hujie-frank/SENet : models/SE-ResNet-50.prototxt", "Apache-2.0"),
    ("mobilenet_ssd.prototxt", "chuanqi305/MobileNet-SSD : deploy.prototxt", "MIT"),
    ("faster_rcnn_zf.prototxt", "rbgirshick/py-faster-rcnn : models/pascal_voc/ZF/faster_rcnn_end2end/test.prototxt", "MIT"),
    ("alexnet.prototxt", "BVLC/caffe : models/bvlc_alexnet/deploy.prototxt", "unrestricted (BVLC)"),
    ("googlenet.prototxt", "BVLC/caffe : models/bvlc_googlenet/deploy.prototxt", "unrestricted (BVLC)"),
    ("res10_ssd.prototxt", "opencv/opencv : samples/dnn/face_detector/deploy.prototxt", "Apache-2.0 / BSD-3"),
    ("faster_rcnn_vgg16.prototxt", "rbgirshick/py-faster-rcnn : models/pascal_voc/VGG16/faster_rcnn_end2end/test.prototxt", "MIT"),
    ("fcn8s.prototxt", "shelhamer/fcn.berkeleyvision.org : voc-fcn8s/deploy.prototxt", "BSD-2"),
    ("segnet.prototxt", "alexgkendall/SegNet-Tutorial : Models/segnet_inference.prototxt", "see repository (non-commercial)"),
    ("segnet_basic.prototxt", "alexgkendall/SegNet-Tutorial : Models/segnet_basic_inference.prototxt", "see repository (non-commercial)"),
    ("enet.prototxt", "TimoSaemann/ENet : prototxts/enet_deploy_final.prototxt", "see repository"),
    ("ssdlite_voc.prototxt", "chuanqi305/MobileNetv2-SSDLite : ssdlite/voc/deploy.prototxt", "MIT"),
    ("hed.prototxt", "s9xie/hed : examples/hed/deploy.prototxt", "BSD-2 (Caffe's)"),
    ("openpose_coco.prototxt", "CMU-Perceptual-Computing-Lab/openpose : models/pose/coco/pose_deploy_linevec.prototxt", "see repository (non-commercial)"),
    ("yolov2_voc.prototxt", "hand-written (bench/caffe_zoo_yolo.py) after darknet's yolo-voc.cfg as the Caffe YOLO forks convert it", "-"),
    ("yolov2_tiny_voc.prototxt", "hand-written (bench/caffe_zoo_yolo.py) after darknet's tiny-yolo-voc.cfg", "-"),
]
OPENCV_PROPOSAL = (
    "proposal_param { feat_stride: 16 base_size: 16 min_size: 1 ratio: 0.5 ratio: 1 ratio: 2 "
    "scale: 8 scale: 16 scale: 32 pre_nms_topn: 6000 post_nms_topn: 300 nms_thresh: 0.7 }"
)


# -- random weights: recorded as the importer asks for them ------------------------------------
class WeightRecorder:
    """Stands in for the caffemodel: each blob an extractor asks for is made, with the shape it
    asks for, and kept to be written as a caffemodel."""

    NUM_BLOBS = {"BatchNorm": 3, "BN": 4}

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.blobs: dict[str, dict[int, np.ndarray]] = {}

    def make(self, kind: str, index: int, shape: tuple[int, ...] | None) -> np.ndarray:
        rng = self.rng
        shape = tuple(shape) if shape is not None else (1,)
        if kind in ("Convolution", "Deconvolution", "InnerProduct") and index == 0:
            fan_in = int(np.prod(shape[1:])) if kind != "InnerProduct" else shape[-1]
            return (rng.standard_normal(shape) * np.sqrt(2.0 / max(fan_in, 1))).astype(np.float32)
        if kind == "BatchNorm":
            return [rng.standard_normal(shape) * 0.1, rng.uniform(0.5, 1.5, shape), np.ones(shape)][index].astype(np.float32)
        if kind in ("Scale", "BN") and index == 0:
            return rng.uniform(0.8, 1.2, shape).astype(np.float32)
        if kind == "BN" and index == 3:
            return rng.uniform(0.5, 1.5, shape).astype(np.float32)
        if kind == "Normalize":
            return rng.uniform(10, 20, shape).astype(np.float32)
        if kind == "PReLU":
            return rng.uniform(0, 0.3, shape).astype(np.float32)
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)

    def install(self) -> None:
        recorder = self

        def blob(ctx: LayerContext, index: int, shape: Any = None) -> np.ndarray:
            store = recorder.blobs.setdefault(ctx.layer.name, {})
            if index not in store:
                store[index] = recorder.make(ctx.type, index, shape)
            return store[index] if shape is None else store[index].reshape(tuple(shape))

        def num_blobs(ctx: LayerContext) -> int:
            # a BN with bn_mode INFERENCE (SegNet's, ENet's deploy files) has scale and shift only
            if ctx.type == "BN" and ctx.layer.HasField("bn_param") and ctx.layer.bn_param.bn_mode == 1:
                return 2
            return recorder.NUM_BLOBS.get(ctx.type, 2)

        LayerContext.blob = blob  # type: ignore[method-assign]
        LayerContext.num_blobs = property(num_blobs)  # type: ignore[assignment,method-assign]


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def caffemodel(blobs: dict[str, dict[int, np.ndarray]]) -> bytes:
    """NetParameter { layer { name, blobs { shape { dim } data } } }, written at the wire level
    (fast for 100M values)."""
    layers = []
    for name, by_index in blobs.items():
        parts = [field(1, name.encode())]
        for index in range(max(by_index) + 1):
            array = by_index.get(index, np.zeros(1, np.float32))
            shape = field(1, b"".join(varint(d) for d in array.shape))
            parts.append(field(7, field(7, shape) + field(5, np.ascontiguousarray(array, "<f4").tobytes())))
        layers.append(field(100, b"".join(parts)))
    return b"".join(layers)


# -- the runtimes ------------------------------------------------------------------------------
class OpenCVUpsample:
    """The SegNet / ENet forks' Upsample for OpenCV, which has no such layer: numpy written
    from SegNet's upsample_layer.cpp (zeros, then top[mask[i]] = bottom[i]; without a mask,
    nearest neighbour by the scale). The mask bottom is OpenCV's own Pooling mask top."""

    def __init__(self, params: Any, blobs: Any) -> None:
        get = lambda key, default: int(params[key]) if key in params else default  # noqa: E731
        self.scale_h, self.scale_w = get("scale_h", get("scale", 2)), get("scale_w", get("scale", 2))
        self.pad_h, self.pad_w = int(str(params.get("pad_out_h", "0")).lower() in ("1", "true")), int(str(params.get("pad_out_w", "0")).lower() in ("1", "true"))
        self.height, self.width = get("upsample_h", 0), get("upsample_w", 0)

    def getMemoryShapes(self, inputs: Any) -> Any:  # noqa: N802  (OpenCV's name)
        n, c, h, w = inputs[0]
        self.out = (self.height or h * self.scale_h - self.pad_h, self.width or w * self.scale_w - self.pad_w)
        return [[n, c, *self.out]]

    def forward(self, inputs: Any) -> Any:
        x = np.asarray(inputs[0])
        if len(inputs) == 1:
            return [x.repeat(self.scale_h, 2).repeat(self.scale_w, 3)[:, :, : self.out[0], : self.out[1]]]
        n, c = x.shape[:2]
        out = np.zeros((n, c, self.out[0] * self.out[1]), np.float32)
        np.put_along_axis(out, np.asarray(inputs[1]).reshape(n, c, -1).astype(np.int64), x.reshape(n, c, -1), axis=2)
        return [out.reshape(n, c, *self.out)]


class OpenCVBN:
    """The SegNet / ENet forks' BN for OpenCV: y = scale * x + shift (bn_mode INFERENCE, two
    blobs), or with the statistics, scale * (x - mean) / sqrt(var + eps) + shift."""

    def __init__(self, params: Any, blobs: Any) -> None:
        self.blobs = [np.asarray(b, np.float32).reshape(1, -1, 1, 1) for b in blobs]
        self.eps = float(params["eps"]) if "eps" in params else 1e-5

    def getMemoryShapes(self, inputs: Any) -> Any:  # noqa: N802
        return [inputs[0]]

    def forward(self, inputs: Any) -> Any:
        x, (scale, shift, *stats) = np.asarray(inputs[0]), self.blobs
        if stats:
            x = (x - stats[0]) / np.sqrt(stats[1] + self.eps)
        return [(x * scale + shift).astype(np.float32)]


REGISTERED: list[bool] = []


def layer_blocks(text: str) -> list[str]:
    """The text of each top-level `layer { ... }` block, in order."""
    blocks, end = [], 0
    for match in re.finditer(r"\blayers?\s*\{", text):
        if match.start() < end:
            continue
        depth, i = 0, match.end() - 1
        while True:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        blocks.append(text[match.start() : i + 1])
        end = i + 1
    return blocks


def producers(text: str) -> dict[str, str]:
    """Blob -> the name of the last layer writing it: OpenCV's forward() takes layer names
    (OpenPose's output blob net_output is layer concat_stage7's top)."""
    found = {}
    for block in layer_blocks(re.sub(r"#[^\n]*", "", text)):
        name = re.search(r"\bname:\s*['\"]([^'\"]+)", block)
        for top in re.findall(r"\btop:\s*['\"]([^'\"]+)", block):
            if name:
                found[top] = name.group(1)
    return found


def opencv_run(proto: Path, model: Path, feeds: dict[str, np.ndarray], outputs: list[str]) -> dict[str, np.ndarray]:
    import cv2

    if not REGISTERED:  # a second registration aborts the process
        cv2.dnn_registerLayer("Upsample", OpenCVUpsample)
        cv2.dnn_registerLayer("BN", OpenCVBN)
        REGISTERED.append(True)
    net = cv2.dnn.readNetFromCaffe(str(proto), str(model))
    for name, array in feeds.items():
        net.setInput(array, name)
    by_layer = producers(proto.read_text())
    return dict(zip(outputs, [np.asarray(o) for o in net.forward([by_layer.get(o, o) for o in outputs])]))


def openvino_run(xml: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    results = compiled(feeds)
    return {name: np.asarray(results[out]) for out in compiled.outputs for name in out.get_names()}


def detections(array: np.ndarray) -> np.ndarray:
    rows = array.reshape(-1, 7)
    rows = rows[(rows[:, 0] >= 0) & (rows[:, 2] > 0)]  # OpenCV pads to keep_top_k with all-zero rows
    return rows[np.lexsort(np.round(rows[:, ::-1], 4).T)]


def error(got: np.ndarray, want: np.ndarray, is_detection: bool) -> str:
    if is_detection:
        got, want = detections(got), detections(want)
        if got.shape != want.shape:
            return f"{len(got)} vs {len(want)} boxes"
        if not len(want):
            return "0 boxes"
        return f"{len(want)} boxes, {float(np.abs(got - want).max()) / max(float(np.abs(want).max()), 1e-12):.1e}"
    got = got.reshape(want.shape) if got.size == want.size else got
    if got.shape != want.shape:
        return f"shape {list(got.shape)} vs {list(want.shape)}"
    scale = max(float(np.abs(want).max()), 1e-12)
    relative = np.abs(got - want) / scale
    worst = float(relative.max())
    if worst <= 1e-3:
        return f"{worst:.1e}"
    # an unpooling net's argmax flips where two window values are equal to float rounding
    # (each runtime's convolutions round differently): the few values it moves show here
    return f"{worst:.1e} ({100 * float((relative > 1e-3).mean()):.3g}% > 1e-3)"


def feeds_of(model: Any) -> dict[str, np.ndarray]:
    from irforge.model import input_names

    rng = np.random.default_rng(1)
    out = {}
    for name, arg in zip(input_names(model.func), model.func.args):
        shape = tuple(arg.type.get_shape())
        out[name] = np.array([[shape[0] and 224, 224, 1.0]], np.float32)[:, : shape[1]] if name == "im_info" else rng.uniform(-1, 1, shape).astype(np.float32)
    return out


def without_final_softmax(path: Path, work: Path) -> Path:
    """The prototxt without a last Softmax layer: random weights saturate a classifier's
    softmax into (nearly) one-hot rows, which would agree whatever the logits; the logits are
    compared instead."""
    text = path.read_text()
    layers = list(re.finditer(r"\blayers?\s*\{", text))
    if not layers or not re.search(r"type:\s*['\"]?(Softmax|SOFTMAX)\b", text[layers[-1].start() :]):
        return path
    if "DetectionOutput" in text or "Proposal" in text or "Python" in text:
        return path
    stripped = work / path.name
    stripped.write_text(text[: layers[-1].start()])
    return stripped


DATA_LAYERS = {"DenseImageData": "1 3 360 480"}  # SegNet's CamVid test data: 360x480 images


def with_input_layer(path: Path, work: Path) -> Path:
    """The prototxt with a training data layer (SegNet's DenseImageData) replaced by an Input
    of the images it reads (both importers take that)."""
    text = path.read_text()
    # OpenPose's deploy files leave H and W to run time (input_dim: 1): 368x368, as OpenCV's sample
    runtime = re.sub(r"input_dim:\s*1\s*#\s*This value will be defined at runtime", "input_dim: 368", text)
    if runtime != text:
        text, path = runtime, work / f"sized.{path.name}"
        path.write_text(text)
    for kind, dims in DATA_LAYERS.items():
        match = re.search(r"layer\s*\{[^{}]*type:\s*\"" + kind + r"\"[^{}]*\{[^{}]*\}[^{}]*\}", text)
        if match:
            shape = " ".join(f"dim: {d}" for d in dims.split())
            text = text[: match.start()] + f'layer {{ name: "data" type: "Input" top: "data" input_param {{ shape {{ {shape} }} }} }}' + text[match.end() :]
            path = work / f"input.{path.name}"
            path.write_text(text)
    return path


def bench_net(path: Path, work: Path, cpu: bool) -> dict[str, str]:
    from irforge.backends.ir_xml.writer import write_ir_xml
    from irforge.backends.reference import run
    import irforge.frontends.caffe.extractors  # noqa: F401  (registers the extractors)
    from irforge.frontends.caffe.importer import NetImporter
    from irforge.model import output_names

    row: dict[str, str] = {"net": path.stem}
    recorder = WeightRecorder()
    recorder.install()
    empty = work / "empty.caffemodel"
    empty.write_bytes(b"")
    path = with_input_layer(without_final_softmax(path, work), work)
    if "param_str: \"'feat_stride': 16\"" in path.read_text():
        # OpenCV's Proposal keeps boxes below min_size (py-faster-rcnn drops them): both sides
        # get min_size 1, which drops none, so the rest of the net is compared
        copy = work / f"min1.{path.name}"
        copy.write_text(path.read_text().replace("param_str: \"'feat_stride': 16\"", "param_str: \"'feat_stride': 16, 'min_size': 1\""))
        path = copy
    try:
        model = NetImporter(load_caffe(empty, path)).run()
    except IrforgeError as e:
        row["convert"] = f"refused: {e}"[:120]
        return row
    row["convert"] = "ok"
    weights = work / f"{path.stem}.caffemodel"
    weights.write_bytes(caffemodel(recorder.blobs))
    feeds = feeds_of(model)
    if "im_info" in feeds:
        feeds["im_info"] = np.array([[feeds["data"].shape[2], feeds["data"].shape[3], 1.0]], np.float32)
    outputs = output_names(model.func)
    is_det = {name: name.startswith("detection") for name in outputs}
    opencv_proto = path
    text = path.read_text()
    if "type: 'Python'" in text or 'type: "Python"' in text:
        opencv_proto = work / f"{path.stem}.opencv.prototxt"
        text = re.sub(r"type:\s*['\"]Python['\"]", "type: 'Proposal'", text)
        opencv_proto.write_text(re.sub(r"python_param\s*\{[^}]*\}", OPENCV_PROPOSAL, text))
    if re.search(r"type:\s*['\"]BN['\"]", text):
        # OpenCV reads a fork's unknown parameters only as flat name: value pairs (fillers
        # are initialisation only)
        opencv_proto = work / f"{path.stem}.opencv.prototxt"
        opencv_proto.write_text(re.sub(r"\w+_filler\s*\{[^{}]*\}", "", text))
    want = opencv_run(opencv_proto, weights, feeds, outputs)
    ref = run(model, feeds)
    row["ref"] = " ".join(error(ref[n], want[n], is_det[n]) for n in outputs)
    xml, _ = write_ir_xml(model, work / f"{path.stem}.xml")
    ov_out = openvino_run(xml, feeds)
    row["openvino"] = " ".join(error(ov_out[n], want[n], is_det[n]) if n in ov_out else "missing" for n in outputs)
    if cpu:
        from irforge.backends.cpu import compile_model

        compiled = compile_model(model, threads=2)
        try:
            got = compiled(feeds)
        finally:
            compiled.close()
        row["cpu"] = " ".join(error(got[n], want[n], is_det[n]) for n in outputs)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", type=Path, required=True)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--no-cpu", action="store_true")
    args = parser.parse_args()
    rows = []
    for name, source, _ in ZOO:
        if args.only and Path(name).stem not in args.only:
            continue
        path = args.zoo / name
        if not path.exists():
            print(f"skip {name}: not in {args.zoo} (from {source})", file=sys.stderr)
            continue
        start = time.time()
        with tempfile.TemporaryDirectory() as work:
            try:
                row = bench_net(path, Path(work), not args.no_cpu)
            except Exception as e:  # noqa: BLE001  (a bench row, not a crash)
                traceback.print_exc()
                row = {"net": path.stem, "convert": f"crash: {type(e).__name__}: {e}"[:120]}
        row["s"] = f"{time.time() - start:.0f}"
        rows.append(row)
        print(" | ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    print("\n| net | convert | OpenVINO on our IR | ref | cpu |\n|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['net']} | {row['convert']} | {row.get('openvino', '-')} | {row.get('ref', '-')} | {row.get('cpu', '-')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
