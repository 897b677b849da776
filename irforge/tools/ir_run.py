"""ir-run: run a model on a device with given or seeded random inputs, print and save outputs.

    ir-run model.mlir|model.xml|model.onnx [--input NAME=FILE.npy ...] [--seed N] [--device ref]
           [--output out.npz] [--compare-onnxruntime [ORIGINAL.onnx]]

Reads `NAME.mlir` + `NAME.weights`, an OpenVINO IR `NAME.xml` + `NAME.bin`, or imports an
`.onnx` model (with the default pipeline of ir-convert). Prints one line per output: name, shape, element type and a
checksum (sum and mean absolute value); with --compare-onnxruntime also the maximum
absolute and relative error of each output against onnxruntime running the ONNX model (the
model itself, or the ONNX file a converted model came from).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import TensorType

from irforge.backends.reference.kernels.control_flow import DEFAULT_MAX_ITERATIONS, iteration_limit
from irforge.errors import IrforgeError, one_line, quoted
from irforge.extensions import load_entry_point_extensions, load_extension
from irforge.model import Model, input_names
from irforge.output_files import protect_inputs, write_files
from irforge.tools import onnxruntime_runs
from irforge.tools.cli import exit_on_error
from irforge.tools.progress import Progress
from irforge.tools.versions import add_version
from irforge.weights.dtypes import from_xdsl

DEVICES = ("ref", "cpu", "gpu")


def seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**64:
        raise IrforgeError(f"bad --seed {quoted(text)}", fix="give an integer from 0 to 2**64-1", code="E022")
    return value


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="ir-run", description="Run a model and print (and save) its outputs.", allow_abbrev=False
    )
    add_version(p)
    p.add_argument("model", help="model file: NAME.mlir (with NAME.weights beside it), NAME.xml (with NAME.bin), or a "
                   "framework model, which is converted with ir-convert's default pipeline")
    p.add_argument("--weights", help="weights file (default: NAME.weights beside the model)")
    p.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=FILE.npy",
        help="an input array; inputs not given are random (seeded)",
    )
    p.add_argument("--seed", type=seed, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--device", default="ref", help=f"where to run: {', '.join(DEVICES)}")
    p.add_argument("--opencl-device", metavar="N|NAME", help="with --device gpu: the OpenCL device by index or name substring")
    p.add_argument("--output", metavar="OUT.npz", help="save the outputs here (written atomically)")
    p.add_argument(
        "--compare-onnxruntime",
        nargs="?",
        const="",
        metavar="ONNX",
        help="also run an ONNX model in onnxruntime and print the error of each output: "
        "the model itself if it is .onnx, else the ONNX file it was converted from",
    )
    p.add_argument("--max-iterations", type=iterations, default=DEFAULT_MAX_ITERATIONS, metavar="N",
                   help="stop a Loop / While that runs more than N iterations in one execution with an error "
                   f"(default {DEFAULT_MAX_ITERATIONS}; 0: no limit, as OpenVINO)")
    p.add_argument("--extensions", action="append", default=[], metavar="PATH")
    p.add_argument("--verbose", action="store_true", help="with --device cpu: print the compile time, the bytes of the "
                   "weights, packed constants and arena, and the peak RSS (on stderr)")
    p.add_argument("--no-progress", action="store_true", help="no live progress display on stderr (shown on a terminal only)")
    p.add_argument("--bisect", metavar="ORIGINAL", help="find the first layer whose output on --device diverges from the "
                   "framework model ORIGINAL (.onnx: onnxruntime; else its unoptimised import on the reference interpreter)")
    p.add_argument("--bisect-tolerance", type=float, default=1e-3, metavar="TOL",
                   help="--bisect's threshold: max |a-b| / max |ORIGINAL| (default 1e-3)")
    args = p.parse_args(argv)
    if args.device not in DEVICES:
        raise IrforgeError(
            f"unknown device '{args.device}'", fix=f"use one of: {', '.join(DEVICES)}", code="E860"
        )
    if args.compare_onnxruntime == "":
        if Path(args.model).suffix != ".onnx":
            raise IrforgeError(
                "--compare-onnxruntime needs the ONNX model to compare with",
                fix="give it: --compare-onnxruntime ORIGINAL.onnx",
                code="E860",
            )
        args.compare_onnxruntime = args.model
    if args.compare_onnxruntime is not None and not Path(args.compare_onnxruntime).is_file():
        raise IrforgeError(f"ONNX model '{args.compare_onnxruntime}' not found", fix="check the path", code="E860")
    return args


def load(path: str, weights: str | None) -> Model:
    """The model as a framework frontend imports it; converted with ir-convert's default
    pipeline unless it is irforge's or OpenVINO's IR already."""
    from irforge.frontends.registry import frontend_for
    from irforge.tools.ir_convert import build_parser

    from irforge.tools.convert_options import normalise_options

    options = build_parser().parse_args(["--input_model", path])
    normalise_options(options)
    options.weights = weights
    frontend = frontend_for(path)
    if weights is not None and frontend.name != "mlir":
        # only irforge's .mlir names its weights file; elsewhere the flag would be ignored
        raise IrforgeError(
            f"--weights applies to .mlir models, not to {quoted(path)} ({frontend.name})",
            fix="drop --weights (an IR's .bin and a framework's weights are found beside the model)",
            code="E893",
        )
    model = frontend.import_model(options)
    if frontend.converts:
        from irforge.passes import apply_pipeline
        from irforge.tools.convert_pipeline import pipeline_for

        apply_pipeline(model.module, pipeline_for(options, frontend.name))
    return model


def compare_onnxruntime(path: str, inputs: Mapping[str, np.ndarray], outputs: Mapping[str, np.ndarray]) -> None:
    """Print, per output, the max absolute and relative error against onnxruntime."""
    session = onnxruntime_runs.session(path, path)
    names = [o.name for o in session.get_outputs()]
    expected = dict(zip(names, onnxruntime_runs.run(session, inputs, path)))
    for name, got in outputs.items():
        if name not in expected:
            raise IrforgeError(
                f"--compare-onnxruntime: {quoted(path)} has no output {quoted(name)}",
                fix="give the ONNX model the compared model was converted from",
                code="E895",
            )
        want = expected[name].astype(np.float64)
        if got.shape != want.shape:  # data-dependent sizes (NonZero, NMS) can differ
            print(f"{name}: vs onnxruntime shape {list(got.shape)} differs from onnxruntime's {list(want.shape)}")
            continue
        abs_err = float(np.abs(got.astype(np.float64) - want).max()) if want.size else 0.0
        scale = float(np.abs(want).max()) if want.size else 0.0
        rel_err = abs_err / scale if scale else abs_err
        print(f"{name}: vs onnxruntime max_abs_error={abs_err:.3e} max_rel_error={rel_err:.3e}")


def check_npy_size(name: str, file: str) -> None:
    """A .npy file must hold the bytes its header describes: numpy allocates the header's
    array before reading, so a 128-byte file claiming 2**40 floats was 'out of memory' (E004)
    and a smaller lie a large allocation before 'EOF'. Not a .npy (a .npz): nothing to check."""
    from numpy.lib import format as npy

    with open(file, "rb") as f:
        if f.read(6) != b"\x93NUMPY":
            return
        f.seek(0)
        version = npy.read_magic(f)
        if version not in ((1, 0), (2, 0)):
            return  # numpy.load judges the rest
        shape, _, dtype = (npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0)(f)
        if dtype.hasobject:
            return  # numpy.load refuses it (allow_pickle=False)
        wanted = math.prod(shape) * dtype.itemsize
        held = os.fstat(f.fileno()).st_size - f.tell()
    if held < wanted:
        raise IrforgeError(f"cannot read input {quoted(name)} from {quoted(file)}: its header describes a {dtype} array of shape "
                           f"{list(shape)} ({wanted} bytes), the file holds {held}", fix="give a .npy file written by numpy.save",
                           code="E021")


def read_inputs(specs: Sequence[str]) -> dict[str, np.ndarray]:
    arrays = {}
    for spec in specs:
        name, sep, file = spec.partition("=")
        if not sep or not name or not file:
            raise IrforgeError(f"bad --input {quoted(spec)}", fix="write --input NAME=FILE.npy", code="E020")
        if not Path(file).is_file():  # a FIFO or device would block or never end
            raise IrforgeError(
                f"cannot read input {quoted(name)} from {quoted(file)}: not found or not a regular file",
                fix="give a .npy file written by numpy.save",
                code="E021",
            )
        try:
            check_npy_size(name, file)
            arrays[name] = np.load(file, allow_pickle=False)
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:  # a .npz name whose bytes are no zip archive
            raise IrforgeError(
                f"cannot read input {quoted(name)} from {quoted(file)}: {one_line(str(e))[:120]}",
                fix="give a .npy file written by numpy.save",
                code="E021",
            ) from None
        if not isinstance(arrays[name], np.ndarray):  # an .npz archive
            raise IrforgeError(f"input {quoted(name)}: {quoted(file)} is not one array", fix="give a .npy file, not .npz", code="E021")
    return arrays


def memory_bytes() -> int:
    """The machine's physical memory (a random input larger than it cannot be made)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 40


