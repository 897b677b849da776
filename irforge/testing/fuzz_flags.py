"""Fuzz cases of bad flags and bad side files for every tool: ir-convert over every input
format (shapes, preprocessing, cuts, pipelines, transformations configs, extensions), ir-run
(input arrays of the wrong type, shape or kind, seeds, devices, outputs), ir-opt, ir-extgen
and ir-conformance. `irforge.testing.fuzz` runs and judges them.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class Case:
    tool: str
    argv: list[str]  # IN/ and OUT/ stand for the case's folders
    files: dict[str, bytes] = field(default_factory=dict)
    label: str = ""


def run_case_argv(argv: list[str], inputs: Path, outputs: Path) -> list[str]:
    """The case's arguments with IN/ and OUT placed in its folders."""
    return [a.replace("IN/", f"{inputs}/").replace("OUT", str(outputs)) for a in argv]


BAD_FLAG_VALUES = {
    "--input_shape": ["[1,3,99999999999999999999,8]", "[1,3,8]", "[0,3,8,8]", "[-2,3,8,8]", "1,3,8,8", "[]", "[1,3,8,8],[1]", "[a]",
                      "[1,3,1000000000000,8]", "[13,5]", "[1,3,8,8]", "[1,3,?,8]", "[1,3,8,8]x"],
    "--mean_values": ["data[nan,inf,1]", "[1,2]", "nope[1,2,3]", "data[", "[1e309,1,1]", "data[1,2,3],[4,5,6]", "[1,2,3,4]", "[1,2,3]"],
    "--scale_values": ["[0,1,1]", "data[-inf,1,1]", "[1]", "[1,2,3]", "data[1e-45,1,1]"],
    "--model_name": ["../escaped", "a/b", "/tmp/x", "..", "", "a\nb", "m.xml", "."],
    "--batch": ["0", "-1", "99999999999999999999", "x", "2"],
    "--scale": ["0", "-1", "nan", "x", "1e400", "255"],
    "--pipeline": [",,", "replace-subgraph{config=x.json}", "infer-shapes{", "nope", "canonicalize{x=1}", "cut{inputs=nope}",
                   "set-shapes{shapes=x}", "convert-layout{interface=zz}", "replace-subgraph{config=IN/t.json}", "'", "infer-shapes,,dce",
                   "preprocess{mean=x}", "fuse-linear-ops{forward=maybe}", "{}", ""],
    "--output": ["nope", ",", "a:9", "conv_2", "relu_8:1", "data", "0:conv_2", "conv_2:x", "prob_31,prob_31"],
    "--input": ["nope", ",", "data:99", "data[1,3,8,8]{f64}", "data[1,3,8,8]{i32}", "data->1", "conv_2", "conv_2:0", "0:conv_2",
                "data[1,3,-5,8]", "data{", "data,data", "data[1,3,8,8]{nope}", "input[13,5]", "input_1[1,8,8,3]"],
    "--layout": ["nchw", "nhwc", "ncwh"],
    "--data_type": ["FP16", "FP8"],
    "--compress_to_fp16": ["maybe", "True", "False"],
    "--verify-numerics": ["0", "-1", "x", "nan", "1e-3"],
    "--print-ir-after": ["nope", "infer-shapes"],
    "--transformations_config": ["IN/missing.json", "IN/m.onnx", "IN/t.json", "IN/", "IN/fifo"],
    "--extensions": ["IN/ext.py", "IN/missing.py", "IN/", "IN/t.json", "IN/fifo"],
    "--framework": ["caffe", "onnx", "tf", "mxnet", "kaldi", "ir", "mlir"],
    "--output_model": ["OUT/x.txt", "OUT/", "OUT/a/b.xml", "OUT/x.xml", "IN/m.onnx/x.xml"],
    "--output_dir": ["IN/m.onnx", "OUT/new/deeper", "OUT", "IN/"],
    "--counts": ["IN/counts.txt", "IN/missing.txt", "", "IN/fifo"],
    "--input_proto": ["IN/missing.prototxt", "IN/t.json", "IN/fifo", "/dev/zero"],
    "--input_symbol": ["IN/t.json", "IN/missing-symbol.json", "IN/m-symbol.json", "IN/fifo", "/dev/zero"],
    "--nd_prefix_name": ["IN/x", "", "../x", "IN/m"],
    "--pretrained_model_name": ["IN/m.onnx", "IN/missing-0000.params", "IN/m-0000.params"],
    "--log_level": ["DEBUG", "NOPE"],
    "--input_model_is_text": [],
}
TRANSFORMATION_CONFIGS = [
    b"{", b"[]", b'[{"id": "x"}]', b'{"a": 1}', b"\xff\xfe", b"[" * 400 + b"]" * 400, b'[{"id": "X", "match_kind": "points"}]',
    b'[{"id": "X", "match_kind": "points", "op": "nn.activation", "instances": {"start_points": ["conv_2"], "end_points": ["relu_8"]}}]',
    b'[{"id": "X", "match_kind": "points", "op": "ext.nope", "instances": {"start_points": ["a"], "end_points": ["b"]}}]',
    b'[{"id": "X", "match_kind": "scope", "instances": ["a"]}]', b'[{"id": 3, "match_kind": null, "instances": 7}]',
]  # fmt: skip
# only extensions that fail while loading: an extension that registers something would
# change the global tables for the cases after it in an in-process campaign
EXTENSIONS = [
    b"def (:\n", b"raise BaseException('boom')\n", b"import sys\nsys.exit(3)\n", b"raise KeyboardInterrupt\n",
    b"raise RecursionError('deep')\n", b"import nonexistent_module_xyz\n", b"\xff\xfe\x00", b"raise SystemExit('bye')\n",
    b"raise MemoryError\n", b"x = 1\n",
]  # fmt: skip
COUNTS = [b"[ 1 2 3 ]", b"", b"[ 1 x 3 ]", b"1 2 3", b"[ -1 0 ]", b"[ 1e400 ]", b"[\n1\n]\n[ 2 ]", b"\xff"]
KALDI_FLAGS = {"nnet1.nnet": "[13,5]", "nnet2.mdl": "[13,6]"}


