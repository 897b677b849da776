"""Writes the tiny frozen Keras RNN graphs the TensorFlow loop tests read (CI has no TensorFlow).

Each model is frozen by `convert_variables_to_constants_v2` from a `tf.function`: by default
its loops are lowered to TF1 control-flow frames (Enter/Merge/Switch/NextIteration/Exit);
names ending in `_while` keep TF2 `While` nodes (`lower_control_flow=False`). Next to each
`<name>.pb` an `<name>.npz` holds an input `x` and TensorFlow's output `want`.

    /work/zoo-venv/bin/python tests/frontends/tf_rnn/make_graphs.py
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


def main() -> None:
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    folder = Path(__file__).parent
    rng = np.random.default_rng(0)
    for name, model in models().items():
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
