"""Xception-like residual blocks with `ops.input_activation.DEPTHWISE_INPUT_ACTIVATION` off
and on, in one process: whole runs alternated, minimum CPU time of each.

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/cpu_input_activation_ab.py C SIZE BLOCKS [RUNS]

Each block: s' = 1x1(dw3x3(relu(s))) + s (Xception's middle flow at C=728, SIZE=19): the
ReLU reads the residual sum whose raw value the block's Add reads too, so it is a pointwise
pass (off) or applied by the depthwise layer's input copy (on). Prints the two outputs'
largest difference (the same arithmetic: 0) and the two minima.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from irforge.backends.cpu import compile_model  # noqa: E402
from irforge.backends.cpu.ops import input_activation  # noqa: E402
from irforge.dialects.nn import Convolution, Eltwise, ReLU  # noqa: E402
from tests.helpers import ModelBuilder, rand  # noqa: E402


def model(c: int, size: int, blocks: int):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    s = b.input("x", (1, c, size, size))
    for i in range(blocks):
        y = b.add(ReLU, [s]).output
        d = b.add(Convolution, [y, b.constant(rand(c, 1, 3, 3, seed=3 + i)), b.constant(rand(c, seed=4 + i))], group=c,
                  pads_begin=[1, 1], pads_end=[1, 1], strides=[1, 1]).output
        a = b.add(Convolution, [d, b.constant(rand(c, c, 1, 1, seed=5 + i) * 0.05), b.constant(rand(c, seed=6 + i))], group=1).output
        s = b.add(Eltwise, [a, s], operation="sum").output
    b.output(s, "y")
    return b.finish()


def main() -> None:
    c, size, blocks = (int(v) for v in sys.argv[1:4])
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 200
    feeds = {"x": rand(1, c, size, size, seed=9)}
    compiled = {}
    for value in (False, True):
        input_activation.DEPTHWISE_INPUT_ACTIVATION = value
        compiled[value] = compile_model(model(c, size, blocks), threads=1, cache_dir=False)
    out = {v: compiled[v](feeds)["y"] for v in compiled}
    best = {False: float("inf"), True: float("inf")}
    for i in range(runs):
        for value in ((False, True) if i % 2 else (True, False)):
            t0 = time.process_time_ns()
            compiled[value](feeds)
            best[value] = min(best[value], (time.process_time_ns() - t0) * 1e-6)
    print(f"C={c} {size}x{size} x{blocks} blocks: max diff {float(np.max(np.abs(out[False] - out[True]))):.1e}; "
          f"off {best[False]:.3f} ms, on {best[True]:.3f} ms, on/off {best[True] / best[False]:.3f}")


if __name__ == "__main__":
    main()
