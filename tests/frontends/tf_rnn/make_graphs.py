"""Writes the tiny frozen Keras RNN graphs the TensorFlow loop tests read (CI has no TensorFlow).

Each model is frozen by `convert_variables_to_constants_v2` from a `tf.function`: by default
its loops are lowered to TF1 control-flow frames (Enter/Merge/Switch/NextIteration/Exit);
names ending in `_while` keep TF2 `While` nodes (`lower_control_flow=False`). Next to each
`<name>.pb` an `<name>.npz` holds an input `x` and TensorFlow's output `want`. The
`concat_lstm_*` graphs are a hand-written TF1-style LSTM (dynamic_rnn's LSTMCell math: one
MatMul of concat([x, h]), gates i, j, f, o, forget_bias 1.0) as a tf.while_loop, and
`concat_gru_frame` GRUCell's (sigmoid of both gates, then split).

    /work/zoo-venv/bin/python tests/frontends/tf_rnn/make_graphs.py [NAME ...]
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
T, I = 4, 3


def models():  # type: ignore[no-untyped-def]
    import keras
    from keras import layers

    def model(build, name):  # type: ignore[no-untyped-def]
        inp = keras.Input((T, I), batch_size=1, name="x")
        return keras.Model(inp, build(inp), name=name)

    return {
        "lstm": model(lambda x: layers.LSTM(4, name="l")(x), "m"),
        "lstm_seq_back": model(lambda x: layers.LSTM(3, return_sequences=True, go_backwards=True, name="l")(x), "m"),
        "gru": model(lambda x: layers.GRU(4, return_sequences=True, name="g")(x), "m"),
        "gru_v1": model(lambda x: layers.GRU(3, reset_after=False, go_backwards=True, name="g")(x), "m"),
        "rnn": model(lambda x: layers.SimpleRNN(4, return_sequences=True, name="r")(x), "m"),
        "bidi_stack": model(
            lambda x: layers.SimpleRNN(2, activation="relu", name="r")(
                layers.Bidirectional(layers.GRU(3, return_sequences=True, name="g"), name="b")(x)
            ),
            "m",
        ),
        "lstm_while": model(lambda x: layers.LSTM(3, return_sequences=True, name="l")(x), "m"),
    }


def short_names(graph):  # type: ignore[no-untyped-def]
    """The graph with its nodes renamed n0, n1, ... (placeholders keep their names: the
    input, and the `unused_control_flow_input` ones control-flow lowering adds)."""
    names = {n.name: n.name if n.op == "Placeholder" else f"n{k}" for k, n in enumerate(graph.node)}

    def rename(ref: str) -> str:
        control, body = ("^", ref[1:]) if ref.startswith("^") else ("", ref)
        node, _, port = body.partition(":")
        return control + names[node] + (":" + port if port else "")

    for node in graph.node:
        node.name = names[node.name]
        refs = [rename(i) for i in node.input]
        del node.input[:]
        node.input.extend(refs)
    return graph


def concat_lstm():  # type: ignore[no-untyped-def]
    """The TF1-style LSTM as a tf.function of x [1, T, I]."""
    import tensorflow as tf

    rng = np.random.default_rng(1)
    h = 4
    kernel = tf.constant(rng.uniform(-0.8, 0.8, (I + h, 4 * h)).astype(np.float32))
    bias = tf.constant(rng.uniform(-0.5, 0.5, (4 * h,)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec((1, T, I), tf.float32, name="x")])
    def lstm(x):  # type: ignore[no-untyped-def]
        steps = tf.TensorArray(tf.float32, T).unstack(tf.transpose(x, [1, 0, 2]))

        def body(t, c, state, out):  # type: ignore[no-untyped-def]
            i, j, f, o = tf.split(tf.matmul(tf.concat([steps.read(t), state], 1), kernel) + bias, 4, axis=1)
            c = tf.sigmoid(f + 1.0) * c + tf.sigmoid(i) * tf.tanh(j)
            state = tf.sigmoid(o) * tf.tanh(c)
            return t + 1, c, state, out.write(t, state)

        zeros = tf.zeros((1, h))
        _, _, _, out = tf.while_loop(lambda t, *_: t < T, body, (0, zeros, zeros, tf.TensorArray(tf.float32, T)))
        return tf.transpose(out.stack(), [1, 0, 2])

    return lstm.get_concrete_function()


def concat_gru():  # type: ignore[no-untyped-def]
    """TF1's GRUCell math as a tf.while_loop: r, u = split(sigmoid(concat([x, h]) Wg + bg)),
    c = tanh(concat([x, r * h]) Wc + bc), h' = u * h + (1 - u) * c."""
    import tensorflow as tf

    rng = np.random.default_rng(2)
    h = 4
    gate_kernel = tf.constant(rng.uniform(-0.8, 0.8, (I + h, 2 * h)).astype(np.float32))
    gate_bias = tf.constant(rng.uniform(-0.5, 0.5, (2 * h,)).astype(np.float32))
    kernel = tf.constant(rng.uniform(-0.8, 0.8, (I + h, h)).astype(np.float32))
    bias = tf.constant(rng.uniform(-0.5, 0.5, (h,)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec((1, T, I), tf.float32, name="x")])
    def gru(x):  # type: ignore[no-untyped-def]
        steps = tf.TensorArray(tf.float32, T).unstack(tf.transpose(x, [1, 0, 2]))

        def body(t, state, out):  # type: ignore[no-untyped-def]
            x_t = steps.read(t)
            r, u = tf.split(tf.sigmoid(tf.matmul(tf.concat([x_t, state], 1), gate_kernel) + gate_bias), 2, axis=1)
            c = tf.tanh(tf.matmul(tf.concat([x_t, r * state], 1), kernel) + bias)
            state = u * state + (1 - u) * c
            return t + 1, state, out.write(t, state)

        _, _, out = tf.while_loop(lambda t, *_: t < T, body, (0, tf.zeros((1, h)), tf.TensorArray(tf.float32, T)))
        return tf.transpose(out.stack(), [1, 0, 2])

    return gru.get_concrete_function()


