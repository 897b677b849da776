"""onnxruntime's whole-run CPU time against the sum of its own node minima / medians, one process
(the counterpart of `cpu_run_gap.py` for irforge: does a whole run sit over the node-minima sum there too?).

Outside CI (the zoo venv):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/ort_run_gap.py regnet_x_1_6gf 41

Node times are the profiler's wall times (one intra-op thread); the first (warm-up) run is dropped.
"""
import json, statistics, sys, time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cpu_phase_vs_ort import _ort_session
from zoo_latency import ZOO, scratch
name, runs = sys.argv[1], int(sys.argv[2])
tmp = scratch("ort-gap-")
path = tmp / f"{name}.onnx"
feeds = ZOO[name](path)
s = _ort_session(path, tmp / "ort")
s.run(None, feeds)
cpu = []
for _ in range(runs):
    c0 = time.process_time_ns(); s.run(None, feeds); cpu.append((time.process_time_ns() - c0) * 1e-6)
ev = json.loads(Path(s.end_profiling()).read_text())
nodes = defaultdict(list); model_run = []
for e in ev:
    if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
        nodes[e["name"]].append(e["dur"] * 1e-3)
    if e.get("name") == "model_run":
        model_run.append(e["dur"] * 1e-3)
# drop the warm-up run: keep each node's last `runs` events
nodes = {k: v[-runs:] for k, v in nodes.items()}
mins = sum(min(v) for v in nodes.values()); meds = sum(statistics.median(v) for v in nodes.values())
rounds = [sum(v[r] for v in nodes.values()) for r in range(runs)]
print(f"{name} onnxruntime: {len(nodes)} nodes, {runs} runs; whole CPU min {min(cpu):.2f} median {statistics.median(cpu):.2f} ms; "
      f"model_run wall min {min(model_run[-runs:]):.2f} median {statistics.median(model_run[-runs:]):.2f}; "
      f"node wall: sum of minima {mins:.2f}, of medians {meds:.2f}; round sums min {min(rounds):.2f} median {statistics.median(rounds):.2f}")
