"""Random small graphs for the CPU backend's buffer sharing: Concat in place
(`movement.CONCAT_IN_PLACE`), results stored over their residual, depthwise layers writing the
next 1x1's panels, the bound call's outputs (`runtime.BOUND_CALL`). Each graph is a random DAG
over [1, C, H, W] tensors of unary ops, Adds, Muls, Concats along the channels (of fresh
values, values read again later, model inputs, constants, the same value twice, other
Concats), 1x1 / depthwise convolutions, a Split, model outputs drawn among every value; its
outputs on cpu (1 and 2 threads, two runs each) must be onnxruntime's.

    python bench/fuzz_cpu_graphs.py --cases 200 --seed 1 [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import numpy as np


def graph(rng: random.Random):  # type: ignore[no-untyped-def]
    """A random model and its inputs."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper

    hw = rng.choice([(4, 4), (7, 7), (14, 14), (32, 32), (5, 3)])
    nodes, inits, values = [], [], []  # values: (name, channels)
    count = 0

    def fresh() -> str:
        nonlocal count
        count += 1
        return f"t{count}"

    def const(array: np.ndarray) -> str:
        name = fresh()
        inits.append(onnx.numpy_helper.from_array(array.astype(np.float32), name))
        return name

    inputs = []
    for i in range(rng.randint(1, 2)):
        c = rng.choice([3, 8, 16, 32])
        inputs.append(helper.make_tensor_value_info(f"x{i}", T.FLOAT, [1, c, *hw]))
        values.append((f"x{i}", c))
    nprng = np.random.default_rng(rng.randrange(1 << 30))
    for _ in range(rng.randint(3, 14)):
        kind = rng.choice(["unary", "unary", "add", "mul", "concat", "concat", "concat", "conv1x1", "depthwise", "split", "const_concat"])
        x, c = rng.choice(values)
        out = fresh()
        if kind == "unary":
            nodes.append(helper.make_node(rng.choice(["Relu", "Tanh", "Neg", "Sigmoid", "Abs"]), [x], [out]))
        elif kind in ("add", "mul"):
            same = [v for v in values if v[1] == c]
            y = rng.choice(same)[0]
            nodes.append(helper.make_node("Add" if kind == "add" else "Mul", [x, y], [out]))
        elif kind in ("concat", "const_concat"):
            parts = [rng.choice(values) for _ in range(rng.randint(2, 3))]
            if kind == "const_concat":
                cc = rng.choice([1, 4])
                parts.append((const(nprng.standard_normal((1, cc, *hw))), cc))
                rng.shuffle(parts)
            nodes.append(helper.make_node("Concat", [p[0] for p in parts], [out], axis=1))
            c = sum(p[1] for p in parts)
        elif kind == "conv1x1":
            o = rng.choice([8, 16, 32, 48])
            w = const(nprng.standard_normal((o, c, 1, 1)) / np.sqrt(c))
            nodes.append(helper.make_node("Conv", [x, w, const(nprng.uniform(-0.5, 0.5, o))], [out], kernel_shape=[1, 1]))
            c = o
        elif kind == "depthwise":
            w = const(nprng.standard_normal((c, 1, 3, 3)) / 3)
            nodes.append(helper.make_node("Conv", [x, w], [out], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=c))
        elif kind == "split" and c % 2 == 0:
            other = fresh()
            nodes.append(helper.make_node("Split", [x], [out, other], axis=1, num_outputs=2))
            values.append((other, c // 2))
            c //= 2
        else:
            nodes.append(helper.make_node("Relu", [x], [out]))
        values.append((out, c))
    produced = [v for v in values if not v[0].startswith("x")]
    chosen = {produced[-1][0]} | {v[0] for v in produced if rng.random() < 0.3}
    outputs = [helper.make_tensor_value_info(n, T.FLOAT, None) for n, _ in values if n in chosen]
    if rng.random() < 0.2:  # a model input as an output too
        nodes.append(helper.make_node("Identity", ["x0"], ["x0_out"]))
        outputs.append(helper.make_tensor_value_info("x0_out", T.FLOAT, None))
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, inits), opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    feeds = {i.name: nprng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32) for i in inputs}
    return model, feeds


def main() -> None:
    import onnxruntime as ort

    from irforge.backends.cpu import compile_model
    from irforge.errors import IrforgeError
    from irforge.frontends.onnx import import_onnx

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--keep", type=Path, default=Path("fuzz-cpu-graphs-findings"))
    args = p.parse_args()
    rng = random.Random(f"cpu-graphs-{args.seed}")
    counts = {"cases": 0, "agree": 0, "refused": 0, "differ": 0, "crashed": 0}
    for i in range(args.cases):
        model, feeds = graph(rng)
        counts["cases"] += 1
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        want = dict(zip(names, session.run(names, feeds)))
        verdict = "agree"
        for threads in (1, 2):
            try:
                compiled = compile_model(import_onnx(model), threads=threads, cache_dir=False)
                try:
                    runs = [compiled(feeds), compiled(feeds)]
                finally:
                    compiled.close()
            except IrforgeError as error:
                verdict = "refused"
                print(f"#{i} refused: {str(error).splitlines()[0]}")
                break
            except Exception as error:  # noqa: BLE001  (an internal error is a finding)
                verdict = "crashed"
                print(f"#{i} threads {threads}: {type(error).__name__}: {error}")
                break
            for r, got in enumerate(runs):
                bad = [n for n in names if got[n].shape != want[n].shape or not np.allclose(got[n], want[n], rtol=1e-4, atol=1e-4)]
                if bad:
                    verdict = "differ"
                    print(f"#{i} threads {threads} run {r}: {bad} differ")
        counts[verdict] += 1
        if verdict in ("differ", "crashed"):
            args.keep.mkdir(parents=True, exist_ok=True)
            import onnx

            onnx.save(model, args.keep / f"{args.seed}-{i}.onnx")
    print(counts)


if __name__ == "__main__":
    main()