def write(folder: Path, name: str, frozen) -> None:  # type: ignore[no-untyped-def]
    import tensorflow as tf

    x = np.random.default_rng(len(name)).standard_normal((1, T, I)).astype(np.float32)
    want = frozen(tf.constant(x))
    want = (want[0] if isinstance(want, (list, tuple)) else want).numpy()
    graph = frozen.graph.as_graph_def()
    if name != "lstm":  # the others with short node names, to keep the files small
        graph = short_names(graph)
    (folder / f"{name}.pb").write_bytes(graph.SerializeToString())
    np.savez(folder / f"{name}.npz", x=x, want=want)
    print(name, (folder / f"{name}.pb").stat().st_size, "bytes", want.shape)


def main() -> None:
    import sys

    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    folder = Path(__file__).parent
    wanted = set(sys.argv[1:])
    for name, make, lower in (("concat_lstm_frame", concat_lstm, True), ("concat_lstm_while", concat_lstm, False), ("concat_gru_frame", concat_gru, True)):
        if not wanted or name in wanted:
            write(folder, name, convert_variables_to_constants_v2(make(), lower_control_flow=lower))
    rng = np.random.default_rng(0)
    for name, model in models().items():
        if wanted and name not in wanted:
            continue
        for weight in model.weights:  # non-zero biases, so that every bias is checked
            weight.assign(rng.uniform(-0.8, 0.8, tuple(weight.shape)).astype(np.float32))
        fn = tf.function(lambda t, m=model: m(t, training=False)).get_concrete_function(tf.TensorSpec((1, T, I), tf.float32, name="x"))
        frozen = convert_variables_to_constants_v2(fn, lower_control_flow=not name.endswith("_while"))
        x = rng.standard_normal((1, T, I)).astype(np.float32)
        want = frozen(tf.constant(x))
        want = (want[0] if isinstance(want, (list, tuple)) else want).numpy()
        graph = frozen.graph.as_graph_def()
        if name != "lstm":  # the others with short node names, to keep the files small
            graph = short_names(graph)
        (folder / f"{name}.pb").write_bytes(graph.SerializeToString())
        np.savez(folder / f"{name}.npz", x=x, want=want)
        print(name, (folder / f"{name}.pb").stat().st_size, "bytes", want.shape)


if __name__ == "__main__":
    main()
