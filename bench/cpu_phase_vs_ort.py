"""irforge's phases against onnxruntime's nodes on one model, measured in the same rounds.

Outside CI (the zoo venv):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_phase_vs_ort.py resnext50_32x4d [--runs 15]

`cpu_phase_profile.py` times irforge's phases first and onnxruntime's nodes after, with
medians: on this shared host the two halves meet different loads (ResNeXt-50's 1x1 GEMMs read
50-55 GF/s there at 09:28 UTC while whole runs showed 0.97x onnxruntime). Here every round
calls irforge's phases one by one (each timed in CPU time of the process) and then one
onnxruntime run (its profiler's node events, wall time, one thread), alternately, and each
phase / node keeps its minimum over the rounds: both sides see the same moments.

Rows: irforge's phases that carry FLOPs (a GEMM, depthwise, Winograd, ... phase; the
copies, packs and planes before one are added to it, and shown apart as `pre`) in run order,
each paired with the first onnxruntime compute node (Conv, FusedConv, Gemm, MatMul, ...) not
yet taken whose FLOPs (from its profiled input / output shapes) are the phase's
(`pair_by_flops`: the two runtimes order a block's branches differently); the other nodes of
onnxruntime (pools, Reorder*, Mul, Sigmoid) and irforge's phases after the last FLOP phase
are summed apart.
keras.applications models run on tf2onnx's ONNX file on both sides; `--tf`: irforge imports
the frozen graph itself (its TF frontend, as `zoo_latency.py` does), onnxruntime tf2onnx's file.
`--classes`: both sides summed per class (GEMMs by FLOPs, the rest by irforge's kernel kind /
onnxruntime's op type), for the transformers, where the two fuse differently: irforge's one
attention phase against onnxruntime's FusedMatMul + Softmax + MatMul + mask Add / IsNaN /
Where, its LayerNorm `rows` against (Skip)LayerNormalization. onnxruntime's node times are
its profiler's wall times: on a loaded host its long nodes (ViT's 18 ms FFN GEMMs at load 3-4)
carry other jobs' slices, which irforge's CPU times do not; compare those on a quiet host.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cpu_phase_profile import _keras  # noqa: E402  (also skips transformers' torchvision probe)
from zoo_latency import ZOO, scratch  # noqa: E402
from zoo_more import KERAS_MODELS  # noqa: E402

_KERNEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
STAT = min
"""How each phase's / node's times over the rounds are reduced (`--median`: statistics.median,
to compare the typical run, where the minima of different rounds undercount a whole run)."""
COMPUTE = {"Conv", "FusedConv", "Gemm", "MatMul", "FusedMatMul", "FusedGemm", "ConvTranspose"}
"""onnxruntime's op types that pair with an irforge FLOP phase."""


def _ort_session(path: Path, prefix: Path):  # type: ignore[no-untyped-def]
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.enable_profiling = True
    opts.profile_file_prefix = str(prefix)
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def _flops(op: str, inputs: list, output: list) -> int:
    """A compute node's multiply-adds x 2 from its profiled shapes (0 where unknown): a
    convolution's weights [O, C/g, kh, kw] times its output positions, a MatMul / Gemm's
    output times A's last axis."""
    def prod(v: list) -> int:
        out = 1
        for d in v:
            out *= int(d)
        return out
    try:
        if "Conv" in op and len(inputs) > 1 and len(output) > 2:
            return 2 * prod(inputs[1]) * output[0] * prod(output[2:])
        if ("MatMul" in op or "Gemm" in op) and inputs:
            return 2 * prod(output) * int(inputs[0][-1])
    except (TypeError, ValueError):
        pass
    return 0


