"""The command-line front door, probed case by case: outputs aimed at folders, pipes, unwritable
places, the command's own inputs and symbolic links; inputs that are links, pipes, devices or
loops; bad shapes, --input / --output names, mean / scale values, layouts, devices, .npz inputs,
long and NUL names. Each case runs in process in a fresh folder and is judged as the fuzz
campaign judges (`irforge.testing.fuzz`: ok, clean, internal, traceback, hang, partial, outside,
multiline).

    python bench/fuzz_front_door.py [--show-all]

Output targets are never real devices (a FIFO in the case's folder stands for one): as root, a
regression would replace /dev/null with a file. One case is expected to read `outside`: writing
into the input folder with the name of files already there replaces them, as the user asked.
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from irforge.testing import fuzz
from irforge.testing.fuzz_flags import Case

Setup = Callable[[Path], None]


def _link(folder: str, name: str, target: str) -> Setup:
    return lambda root: os.symlink(target, root / folder / name)


def _folder(name: str) -> Setup:
    return lambda root: (root / "out" / name).mkdir()


def _env(**values: str) -> Setup:
    """Environment variables for the case (`run` restores the environment after it); ROOT/
    in a value is the case's folder."""
    return lambda root: os.environ.update({k: v.replace("ROOT/", f"{root}/") for k, v in values.items()})