def check_input_size(name: str, shape: tuple[int, ...]) -> None:
    """E899 before allocating a random input the machine cannot hold (a declared dim of 10**12):
    a clear error instead of numpy's MemoryError, or of a swap storm."""
    needed = math.prod(shape) * 8  # drawn as float64 before the cast
    if needed > memory_bytes():
        raise IrforgeError(
            f"input {quoted(name)} of shape {list(shape)} needs {needed / 2**30:.3g} GiB, more than this machine's memory",
            fix="convert the model with a smaller --input_shape",
            code="E899",
        )


def check_given_input(name: str, array: np.ndarray, t: TensorType) -> None:
    """An --input array must have the model input's element type and shape: irforge does not
    convert them (a float64 or int array, a wrong shape is an error before anything runs)."""
    dtype = from_xdsl(t.element_type)
    if array.dtype != dtype:
        raise IrforgeError(
            f"input {quoted(name)} is {array.dtype} but the model takes {np.dtype(dtype)}",
            fix=f"save the array as {np.dtype(dtype)} (array.astype(numpy.{np.dtype(dtype)}))",
            code="E897",
        )
    shape = tuple(t.get_shape())
    if array.ndim != len(shape) or any(d >= 0 and d != a for d, a in zip(shape, array.shape)):
        raise IrforgeError(
            f"input {quoted(name)} has shape {list(array.shape)} but the model takes {[d if d >= 0 else '?' for d in shape]}",
            fix="give an array of the model's input shape",
            code="E896",
        )


