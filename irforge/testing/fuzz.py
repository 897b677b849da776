"""Seeded fuzzing of irforge's tools: valid seed inputs of every format, deterministic
mutators, and a runner that classifies each run the way a security review would.

A case is one tool invocation on mutated files placed in `ROOT/in`, writing to `ROOT/out`;
`ROOT/secret.bin` (a marker outside both) must never be copied into an output. A run is
`clean` when it exits 0 or 2 with at most one line on stderr; anything else is counted by
kind: `internal` (exit 1, "internal error"), `traceback`, `hang` (past the time limit),
`partial` (a failed run left files in out/, or temporary files anywhere), `outside` (a file
appeared outside in/ and out/, or the secret's bytes in an output), `multiline` (an error of
more than one line or without a code). `tests/trust/test_fuzz.py` runs a few hundred cases in
process; `bench/fuzz_campaign.py` runs many more, each in its own process. Seeds and
structure-aware mutators of MXNet, Kaldi, .pbtxt and model-level ONNX/TF edits live in
`fuzz_formats.py`; bad flags for every tool (ir-convert, ir-run, ir-opt, ir-extgen,
ir-conformance) in `fuzz_flags.py`; If / Loop / While models (ONNX, TF, IR XML, .mlir), run-time
Reshape, quantized and attention models and their mutators in `fuzz_control_flow.py`.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from irforge.testing import fuzz_control_flow, fuzz_formats, fuzz_new_ops, fuzz_session5_ops, fuzz_session6_ops, fuzz_session7_ops, fuzz_session8_ops, fuzz_session9_ops, fuzz_session10_ops, fuzz_session11_ops, fuzz_session12_ops, fuzz_session13_ops
from irforge.testing.fuzz_flags import Case, flag_case, run_case_argv, tool_case

SECRET = b"IRFORGE-FUZZ-SECRET-7f3a9c"
TOOLS = {"ir-convert": "irforge.tools.ir_convert", "ir-opt": "irforge.tools.ir_opt", "ir-run": "irforge.tools.ir_run",
         "ir-extgen": "irforge.tools.ir_extgen", "ir-conformance": "irforge.tools.ir_conformance"}
FORMATS = ("onnx", "caffe", "tf", "pbtxt", "mxnet", "kaldi", "xml", "mlir", "flags", "run", "tools")


@dataclass
class Outcome:
    kind: str  # ok, clean, internal, traceback, hang, partial, outside, multiline
    returncode: int | None
    stderr: str
    case: Case


# -- seed inputs --------------------------------------------------------------------------
def seed_files(folder: Path) -> dict[str, dict[str, bytes]]:
    """One small valid input per format: file name -> bytes."""
    from irforge.testing.onnx_models import resnet

    folder.mkdir(parents=True, exist_ok=True)
    model = resnet(blocks=(1,), width=4, size=8)
    onnx_bytes = model.SerializeToString()
    (folder / "m.onnx").write_bytes(onnx_bytes)
    seeds = {"onnx": {"m.onnx": onnx_bytes}}
    for emit in ("xml", "mlir"):
        run_tool_in_process("ir-convert", ["-m", str(folder / "m.onnx"), "-o", str(folder), "--emit", emit])
    seeds["xml"] = {"m.xml": (folder / "m.xml").read_bytes(), "m.bin": (folder / "m.bin").read_bytes()}
    seeds["mlir"] = {"m.mlir": (folder / "m.mlir").read_bytes(), "m.weights": (folder / "m.weights").read_bytes()}
    seeds["caffe"] = _caffe_seed()
    seeds["tf"] = _tf_seed()
    seeds["pbtxt"] = {"m.pbtxt": fuzz_formats.pbtxt_seed(seeds["tf"]["m.pb"])}
    seeds["mxnet"] = fuzz_formats.mxnet_seed()
    seeds["kaldi"] = fuzz_formats.kaldi_seeds()
    _control_flow_seeds(folder, seeds)
    return seeds


def _control_flow_seeds(folder: Path, seeds: dict[str, dict[str, bytes]]) -> None:
    """If / Loop, run-time Reshape, quantized and attention models (ONNX), While / If (TF),
    and the IR XML and .mlir irforge writes of the control-flow ones, beside the first seeds."""
    for name, data in fuzz_control_flow.onnx_seeds().items():
        seeds["onnx"][name] = data
        (folder / name).write_bytes(data)
    for stem in fuzz_control_flow.IR_SEEDS:
        for emit, (model, weights) in (("xml", (".xml", ".bin")), ("mlir", (".mlir", ".weights"))):
            run_tool_in_process("ir-convert", ["-m", str(folder / f"{stem}.onnx"), "-o", str(folder), "--emit", emit])
            for suffix in (model, weights):
                if (folder / (stem + suffix)).exists():  # no weights file when every constant is inline
                    seeds[emit][stem + suffix] = (folder / (stem + suffix)).read_bytes()
    seeds["tf"].update(fuzz_control_flow.tf_seeds())
    _new_op_seeds(folder, seeds)


def _new_op_seeds(folder: Path, seeds: dict[str, dict[str, bytes]]) -> None:
    """GridSample, run-time Slice / Split / Resize, DFT, Col2Im, compositions, detection heads,
    near-attention and outer-read models (ONNX), their IR XML and .mlir, and OpenVINO's IR of
    DFT / IDFT / RDFT / Col2Im (`fuzz_new_ops`)."""
    for name, data in fuzz_new_ops.onnx_seeds().items():
        seeds["onnx"][name] = data
        (folder / name).write_bytes(data)
    for stem in fuzz_new_ops.IR_SEEDS:
        for emit, (model, weights) in (("xml", (".xml", ".bin")), ("mlir", (".mlir", ".weights"))):
            run_tool_in_process("ir-convert", ["-m", str(folder / f"{stem}.onnx"), "-o", str(folder), "--emit", emit])
            for suffix in (model, weights):
                if (folder / (stem + suffix)).exists():
                    seeds[emit][stem + suffix] = (folder / (stem + suffix)).read_bytes()
    seeds["xml"].update(fuzz_new_ops.openvino_ir_seeds())


def _caffe_seed() -> dict[str, bytes]:
    from irforge.frontends.caffe.schema import message_classes

    prototxt = (
        'name: "n"\ninput: "data"\ninput_shape { dim: 1 dim: 3 dim: 8 dim: 8 }\n'
        'layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"\n'
        "  convolution_param { num_output: 4 kernel_size: 3 pad: 1 } }\n"
        'layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }\n'
        'layer { name: "pool" type: "Pooling" bottom: "conv" top: "pool" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }\n'
    )
    net = message_classes()["NetParameter"]()
    layer = net.layer.add()
    layer.name = "conv"
    rng = np.random.default_rng(0)
    for shape in ((4, 3, 3, 3), (4,)):
        blob = layer.blobs.add()
        blob.shape.dim.extend(shape)
        blob.data.extend(rng.standard_normal(shape).astype(np.float32).ravel().tolist())
    return {"m.prototxt": prototxt.encode(), "m.caffemodel": net.SerializeToString()}


def _tf_seed() -> dict[str, bytes]:
    from irforge.testing.tf_models import keras_resnet

    graph, _ = keras_resnet(size=8, width=4)
    return {"m.pb": graph.SerializeToString()}


# -- mutators ------------------------------------------------------------------------------
NASTY_NUMBERS = [b"-1", b"0", b"99999999999999999999", b"1000000000000", b"nan", b"inf", b"-0", b"1e309", b"-2147483649", b"4294967296"]
NASTY_TEXT = [b'"', b"\n", b"\x00", b"\xff\xfe", b"../../secret.bin", b"/etc/hostname", b"{" * 600, b"[" * 600, b"<!--",
              b"a\nb", b"\\q", b"&ent;", b"]]>"]


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """One to three structural-agnostic edits of binary data."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        if not out:
            out += bytes([rng.randrange(256)])
        choice = rng.randrange(6)
        at = rng.randrange(len(out))
        if choice == 0:  # flip bytes
            for _ in range(rng.randint(1, 8)):
                out[rng.randrange(len(out))] = rng.randrange(256)
        elif choice == 1:  # truncate
            del out[at:]
        elif choice == 2:  # insert random bytes
            out[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif choice == 3:  # duplicate a chunk
            n = rng.randint(1, 64)
            out[at:at] = out[at : at + n]
        elif choice == 4:  # extreme varint / integer
            out[at : at + 8] = rng.choice([b"\xff" * 8, b"\x80" * 8, b"\x00" * 8, b"\xff\xff\xff\x7f"])
        else:  # zero a region
            n = rng.randint(1, 32)
            out[at : at + n] = bytes(len(out[at : at + n]))
    return bytes(out)


def mutate_text(data: bytes, rng: random.Random) -> bytes:
    """Edits of textual inputs (prototxt, XML, .mlir) that keep most of the structure."""
    out = data
    for _ in range(rng.randint(1, 3)):
        choice = rng.randrange(5)
        numbers = [m.span() for m in re.finditer(rb"-?\d+(\.\d+)?", out)]
        if choice == 0 and numbers:
            a, b = rng.choice(numbers)
            out = out[:a] + rng.choice(NASTY_NUMBERS) + out[b:]
        elif choice == 1:
            at = rng.randrange(len(out) + 1)
            out = out[:at] + rng.choice(NASTY_TEXT) + out[at:]
        elif choice == 2 and out:
            lines = out.split(b"\n")
            i = rng.randrange(len(lines))
            if rng.random() < 0.5:
                del lines[i]
            else:
                lines.insert(rng.randrange(len(lines) + 1), lines[i])
            out = b"\n".join(lines)
        elif choice == 3 and out:  # cut a run of characters
            at = rng.randrange(len(out))
            out = out[:at] + out[at + rng.randint(1, 40) :]
        else:
            names = [m.span(1) for m in re.finditer(rb'"([A-Za-z_][\w./]*)"', out)]
            if names:
                a, b = rng.choice(names)
                out = out[:a] + rng.choice([b"a\\nb", b"../x", b"", b"x" * 2000, b"\xc3\x28"]) + out[b:]
    return out


MAIN_FILE = {"onnx": "m.onnx", "caffe": "m.caffemodel", "tf": "m.pb", "pbtxt": "m.pbtxt", "mxnet": "m-0000.params",
             "xml": "m.xml", "mlir": "m.mlir"}
COMPANION = {".xml": ".bin", ".mlir": ".weights"}
CONTROL_FLOW = {"onnx": fuzz_control_flow.mutate_onnx_control_flow, "tf": fuzz_control_flow.mutate_tf_control_flow,
                "xml": fuzz_control_flow.mutate_ir_control_flow, "mlir": fuzz_control_flow.mutate_mlir_control_flow}
STRUCTURED = {"m.onnx": fuzz_formats.mutate_onnx, "m.pb": fuzz_formats.mutate_tf, "m-symbol.json": fuzz_formats.mutate_mxnet_symbol}
TEXTUAL = (".prototxt", ".xml", ".mlir", ".pbtxt", ".json")


def mutate_file(name: str, data: bytes, rng: random.Random) -> bytes:
    """A structured edit (half the time, where the format has one), else a textual or a
    byte-level one."""
    if name in STRUCTURED and rng.random() < 0.5:
        return STRUCTURED[name](data, rng)
    if name.endswith(TEXTUAL) or (name.endswith((".nnet", ".mdl", ".raw")) and not data.startswith(b"\0B")):
        if name.endswith((".nnet", ".mdl", ".raw")) and rng.random() < 0.5:
            return fuzz_formats.mutate_kaldi_text(data, rng)
        if rng.random() < 0.8:
            return mutate_text(data, rng)
    return mutate_bytes(data, rng)


FOCUSES = ("new-ops", "session5", "session6", "session7", "session8", "session9", "session10", "session11", "session12", "session13")
SESSION7 = {*fuzz_session7_ops.SEEDS, *(stem + suffix for stem in fuzz_session7_ops.IR_SEEDS for suffix in (".xml", ".mlir"))}
SESSION8 = {*fuzz_session8_ops.SEEDS, *(stem + suffix for stem in fuzz_session8_ops.IR_SEEDS for suffix in (".xml", ".mlir"))}
SESSION9 = {*fuzz_session9_ops.SEEDS, *(stem + suffix for stem in fuzz_session9_ops.IR_SEEDS for suffix in (".xml", ".mlir"))}
SESSION10 = {*fuzz_session10_ops.SEEDS, *(stem + suffix for stem in fuzz_session10_ops.IR_SEEDS for suffix in (".xml", ".mlir"))}
SESSION11 = {*fuzz_session11_ops.SEEDS, *(stem + suffix for stem in fuzz_session11_ops.IR_SEEDS for suffix in (".xml", ".mlir"))}
SESSION12 = {*fuzz_session12_ops.SEEDS, *(stem + suffix for stem in fuzz_session12_ops.IR_SEEDS for suffix in (".xml", ".mlir"))}
SESSION13 = {*fuzz_session13_ops.SEEDS, *(stem + suffix for stem in fuzz_session13_ops.IR_SEEDS for suffix in (".xml", ".mlir"))}


def _new_op_seed(fmt: str, name: str) -> bool:
    stem = Path(name).stem
    return name in fuzz_new_ops.ONNX_SEEDS if fmt == "onnx" else stem in fuzz_new_ops.IR_SEEDS or (fmt == "xml" and stem == "spec")


def file_case(fmt: str, rng: random.Random, seeds: dict[str, dict[str, bytes]], focus: str = "") -> Case:
    """A mutated input of `fmt`; focus "new-ops" picks only fuzz_new_ops's seeds, edited by
    its structured mutators 80% of the time."""
    files = dict(seeds[fmt])
    shape: list[str] = []
    if fmt == "kaldi":
        main = rng.choice(fuzz_formats.KALDI_SEEDS)
        files = {main: files[main]}
        shape = ["--input_shape", f"[13,{fuzz_formats.KALDI_FEATURES[main]}]"]
    else:
        main = MAIN_FILE[fmt]
    others = sorted(n for n in files if n != main and Path(n).suffix == Path(main).suffix)
    if focus in FOCUSES and fmt in ("onnx", "xml", "mlir"):
        only = {"session5": fuzz_session5_ops.SEEDS, "session6": fuzz_session6_ops.SEEDS, "session7": SESSION7, "session8": SESSION8,
                "session9": SESSION9, "session10": SESSION10, "session11": SESSION11, "session12": SESSION12, "session13": SESSION13}.get(focus)
        others = [n for n in others if _new_op_seed(fmt, n) and (only is None or n in only)]
    if others and (focus in FOCUSES or rng.random() < 0.5):  # a control-flow / quantized / attention seed (fuzz_control_flow)
        main = rng.choice(others)
        stem, suffix = Path(main).stem, Path(main).suffix
        files = {n: files[n] for n in (main, stem + COMPANION.get(suffix, suffix)) if n in files}
        target = rng.choice(sorted(files))
        structured = CONTROL_FLOW.get(fmt) if target == main else None
        if target == main and fmt in ("onnx", "xml") and _new_op_seed(fmt, main):
            structured = fuzz_new_ops.mutate_onnx_new_ops if fmt == "onnx" else fuzz_new_ops.mutate_ir_new_ops
        if target == main and main in SESSION7:  # declared types, 4-bit tensors; packed i4 / u4 constants of the IR
            structured = {"onnx": fuzz_session7_ops.mutate_onnx_session7, "xml": fuzz_session7_ops.mutate_ir_packed}.get(fmt, structured)
        if target == main and fmt == "onnx" and (main in SESSION8 or main in SESSION9 or main in SESSION10):  # declared types, initializers' dims / types / data (pads, sizes)
            structured = fuzz_session7_ops.mutate_onnx_session7
        share = 0.8 if focus else 0.6
        files[target] = structured(files[target], rng) if structured and rng.random() < share else mutate_file(target, files[target], rng)
    else:
        files = {n: d for n, d in files.items() if n not in others and not n.startswith(tuple(Path(o).stem + "." for o in others))}
        target = rng.choice(sorted(files))
        files[target] = mutate_file(target, files[target], rng)
    tool = rng.choice(["ir-convert", "ir-convert", "ir-run"] + (["ir-opt"] if fmt in ("mlir", "xml") else []))
    if fmt == "kaldi":
        tool = "ir-convert"
    if tool == "ir-convert":
        argv = ["-m", f"IN/{main}", "-o", "OUT", *shape] + (["--emit", "mlir"] if rng.random() < 0.3 else [])
    elif tool == "ir-opt":
        argv = [f"IN/{main}", "-p", "infer-shapes,canonicalize", "-o", "OUT/o.mlir"]
    else:
        argv = [f"IN/{main}", "--output", "OUT/o.npz"]
        if main != MAIN_FILE.get(fmt) and rng.random() < 0.5:  # host segments of dynamic dims, host steps
            argv += ["--device", "cpu"]
    return Case(tool, argv, files, f"{fmt}:{target}")


def make_cases(fmt: str, count: int, seed: int, seeds: dict[str, dict[str, bytes]], focus: str = "") -> list[Case]:
    rng = random.Random(f"{fmt}-{seed}")
    if fmt == "flags":
        return [flag_case(rng, seeds) for _ in range(count)]
    if fmt == "run" and focus == "new-ops":
        return [fuzz_new_ops.run_case(rng, seeds) for _ in range(count)]
    if fmt in ("run", "tools"):
        return [tool_case(fmt, rng, seeds) for _ in range(count)]
    return [file_case(fmt, rng, seeds, focus) for _ in range(count)]


# -- running and judging ---------------------------------------------------------------------
class _Timeout(KeyboardInterrupt):
    """Raised by the alarm in an in-process run (KeyboardInterrupt: tools let it through)."""


def run_tool_in_process(tool: str, argv: list[str], timeout: float = 10.0) -> tuple[int | None, str, str]:
    """(exit code or None on a hang, stderr, 'traceback' text or '')."""
    import importlib

    main: Callable[[list[str]], None] = importlib.import_module(TOOLS[tool]).main
    err, out = io.StringIO(), io.StringIO()
    timed_out = False

    def alarm(signum: int, frame: object) -> None:
        nonlocal timed_out
        timed_out = True
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    code: int | None = 0
    escaped = ""
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException as e:  # noqa: BLE001  (anything escaping a tool is a finding)
        escaped = f"{type(e).__name__}: {e}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if timed_out:
        return None, err.getvalue(), ""
    return code, err.getvalue(), escaped


def run_tool_subprocess(tool: str, argv: list[str], timeout: float = 10.0) -> tuple[int | None, str, str]:
    try:
        result = subprocess.run([sys.executable, "-m", TOOLS[tool], *argv], capture_output=True, text=True,
                                timeout=timeout, errors="replace")
    except subprocess.TimeoutExpired:
        return None, "", ""
    traceback = "Traceback" if "Traceback (most recent call last)" in result.stderr else ""
    return result.returncode, result.stderr, traceback


def run_case(case: Case, root: Path, in_process: bool = True, timeout: float = 10.0) -> Outcome:
    """Run `case` in a fresh `root` (in/, out/, secret.bin) and classify the run."""
    inputs, outputs = root / "in", root / "out"
    inputs.mkdir(parents=True)
    outputs.mkdir()
    (root / "secret.bin").write_bytes(SECRET * 4)
    for name, data in case.files.items():
        (inputs / name).write_bytes(data)
    os.mkfifo(inputs / "fifo")  # a path no tool may open: nothing ever writes to it
    before = _snapshot(root)
    argv = run_case_argv(case.argv, inputs, outputs)
    runner = run_tool_in_process if in_process else run_tool_subprocess
    code, stderr, escaped = runner(case.tool, argv, timeout)
    return Outcome(_judge(code, stderr, escaped, root, before, case), code, stderr.strip() or escaped, case)


def _snapshot(root: Path) -> dict[str, tuple[int, float]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime) for p in root.rglob("*") if p.is_file()}


