"""ir-convert: a framework model in, an optimised `nn` model out (irforge's mo.py / ovc).

    ir-convert --input_model model.onnx [--input_shape [1,3,224,224]] [--output_dir D]

The stages are import -> the pass pipeline (`--pipeline` shows or replaces it) -> emit, and
`--emit` stops after the stage named. Stage names and times go to stderr when the conversion
takes longer than a second, or always with --log_level INFO.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from irforge.errors import IrforgeError
from irforge.extensions import load_entry_point_extensions, load_extension
import irforge.frontends.plugins  # noqa: F401  (fills the frontend table)
from irforge.frontends.registry import FRONTENDS, frontend_for, frontend_named
from irforge.model import Model, save_model
from irforge.output_files import check_model_name, prepare_output_dir
from irforge.tools.cli import exit_on_error
from irforge.tools.convert_args import match_shapes, parse_names, parse_per_input_values, parse_shapes
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE, cut_points, pipeline_for  # noqa: F401  (ir-run uses it)

LOG_LEVELS = ("ERROR", "WARNING", "INFO", "DEBUG")
T = TypeVar("T")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ir-convert",
        description="Convert a framework model to irforge's nn IR (like OpenVINO's mo.py).",
    )
    suffixes = ", ".join(s for f in FRONTENDS.values() for s in f.suffixes)
    p.add_argument("--input_model", "-m", required=True, help=f"the model file ({suffixes})")
    p.add_argument("--framework", choices=sorted(FRONTENDS), help="default: from the file's name or first bytes")
    p.add_argument("--output_dir", "-o", default=".", help="where to write the result (default: .)")
    p.add_argument("--model_name", "-n", help="base name of the output files (default: the input's)")
    p.add_argument("--input", type=parse_names, default=[], help="input names, comma-separated (order of --input_shape)")
    p.add_argument("--output", type=parse_names, default=[], help="output names, comma-separated")
    p.add_argument("--input_shape", type=parse_shapes, help="input shapes, e.g. [1,3,224,224] or [1,3,224,224],[1,10]")
    p.add_argument("--batch", "-b", type=int, help="batch size: overrides the first dim of every input")
    p.add_argument("--mean_values", type=lambda t: parse_per_input_values(t, "--mean_values"), help="e.g. data[123,117,104]")
    p.add_argument("--scale_values", type=lambda t: parse_per_input_values(t, "--scale_values"), help="e.g. data[58.4,57.1,57.4]")
    p.add_argument("--reverse_input_channels", action="store_true", help="swap the channel order of inputs (RGB <-> BGR)")
    p.add_argument("--data_type", default="FP32", type=str.upper, choices=["FP32", "FP16", "FLOAT", "HALF"], help="weights precision")
    p.add_argument("--disable_fusing", action="store_true", help="do not fuse linear ops into convolutions")
    p.add_argument("--layout", choices=["nchw", "nhwc"], type=str.lower,
                   help="layout of the converted model's 4-D inputs and outputs (default: the framework's)")
    p.add_argument("--transformations_config", metavar="PATH", help="JSON of sub-graph replacements by points (mo.py's)")
    p.add_argument("--extensions", action="append", default=[], metavar="PATH", help="Python file or package with extra ops and extractors")
    p.add_argument("--emit", choices=["xml", "mlir"], default="xml", help="what to write (xml: OpenVINO IR NAME.xml + NAME.bin; mlir: NAME.mlir + NAME.weights)")
    p.add_argument("--pipeline", nargs="?", const="", metavar="P", help="replace the pass pipeline; alone, print it and exit")
    p.add_argument("--log_level", default="ERROR", type=str.upper, choices=LOG_LEVELS, help="INFO shows stage timings")
    for frontend in FRONTENDS.values():
        if frontend.add_arguments is not None:
            frontend.add_arguments(p.add_argument_group(f"{frontend.name} options"))
    return p


class Progress:
    """Stage timings: shown on stderr once the conversion takes over a second (or at INFO)."""

    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose
        self.start = time.perf_counter()

    def stage(self, name: str, body: Callable[[], T]) -> T:
        began = time.perf_counter()
        result = body()
        now = time.perf_counter()
        if self.verbose or now - self.start > 1.0:
            print(f"[ir-convert] {name:14} {now - began:7.2f} s", file=sys.stderr)
        return result


def import_model(args: argparse.Namespace, framework: str) -> Model:
    return frontend_named(framework).import_model(args)


def check_flags(args: argparse.Namespace) -> None:
    if args.model_name is not None:
        check_model_name(args.model_name)
    if args.batch is not None and not 1 <= args.batch < 2**31:
        raise IrforgeError(f"bad value for --batch: {args.batch}", fix="give a batch size from 1 to 2**31-1", code="E045")
    if args.batch is not None and args.input_shape:
        raise IrforgeError("--batch and --input_shape cannot be combined", fix="put the batch size into --input_shape", code="E045")


def convert(argv: Sequence[str]) -> None:
    args = build_parser().parse_args(argv)
    check_flags(args)
    progress = Progress(verbose=args.log_level in ("INFO", "DEBUG"))
    load_entry_point_extensions()
    for path in args.extensions:
        load_extension(path)
    framework = frontend_for(args.input_model, args.framework).name
    model = progress.stage("import", lambda: import_model(args, framework))
    # after the import: --input names that are not model inputs are layers to cut at
    pipeline = args.pipeline or pipeline_for(args, framework, cut_points(args.input, model.func))
    if args.pipeline == "":
        print(f"import -> {pipeline} -> emit {args.emit}")
        return
    from irforge.passes import apply_pipeline

    progress.stage("passes", lambda: apply_pipeline(model.module, pipeline))
    out_dir = prepare_output_dir(args.output_dir)
    name = check_model_name(args.model_name or Path(args.input_model).stem)
    target = out_dir / f"{name}.{args.emit}"
    progress.stage("emit", lambda: emit(model, target, args))
    if args.log_level in ("INFO", "DEBUG"):
        print(f"[ir-convert] wrote {target}", file=sys.stderr)


def emit(model: Model, target: Path, args: argparse.Namespace) -> None:
    """Write NAME.xml + NAME.bin (f32 weights as f16 + Convert with --data_type FP16), or
    NAME.mlir + NAME.weights."""
    if args.emit == "mlir":
        save_model(model, target)
        return
    from irforge.backends.ir_xml import write_ir_xml

    write_ir_xml(model, target, "FP16" if args.data_type in ("FP16", "HALF") else "FP32")


def main(argv: Sequence[str] | None = None) -> None:
    exit_on_error(lambda: convert(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
