"""Numbers of fuzzed models: for each variant or mutant of `irforge.testing.fuzz_new_ops`'s ONNX seeds
(and fuzz_control_flow's) that both onnxruntime and irforge accept, do irforge's outputs
(ir-run --device ref, cpu with --cpu, OpenVINO on the IR XML ir-convert writes with --openvino)
agree with onnxruntime's on the same inputs?

    python bench/fuzz_numbers.py --cases 300 --seed 1 [--cpu] [--openvino] [--show 10] [--only session5|...|session13] [--threads 1,2]

A mutant onnxruntime refuses (at load or at run) is skipped; one irforge refuses with a
clean error is counted as refused (the fuzz campaign judges those); an accepted mutant whose
outputs differ in shape or by more than --rtol/--atol (NaN matching NaN; float16 outputs at
rtol 4e-3 / atol 1e-3), from onnxruntime's with and without its graph optimisations, is a
finding: a silently wrong number, unless irforge agrees with onnx's reference implementation
(onnx.reference) where onnxruntime does not (counted as ort_off_spec), or OpenVINO differs only
where onnxruntime's value is inf or NaN (ov_nonfinite: OpenVINO's Relu(NaN) is 0). Prints a table and the
first findings, with the mutant kept under --keep for a rerun.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

# inputs that make the seeds' run-time values meaningful (else random ints in [0, 4))
GOOD_INPUTS = {"starts": np.array([1]), "ends": np.array([5]), "lengths": np.array([3, 4]), "sizes": np.array([1, 1, 6, 7]),
               "k": np.array([3]), "n": np.array(3), "batch": np.array([0, 0]), "lens0": np.array([0, 4])}


def model_inputs(model: Any, rng: np.random.Generator) -> dict[str, np.ndarray] | None:
    """Inputs for every graph input (2 for a named dim), or None for a type numpy lacks."""
    from onnx import helper

    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in initializers:
            continue
        t = vi.type.tensor_type
        if not t.HasField("shape") or not t.elem_type:
            return None
        dims = [d.dim_value if d.HasField("dim_value") else 2 for d in t.shape.dim]  # a named dim: 2
        try:
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
        except (KeyError, TypeError):
            return None
        if vi.name in GOOD_INPUTS and list(GOOD_INPUTS[vi.name].shape) == dims and dtype.kind in "iu":
            feeds[vi.name] = GOOD_INPUTS[vi.name].astype(dtype)
        elif dtype.kind == "f":
            feeds[vi.name] = rng.standard_normal(dims).astype(dtype)
        elif dtype.kind in "iu":
            feeds[vi.name] = rng.integers(0, 4, dims).astype(dtype)
        elif dtype.kind == "b":
            feeds[vi.name] = rng.random(dims) < 0.5
        else:
            return None
    return feeds


def onnxruntime_quirk(model: Any) -> bool:
    """onnxruntime writes BatchNormalization's training-mode running statistics into its input
    buffers: a mutant reading one tensor as both bias and mean/var gets a bias that has
    been overwritten (irforge matches numpy there); not a finding."""
    return any(n.op_type == "BatchNormalization" and len(set(n.input)) < len(n.input) for n in model.graph.node)


def onnxruntime_outputs(path: Path, feeds: dict[str, np.ndarray], optimize: bool = True) -> dict[str, np.ndarray] | None:
    """onnxruntime's outputs; `optimize` False: without its graph rewrites (its fusion of a
    4-bit DequantizeLinear into MatMulNBits rounds the activations: ~0.3% off the definition)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        return dict(zip(names, session.run(names, feeds)))
    except Exception:  # noqa: BLE001  (onnxruntime refuses the mutant: not a case)
        return None


def irforge_outputs(path: Path, feeds: dict[str, np.ndarray], device: str, work: Path) -> tuple[str, dict[str, np.ndarray] | str]:
    """ir-run's outputs on `device` (ref, cpu, or cpu@N: the cpu with N threads)."""
    import functools
    from unittest import mock

    import irforge.backends.cpu as cpu
    from irforge.testing.fuzz import run_tool_in_process

    backend, _, threads = device.partition("@")
    tag = device.replace("@", "")
    argv = [str(path), "--device", backend, "--output", str(work / f"{tag}.npz")]
    for name, array in feeds.items():
        np.save(work / f"{name}.npy", array)
        argv += ["--input", f"{name}={work / f'{name}.npy'}"]
    # (ir-run has no thread flag: its compile_model, looked up at the call, gets the count)
    pinned = functools.partial(cpu.compile_model, threads=int(threads)) if threads else cpu.compile_model
    with mock.patch.object(cpu, "compile_model", pinned):
        code, err, escaped = run_tool_in_process("ir-run", argv, timeout=60)
    if code != 0 or escaped:
        return ("refused" if code == 2 else "crashed"), (err.strip() or escaped or "hang")
    with np.load(work / f"{tag}.npz") as z:
        return "ran", {k: z[k] for k in z.files}


