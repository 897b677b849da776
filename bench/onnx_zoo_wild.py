"""ONNX files as found in the wild: tf2onnx exports (NHWC, Loop/NMS post-processing) and torch's
old exporter paths (opset 9/10/11: Upsample, attribute Pad/Slice), checked like onnx_zoo.py.

Outside CI (the zoo venv: tensorflow-cpu, tf2onnx 1.17, torch, onnxruntime, openvino). The ONNX
Model Zoo's files are Git LFS objects we cannot download, so their shapes are reproduced:
keras.applications and small TF graphs converted by tf2onnx at opsets 9, 11, 13 and 17 (a
frozen graph, as tf2onnx's own `--graphdef` path), an SSD-style post-processing with
tf.image.combined_non_max_suppression / top_k + non_max_suppression, a BERT-like Keras
encoder, and torchvision models exported by torch's TorchScript exporter at opsets 9, 10, 11
and converted down to opsets 3-8 with onnx.version_converter (BatchNormalization kept).
Per row: convert (import + ir-convert's default pipeline), then OpenVINO on irforge's IR XML,
the reference interpreter and the CPU backend against onnxruntime on the same file (max abs
error, relative where the output exceeds 1; onnx_zoo.py's `max_error`).

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/onnx_zoo_wild.py [--models a,b] [--opsets 9,11,13,17] [--out table.md]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).parent))

from onnx_zoo import first_line, max_error, run_openvino  # noqa: E402  (bench/, next to this script)


@dataclass
class WildModel:
    name: str
    export: Callable[[Path, int], dict[str, np.ndarray]]
    """Writes the ONNX file at the given opset; returns the feeds."""
    opsets: tuple[int, ...]


# -- tf2onnx ---------------------------------------------------------------------------------
def _randomize_batch_norms(model) -> None:  # type: ignore[no-untyped-def]
    import keras

    rng = np.random.default_rng(0)
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            for weight in layer.weights:
                name, shape = weight.path.split("/")[-1], tuple(weight.shape)
                low_high = (0.5, 1.5) if name in ("moving_variance", "gamma") else None
                weight.assign((rng.uniform(*low_high, shape) if low_high else rng.normal(0, 0.1, shape)).astype(np.float32))


def tf2onnx_function(fn: Callable, specs: list[tuple[str, list[int], str]], seed: int = 1, lower: bool = True) -> Callable[[Path, int], dict[str, np.ndarray]]:
    """A tf.function frozen to a graph (as a saved .pb would be) and converted by tf2onnx;
    `lower=False` keeps TF2's While/If ops (tf2onnx turns them into Loop/If)."""

    def export(path: Path, opset: int) -> dict[str, np.ndarray]:
        import tensorflow as tf
        import tf2onnx
        from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

        signature = [tf.TensorSpec(shape, getattr(tf, dtype), name=name) for name, shape, dtype in specs]
        concrete = tf.function(fn()).get_concrete_function(*signature)
        frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=lower)
        graph_def = frozen.graph.as_graph_def()
        inputs = [t.name for t in frozen.inputs]
        outputs = [t.name for t in frozen.outputs]
        tf2onnx.convert.from_graph_def(graph_def, input_names=inputs, output_names=outputs, opset=opset, output_path=str(path))
        rng = np.random.default_rng(seed)
        feeds = {}
        for (name, shape, dtype), tensor in zip(specs, inputs):
            value = rng.standard_normal(shape) if dtype.startswith("float") else rng.integers(0, 50, shape)
            feeds[tensor] = value.astype(dtype)
        return feeds

    return export


def keras_app(name: str, size: int) -> Callable[[Path, int], dict[str, np.ndarray]]:
    def build():  # type: ignore[no-untyped-def]
        import keras

        # logits (no softmax): errors on the numbers the layers compute, not on ~1e-3 probabilities
        model = getattr(keras.applications, name)(weights=None, input_shape=(size, size, 3), classifier_activation=None)
        _randomize_batch_norms(model)
        return lambda x: model(x, training=False)

    return tf2onnx_function(build, [("x", [1, size, size, 3], "float32")])


