"""The CPU kernels' stack buffers per zoo model, and a run of each model on a small-stack thread.

A kernel's frame holds its allocas (stack blocks of scores, packed panels, rows): the
caller's thread runs thread 0's share of every phase, so a caller on a small-stack thread
(threading.stack_size, musl's 128 KiB default) needs every kernel's frame to fit there.
Per model: the largest alloca bytes of any kernel function (a lower bound of its frame; the
spills come on top) and the five largest kinds; with --run-kib N, the compiled model run from
a thread of N KiB stack in a child process (a stack overflow kills the child: SIGSEGV).

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_stack_frames.py whisper_base_encoder,resnet50 [--run-kib 256] [--threads 1,2]
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from zoo_latency import ZOO, scratch  # noqa: E402


def alloca_bytes(module) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Bytes of the allocas of each function defined in an llvmlite module (constant sizes)."""
    from llvmlite import ir

    sizes = {}
    for fn in module.functions:
        total = 0
        for block in fn.blocks:
            for inst in block.instructions:
                if isinstance(inst, ir.AllocaInstr):
                    count = inst.operands[0].constant if inst.operands else 1
                    total += inst.allocated_type.get_abi_size(TARGET_DATA) * int(count)
        if fn.blocks:
            sizes[fn.name] = total
    return sizes


TARGET_DATA = None


def frames(model) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Alloca bytes per kernel function of `model`'s CPU program (compiled without a cache,
    so that every kernel's IR is built)."""
    global TARGET_DATA
    from llvmlite import binding

    from irforge.backends.cpu import compile_model
    from irforge.backends.cpu.jit import Jit

    found: dict[str, int] = {}
    submit = Jit.submit

    def recording(self, module) -> None:  # type: ignore[no-untyped-def]
        global TARGET_DATA
        if TARGET_DATA is None:
            TARGET_DATA = binding.create_target_data(module.data_layout)
        found.update(alloca_bytes(module))
        submit(self, module)

    Jit.submit = recording  # type: ignore[method-assign]
    try:
        compile_model(model, threads=1, cache_dir=False).close()
    finally:
        Jit.submit = submit  # type: ignore[method-assign]
    return found


CHILD = """
import pickle, sys, threading
import numpy as np
from irforge.backends.cpu import compile_model
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
path, kib, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
model = import_onnx(path)
apply_pipeline(model.module, DEFAULT_PIPELINE)
feeds = pickle.loads(open(path + ".feeds", "rb").read())
compiled = compile_model(model, threads=threads, cache_dir=False)
threading.stack_size(kib * 1024)
out = {}
t = threading.Thread(target=lambda: out.update(compiled(feeds)))
t.start(); t.join()
print("ran", sorted(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models")
    ap.add_argument("--run-kib", type=int, default=0, help="also run each model on a thread of this stack size")
    ap.add_argument("--threads", default="1", help="thread counts of the runs (comma-separated)")
    ap.add_argument("--workdir", default="", help="keep the ONNX exports here (default: a folder removed at exit)")
    args = ap.parse_args()
    from irforge.frontends.onnx import import_onnx
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    workdir = Path(args.workdir) if args.workdir else scratch("stack-frames-")
    workdir.mkdir(parents=True, exist_ok=True)
    for name in args.models.split(","):
        path = workdir / f"{name}.onnx"
        if not path.exists():
            feeds = ZOO[name](path)
            Path(f"{path}.feeds").write_bytes(pickle.dumps(feeds))
        model = import_onnx(str(path))
        apply_pipeline(model.module, DEFAULT_PIPELINE)
        found = frames(model)
        kinds: dict[str, int] = defaultdict(int)
        for fn, size in found.items():
            kind = fn.split("_", 1)[1].split(".")[0] if "_" in fn else fn
            kinds[kind] = max(kinds[kind], size)
        row = {"model": name, "kernels": len(found), "max_alloca_kib": round(max(found.values(), default=0) / 1024, 1),
               "largest": {k: round(v / 1024, 1) for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])[:5]}}
        for threads in ([int(t) for t in args.threads.split(",")] if args.run_kib else []):
            child = subprocess.run([sys.executable, "-c", CHILD, str(path), str(args.run_kib), str(threads)], capture_output=True, text=True)
            row[f"run_{args.run_kib}kib_{threads}t"] = "ok" if child.returncode == 0 else f"rc {child.returncode}"
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
