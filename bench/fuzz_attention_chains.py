"""Random masked-fill chains before a softmax attention: softmax(chain(q k^T)) @ v with one to
four steps of Where(keep | drop, s, fill) (fill float32's min, -inf, -1e4, -1e9, -1e30;
constant or run-time conditions, per row or padding, rows masked throughout), Mul / Div by a
constant, Add of a run-time mask (0, -1, float32's min, +-1e30), Max with -1e30 .. float32's
min, Clip(x, min[, max]); q scaled by 0.35, 1 or 1e37; inf / -inf / NaN / 1e38 in q or k.
ref, cpu@1 and cpu@2 (the pipeline applied: fused where a pattern takes it) against
onnxruntime; with --openvino, OpenVINO (f32) on the IR XML written from the fused model too
(`ov`); prints each case that differs and the counts.

    python bench/fuzz_attention_chains.py SEED CASES [--openvino]
"""
import argparse, random, sys, tempfile
from pathlib import Path
import numpy as np, onnx
from onnx import TensorProto as T, helper
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from irforge.backends.reference import run
from irforge.backends.cpu import compile_model
from tests.helpers import ort_session_run
FMIN = float(np.finfo(np.float32).min)

def make(r):
    nodes = [helper.make_node("Mul", ["q", "c"], ["qs"]), helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["qs", "kt"], ["s"])]
    inits = [helper.make_tensor("c", T.FLOAT, [], [r.choice([0.35, 1.0, 1e37])])]
    inputs = [helper.make_tensor_value_info(n, T.FLOAT, [1, 2, 4 if n == "q" else 6, 8]) for n in "qkv"]
    last, desc, i = "s", [], 0
    const_keep = r.random() < 0.4
    keep_shape = r.choice([[1, 1, 4, 6], [1, 1, 1, 6]])
    steps = r.randint(1, 4)
    wheres = 0
    for _ in range(steps):
        kind = r.choice(["where", "where", "mul", "div", "add", "max", "clip", "clip2"])
        i += 1; out = f"x{i}"
        if kind == "where" and wheres < 2:
            wheres += 1
            fill = r.choice([FMIN, -np.inf, -1e4, -1e9, -1e30])
            inits.append(helper.make_tensor(f"f{i}", T.FLOAT, [], [fill]))
            drop = r.random() < 0.3
            cname = f"keep{i}"
            if const_keep:
                kk = np.random.default_rng(i).random(keep_shape) < 0.6
                if r.random() < 0.5: kk[..., 0] = True if not drop else False
                inits.append(onnx.numpy_helper.from_array(kk, cname))
            else:
                inputs.append(helper.make_tensor_value_info(cname, T.BOOL, keep_shape))
            nodes.append(helper.make_node("Where", [cname, f"f{i}", last] if drop else [cname, last, f"f{i}"], [out]))
            desc.append(f"where({fill:.3g},{'drop' if drop else 'keep'})")
        elif kind in ("mul", "div"):
            c = r.choice([3.0, 0.1, 0.5, 2.0, 10.0, 0.125])
            inits.append(helper.make_tensor(f"m{i}", T.FLOAT, [], [c]))
            nodes.append(helper.make_node("Mul" if kind == "mul" else "Div", [last, f"m{i}"], [out])); desc.append(f"{kind}{c}")
        elif kind == "add":
            inputs.append(helper.make_tensor_value_info(f"a{i}", T.FLOAT, [1, 1, 1, 6]))
            nodes.append(helper.make_node("Add", [last, f"a{i}"], [out])); desc.append("add")
        elif kind == "max":
            c = r.choice([FMIN, -1e30, -1e38])
            inits.append(helper.make_tensor(f"m{i}", T.FLOAT, [], [c]))
            nodes.append(helper.make_node("Max", [last, f"m{i}"], [out])); desc.append(f"max{c:.3g}")
        elif kind == "clip":
            c = r.choice([FMIN, -1e30])
            inits.append(helper.make_tensor(f"m{i}", T.FLOAT, [], [c]))
            nodes.append(helper.make_node("Clip", [last, f"m{i}"], [out])); desc.append(f"clip{c:.3g}")
        else:
            inits += [helper.make_tensor(f"m{i}", T.FLOAT, [], [FMIN]), helper.make_tensor(f"n{i}", T.FLOAT, [], [-FMIN])]
            nodes.append(helper.make_node("Clip", [last, f"m{i}", f"n{i}"], [out])); desc.append("clip2")
        else_ = None
        if nodes[-1].output[0] != out:
            continue
        last = out
    nodes += [helper.make_node("Softmax", [last], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
    g = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", T.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]); m.ir_version = 8
    return m, desc

def feeds_for(m, r, rng):
    f = {}
    for vi in m.graph.input:
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if vi.type.tensor_type.elem_type == T.BOOL:
            a = rng.random(shape) < 0.6
            if r.random() < 0.5: a[..., 2 % shape[-2] if len(shape) > 1 else 0, :] = False
            f[vi.name] = a
        elif vi.name.startswith("a"):
            f[vi.name] = rng.choice(np.array([0, -1, FMIN, -1e30, 1e30, 0.5], np.float32), shape)
        else:
            f[vi.name] = rng.standard_normal(shape).astype(np.float32)
    poison = r.choice([None, np.inf, -np.inf, np.nan, 1e38])
    if poison is not None:
        which = r.choice(["q", "k"])
        if which == "k": f["k"][0, :, r.randrange(6), r.randrange(8)] = poison
        else: f["q"][0, :, r.randrange(4), r.randrange(8)] = poison
    return f, poison

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("seed", type=int)
ap.add_argument("cases", type=int)
ap.add_argument("--openvino", action="store_true", help="also OpenVINO on the written IR XML")
args = ap.parse_args()
seed, cases = args.seed, args.cases
folder = Path(tempfile.mkdtemp(prefix="fuzz-chains-")) if args.openvino else None
r = random.Random(seed); rng = np.random.default_rng(seed)
counts = {}
for case in range(cases):
    m, desc = make(r)
    f, poison = feeds_for(m, r, rng)
    try:
        want = ort_session_run(m, f)[0]
    except Exception as e:
        counts["ort_fail"] = counts.get("ort_fail", 0) + 1; continue
    mod = import_onnx(m); apply_pipeline(mod.module, DEFAULT_PIPELINE)
    fused = any(op.name == "nn.scaled_dot_product_attention" for op in mod.func.body.block.ops)
    res = {}
    with np.errstate(all="ignore"):
        res["ref"] = run(mod, f)["y"]
        for t in (1, 2):
            c = compile_model(mod, threads=t, cache_dir=False); res[f"cpu{t}"] = c(f)["y"]; c.close()
        if folder is not None:
            from irforge.backends.ir_xml import write_ir_xml
            from tests.backends.ir_xml_support import run_openvino
            xml, _ = write_ir_xml(mod, folder / "m.xml")
            res["ov"] = run_openvino(xml, f)["y"]
    bad = {k: int((~np.isclose(v, want, rtol=1e-4, atol=1e-5, equal_nan=True)).sum()) for k, v in res.items()}
    key = "agree" if not any(bad.values()) else "DIFFER"
    counts[key] = counts.get(key, 0) + 1
    if key == "DIFFER":
        print(f"#{case} fused={fused} poison={poison} {desc} {bad}", flush=True)
print(counts)
if folder is not None:
    import shutil
    shutil.rmtree(folder, ignore_errors=True)