def keras_encoder():  # type: ignore[no-untyped-def]
    """A BERT-like Keras encoder: token and position embeddings, two MultiHeadAttention blocks
    with a padding mask, LayerNorm, GELU MLP, a pooled tanh head."""
    import keras
    import tensorflow as tf

    embed, positions = keras.layers.Embedding(50, 32), keras.layers.Embedding(16, 32)
    # tanh GELU: Keras' exact GELU is Erfc, which tf2onnx 1.17 does not convert
    gelu = lambda t: tf.nn.gelu(t, approximate=True)  # noqa: E731
    blocks = [(keras.layers.MultiHeadAttention(4, 8), keras.layers.LayerNormalization(), keras.layers.Dense(64, activation=gelu),
               keras.layers.Dense(32), keras.layers.LayerNormalization()) for _ in range(2)]
    pool = keras.layers.Dense(32, activation="tanh")

    def fn(ids, mask):  # type: ignore[no-untyped-def]
        x = embed(ids) + positions(tf.range(tf.shape(ids)[1]))[tf.newaxis]
        attention_mask = tf.cast(mask[:, tf.newaxis, :], tf.bool)
        for attention, norm1, up, down, norm2 in blocks:
            x = norm1(x + attention(x, x, attention_mask=attention_mask))
            x = norm2(x + down(up(x)))
        return x, pool(x[:, 0])

    return fn


def nhwc_graph():  # type: ignore[no-untyped-def]
    """Raw TF ops in NHWC as tf2onnx meets them in TF graphs: conv / depthwise, padded strided
    pools, bilinear and nearest resizes (half-pixel and align_corners), space_to_depth,
    slices (stride 1: tf2onnx's opset 9 has no strided Slice), a reduction and a softmax over channels."""
    import tensorflow as tf

    rng = np.random.default_rng(0)
    w1 = tf.constant(rng.standard_normal((3, 3, 3, 8)).astype(np.float32) * 0.3)
    dw = tf.constant(rng.standard_normal((3, 3, 8, 1)).astype(np.float32) * 0.3)
    w2 = tf.constant(rng.standard_normal((1, 1, 32, 8)).astype(np.float32) * 0.3)

    def fn(x):  # type: ignore[no-untyped-def]
        y = tf.nn.relu6(tf.nn.conv2d(tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT"), w1, 1, "VALID"))
        y = tf.nn.depthwise_conv2d(y, dw, [1, 2, 2, 1], "SAME")
        y = tf.nn.avg_pool2d(y, 3, 1, "SAME") + tf.nn.max_pool2d(y, 3, 1, "SAME")
        s = tf.nn.space_to_depth(y, 2)
        s = tf.nn.conv2d(s, w2, 1, "SAME")
        up = tf.image.resize(s, [16, 16], method="bilinear") + tf.compat.v1.image.resize_bilinear(s, [16, 16], align_corners=True)
        up = up + tf.image.resize(s, [16, 16], method="nearest")
        mid = up[:, 1:-1, 2:, :] - tf.reduce_mean(up, axis=[1, 2], keepdims=True)
        return tf.nn.softmax(0.1 * mid, axis=-1)

    return fn


def ssd_postprocess(kind: str):  # type: ignore[no-untyped-def]
    """An SSD-style head on a tiny backbone: decoded boxes and class scores, then TF's NMS
    (combined_non_max_suppression: per class, padded, opset 12+ in tf2onnx; or the best
    anchors by top_k, then non_max_suppression_with_scores / non_max_suppression and a
    gather, as ssd_mobilenet_v1's exported graph; tf2onnx 1.17 fails on TF 2.21's
    non_max_suppression_padded loop)."""
    import tensorflow as tf

    rng = np.random.default_rng(0)
    w = tf.constant(rng.standard_normal((3, 3, 3, 16)).astype(np.float32) * 0.3)
    wb = tf.constant(rng.standard_normal((1, 1, 16, 4)).astype(np.float32) * 0.3)
    ws = tf.constant(rng.standard_normal((1, 1, 16, 3)).astype(np.float32) * 0.3)
    centers = tf.constant(rng.uniform(0.1, 0.9, (1, 64, 2)).astype(np.float32))

    def fn(x):  # type: ignore[no-untyped-def]
        f = tf.nn.relu(tf.nn.conv2d(x, w, 2, "SAME"))
        deltas = tf.reshape(tf.nn.conv2d(f, wb, 1, "SAME"), [1, -1, 4])
        scores = tf.sigmoid(tf.reshape(tf.nn.conv2d(f, ws, 1, "SAME"), [1, -1, 3]))
        half = 0.1 * tf.exp(deltas[..., 2:] * 0.2)
        boxes = tf.concat([centers - half, centers + half], axis=-1)
        if kind == "combined":
            out = tf.image.combined_non_max_suppression(boxes[:, :, tf.newaxis], scores, 10, 20, 0.5, 0.3)
            return out.nmsed_boxes, out.nmsed_scores, out.nmsed_classes, out.valid_detections
        best = tf.reduce_max(scores[0], axis=-1)
        if kind == "topk":
            top, index = tf.math.top_k(best, 32)
            chosen = tf.gather(boxes[0], index)
            keep, kept_scores = tf.image.non_max_suppression_with_scores(chosen, top, 10, 0.5, 0.3)
            return tf.gather(chosen, keep), kept_scores
        keep = tf.image.non_max_suppression(boxes[0], best, 10, 0.5, 0.3)
        return tf.gather(boxes[0], keep), tf.gather(best, keep)

    return fn


def loop_and_cond():  # type: ignore[no-untyped-def]
    """tf.map_fn over a run-time number of rows and a tf.while_loop (tf2onnx: Loop), and a
    tf.cond on a data-dependent predicate (If), as TF detection post-processing has."""
    import tensorflow as tf

    w = tf.constant(np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32) * 0.3)

    def fn(x):  # type: ignore[no-untyped-def]
        rows = tf.boolean_mask(x, tf.reduce_max(x, axis=1) > -0.5)  # a data-dependent row count
        mapped = tf.map_fn(lambda r: tf.tanh(tf.linalg.matvec(w, r)), rows)
        _, acc = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.nn.relu(tf.matmul(a, w)) + x), (tf.constant(0), x))
        branch = tf.cond(tf.reduce_mean(x) > 0, lambda: acc * 2.0, lambda: acc - 1.0)
        return tf.reduce_sum(mapped, axis=0), branch

    return fn


