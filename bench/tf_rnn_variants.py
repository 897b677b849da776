"""Keras recurrent-layer variants (outside CI) through irforge's TensorFlow loop recognition,
against TensorFlow on the reference interpreter: implementation=1, no bias, other
activations, return_state with initial_state, a dynamic batch given a static shape.

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/tf_rnn_variants.py
"""

import os, sys, numpy as np
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf, keras
from keras import layers as L
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
from irforge.frontends.tf import import_tf
from irforge.backends.reference import run
def states_model():
    inp = keras.Input((5, 3), batch_size=1)
    seq, h, c = L.LSTM(4, return_sequences=True, return_state=True)(inp)
    g = L.GRU(3, return_state=True, reset_after=False)(seq, initial_state=h[:, :3])
    return keras.Model(inp, [g[0], g[1], c])
cases = {
    "lstm_impl1": lambda: L.LSTM(4, implementation=1),
    "gru_impl1": lambda: L.GRU(4, implementation=1, return_sequences=True),
    "gru_impl1_v1": lambda: L.GRU(4, implementation=1, reset_after=False),
    "lstm_nobias": lambda: L.LSTM(4, use_bias=False, unit_forget_bias=False),
    "rnn_sigmoid_seq_back": lambda: L.SimpleRNN(4, activation="sigmoid", go_backwards=True, return_sequences=True),
    "lstm_relu": lambda: L.LSTM(4, activation="relu"),
    "dynamic_batch": None,
    "states": None,
}
for name, make in cases.items():
    rng = np.random.default_rng(0)
    if name == "states":
        model = states_model(); shape = (1, 5, 3)
    else:
        inp = keras.Input((5, 3), batch_size=None if name == "dynamic_batch" else 1)
        model = keras.Model(inp, (make() if make else L.GRU(4))(inp)); shape = (None, 5, 3) if name == "dynamic_batch" else (1, 5, 3)
    for w in model.weights:
        w.assign(rng.uniform(-0.8, 0.8, tuple(w.shape)).astype(np.float32))
    fn = tf.function(lambda t: model(t, training=False)).get_concrete_function(tf.TensorSpec(shape, tf.float32))
    frozen = convert_variables_to_constants_v2(fn)
    x = rng.standard_normal((1, 5, 3)).astype(np.float32)
    want = frozen(tf.constant(x))
    want = [w.numpy() for w in want] if isinstance(want, (list, tuple)) else [want.numpy()]
    gd = frozen.graph.as_graph_def()
    try:
        m = import_tf(gd, input_shapes={gd.node[0].name: [1, 5, 3]} if name == "dynamic_batch" else None)
        feed = {[n.name for n in gd.node if n.op == "Placeholder"][0]: x}
        got = list(run(m, feed).values())
        errs = [float(np.abs(np.asarray(g).reshape(w.shape) - w).max()) for g, w in zip(got, want)]
        print(name, "ok", errs, len(got), len(want))
    except Exception as e:
        print(name, "FAIL", str(e)[:600])
