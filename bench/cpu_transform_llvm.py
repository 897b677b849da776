"""ResNet-50's Winograd transform modules compiled alone: LLVM CPU time per kind (parse, optimise,
emit, as `llvm_worker.compile_one`), alternating settings, min and median over rounds.

Outside CI (the zoo venv):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_transform_llvm.py \
        '[("default", {}, {}, {}), ("O3", {}, {"winograd_in": 3, "winograd_out": 3}, {})]' 6

argv[1]: a list of (label, {winograd_transforms attribute: value}, {kind: LLVM opt level},
{kind: code-generation level}); kinds not named take O3 / emit level 1; argv[2]: rounds.
"""
import os, statistics, sys, time
from pathlib import Path
sys.path.insert(0, "bench")
import llvmlite.binding as llvm
from llvmlite import ir
from irforge.backends.cpu import llvm_worker as lw
from irforge.backends.cpu.codegen import winograd_transforms as wt
from irforge.backends.cpu.ops import winograd as ow
from zoo_latency import prepare, scratch
from irforge.backends.cpu import compile_model
specs = []
orig_in, orig_out = ow.input_transform_kernel, ow.output_transform_kernel
ow.input_transform_kernel = lambda m, s, n: (specs.append(("winograd_in", s)), orig_in(m, s, n))[1]
ow.output_transform_kernel = lambda m, s, n: (specs.append(("winograd_out", s)), orig_out(m, s, n))[1]
wd = scratch("transform-llvm-")
model, _, _ = prepare("resnet50", wd)
compile_model(model, threads=1, cache_dir=False).close()
print(len(specs), "transform modules", flush=True)
lw.init_llvm()
triple, cpu, feats = llvm.get_process_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
configs = eval(sys.argv[1]); rounds = int(sys.argv[2])
res = {c[0]: {"winograd_in": [], "winograd_out": []} for c in configs}
size = {}
for r in range(rounds):
    for label, sets, opts, emits in configs:
        saved = {k: getattr(wt, k) for k in sets}
        for k, v in sets.items(): setattr(wt, k, v)
        tot = {"winograd_in": 0.0, "winograd_out": 0.0}; sz = {"winograd_in": 0, "winograd_out": 0}
        for kind, spec in specs:
            m = ir.Module("m"); m.triple = triple
            (orig_in if kind == "winograd_in" else orig_out)(m, spec, "k"); text = str(m)
            unroll = getattr(m, "unroll", True)
            tm = lw.target_machine(triple, cpu, feats, opt=emits.get(kind, 1))
            t = time.process_time(); lw.compile_one(tm, text, opts.get(kind, 3), unroll); tot[kind] += time.process_time() - t
            sz[kind] += len(text)
        for k, v in saved.items(): setattr(wt, k, v)
        for kind in tot: res[label][kind].append(tot[kind])
        size[label] = sz
for label in res:
    print(f"{label:28s} " + "  ".join(f"{k} min {min(v):.3f} med {statistics.median(v):.3f} s {size[label][k]/1024:.0f} KiB" for k, v in res[label].items()), flush=True)
