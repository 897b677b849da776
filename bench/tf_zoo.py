"""TensorFlow zoo (outside CI): frozen Keras / TF1 graphs through irforge, checked and compared
with ovc.

Each model is built with random weights and non-trivial BatchNorm statistics at a small input
size, frozen (`convert_variables_to_constants_v2`, or TF1's `convert_variables_to_constants`)
to a .pb, run by TensorFlow for the reference output, then converted by `ir-convert` and by
OpenVINO's `ovc`. Per model: whether irforge converts it, the largest error against
TensorFlow (relative to the largest |output|) of OpenVINO running irforge's IR, of irforge's
reference interpreter and of its CPU backend, and the layer and Transpose counts of both IRs
(layers: every layer but Const/Parameter/Result).

Needs the zoo venv (tensorflow-cpu, openvino); run from the repository root:

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/tf_zoo.py [--models a,b] [--work DIR] [--no-cpu]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
SKIPPED_LAYERS = {"Const", "Parameter", "Result"}


# -- models ------------------------------------------------------------------------------------
def _keras_app(name: str, size: int) -> Callable[[], tuple[object, list[int]]]:
    def build():  # type: ignore[no-untyped-def]
        import keras

        model = getattr(keras.applications, name)(weights=None, input_shape=(size, size, 3))
        return model, [1, size, size, 3]

    return build


def transformer():  # type: ignore[no-untyped-def]
    """A Keras transformer encoder block: MultiHeadAttention (Einsum), LayerNorm, GELU MLP."""
    import keras

    inp = keras.Input((16, 32))
    x = keras.layers.MultiHeadAttention(4, 8)(inp, inp)
    x = keras.layers.LayerNormalization()(x + inp)
    y = keras.layers.Dense(64, activation="gelu")(x)
    y = keras.layers.Dense(32)(y)
    out = keras.layers.LayerNormalization()(x + y)
    return keras.Model(inp, keras.layers.GlobalAveragePooling1D()(out)), [1, 16, 32]


def lstm():  # type: ignore[no-untyped-def]
    """A Keras LSTM, last output only (a loop: imported as LSTMSequence)."""
    import keras

    inp = keras.Input((10, 8))
    return keras.Model(inp, keras.layers.LSTM(16)(inp)), [1, 10, 8]


def _recurrent(build, steps: int = 10, features: int = 8):  # type: ignore[no-untyped-def]
    def model():  # type: ignore[no-untyped-def]
        import keras

        inp = keras.Input((steps, features))
        return keras.Model(inp, build(keras.layers, inp)), [1, steps, features]

    return model


RECURRENT_MODELS = {
    "gru": _recurrent(lambda L, x: L.GRU(16, return_sequences=True)(x)),
    "gru_reset_before": _recurrent(lambda L, x: L.GRU(12, reset_after=False, go_backwards=True)(x)),
    "simple_rnn": _recurrent(lambda L, x: L.SimpleRNN(16, return_sequences=True)(x)),
    "bidirectional_lstm": _recurrent(lambda L, x: L.Bidirectional(L.LSTM(8, return_sequences=True))(x)),
    "stacked_rnns": _recurrent(lambda L, x: L.Dense(4)(L.GRU(8)(L.LSTM(12, return_sequences=True, go_backwards=True)(x)))),
    "lstm_while": lstm,
}
"""More Keras recurrent layers; `*_while` ones are frozen with TF2 While loops kept
(lower_control_flow=False), the others with the loops lowered to TF1 frames (the default)."""


def deeplab():  # type: ignore[no-untyped-def]
    """DeepLab-style atrous pyramid: depthwise and regular convolutions at rates 2/4/6 (TF writes
    them as SpaceToBatchND -> conv -> BatchToSpaceND), concatenated, bilinear upsampling."""
    import keras

    inp = keras.Input((33, 33, 3))
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inp)
    branches = [keras.layers.Conv2D(8, 1)(x)]
    for rate in (2, 4, 6):
        b = keras.layers.DepthwiseConv2D(3, dilation_rate=rate, padding="same")(x)
        b = keras.layers.BatchNormalization()(b)
        branches.append(keras.layers.Conv2D(8, 1, activation="relu")(b))
    x = keras.layers.Concatenate()(branches)
    x = keras.layers.Conv2D(4, 3, dilation_rate=2, padding="same")(x)
    return keras.Model(inp, keras.layers.UpSampling2D(2, interpolation="bilinear")(x)), [1, 33, 33, 3]


def tf1_graph(path: Path, x: np.ndarray) -> np.ndarray:
    """A TF1-style graph (variables, tf.compat.v1.layers, atrous_conv2d, frozen by graph_util)."""
    import tensorflow as tf

    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        inp = v1.placeholder(tf.float32, x.shape, name="input")
        w = v1.get_variable("w", [3, 3, 3, 16], initializer=v1.random_normal_initializer(0, 0.3))
        y = tf.nn.relu(tf.nn.conv2d(inp, w, [1, 1, 1, 1], "SAME"))
        mean = v1.get_variable("mean", [16], initializer=v1.random_normal_initializer(0, 0.1))
        var = v1.get_variable("var", [16], initializer=v1.random_uniform_initializer(0.5, 1.5))
        y, _, _ = v1.nn.fused_batch_norm(y, tf.ones([16]), tf.zeros([16]), mean, var, is_training=False)
        w2 = v1.get_variable("w2", [3, 3, 16, 16], initializer=v1.random_normal_initializer(0, 0.1))
        y = tf.nn.relu6(tf.nn.atrous_conv2d(y, w2, 2, "SAME"))
        y = tf.nn.max_pool2d(y, 2, 2, "VALID")
        y = tf.reshape(tf.reduce_mean(y, axis=[1, 2]), [1, 16])
        wd = v1.get_variable("wd", [16, 10], initializer=v1.random_normal_initializer(0, 0.3))
        tf.nn.softmax(tf.matmul(y, wd), name="prob")
        with v1.Session(graph=graph) as sess:
            sess.run(v1.global_variables_initializer())
            frozen = v1.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), ["prob"])
            want = sess.run("prob:0", {"input:0": x})
    path.write_bytes(frozen.SerializeToString())
    return want


KERAS_MODELS: dict[str, Callable[[], tuple[object, list[int]]]] = {
    "MobileNetV2": _keras_app("MobileNetV2", 96),
    "ResNet50V2": _keras_app("ResNet50V2", 64),
    "EfficientNetB0": _keras_app("EfficientNetB0", 64),
    "InceptionV3": _keras_app("InceptionV3", 75),
    "NASNetMobile": _keras_app("NASNetMobile", 64),
    "ConvNeXtTiny": _keras_app("ConvNeXtTiny", 64),
    "DenseNet121": _keras_app("DenseNet121", 64),
    "Xception": _keras_app("Xception", 71),
    "MobileNetV3Small": _keras_app("MobileNetV3Small", 64),
    "MobileNet": _keras_app("MobileNet", 64),
    "ResNet50": _keras_app("ResNet50", 64),
    "VGG16": _keras_app("VGG16", 64),
    "InceptionResNetV2": _keras_app("InceptionResNetV2", 75),
    "EfficientNetV2B0": _keras_app("EfficientNetV2B0", 64),
    "MobileNetV3Large": _keras_app("MobileNetV3Large", 64),
    "NASNetLarge": _keras_app("NASNetLarge", 64),
    "EfficientNetB3": _keras_app("EfficientNetB3", 64),
    "transformer": transformer,
    "deeplab": deeplab,
    "lstm": lstm,
    **RECURRENT_MODELS,
}
MODELS = [*KERAS_MODELS, "tf1_graph"]


def randomize_batch_norms(model) -> None:  # type: ignore[no-untyped-def]
    """Non-trivial BatchNorm statistics, so that folding them is tested."""
    import keras

    rng = np.random.default_rng(0)
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            for weight in layer.weights:
                name = weight.path.split("/")[-1]
                shape = tuple(weight.shape)
                if name == "moving_variance" or name == "gamma":
                    weight.assign(rng.uniform(0.5, 1.5, shape).astype(np.float32))
                else:
                    weight.assign(rng.normal(0, 0.1, shape).astype(np.float32))


def randomize_recurrent_biases(model) -> None:  # type: ignore[no-untyped-def]
    """Non-zero biases in recurrent layers (Keras starts them at 0, the LSTM forget gate's at
    1), so that the bias of every gate is checked."""
    import keras

    rng = np.random.default_rng(0)
    for layer in model.layers:
        if isinstance(layer, (keras.layers.RNN, keras.layers.Bidirectional)):
            for weight in layer.weights:
                if weight.path.endswith("bias"):
                    weight.assign(rng.uniform(-0.5, 0.5, tuple(weight.shape)).astype(np.float32))


def freeze(name: str, folder: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    """The frozen .pb, an input and TensorFlow's output (cached in `folder`)."""
    pb, data = folder / f"{name}.pb", folder / f"{name}.npz"
    if pb.exists() and data.exists():
        saved = np.load(data)
        return pb, saved["x"], saved["want"]
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    if name == "tf1_graph":
        x = np.random.default_rng(1).standard_normal((1, 24, 24, 3)).astype(np.float32)
        want = tf1_graph(pb, x)
    else:
        model, shape = KERAS_MODELS[name]()
        randomize_batch_norms(model)
        randomize_recurrent_biases(model)
        x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
        fn = tf.function(lambda t: model(t, training=False)).get_concrete_function(tf.TensorSpec(shape, tf.float32))
        frozen = convert_variables_to_constants_v2(fn, lower_control_flow=not name.endswith("_while"))
        pb.write_bytes(frozen.graph.as_graph_def().SerializeToString())
        want = frozen(tf.constant(x))
        want = (want[0] if isinstance(want, (list, tuple)) else want).numpy()
    np.savez(data, x=x, want=want)
    return pb, x, want