def _ort_minima(events: list[dict], runs: int) -> list[tuple[str, str, str, float, int]]:
    """(node, op, output shape, min seconds, FLOPs) in run order, over the timed runs."""
    per_node: dict[str, list[float]] = defaultdict(list)
    info: dict[str, tuple[str, str, int]] = {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per_node[e["name"]].append(e["dur"] * 1e-6)
            shape = e["args"].get("output_type_shape", "")
            op = e["args"].get("op_name", "?")
            dims = [next(iter(d.values())) for d in e["args"].get("input_type_shape", []) if isinstance(d, dict) and d]
            out = next(iter(shape[0].values())) if isinstance(shape, list) and shape and isinstance(shape[0], dict) else []
            info[e["name"]] = (op, str(shape[0] if isinstance(shape, list) and shape else shape)[:44], _flops(op, dims, out))
    return [(n[:-len("_kernel_time")], *info[n][:2], STAT(t[-runs:]), info[n][2]) for n, t in per_node.items()]


def pair_by_flops(units: list[int], nodes: list[int]) -> list[int | None]:
    """For each irforge FLOP phase (its FLOPs, in run order), the index of the onnxruntime
    compute node it pairs with: the first one not yet taken with the same FLOPs (within
    0.5%: the two runtimes order a block's branches differently, e.g. ResNet's downsample
    1x1 before or after the block's 3x3); None where no node is left. Where onnxruntime's
    shapes give no FLOPs at all, pairs in run order."""
    if not any(nodes):
        return [k if k < len(nodes) else None for k in range(len(units))]
    taken = [False] * len(nodes)
    out: list[int | None] = []
    for flops in units:
        pick = next((j for j, f in enumerate(nodes) if not taken[j] and abs(f - flops) <= 0.005 * flops), None)
        if pick is not None:
            taken[pick] = True
        out.append(pick)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", choices=sorted([*ZOO, *KERAS_MODELS]))
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--phases", action="store_true", help="also list irforge's phases in model order (min ms, kernel, buffers)")
    ap.add_argument("--classes", action="store_true", help="also sum both sides per class: FLOP phases / compute nodes by their FLOPs, "
                    "the rest by irforge's kernel kind / onnxruntime's op type")
    ap.add_argument("--median", action="store_true", help="medians over the rounds, both sides, instead of minima")
    ap.add_argument("--tf", action="store_true", help="keras models: irforge imports the frozen graph (TF frontend), as the zoo does; "
                    "onnxruntime still runs tf2onnx's file")
    args = ap.parse_args()
    global STAT
    if args.median:
        STAT = statistics.median
    from irforge.backends.cpu import compile_model
    from irforge.frontends.onnx import import_onnx
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    tmp = scratch("phase-vs-ort-")
    path = tmp / f"{args.model}.onnx"
    feeds = _keras(args.model, tmp, path) if args.model in KERAS_MODELS else ZOO[args.model](path)
    if args.tf and args.model in KERAS_MODELS:  # the zoo's own path for irforge: the frozen graph
        from irforge.frontends.tf.importer import import_tf

        model = import_tf(str(tmp / f"{args.model}.pb"))
    else:
        model = import_onnx(str(path))
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    compiled = compile_model(model, threads=1, cache_dir=False)
    from irforge.model import input_names

    compiled(dict(zip(input_names(model.func), feeds.values())))  # binds the inputs' addresses into the tables
    ex = compiled._executable
    phases = ex.program.phases
    calls = [(_KERNEL(ex.jit.address(p.function)), t.ctypes.data) for p, t in zip(phases, ex.tables)]
    session = _ort_session(path, tmp / "ort")
    session.run(None, feeds)  # warm-up, dropped below
    seen: list[list[float]] = [[] for _ in calls]
    for _ in range(args.runs):
        for i, (fn, table) in enumerate(calls):
            t0 = time.process_time_ns()
            fn(table, 0, 1)
            seen[i].append((time.process_time_ns() - t0) * 1e-9)
        session.run(None, feeds)
    best = [STAT(t) for t in seen]
    nodes = _ort_minima(json.loads(Path(session.end_profiling()).read_text()), args.runs)
    compiled.close()
    _report(phases, best, nodes)
    if args.classes:
        _classes(phases, best, nodes)
    if args.phases:
        for i, (p, t) in enumerate(zip(phases, best)):
            sizes = " ".join(f"{b.kind[0]}{b.nbytes // 1024}k" for b in p.args)
            print(f"{i:4d} {p.tag or 'other':10} {p.function[-20:]:20} {t * 1e3:8.3f} {p.flops / t / 1e9 if p.flops else 0:6.1f}  {sizes}")
        print("onnxruntime's nodes in run order (min ms):")
        for name, op, shape, t, _ in nodes:
            print(f"  {op[:14]:14} {t * 1e3:8.3f} {shape:44} {name[-40:]}")


def _classes(phases, best: list[float], nodes: list[tuple[str, str, str, float, int]]) -> None:  # type: ignore[no-untyped-def]
    """Both sides summed per class, to compare like with like where the two fuse differently
    (irforge's attention op against onnxruntime's FusedMatMul + Softmax + MatMul + mask nodes,
    its LayerNorm `rows` against SkipLayerNormalization, ...): GEMMs keyed by FLOPs (labelled
    with onnxruntime's output shape and K), the rest by irforge's kernel kind (the generated
    function's last word) and onnxruntime's op type."""
    irf: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    ort_by: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    shape_of_flops = {f: f"{op} {shape}" for _, op, shape, _, f in reversed(nodes) if op in COMPUTE and f}
    for p, t in zip(phases, best):
        kind = p.function.rsplit("_", 1)[-1]
        key = f"{p.tag or kind} {p.flops / 1e6:.1f} MF" if p.flops else kind
        irf[key][0] += 1
        irf[key][1] += t
    for _, op, _, t, f in nodes:
        key = f"{op} {f / 1e6:.1f} MF" if op in COMPUTE and f else op
        ort_by[key][0] += 1
        ort_by[key][1] += t
    print("irforge per class (count, summed min ms; GEMM classes with onnxruntime's node of those FLOPs):")
    for key, (n, t) in sorted(irf.items(), key=lambda kv: -kv[1][1]):
        mf = key.rsplit(" ", 2)
        flops = round(float(mf[1]) * 1e6) if len(mf) == 3 and mf[2] == "MF" else 0
        label = next((v for f, v in shape_of_flops.items() if flops and abs(f - flops) <= 0.005 * flops), "")
        print(f"  {key:28} {n:4d} {t * 1e3:9.3f}  {label}")
    print("onnxruntime per class (count, summed min ms):")
    for key, (n, t) in sorted(ort_by.items(), key=lambda kv: -kv[1][1]):
        print(f"  {key:28} {n:4d} {t * 1e3:9.3f}")


def _report(phases, best: list[float], nodes: list[tuple[str, str, str, float]]) -> None:  # type: ignore[no-untyped-def]
    units: list[tuple[str, float, float, int]] = []  # (tag, pre s, main s, flops)
    pre = 0.0
    for p, t in zip(phases, best):
        if p.flops:
            units.append((p.tag or "other", pre, t, p.flops))
            pre = 0.0
        else:
            pre += t
    compute = [n for n in nodes if n[1] in COMPUTE]
    other_ort: dict[str, float] = defaultdict(float)
    for _, op, _, t, _ in nodes:
        if op not in COMPUTE:
            other_ort[op] += t
    print(f"{'#':>3} {'ort op':10} {'output':44} {'ort ms':>7} {'irf ms':>7} {'pre':>6} {'irf/ort':>7} {'GF/s irf':>8} {'ort':>5}  tag")
    by_tag: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    pairs = pair_by_flops([u[3] for u in units], [n[4] for n in compute])
    for k, ((tag, pre_t, t, flops), j) in enumerate(zip(units, pairs)):
        irf = pre_t + t
        if j is None:
            print(f"{k:3d} {'-':10} {'(no onnxruntime node of these FLOPs)':44} {'':7} {irf * 1e3:7.3f} {pre_t * 1e3:6.3f} {'':7} {flops / t / 1e9:8.1f} {'':5}  {tag}")
            continue
        node = compute[j]
        ort_t = node[3]
        by_tag[tag][0] += ort_t
        by_tag[tag][1] += irf
        print(f"{k:3d} {node[1][:10]:10} {node[2]:44} {ort_t * 1e3:7.3f} {irf * 1e3:7.3f} {pre_t * 1e3:6.3f} {irf / ort_t:7.3f} "
              f"{flops / t / 1e9:8.1f} {flops / ort_t / 1e9:5.1f}  {tag}")
    left = [n for j, n in enumerate(compute) if j not in set(pairs)]
    if left:
        print(f"unpaired onnxruntime compute nodes: {len(left)}, {sum(n[3] for n in left) * 1e3:.3f} ms")
    print("per irforge tag (paired rows), ms ort -> irforge: "
          + ", ".join(f"{tag} {o * 1e3:.2f} -> {i * 1e3:.2f} ({i / o:.3f})" for tag, (o, i) in sorted(by_tag.items(), key=lambda kv: -kv[1][0])))
    print(f"irforge after the last FLOP phase {pre * 1e3:.3f} ms; onnxruntime's other nodes: "
          + ", ".join(f"{op} {t * 1e3:.3f}" for op, t in sorted(other_ort.items(), key=lambda kv: -kv[1])))
    total_i, total_o = sum(best), sum(n[3] for n in nodes)
    print(f"summed minima: irforge {total_i * 1e3:.2f} ms, onnxruntime {total_o * 1e3:.2f} ms, ratio {total_i / total_o:.3f}")


if __name__ == "__main__":
    main()
