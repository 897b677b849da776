"""TensorFlow `tf.while_loop`s that are not RNN layers (a data-dependent while, a counted
loop with a loop-invariant weight, a variable that grows) and a `tf.cond` on data, frozen as
TF2 While / If nodes (`convert_variables_to_constants_v2(..., lower_control_flow=False)`),
converted by irforge to nn.loop / nn.if and run on ref, cpu and OpenVINO (the IR irforge writes, f32), each against
TensorFlow; prints the max absolute error per backend. Needs tensorflow (the zoo venv),
outside CI:

    PYTHONPATH=. /work/zoo-venv/bin/python bench/control_flow_tf.py [OUT_DIR]
"""

import sys
import tempfile
from pathlib import Path

import numpy as np
import openvino as ov
import tensorflow as tf
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.dialects.nn.control_flow import If, Loop
from irforge.frontends.tf import import_tf

W = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32) * 0.5


def halve_until_small(x):  # type: ignore[no-untyped-def]
    return tf.while_loop(lambda v: tf.reduce_max(tf.abs(v)) > 1.0, lambda v: [v * 0.5], [x])[0]


def counted(x):  # type: ignore[no-untyped-def]
    w = tf.constant(W)
    _, y = tf.while_loop(lambda i, v: i < 5, lambda i, v: [i + 1, tf.tanh(tf.matmul(v, w)) + tf.cast(i, tf.float32)], [tf.constant(0), x])
    return y


def doubling(x):  # type: ignore[no-untyped-def]
    v = tf.reshape(x, [-1])
    return tf.while_loop(lambda v: tf.shape(v)[0] < 40, lambda v: [tf.concat([v, v * 2.0], 0)], [v], shape_invariants=[tf.TensorShape([None])])[0]


def branches(x):  # type: ignore[no-untyped-def]
    return tf.cond(tf.reduce_sum(x) > 0, lambda: tf.nn.relu(x) * 2.0, lambda: tf.concat([x, -x], 0))


def main(out: Path) -> None:
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32) * 4
    core = ov.Core()
    for fn in (halve_until_small, counted, doubling, branches):
        concrete = tf.function(fn).get_concrete_function(tf.TensorSpec([2, 4], tf.float32, name="x"))
        frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=False)
        graph_def = frozen.graph.as_graph_def()
        want = frozen(tf.constant(x))[0].numpy()
        output = frozen.outputs[0].name.split(":")[0] if frozen.outputs[0].name.endswith(":0") else frozen.outputs[0].name
        model = import_tf(graph_def, outputs=[output])
        loops = sum(isinstance(op, Loop | If) for op in model.func.body.block.ops)
        feeds = {model.inputs[0].name if hasattr(model.inputs[0], "name") else "x": x}
        got = {"ref": run(model, feeds)[output]}
        cpu = compile_model(model, threads=1, cache_dir=out / "cache")
        got["cpu"] = cpu(feeds)[output]
        cpu.close()
        xml, _ = write_ir_xml(model, out / f"{fn.__name__}.xml")
        compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        got["openvino"] = compiled(feeds)[compiled.outputs[0]]
        errors = ", ".join(f"{k} {float(np.abs(v - want).max()):.1e}" if v.shape == want.shape else f"{k} shape {v.shape}" for k, v in got.items())
        print(f"{fn.__name__}: {loops} nn.loop/nn.if, {errors}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()))