# -- converting and checking -------------------------------------------------------------------
def layer_counts(xml: Path) -> tuple[int, int]:
    types = Counter(re.findall(r'<layer [^>]*type="([A-Za-z0-9_]+)"', xml.read_text()))
    return sum(n for t, n in types.items() if t not in SKIPPED_LAYERS), types.get("Transpose", 0)


def error(got: np.ndarray, want: np.ndarray) -> float:
    got = np.asarray(got).reshape(want.shape)
    return float(np.abs(got.astype(np.float64) - want).max() / max(np.abs(want).max(), 1e-12))


def run_openvino(xml: Path, x: np.ndarray) -> np.ndarray:
    import openvino as ov

    compiled = ov.Core().compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return next(iter(compiled([x]).values()))


def check(name: str, folder: Path, use_cpu: bool) -> dict[str, str]:
    pb, x, want = freeze(name, folder)
    row = {"model": name}
    ovc_xml = folder / "ovc" / f"{name}.xml"
    if not ovc_xml.exists():
        done = subprocess.run([str(Path(sys.executable).parent / "ovc"), str(pb), "--output_model", str(ovc_xml)], capture_output=True, text=True)
        if done.returncode:
            row["ovc"] = "fails: " + done.stderr.strip().splitlines()[-1][:80]
    if ovc_xml.exists():
        row["ovc layers"], row["ovc T"] = (str(v) for v in layer_counts(ovc_xml))
    out = folder / "irforge"
    done = subprocess.run(
        [sys.executable, "-m", "irforge.tools.ir_convert", "--input_model", str(pb), "-o", str(out), "-n", name],
        capture_output=True, text=True,
    )
    if done.returncode:
        row["convert"] = done.stderr.strip().splitlines()[-1][:200] if done.stderr.strip() else f"exit {done.returncode}"
        return row
    row["convert"] = "yes"
    xml = out / f"{name}.xml"
    row["layers"], row["T"] = (str(v) for v in layer_counts(xml))
    row["OpenVINO"] = f"{error(run_openvino(xml, x), want):.1e}"
    import irforge
    from irforge.backends.reference import run
    from irforge.frontends.ir_xml import read_ir_xml

    model = read_ir_xml(xml)
    feed = {_input_names(model)[0]: x}
    row["ref"] = f"{error(next(iter(run(model, feed).values())), want):.1e}"
    if use_cpu:
        try:
            compiled = irforge.compile(model, device="cpu", threads=1)
            row["cpu"] = f"{error(next(iter(compiled(feed).values())), want):.1e}"
        except Exception as e:  # noqa: BLE001 (a bench row, not a crash)
            row["cpu"] = f"fails: {str(e).splitlines()[0][:80]}"
    return row


def _input_names(model) -> list[str]:  # type: ignore[no-untyped-def]
    from irforge.model import input_names

    return input_names(model.func)


COLUMNS = ["model", "convert", "OpenVINO", "ref", "cpu", "layers", "ovc layers", "T", "ovc T"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--work", default="/tmp/tf_zoo")
    parser.add_argument("--no-cpu", action="store_true", help="skip the CPU backend column")
    args = parser.parse_args()
    folder = Path(args.work)
    (folder / "ovc").mkdir(parents=True, exist_ok=True)
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for name in args.models.split(","):
        try:
            row = check(name, folder, not args.no_cpu)
        except Exception:  # noqa: BLE001
            row = {"model": name, "convert": "bench error: " + traceback.format_exc().strip().splitlines()[-1][:150]}
        print("| " + " | ".join(row.get(c, "-") for c in COLUMNS) + " |", flush=True)


if __name__ == "__main__":
    main()
