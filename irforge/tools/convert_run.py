"""The conversion itself, shared by `ir-convert` and `irforge.convert_model`.

    load extensions -> import (through the frontend table) -> plan the pipeline -> run the
    passes one by one, each observed (progress, --verify-numerics, --print-ir-after)

Emitting is left to the caller: ir-convert writes files, the Python API returns the Model.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irforge.errors import IrforgeError
from irforge.model import Model

PassObserver = Callable[[ModulePass, ModuleOp], None]
"""Called after each pass with the pass and the module it left (verified)."""


def load_extensions(extensions: Iterable[str | Path | ModuleType]) -> None:
    """Installed extensions, then `--extensions` paths; a module object given to the Python
    API registered its ops when it was imported."""
    from irforge.extensions import load_entry_point_extensions, load_extension

    load_entry_point_extensions()
    for extension in extensions:
        if not isinstance(extension, ModuleType):
            load_extension(str(extension))


def framework_of(args: argparse.Namespace) -> str:
    import irforge.frontends.plugins  # noqa: F401  (fills the frontend table)
    from irforge.frontends.registry import frontend_for

    return frontend_for(str(args.input_model), args.framework).name


def import_model(args: argparse.Namespace, framework: str) -> Model:
    from irforge.frontends.registry import frontend_named

    return frontend_named(framework).import_model(args)


def planned_pipeline(args: argparse.Namespace, framework: str, model: Model) -> str:
    """`--pipeline`, else the one the flags ask for; after the import, because --input names
    that are not model inputs are layers (or tensors) to cut at."""
    from irforge.tools.convert_pipeline import cut_points, pipeline_for

    if args.pipeline:
        return args.pipeline
    args.renamed_points = tensor_points(args, model)
    return pipeline_for(args, framework, cut_points(args.input, model.func))


def tensor_points(args: argparse.Namespace, model: Model) -> dict[str, str]:
    """--input / --output names that are framework tensors (ovc's form), not model inputs or
    layers, become the `layer:port` the cut pass reads; returns the renames to undo after."""
    from irforge.frontends.tensor_names import layer_point
    from irforge.model import input_names
    from irforge.passes.cut import layers_by_name, resolve

    inputs, layers = set(input_names(model.func)), layers_by_name(model.func)
    renames: dict[str, str] = {}

    def translated(name: str) -> str:
        if name in inputs:
            return name
        try:
            resolve(name, layers, "input")
            return name
        except IrforgeError:
            point = layer_point(model.module, name)
            if point is None:
                return name  # cut_points names it as unknown
            renames[point] = name
            return point

    args.input = [translated(n) for n in args.input]
    args.output = [translated(n) for n in args.output]
    return renames


def finish(args: argparse.Namespace, model: Model) -> None:
    """After the passes: inputs and outputs cut at tensors take the tensors' names, and the
    element types --input asked for are checked (irforge does not convert them)."""
    from irforge.tools.port_names import check_input_types, rename_ports

    rename_ports(model.func, getattr(args, "renamed_points", {}))
    check_input_types(model.func, getattr(args, "input_types", {}))


def parse_pipeline(spec: str, callback: Callable[[Any, ModuleOp, Any], None] | None = None):  # type: ignore[no-untyped-def]
    from irforge.passes import parse_pipeline as parse

    return parse(spec, callback)


def run_passes(module: ModuleOp, spec: str, observers: Sequence[PassObserver] = (),
               before: Callable[[ModulePass], None] | None = None) -> None:
    """`apply_pipeline`, pass by pass: verify after each, then tell the observers; `before`
    hears of each pass as it starts (the progress display names it)."""
    from xdsl.utils.exceptions import DiagnosticException

    from irforge.model import first_line, make_context

    def between(previous: ModulePass | None, op: ModuleOp, following: ModulePass | None) -> None:
        if previous is not None:
            op.verify()
            for observe in observers:
                observe(previous, op)
        if following is not None and before is not None:
            before(following)

    pipeline = parse_pipeline(spec, between)
    try:
        pipeline.apply(make_context(), module)
    except DiagnosticException as e:
        raise IrforgeError(f"invalid IR: {first_line(str(e))}", code="E741") from None


def observers(args: argparse.Namespace, model: Model, pipeline: str) -> list[PassObserver]:
    """What watches each pass: --print-ir-after and --verify-numerics (pass_observers.py)."""
    from irforge.tools.pass_observers import observers_for

    return observers_for(getattr(args, "print_ir_after", None), getattr(args, "print_ir_format", "mlir"),
                         getattr(args, "verify_numerics", None), model, parse_pipeline(pipeline).passes)


def pass_count(spec: str) -> int:
    return len(parse_pipeline(spec).passes)


def written_files(target: Path, emit: str) -> list[Path]:
    """The files a conversion to `target` (NAME.xml or NAME.mlir) wrote."""
    from irforge.model import weights_path_for

    companion = target.with_suffix(".bin") if emit == "xml" else weights_path_for(target)
    return [target, companion] if companion.is_file() else [target]


def report_written(target: Path, emit: str) -> None:
    """mo.py's closing lines, on stdout: `[ SUCCESS ] XML file: /abs/NAME.xml` and the .bin."""
    kinds = {".xml": "XML", ".bin": "BIN", ".mlir": "MLIR", ".weights": "WEIGHTS"}
    for path in written_files(target, emit):
        print(f"[ SUCCESS ] {kinds[path.suffix]} file: {path.resolve()}")