def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def cases(seeds: dict[str, dict[str, bytes]]) -> list[tuple[Case, Setup | None]]:
    onnx = {"m.onnx": seeds["onnx"]["m.onnx"]}
    xml = {k: seeds["xml"][k] for k in ("m.xml", "m.bin")}
    mlir = {k: seeds["mlir"][k] for k in ("m.mlir", "m.weights")}
    found: list[tuple[Case, Setup | None]] = []

    def add(tool: str, argv: list[str], files: dict[str, bytes], label: str, setup: Setup | None = None) -> None:
        found.append((Case(tool, argv, files, label), setup))

    # outputs over the command's inputs
    add("ir-convert", ["-m", "IN/m.xml", "-o", "IN/"], xml, "xml -> its own folder")
    add("ir-convert", ["-m", "IN/m.xml", "--output_model", "IN/m.xml"], xml, "--output_model = input")
    add("ir-convert", ["-m", "IN/m.onnx", "--output_model", "IN/m.onnx"], onnx, "--output_model = the .onnx")
    add("ir-convert", ["-m", "IN/m.onnx", "-o", "IN/", "-n", "m"], {**onnx, "m.xml": b"old", "m.bin": b"old"}, "over the user's old files (expected: outside)")
    add("ir-run", ["IN/m.onnx", "--output", "IN/m.onnx"], onnx, "ir-run --output = model")
    add("ir-run", ["IN/m.xml", "--output", "IN/m.bin"], xml, "ir-run --output = weights")
    add("ir-opt", ["IN/m.mlir", "-p", "canonicalize", "-o", "IN/m.mlir"], mlir, "ir-opt -o = input")
    add("ir-opt", ["IN/m.mlir", "-p", "canonicalize", "-o", "IN/m.weights"], mlir, "ir-opt -o = weights")
    # outputs that are folders, pipes, unwritable, links
    for tool, argv, files, name in (("ir-convert", ["-m", "IN/m.onnx", "-o", "OUT"], onnx, "m.xml"),
                                    ("ir-convert", ["-m", "IN/m.onnx", "-o", "OUT"], onnx, "m.bin"),
                                    ("ir-convert", ["-m", "IN/m.onnx", "-o", "OUT", "--emit", "mlir"], onnx, "m.weights"),
                                    ("ir-run", ["IN/m.onnx", "--output", "OUT/o.npz"], onnx, "o.npz"),
                                    ("ir-opt", ["IN/m.mlir", "-p", "canonicalize", "-o", "OUT/o.mlir"], mlir, "o.mlir")):
        add(tool, argv, files, f"{name} is a folder", _folder(name))
        add(tool, argv, files, f"{name} links to the secret", _link("out", name, "../secret.bin"))
        add(tool, argv, files, f"{name} is a dangling link", _link("out", name, "../nowhere/x"))
        add(tool, argv, files, f"{name} links to a FIFO", _link("out", name, "../in/fifo"))
    add("ir-run", ["IN/m.onnx", "--output", "IN/fifo"], onnx, "ir-run --output a FIFO")
    add("ir-opt", ["IN/m.mlir", "-o", "IN/fifo"], mlir, "ir-opt -o a FIFO")
    add("ir-convert", ["-m", "IN/m.onnx", "-o", "/proc/irforge-x"], onnx, "-o unwritable")
    add("ir-convert", ["-m", "IN/m.onnx", "--output_model", "/proc/irforge.xml"], onnx, "--output_model unwritable")
    add("ir-run", ["IN/m.onnx", "--output", "/proc/irforge.npz"], onnx, "ir-run --output unwritable")
    add("ir-opt", ["IN/m.mlir", "-o", "/proc/x.mlir"], mlir, "ir-opt -o unwritable")
    add("ir-convert", ["-m", "IN/m.onnx", "-o", "IN/fifo"], onnx, "-o a FIFO")
    add("ir-convert", ["-m", "IN/m.onnx", "-o", "OUT", "-n", "x" * 300], onnx, "a 300-character name")
    add("ir-convert", ["-m", "IN/m.onnx", "-o", "OUT", "-n", "m\0x"], onnx, "a NUL in the name")
    add("ir-run", ["IN/m.onnx", "--output", "OUT/" + "x" * 300 + ".npz"], onnx, "a 300-character output")
    # inputs that are links, pipes, devices, loops
    add("ir-convert", ["-m", "IN/l.onnx", "-o", "OUT"], {}, "input link loop", _link("in", "l.onnx", "l.onnx"))
    add("ir-convert", ["-m", "IN/l.onnx", "-o", "OUT"], {}, "input link to a FIFO", _link("in", "l.onnx", "fifo"))
    add("ir-convert", ["-m", "IN/l.onnx", "-o", "OUT"], {}, "input link to a folder", _link("in", "l.onnx", "."))
    for weights, model, files in (("m.bin", "m.xml", {"m.xml": xml["m.xml"]}), ("m.weights", "m.mlir", {"m.mlir": mlir["m.mlir"]})):
        for target in ("fifo", "/dev/zero", "../secret.bin"):
            add("ir-convert", ["-m", f"IN/{model}", "-o", "OUT"], files, f"{weights} links to {target}", _link("in", weights, target))
        add("ir-run", [f"IN/{model}", "--output", "OUT/o.npz"], files, f"ir-run, {weights} links to /dev/zero", _link("in", weights, "/dev/zero"))
    add("ir-convert", ["-m", "/dev/zero", "-o", "OUT", "--framework", "onnx"], {}, "model /dev/zero")
    add("ir-convert", ["-m", "IN/fifo", "-o", "OUT", "--framework", "onnx"], {}, "model a FIFO")
    add("ir-run", ["IN/fifo", "--output", "OUT/o.npz"], {}, "ir-run a FIFO")
    add("ir-opt", ["IN/fifo", "-o", "OUT/o.mlir"], {}, "ir-opt a FIFO")
    # flag values
    values = {
        "--input_shape": ["[1,3,8,8]{f32}", "(1,3,8,8)", "[1, 3, 8, 8]", "[1,3,8,8.5]", "[1,3,0x8,8]", "[1,3,8,8]]", "[[1,3,8,8]]",
                          "[1,3,8,-1]", "[1,3,8..16,8]", "[1,3,8,8],", "data[1,3,8,8]", "[1,3,4,4]", "[1,1,8,8]", "[1,3,2**40,8]"],
        "--input": ["data[1,3,8,8]{f16}", "data[1,3,8,8]{bool}", "data[1 3 8 8]", "data[1,3,8,8]->[1,2,3]", "data{f32}[1,3,8,8]", "data:0",
                    "data[1,3,8,8]{f32}{f32}", "dat a", "data[]", "data[?,3,8,8]", "data[1..2,3,8,8]", "\0", "data,data", "conv_2,conv_2"],
        "--output": ["conv_2:0", "conv_2:99", "prob", ":0", "conv_2:-1", "prob_31:0:0", "\0"],
        "--mean_values": ["data[1,2]", "[1,2,3]", "data(1,2,3)", "data[1;2;3]", "data[,,]", "data[1e39,0,0]", "nope[1,2,3]",
                          "data[1,2,3],data[1,2,3]", "[1,2,3],[4,5,6]"],
        "--scale_values": ["data[0,1,1]", "data[nan,1,1]", "data[1e-39,1,1]", "data[1e39,1,1]", "[-1,-1,-1]"],
        "--layout": ["nhwc", "NCHW", "[n,c,h,w]", "data(nchw->nhwc)", ""],
        "--batch": ["3", "-0", "1.5"],
        "--scale": ["1e-45", "-0", "inf", "1e39"],
    }
    for flag, options in values.items():
        for value in options:
            add("ir-convert", ["-m", "IN/m.onnx", "-o", "OUT", flag, value], onnx, f"{flag} {value!r}")
    arrays = {"a.npy": _npy(np.zeros((1, 3, 8, 8), np.float32)), "a.npz": b"PK\x03\x04junk", "b.npz": _npy(np.zeros(3)), "c.npz": b""}
    for value in ["DATA=IN/a.npy", "data =IN/a.npy", "data=IN/a.npy=b", "data=IN/a.npz", "data=IN/b.npz", "data=IN/c.npz", "IN/a.npy",
                  "data:0=IN/a.npy", "data=IN/fifo", "data=/dev/zero"]:
        add("ir-run", ["IN/m.onnx", "--input", value, "--output", "OUT/o.npz"], {**onnx, **arrays}, f"ir-run --input {value!r}")
    for device in ["opencl", "cpu:0", "auto", "ref"]:
        add("ir-run", ["IN/m.onnx", "--device", device, "--output", "OUT/o.npz"], onnx, f"ir-run --device {device}")
    # session 10: .npy inputs that are not plain arrays, other formats' inputs as outputs, odd targets
    header_lies = _npy(np.zeros(4, np.float32)).replace(b"(4,)", b"(1099511627776,)")
    odd = {"obj.npy": _npy(np.array([{"a": 1}], dtype=object)), "f64.npy": _npy(np.zeros((1, 3, 8, 8))),
           "i64.npy": _npy(np.zeros((1, 3, 8, 8), np.int64)), "fort.npy": _npy(np.asfortranarray(np.zeros((1, 3, 8, 8), np.float32))),
           "zero_d.npy": _npy(np.float32(1)), "lies.npy": header_lies, "cut.npy": _npy(np.zeros((1, 3, 8, 8), np.float32))[:100],
           "obj.npz": _npz_object(), "nan.npy": _npy(np.full((1, 3, 8, 8), np.nan, np.float32))}
    for name in odd:
        add("ir-run", ["IN/m.onnx", "--input", f"data=IN/{name}", "--output", "OUT/o.npz"], {**onnx, **odd}, f"ir-run --input {name}")
        add("ir-run", ["IN/m.onnx", "--input", f"data=IN/{name}", "--device", "cpu", "--output", "OUT/o.npz"], {**onnx, **odd},
            f"ir-run --device cpu --input {name}")
    caffe, mxnet = dict(seeds["caffe"]), dict(seeds["mxnet"])
    add("ir-run", ["IN/m.prototxt", "--output", "IN/m.caffemodel"], caffe, "ir-run --output = caffemodel")
    add("ir-convert", ["-m", "IN/m.caffemodel", "--input_proto", "IN/m.prototxt", "--output_model", "IN/m.prototxt"], caffe,
        "--output_model = prototxt")
    params = next(n for n in mxnet if n.endswith(".params"))
    add("ir-run", [f"IN/{params}", "--output", f"IN/{params}"], mxnet, "ir-run --output = mxnet params")
    add("ir-convert", ["-m", "IN/sm", "-o", "OUT"], {}, "a TF SavedModel folder", _saved_model)
    add("ir-run", ["IN/sm/saved_model.pb", "--output", "IN/sm/variables/variables.data-00000-of-00001"], {},
        "ir-run --output = SavedModel variables", _saved_model)
    add("ir-convert", ["-m", "IN/m.onnx", "-o", "IN/m.onnx"], onnx, "-o = the model file")
    add("ir-convert", ["-m", "IN/m.onnx", "-o", "IN/m.onnx/sub"], onnx, "-o under the model file")
    add("ir-run", ["IN/m.onnx", "--output", "OUT/no/such/o.npz"], onnx, "ir-run --output in a missing folder")
    add("ir-run", ["IN/m.onnx", "--output", "OUT/o"], onnx, "ir-run --output without .npz")
    add("ir-run", ["IN/m.onnx", "--output", "OUT/"], onnx, "ir-run --output a folder name")
    for pipeline in ["bogus", "canonicalize{", "infer-shapes{x=1}", ",,", "canonicalize,canonicalize" * 200]:
        add("ir-opt", ["IN/m.mlir", "-p", pipeline, "-o", "OUT/o.mlir"], mlir, f"ir-opt -p {pipeline[:30]!r}")
    for flag, value in [("--compress_to_fp16", "maybe"), ("--data_type", "FP8"), ("--static_shape", "1"), ("--emit", "onnx"),
                        ("--model_name", "."), ("--model_name", ".."), ("--model_name", "a/b"), ("--transform", "nope"),
                        ("--extensions", "IN/m.onnx"), ("--extensions", "/dev/zero")]:
        add("ir-convert", ["-m", "IN/m.onnx", "-o", "OUT", flag, value], onnx, f"{flag} {value!r}")
    # session 11: the CPU cache's size cap and folder from the environment (a fresh folder in in/: always a program save)
    cpu_run = ["IN/m.onnx", "--device", "cpu", "--output", "OUT/o.npz"]
    for cap in ["1e3", "-1", "5\n6", "nan", "0x10", "9" * 5000, "", " 7 ", "0", "1", "+2", "١٢"]:
        add("ir-run", cpu_run, onnx, f"IRFORGE_CACHE_MAX_MB={cap[:20]!r}", _env(IRFORGE_CACHE_DIR="ROOT/in/cache", IRFORGE_CACHE_MAX_MB=cap))
    for folder in ["ROOT/in/m.onnx", "ROOT/in/m.onnx/sub", "ROOT/in/fifo", "ROOT/in/a\nb", "ROOT/in/" + "x" * 300]:
        add("ir-run", cpu_run, onnx, f"IRFORGE_CACHE_DIR={folder[-30:]!r}", _env(IRFORGE_CACHE_DIR=folder))
    return found