def _side_files(rng: random.Random) -> dict[str, bytes]:
    return {"t.json": rng.choice(TRANSFORMATION_CONFIGS), "ext.py": rng.choice(EXTENSIONS), "counts.txt": rng.choice(COUNTS)}


def flag_case(rng: random.Random, seeds: dict[str, dict[str, bytes]]) -> Case:
    """ir-convert of a valid model of some format with one to three bad or odd flags."""
    fmt = rng.choice(["onnx", "onnx", "caffe", "mxnet", "kaldi", "tf"])
    files = dict(_side_files(rng))
    argv: list[str]
    if fmt == "kaldi":
        name = rng.choice(sorted(KALDI_FLAGS))
        files[name] = seeds["kaldi"][name]
        argv = ["-m", f"IN/{name}", "-o", "OUT", "--input_shape", KALDI_FLAGS[name]]
    else:
        files.update(seeds[fmt])
        main = {"onnx": "m.onnx", "caffe": "m.caffemodel", "mxnet": "m-0000.params", "tf": "m.pb"}[fmt]
        argv = ["-m", f"IN/{main}", "-o", "OUT"]
    for flag in rng.sample(sorted(BAD_FLAG_VALUES), rng.randint(1, 3)):
        argv += [flag, rng.choice(BAD_FLAG_VALUES[flag])] if BAD_FLAG_VALUES[flag] else [flag]
    if rng.random() < 0.3:
        argv.append("--reverse_input_channels")
    if rng.random() < 0.1:
        argv.append("--remove_output_softmax")
    return Case("ir-convert", argv, files, f"flags:{fmt}")


# -- ir-run -------------------------------------------------------------------------------------
def npy_bytes(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=allow_pickle)
    return out.getvalue()


def bad_arrays() -> list[bytes]:
    """.npy files of the wrong dtype, shape or kind for a [1,3,8,8] float32 input."""
    good = np.zeros((1, 3, 8, 8), np.float32)
    huge_header = npy_bytes(np.zeros(2, np.float32)).replace(b"(2,)", b"(1000000000000,)")
    return [
        npy_bytes(good), npy_bytes(good.astype(np.float64)), npy_bytes(good[..., :4]), npy_bytes(good.astype(np.int32)),
        npy_bytes(np.array([{"a": 1}, None], dtype=object), allow_pickle=True), npy_bytes(np.float32(1.0)),
        npy_bytes(np.zeros((1, 3, 8, 8), dtype=[("a", "<f4")])), npy_bytes(good.astype(np.complex64)),
        npy_bytes(np.asfortranarray(np.zeros((1, 3, 8, 8), np.float32))), npy_bytes(good)[:100], b"not an npy file",
        npy_bytes(np.array(["abc"])), npy_bytes(good.astype(bool)), npy_bytes(good.astype(np.float16)),
        npy_bytes(good.astype(">f4")), huge_header, npy_bytes(np.full((1, 3, 8, 8), np.nan, np.float32)),
        npy_bytes(np.zeros((0, 3, 8, 8), np.float32)),
    ]  # fmt: skip


RUN_FLAG_VALUES = {
    "--input": ["data=IN/a.npy", "nope=IN/a.npy", "data", "data=", "=x", "data=IN/missing.npy", "data=IN/", "data=IN/a.npy,data=IN/a.npy", "data=IN/fifo", "data=/dev/zero"],
    "--seed": ["-1", "x", "18446744073709551616", "99999999999999999999999", "7"],
    "--device": ["nope", "cpu:x", "ref:1", "", "REF", "cpu,ref"],
    "--weights": ["IN/m.onnx", "IN/missing", "IN/", "IN/a.npy", "IN/fifo"],
    "--output": ["OUT/", "OUT/a/b.npz", "OUT/o.txt", "OUT/o.npz", "IN/m.onnx", "IN/a.npy", "IN/fifo", "IN/m.bin"],  # inputs: E012
    "--compare-onnxruntime": ["IN/m.onnx", "IN/missing.onnx", "IN/a.npy", "IN/fifo"],
    "--bisect": ["IN/m.onnx", "IN/missing", "IN/a.npy", "IN/fifo"],
    "--bisect-tolerance": ["-1", "nan", "x", "0"],
    "--extensions": ["IN/ext.py", "IN/missing.py"],
    "--opencl-device": ["x", "-1"],
}