# -- torch's TorchScript exporter at old opsets ------------------------------------------------
def torchvision_model(name: str, size: int, **kwargs: object) -> Callable[[Path, int], dict[str, np.ndarray]]:
    """torch's TorchScript exporter at `opset` (9-11); below 9 the opset-9 export converted
    down with onnx.version_converter (BatchNormalization kept, not folded into Conv: what the
    zoo's caffe2-era files hold), compared with onnxruntime on the opset-9 file (REFERENCE)."""

    def export(path: Path, opset: int) -> dict[str, np.ndarray]:
        import onnx
        import torch
        from onnx import version_converter
        from zoo_torchvision import torchvision  # noqa: F401  (CPU-only torch: see that module)

        torch.manual_seed(0)
        segmentation = name.startswith(("fcn", "deeplab", "lraspp"))
        model = getattr(torchvision.models.segmentation if segmentation else torchvision.models, name)(weights=None, **kwargs).eval()
        for module in model.modules():  # non-trivial BatchNorm statistics
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.1, 0.1)
                module.running_var.uniform_(0.5, 1.5)
        x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(0))
        wrapped = OutputOnly(model) if segmentation else model
        exported = path if opset >= 9 else path.with_suffix(REFERENCE)
        keep_bn = {} if opset >= 9 else {"do_constant_folding": False, "training": torch.onnx.TrainingMode.PRESERVE}
        with torch.no_grad():
            torch.onnx.export(wrapped, (x,), str(exported), input_names=["x"], opset_version=max(opset, 9), dynamo=False, **keep_bn)
        if opset < 9:
            onnx.save(version_converter.convert_version(onnx.load(str(exported)), opset), str(path))
        return {"x": x.numpy()}

    return export


REFERENCE = ".reference.onnx"
"""A row's file converted down from this one: onnxruntime runs this one for the reference."""