def _npz_object() -> bytes:
    out = io.BytesIO()
    np.savez(out, data=np.array([object()], dtype=object))
    return out.getvalue()


def _saved_model(root: Path) -> None:
    """A SavedModel's layout (irforge reads frozen graphs only): saved_model.pb and variables/."""
    folder = root / "in" / "sm"
    (folder / "variables").mkdir(parents=True)
    (folder / "saved_model.pb").write_bytes(b"\x08\x01\x12\x04\x12\x02\x0a\x00")
    (folder / "variables" / "variables.data-00000-of-00001").write_bytes(fuzz.SECRET[:8] * 3)
    (folder / "variables" / "variables.index").write_bytes(b"\x00" * 16)


def run(case: Case, setup: Setup | None, root: Path) -> fuzz.Outcome:
    """`fuzz.run_case`, with `setup` run on the case's folders before the tool starts (and the
    environment as it was after it)."""
    if setup is None:
        return fuzz.run_case(case, root, in_process=True, timeout=60)
    saved = dict(os.environ)
    try:
        return _run_set_up(case, setup, root)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _run_set_up(case: Case, setup: Setup, root: Path) -> fuzz.Outcome:
    inputs, outputs = root / "in", root / "out"
    inputs.mkdir(parents=True)
    outputs.mkdir()
    (root / "secret.bin").write_bytes(fuzz.SECRET * 4)
    for name, data in case.files.items():
        (inputs / name).write_bytes(data)
    os.mkfifo(inputs / "fifo")
    setup(root)
    before = fuzz._snapshot(root)
    code, stderr, escaped = fuzz.run_tool_in_process(case.tool, fuzz.run_case_argv(case.argv, inputs, outputs), 60)
    return fuzz.Outcome(fuzz._judge(code, stderr, escaped, root, before, case), code, stderr.strip() or escaped, case)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--show-all", action="store_true", help="print every case, not only the findings")
    args = p.parse_args()
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="irforge-front-door-") as tmp:
        seeds = fuzz.seed_files(Path(tmp) / "seeds")
        for i, (case, setup) in enumerate(cases(seeds)):
            outcome = run(case, setup, Path(tmp) / str(i))
            counts[outcome.kind] = counts.get(outcome.kind, 0) + 1
            if args.show_all or outcome.kind not in ("ok", "clean"):
                last = outcome.stderr.splitlines()[-1] if outcome.stderr else ""
                print(f"{outcome.kind:9} {case.tool} {case.label}: {last[:200]}", flush=True)
    print(counts)


if __name__ == "__main__":
    main()