def random_inputs(model: Model, given: Mapping[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """The given inputs, completed with seeded random arrays of the model's input types."""
    func = model.func
    names = input_names(func)
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise IrforgeError(
            f"the model has no input named {', '.join(unknown)}",
            fix=f"its inputs are: {', '.join(names)}",
            code="E894",
        )
    rng = np.random.default_rng(seed)
    inputs = dict(given)
    for name, arg in zip(names, func.args):
        t = arg.type
        assert isinstance(t, TensorType)
        if name in inputs:
            check_given_input(name, inputs[name], t)
            continue
        shape = tuple(t.get_shape())
        if any(d < 0 for d in shape):
            raise IrforgeError(
                f"input '{name}' has dynamic dims ({t})", fix=f"pass --input {name}=FILE.npy", code="E898"
            )
        dtype = from_xdsl(t.element_type)
        check_input_size(name, shape)
        if dtype == np.bool_:
            inputs[name] = rng.integers(0, 2, shape).astype(np.bool_)
        elif np.issubdtype(dtype, np.integer):
            inputs[name] = rng.integers(0, 10, shape).astype(dtype)
        else:
            inputs[name] = rng.standard_normal(shape).astype(dtype)
    return inputs


def summary(name: str, array: np.ndarray) -> str:
    values = array.astype(np.float64)
    return (
        f"{name}: shape={list(array.shape)} dtype={array.dtype} "
        f"sum={values.sum():.6g} mean_abs={np.abs(values).mean() if values.size else 0:.6g}"
    )


def save_npz(path: str, arrays: Mapping[str, np.ndarray]) -> None:
    """Write atomically: a failed run leaves no partial file behind."""
    write_files([(path, lambda f: np.savez(f, **arrays))])


def run_on_device(model: Model, inputs: Mapping[str, np.ndarray], device: str, opencl_device: str | None,
                  progress: Progress, verbose: bool = False) -> dict[str, np.ndarray]:
    if device == "cpu":
        from irforge.backends.cpu import compile_model, memory_report

        compiled = compile_model(model, track=progress.track)  # the bar counts the kernels as LLVM optimises them
        outputs = progress.stage("run", lambda: compiled(inputs))
        if verbose:
            print(memory_report(compiled.stats), file=sys.stderr)
        return outputs
    if device == "gpu":
        from irforge.backends.opencl import run_reporting

        return progress.stage("compile+run gpu", lambda: run_reporting(model, inputs, opencl_device, print))
    from irforge.backends.reference import run

    return progress.stage("run", lambda: run(model, inputs))


def bisect_command(model: Model, inputs: Mapping[str, np.ndarray], args: argparse.Namespace) -> None:
    from irforge.tools.bisect import bisect, onnx_original, reference_original

    if not Path(args.bisect).is_file():
        raise IrforgeError(f"--bisect: ORIGINAL '{args.bisect}' not found", fix="give the framework model MODEL came from", code="E891")
    original = onnx_original(args.bisect, inputs) if Path(args.bisect).suffix == ".onnx" else reference_original(args.bisect, inputs)
    quiet = Progress("ir-run", enabled=False, timings=False)

    def run_one(part: Model) -> np.ndarray:
        return next(iter(run_on_device(part, inputs, args.device, args.opencl_device, quiet).values()))

    bisect(model, inputs, original, args.device, run_one, args.bisect_tolerance, print)


def iterations(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise IrforgeError(f"bad --max-iterations {quoted(text)}", fix="give a whole number of iterations, 0 for no limit",
                           code="E878")
    return value


def run_command(argv: Sequence[str]) -> None:
    args = parse_args(argv)
    with iteration_limit(args.max_iterations or None):
        _run(args)


def _run(args: argparse.Namespace) -> None:
    protect_inputs(args.model, args.weights, args.compare_onnxruntime, args.bisect, *(spec.partition("=")[2] for spec in args.input))
    load_entry_point_extensions()
    for path in args.extensions:
        load_extension(path)
    progress = Progress("ir-run", enabled=not args.no_progress, timings=False)
    model = progress.stage("load", lambda: load(args.model, args.weights))
    inputs = random_inputs(model, read_inputs(args.input), args.seed)
    if args.bisect:
        bisect_command(model, inputs, args)
        return
    outputs = run_on_device(model, inputs, args.device, args.opencl_device, progress, args.verbose)
    for name, array in outputs.items():
        print(summary(name, array))
    if args.compare_onnxruntime is not None:
        compare_onnxruntime(args.compare_onnxruntime, inputs, outputs)
    if args.output:
        save_npz(args.output, outputs)


def main(argv: Sequence[str] | None = None) -> None:
    exit_on_error(lambda: run_command(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
