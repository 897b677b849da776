"""ir-convert: a framework model in, an optimised `nn` model out (irforge's mo.py / ovc).

    ir-convert --input_model model.onnx [--input_shape [1,3,224,224]] [--output_dir D]

The stages are import -> the pass pipeline (`--pipeline` shows or replaces it) -> emit, and
`--emit` stops after the stage named. Stage names and times go to stderr when the conversion
takes longer than a second, or always with --log_level INFO.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from irforge.errors import IrforgeError
import irforge.frontends.plugins  # noqa: F401  (fills the frontend table)
from irforge.frontends.registry import FRONTENDS
from irforge.model import Model, save_model
from irforge.output_files import check_model_name, prepare_output_dir, protect_inputs
from irforge.tools.cli import exit_on_error
from irforge.tools.convert_args import match_shapes, parse_names, parse_per_input_values, parse_shapes  # noqa: F401
from irforge.tools.convert_options import normalise_options, parse_bool, parse_input_specs
from irforge.tools.versions import add_version
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE, cut_points, pipeline_for  # noqa: F401  (ir-run uses it)
from irforge.tools.convert_run import (
    finish, framework_of, import_model, load_extensions, observers, pass_count, planned_pipeline, report_written, run_passes,
)
from irforge.tools.pass_observers import report as report_observers
from irforge.tools.progress import Progress, wanted

LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ir-convert",
        description="Convert a framework model to irforge's nn IR (like OpenVINO's mo.py and ovc).",
        allow_abbrev=False,
    )
    suffixes = ", ".join(s for f in FRONTENDS.values() for s in f.suffixes)
    p.add_argument("model", nargs="?", help="the model file (ovc's form of --input_model)")
    p.add_argument("--input_model", "-m", help=f"the model file ({suffixes})")
    add_version(p)
    p.add_argument("--framework", choices=sorted(FRONTENDS), help="default: from the file's name or first bytes")
    p.add_argument("--output_dir", "-o", default=".", help="where to write the result (default: .)")
    p.add_argument("--output_model", metavar="PATH.xml", help="ovc's form: the .xml (or .mlir) to write, or a folder")
    p.add_argument("--model_name", "-n", help="base name of the output files (default: the input's)")
    p.add_argument("--input", type=parse_input_specs, default=[],
                   help="inputs, comma-separated, each NAME[shape]{type} with optional parts "
                   "(data[1,3,224,224]{f32},mask[1,10]); a layer or tensor name cuts the model there")
    p.add_argument("--output", type=parse_names, default=[], help="output names (layers or tensors), comma-separated")
    p.add_argument("--input_shape", type=parse_shapes, help="input shapes, e.g. [1,3,224,224] or [1,3,224,224],[1,10]")
    p.add_argument("--batch", "-b", type=int, help="batch size: overrides the first dim of every input")
    p.add_argument("--mean_values", type=lambda t: parse_per_input_values(t, "--mean_values"), help="e.g. data[123,117,104]")
    p.add_argument("--scale_values", type=lambda t: parse_per_input_values(t, "--scale_values"), help="e.g. data[58.4,57.1,57.4]")
    p.add_argument("--scale", "-s", type=float, help="one scale value for every input (mo.py's): inputs are divided by it")
    p.add_argument("--reverse_input_channels", action="store_true", help="swap the channel order of inputs (RGB <-> BGR)")
    p.add_argument("--data_type", default="FP32", type=str.upper, choices=["FP32", "FP16", "FLOAT", "HALF"], help="weights precision")
    p.add_argument("--compress_to_fp16", nargs="?", const=True, type=parse_bool, metavar="True|False",
                   help="ovc's form of --data_type FP16 (=False: FP32, the default here as in mo.py)")
    p.add_argument("--disable_fusing", action="store_true", help="do not fuse linear ops into convolutions")
    p.add_argument("--layout", choices=["nchw", "nhwc"], type=str.lower,
                   help="layout of the converted model's 4-D inputs and outputs (default: the framework's)")
    p.add_argument("--transformations_config", metavar="PATH", help="JSON of sub-graph replacements by points (mo.py's)")
    p.add_argument("--extensions", action="append", default=[], metavar="PATH", help="Python file or package with extra ops and extractors")
    p.add_argument("--emit", choices=["xml", "mlir"], default="xml", help="what to write (xml: OpenVINO IR NAME.xml + NAME.bin; mlir: NAME.mlir + NAME.weights)")
    p.add_argument("--pipeline", nargs="?", const="", metavar="P", help="replace the pass pipeline; alone, print it and exit")
    p.add_argument("--print-ir-after", dest="print_ir_after", metavar="PASS|all", help="print the IR to stderr after that pass (or every pass)")
    p.add_argument("--print-ir-format", dest="print_ir_format", choices=["mlir", "xml"], default="mlir",
                   help="--print-ir-after's form: irforge's IR (mlir) or OpenVINO IR XML (xml)")
    p.add_argument("--verify-numerics", dest="verify_numerics", nargs="?", const=1e-3, type=float, metavar="TOL",
                   help="run the reference interpreter on a seeded input before and after every pass; stop at the "
                   "first pass that changes an output by more than TOL (default 1e-3, relative to the output's largest value)")
    p.add_argument("--log_level", type=str.upper, choices=LOG_LEVELS,
                   help="INFO shows stage timings; ERROR or CRITICAL also hide the progress display")
    p.add_argument("--no-progress", action="store_true", help="no live progress display on stderr (shown on a terminal only)")
    for frontend in FRONTENDS.values():
        if frontend.add_arguments is not None:
            frontend.add_arguments(p.add_argument_group(f"{frontend.name} options"))
    return p


def check_flags(args: argparse.Namespace) -> None:
    if args.model_name is not None:
        check_model_name(args.model_name)
    if args.batch is not None and not 1 <= args.batch < 2**31:
        raise IrforgeError(f"bad value for --batch: {args.batch}", fix="give a batch size from 1 to 2**31-1", code="E045")
    if args.batch is not None and args.input_shape:
        raise IrforgeError("--batch and --input_shape cannot be combined", fix="put the batch size into --input_shape", code="E045")


def convert(argv: Sequence[str]) -> None:
    args = build_parser().parse_args(argv)
    normalise_options(args)
    check_flags(args)
    protect_inputs(args.input_model, args.input_proto, args.input_symbol, args.pretrained_model_name, args.counts,
                   args.transformations_config)
    progress = Progress("ir-convert", verbose=args.log_level in ("INFO", "DEBUG"),
                        enabled=wanted(args.no_progress, args.log_level))
    load_extensions(args.extensions)
    framework = framework_of(args)
    model = progress.stage("import", lambda: import_model(args, framework))
    pipeline = planned_pipeline(args, framework, model)
    if args.pipeline == "":
        progress.report()
        print(f"import -> {pipeline} -> emit {args.emit}")
        return
    watchers = observers(args, model, pipeline)
    progress.stage_steps("passes", pass_count(pipeline), lambda step: run_passes(
        model.module, pipeline, watchers, before=lambda p: step(p.name)))
    report_observers(watchers)
    finish(args, model)
    out_dir = prepare_output_dir(args.output_dir)
    name = check_model_name(args.model_name or Path(args.input_model).stem)
    target = out_dir / f"{name}.{args.emit}"
    progress.stage("emit", lambda: emit(model, target, args))
    progress.report()
    report_written(target, args.emit)


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