def _judge(code: int | None, stderr: str, escaped: str, root: Path, before: dict[str, tuple[int, float]], case: Case) -> str:
    if code is None:
        return "hang"
    if escaped or "Traceback (most recent call last)" in stderr:
        return "traceback"
    if code == 1 or "internal error" in stderr:
        return "internal"
    after = _snapshot(root)
    new = [p for p in after if p not in before]
    if any(not p.startswith(("in/", "out/")) for p in new) or any(after[p] != before[p] for p in before if not p.startswith("out/") and p in after):
        return "outside"
    if any(SECRET in (root / p).read_bytes() for p in new if (root / p).stat().st_size < 1 << 26):
        return "outside"
    if any(Path(p).name.startswith(".") for p in new):
        return "partial"
    if code not in (0, 2):
        return "internal"
    if code == 2:
        if any(p.startswith("out/") for p in new):
            return "partial"
        # warnings may precede it; the error itself is the last line, alone, with a code
        lines = [line for line in stderr.strip().splitlines() if "irforge: error" in line or "Error" in line]
        if len(lines) != 1 or not re.match(r"irforge: error\[E\d{3}\]: ", stderr.strip().splitlines()[-1]):
            return "multiline"
        return "clean"
    return "ok"


def openvino_reads(xml: Path) -> bool:
    """Whether OpenVINO reads an IR irforge wrote (exit 0 must mean a loadable IR)."""
    try:
        import openvino as ov
    except ImportError:
        return True
    try:
        ov.Core().read_model(str(xml))
    except Exception:  # noqa: BLE001
        return False
    return True


def summary(outcomes: list[Outcome], started: float) -> dict[str, int | float]:
    kinds = [o.kind for o in outcomes]
    return {"cases": len(outcomes), **{k: kinds.count(k) for k in ("ok", "clean", "internal", "traceback", "hang",
                                                                      "partial", "outside", "multiline")},
            "seconds": round(time.perf_counter() - started, 1)}


__all__ = ["Case", "FORMATS", "Outcome", "make_cases", "openvino_reads", "run_case", "seed_files", "summary"]