def openvino_outputs(path: Path, feeds: dict[str, np.ndarray], work: Path) -> tuple[str, dict[str, np.ndarray] | str]:
    """The model converted by ir-convert (in process) and run by OpenVINO on its CPU in f32:
    ("ran", outputs by tensor name), ("refused", irforge's error), or ("crashed", why:
    OpenVINO could not read or run an IR irforge wrote with exit 0, or the conversion broke)."""
    import openvino as ov

    from irforge.testing.fuzz import run_tool_in_process

    out = work / "ov"
    code, err, escaped = run_tool_in_process("ir-convert", ["-m", str(path), "-o", str(out)], timeout=60)
    if code != 0 or escaped:
        return ("refused" if code == 2 else "crashed"), (err.strip() or escaped or "hang")
    try:
        core = ov.Core()
        compiled = core.compile_model(core.read_model(str(out / f"{path.stem}.xml")), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        results = compiled(dict(feeds))
    except Exception as error:  # noqa: BLE001  (an IR irforge wrote that OpenVINO cannot read or run)
        return "crashed", f"OpenVINO: {type(error).__name__}: {str(error)[:300]}"
    return "ran", {name: np.asarray(results[o]) for o in compiled.outputs for name in o.get_names()}


def reference_outputs(model: Any, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
    """onnx's own reference implementation of the spec (the tie-breaker where onnxruntime
    departs from it: Resize antialias with align_corners), or None where it cannot run."""
    from onnx.reference import ReferenceEvaluator

    try:
        with np.errstate(all="ignore"):
            outputs = ReferenceEvaluator(model).run(None, feeds)
    except Exception:  # noqa: BLE001  (ops or forms it lacks)
        return None
    return {o.name: np.asarray(v) for o, v in zip(model.graph.output, outputs)}


def differs(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str:
    if got.shape != want.shape:
        return f"shape {list(got.shape)} vs onnxruntime's {list(want.shape)}"
    if np.float16 in (got.dtype, want.dtype):  # a float16 result: a few of its ulps
        rtol, atol = max(rtol, 4e-3), max(atol, 1e-3)
    if want.dtype.kind in "iub" or got.dtype.kind in "iub":
        bad = np.asarray(got != want)
        return f"{int(bad.sum())} of {want.size} values differ" if bad.any() else ""
    g, w = got.astype(np.float64), want.astype(np.float64)
    # inf and NaN agree: an infinite constant gives either, by the order of the arithmetic
    close = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True) | (~np.isfinite(g) & ~np.isfinite(w))
    if close.all():
        return ""
    with np.errstate(invalid="ignore"):
        worst = float(np.nanmax(np.where(close, 0, np.abs(g - w))))
    return f"{int((~close).sum())} of {want.size} values differ (max abs error {worst:.3g})"


def only_where_not_finite(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> bool:
    """Whether `got` differs from `want` only where `want` is inf or NaN: OpenVINO's CPU plugin
    computes Relu(NaN) as 0 (and its max / min alike), so a NaN or inf of a degenerate input
    may come out finite there; irforge's ref and cpu are judged on those values, not OpenVINO."""
    if got.shape != want.shape or want.dtype.kind != "f":
        return False
    g, w = got.astype(np.float64), want.astype(np.float64)
    close = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True) | (~np.isfinite(g) & ~np.isfinite(w))
    return bool(np.all(close | ~np.isfinite(w)))


def main() -> None:
    import onnx

    from irforge.testing import fuzz_control_flow, fuzz_new_ops, fuzz_session5_ops, fuzz_session6_ops, fuzz_session7_ops, fuzz_session8_ops, fuzz_session9_ops, fuzz_session10_ops, fuzz_session11_ops, fuzz_session12_ops, fuzz_session13_ops

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cpu", action="store_true", help="also run --device cpu")
    p.add_argument("--threads", default="", help="with --cpu: run the cpu device with each of these thread counts (1,2), "
                   "each a device of its own (cpu@1, cpu@2); default: ir-run's (the machine's cores)")
    p.add_argument("--openvino", action="store_true", help="also run OpenVINO (f32) on the IR XML ir-convert writes")
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--show", type=int, default=10)
    p.add_argument("--only", default="", choices=["", "session5", "session6", "session7", "session8", "session9", "session10", "session11", "session12", "session13"],
                   help="session5 .. session13: only irforge.testing.fuzz_session5_ops's .. _session13_ops's seeds")
    p.add_argument("--keep", default="fuzz-numbers-findings", help="folder for the mutants of findings")
    args = p.parse_args()
    rng = random.Random(f"numbers-{args.seed}")
    seeds = {**fuzz_new_ops.onnx_seeds(), **{k: v for k, v in fuzz_control_flow.onnx_seeds().items() if k in ("attn.onnx", "if.onnx", "loop.onnx")}}
    if args.only:
        only = {"session5": fuzz_session5_ops.SEEDS, "session6": fuzz_session6_ops.SEEDS, "session7": fuzz_session7_ops.SEEDS,
                "session8": fuzz_session8_ops.SEEDS, "session9": fuzz_session9_ops.SEEDS, "session10": fuzz_session10_ops.SEEDS, "session11": fuzz_session11_ops.SEEDS,
                "session12": fuzz_session12_ops.SEEDS, "session13": fuzz_session13_ops.SEEDS}[args.only]
        seeds = {k: v for k, v in seeds.items() if k in only}
    counts = dict.fromkeys(("cases", "ort_refuses", "no_inputs", "refused", "crashed", "agree", "ort_off_spec", "ov_nonfinite", "differ"), 0)
    findings: list[str] = []
    cpus = [f"cpu@{t}" for t in args.threads.split(",")] if args.threads else ["cpu"]
    devices = ["ref"] + (cpus if args.cpu else []) + (["openvino"] if args.openvino else [])
    with tempfile.TemporaryDirectory(prefix="irforge-numbers-") as tmp:
        for i in range(args.cases):
            name = rng.choice(sorted(seeds))
            draw = rng.random()
            if draw < 0.7:  # variants onnxruntime runs; then the fuzz mutators' edits
                data = fuzz_new_ops.vary_onnx_new_ops(seeds[name], rng)
            else:
                mutate = fuzz_session7_ops.mutate_onnx_session7 if name in {**fuzz_session7_ops.SEEDS, **fuzz_session8_ops.SEEDS, **fuzz_session9_ops.SEEDS, **fuzz_session10_ops.SEEDS, **fuzz_session11_ops.SEEDS, **fuzz_session12_ops.SEEDS, **fuzz_session13_ops.SEEDS} else fuzz_new_ops.mutate_onnx_new_ops
                data = mutate(seeds[name], rng) if draw < 0.95 else seeds[name]
            counts["cases"] += 1
            work = Path(tmp) / str(i)
            work.mkdir()
            path = work / name
            path.write_bytes(data)
            try:
                model = onnx.load_from_string(data)
            except Exception:  # noqa: BLE001
                counts["ort_refuses"] += 1
                continue
            feeds = model_inputs(model, np.random.default_rng(i))
            if feeds is None:
                counts["no_inputs"] += 1
                continue
            with contextlib.redirect_stderr(io.StringIO()):
                want = onnxruntime_outputs(path, feeds)
            if want is None or onnxruntime_quirk(model):
                counts["ort_refuses"] += 1
                continue
            verdicts = []
            for device in devices:
                kind, got = openvino_outputs(path, feeds, work) if device == "openvino" else irforge_outputs(path, feeds, device, work)
                if kind != "ran":
                    verdicts.append(kind)
                    if kind == "crashed":
                        findings.append(f"{name} #{i} {device}: crashed: {str(got)[:300]}")
                    continue
                assert isinstance(got, dict)
                wrong = {k: why for k in want if k in got and (why := differs(got[k], want[k], args.rtol, args.atol))}
                if wrong and (plain := onnxruntime_outputs(path, feeds, optimize=False)) is not None:  # its rewrites' rounding?
                    wrong = {k: why for k in wrong if k in plain and (why := differs(got[k], plain[k], args.rtol, args.atol))}
                if wrong and (spec := reference_outputs(model, feeds)) is not None and all(
                        k in spec and not differs(got[k], spec[k], args.rtol, args.atol) for k in wrong):
                    verdicts.append("ort_off_spec")  # irforge agrees with onnx's reference, onnxruntime does not
                    findings.append(f"{name} #{i} {device}: onnxruntime off onnx's reference, irforge on it: {wrong}")
                elif wrong and device == "openvino" and all(only_where_not_finite(got[k], want[k], args.rtol, args.atol) for k in wrong):
                    verdicts.append("ov_nonfinite")  # OpenVINO's own arithmetic on inf / NaN (its Relu(NaN) is 0)
                    findings.append(f"{name} #{i} openvino: only where onnxruntime is inf / NaN: {wrong}")
                elif wrong:
                    verdicts.append("differ")
                    findings.append(f"{name} #{i} {device}: {wrong}")
                else:
                    verdicts.append("agree")
            kind = next((k for k in ("crashed", "differ", "ort_off_spec", "ov_nonfinite", "refused") if k in verdicts), "agree")
            counts[kind] += 1
            if (i + 1) % 50 == 0:  # a long run stopped early still reports
                print(f"after {i + 1} cases: {counts}", flush=True)
            if kind in ("crashed", "differ"):
                keep = Path(args.keep) / f"{args.seed}-{i}"
                keep.mkdir(parents=True, exist_ok=True)
                shutil.copytree(work, keep, dirs_exist_ok=True)
    print("| " + " | ".join(counts) + " |")
    print("|---" * len(counts) + "|")
    print("| " + " | ".join(str(v) for v in counts.values()) + " |")
    for line in findings[: args.show]:
        print(line)


if __name__ == "__main__":
    main()
