"""One convolution layer's phases called in sequence (as in a model run: each phase finds the
previous one's output where it left it, not hot from a repeat), a module-level setting at value
A against value B, alternating rounds, one thread; per layer the minimum CPU time of each and
B/A, and each side's phase tags.

Outside CI (the zoo venv; read ratios on a shared host):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_conv_seq_ab.py \
        irforge.backends.cpu.ops.winograd:STRIDE2 --a False --b True \
        --layers "[(3, 32, 224), (32, 64, 112), (128, 128, 56)]" [--stride 2] [--rounds 40]

Layers are (input channels, output channels, input size): a 3x3 window, pads of 1, bias.
"""

from __future__ import annotations

import argparse
import ast
import ctypes
import importlib
import time

from irforge.backends.cpu import compile_model
from irforge.dialects.nn import Convolution
from tests.helpers import one_op_model, rand

_KERNEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def build(c: int, o: int, h: int, stride: int):  # type: ignore[no-untyped-def]
    model = one_op_model(Convolution, [rand(1, c, h, h)], [rand(o, c, 3, 3, seed=1), rand(o, seed=2)],
                         strides=[stride, stride], pads_begin=[1, 1], pads_end=[1, 1])
    compiled = compile_model(model, threads=1, cache_dir=False)
    compiled({"x0": rand(1, c, h, h, seed=3)})  # binds the input's address into the tables
    ex = compiled._executable
    calls = [(_KERNEL(ex.jit.address(p.function)), t.ctypes.data) for p, t in zip(ex.program.phases, ex.tables)]
    return compiled, calls, [p.tag or "other" for p in ex.program.phases]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("setting", help="module:NAME")
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--layers", required=True, help="Python list of (C, O, H)")
    ap.add_argument("--stride", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args()
    module_name, name = args.setting.split(":")
    module = importlib.import_module(module_name)
    values = ast.literal_eval(args.a), ast.literal_eval(args.b)
    for c, o, h in ast.literal_eval(args.layers):
        sides = []
        for value in values:
            setattr(module, name, value)
            sides.append(build(c, o, h, args.stride))
        best = [float("inf")] * 2
        for r in range(args.rounds):
            for i in (0, 1) if r % 2 == 0 else (1, 0):
                t0 = time.process_time()
                for fn, table in sides[i][1]:
                    fn(table, 0, 1)
                best[i] = min(best[i], time.process_time() - t0)
        print(f"{c} -> {o} at {h}x{h} stride {args.stride}: A {best[0] * 1e3:.3f} ms {sides[0][2]}, "
              f"B {best[1] * 1e3:.3f} ms {sides[1][2]}, B/A {best[1] / best[0]:.3f}", flush=True)
        for side in sides:
            side[0].close()


if __name__ == "__main__":
    main()