def _first(files: dict[str, bytes]) -> dict[str, bytes]:
    """The first seed model of a format (m.*), without fuzz_control_flow's."""
    return {n: d for n, d in files.items() if n.startswith("m.")}


def _array_for_run(rng: random.Random) -> bytes:
    """The right array 40% of the time (so that the other flags are reached), else a bad one."""
    arrays = bad_arrays()
    return arrays[0] if rng.random() < 0.4 else rng.choice(arrays)


def run_case(rng: random.Random, seeds: dict[str, dict[str, bytes]]) -> Case:
    draw = rng.random()
    if draw < 0.3:
        from irforge.testing.fuzz_control_flow import run_case as control_flow_run_case

        return control_flow_run_case(rng, seeds)
    if draw < 0.6:
        from irforge.testing.fuzz_new_ops import run_case as new_ops_run_case

        return new_ops_run_case(rng, seeds)
    fmt = rng.choice(["onnx", "xml", "mlir"])
    files = {**_first(seeds[fmt]), **_first(seeds["onnx"]), "a.npy": _array_for_run(rng), "ext.py": rng.choice(EXTENSIONS)}
    main = {"onnx": "m.onnx", "xml": "m.xml", "mlir": "m.mlir"}[fmt]
    argv = [f"IN/{main}", "--input", "data=IN/a.npy"]
    for flag in rng.sample(sorted(RUN_FLAG_VALUES), rng.randint(0, 2)):
        argv += [flag, rng.choice(RUN_FLAG_VALUES[flag])]
    return Case("ir-run", argv, files, f"run:{fmt}")


# -- ir-opt, ir-extgen, ir-conformance ---------------------------------------------------------------
OPT_PIPELINES = [",,", "infer-shapes{", "nope", "cut{inputs=nope}", "set-shapes{shapes=x}", "set-shapes{shapes=data:[1,3,16,16]}",
                 "convert-layout{interface=nhwc}", "replace-subgraph{config=IN/t.json}", "fuse-linear-ops,canonicalize,dce", "compress-fp16",
                 "preprocess{mean=x}", "'\"", "infer-shapes{x=1}"]  # fmt: skip
EXTGEN_VALUES = {
    "--op": ["MyRelu", "../x", "a b", "", "1abc", "class", "x" * 300, "My-Op"],
    "--framework": ["onnx", "caffe", "tf", "mxnet"],
    "--attr": ["alpha:float=0.5", "alpha:float=x", "alpha", "a:nope=1", ":int=1", "class:int=1", "n:ints=1,2", "s:str=\"", "a:int=1e400"],
    "--domain": ["", "com.x", "a b", "../x"],
}


def tool_case(fmt: str, rng: random.Random, seeds: dict[str, dict[str, bytes]]) -> Case:
    """An ir-run case (fmt "run") or an ir-opt / ir-extgen / ir-conformance one (fmt "tools")."""
    if fmt == "run":
        return run_case(rng, seeds)
    tool = rng.choice(["ir-opt", "ir-opt", "ir-extgen", "ir-conformance"])
    files = {**seeds["mlir"], **seeds["xml"], **_side_files(rng)}
    if tool == "ir-opt":
        argv = [f"IN/{rng.choice(['m.mlir', 'm.xml', 't.json', 'missing.mlir', 'fifo'])}", "-p", rng.choice(OPT_PIPELINES),
                "-o", rng.choice(["OUT/o.mlir", "OUT", "OUT/a/o.mlir", "OUT/o.xml", "IN/m.mlir", "IN/fifo"])]
        if rng.random() < 0.3:
            argv += ["--weights", rng.choice(["IN/m.bin", "IN/m.weights", "IN/missing", "IN/t.json"])]
        if rng.random() < 0.2:
            argv += ["--extensions", "IN/ext.py"]
    elif tool == "ir-extgen":
        argv = ["new", "-o", rng.choice(["OUT/ext", "OUT", "IN/m.mlir", "OUT/a/b"])]
        for flag, values in EXTGEN_VALUES.items():
            if flag in ("--op", "--framework") or rng.random() < 0.5:
                argv += [flag, rng.choice(values)]
        if rng.random() < 0.3:
            argv.append(rng.choice(["--cpu", "--gpu", "--force"]))
    else:
        argv = ["--device", rng.choice(["ref", "nope", "ref,ref", "", "cpu:x"]), "--cases", rng.choice(["(", "*", "[a-", "a{99999999999}"])]
    return Case(tool, argv, files, f"tools:{tool}")


__all__ = ["BAD_FLAG_VALUES", "Case", "bad_arrays", "flag_case", "run_case_argv", "tool_case"]