class OutputOnly:
    """Segmentation models return a dict: export its "out" tensor."""

    def __new__(cls, model):  # type: ignore[no-untyped-def]
        import torch

        class Wrapper(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.model(x)["out"]

        return Wrapper().eval()


TF_OPSETS = (9, 11, 13, 17)
ZOO = [
    WildModel("keras-mobilenet_v2", keras_app("MobileNetV2", 96), TF_OPSETS),
    WildModel("keras-resnet50", keras_app("ResNet50", 64), (9, 13)),
    WildModel("keras-efficientnet_b0", keras_app("EfficientNetB0", 64), (11, 17)),
    WildModel("keras-inception_v3", keras_app("InceptionV3", 75), (9, 13)),
    WildModel("keras-densenet121", keras_app("DenseNet121", 64), (9, 13)),
    WildModel("keras-nasnet_mobile", keras_app("NASNetMobile", 64), (11, 13)),
    # opset 9/10: tf2onnx cannot write half-pixel resizes (it needs Resize-11)
    WildModel("tf-nhwc-graph", tf2onnx_function(nhwc_graph, [("x", [1, 16, 16, 3], "float32")]), (11, 13, 17)),
    WildModel("keras-bert-encoder", tf2onnx_function(keras_encoder, [("ids", [1, 12], "int32"), ("mask", [1, 12], "int32")]), (12, 13, 17)),  # MultiHeadAttention: Einsum (opset 12)
    WildModel("tf-ssd-combined-nms", tf2onnx_function(lambda: ssd_postprocess("combined"), [("x", [1, 16, 16, 3], "float32")]), (12, 13, 17)),
    WildModel("tf-ssd-topk-nms", tf2onnx_function(lambda: ssd_postprocess("topk"), [("x", [1, 16, 16, 3], "float32")]), (10, 11, 13, 17)),
    WildModel("tf-ssd-nms", tf2onnx_function(lambda: ssd_postprocess("plain"), [("x", [1, 16, 16, 3], "float32")]), (10, 11, 13, 17)),
    WildModel("tf-loop-if", tf2onnx_function(loop_and_cond, [("x", [6, 8], "float32")], lower=False), (11, 13, 17)),
    WildModel("tv-resnet18", torchvision_model("resnet18", 64), (3, 6, 7, 8, 9, 10, 11)),
    WildModel("tv-squeezenet1_0", torchvision_model("squeezenet1_0", 64), (3, 7, 9, 10, 11)),
    WildModel("tv-mobilenet_v2", torchvision_model("mobilenet_v2", 64), (6, 9, 10, 11)),
    WildModel("tv-shufflenet_v2", torchvision_model("shufflenet_v2_x1_0", 64), (9, 10, 11)),
    WildModel("tv-densenet121", torchvision_model("densenet121", 64), (6, 9, 11)),
    WildModel("tv-googlenet", torchvision_model("googlenet", 64, aux_logits=False, init_weights=True), (6, 9)),
    WildModel("tv-fcn_resnet50", torchvision_model("fcn_resnet50", 64, num_classes=4, aux_loss=False, weights_backbone=None), (9, 10, 11)),  # (version_converter cannot take its Upsample-9 to 8)
    WildModel("tv-lraspp_mobilenet_v3", torchvision_model("lraspp_mobilenet_v3_large", 64, num_classes=4, weights_backbone=None), (9, 11)),
]


# -- one row ----------------------------------------------------------------------------------
def run_one(entry: WildModel, opset: int, workdir: Path) -> dict[str, str]:
    import onnxruntime as ort
    import openvino as ov

    from irforge.backends.cpu import compile_model
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.backends.reference import run
    from irforge.frontends.onnx import import_onnx
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    row = {"model": entry.name, "opset": str(opset)}
    path = workdir / f"{entry.name}-{opset}.onnx"
    try:
        feeds = entry.export(path, opset)
    except Exception as e:  # noqa: BLE001
        row["convert"] = f"export failed: {first_line(e)}"
        return row
    try:
        reference = path.with_suffix(REFERENCE)
        session = ort.InferenceSession(str(reference if reference.exists() else path), providers=["CPUExecutionProvider"])
        feeds = {i.name: feeds[i.name] for i in session.get_inputs()}
        want = session.run(None, feeds)
    except Exception as e:  # noqa: BLE001
        row["convert"] = f"onnxruntime failed: {first_line(e)}"
        return row
    try:
        model = import_onnx(str(path))
        apply_pipeline(model.module, DEFAULT_PIPELINE)
    except Exception as e:  # noqa: BLE001
        row["convert"] = first_line(e)
        return row
    row["convert"] = "yes"
    stages: dict[str, Callable[[], object]] = {
        "openvino": lambda: run_openvino(model, workdir / f"{entry.name}-{opset}.xml", feeds, write_ir_xml, ov),
        "ref": lambda: run(model, feeds),
        "cpu": lambda: compile_model(model)(feeds),
    }
    for stage, fn in stages.items():
        try:
            got = fn()
            values = list(got.values()) if isinstance(got, dict) else got  # type: ignore[union-attr]
            row[stage] = f"{max_error(values, want):.1e}"
        except Exception as e:  # noqa: BLE001
            row[stage] = first_line(e)
    return row


COLUMNS = ("model", "opset", "convert", "openvino", "ref", "cpu")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(m.name for m in ZOO))
    parser.add_argument("--opsets", default=None, help="only these opsets (each model keeps its own list otherwise)")
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown table here")
    args = parser.parse_args()
    wanted = args.models.split(",")
    only = {int(o) for o in args.opsets.split(",")} if args.opsets else None
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for entry in [m for m in ZOO if m.name in wanted]:
            for opset in [o for o in entry.opsets if only is None or o in only]:
                start = time.time()
                try:
                    row = run_one(entry, opset, Path(tmp))
                except Exception as e:  # noqa: BLE001
                    traceback.print_exc(file=sys.stderr)
                    row = {"model": entry.name, "opset": str(opset), "convert": f"harness: {first_line(e)}"}
                line = "| " + " | ".join(row.get(c, "-").replace("|", "/") for c in COLUMNS) + " |"
                lines.append(line)
                print(line, f"({time.time() - start:.0f} s)", file=sys.stderr, flush=True)
                print(line, flush=True)
                if args.out:
                    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
