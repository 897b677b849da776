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
    return pipeline_for(args, framework, cut_points(args.input, model.func))


def parse_pipeline(spec: str, callback: Callable[[Any, ModuleOp, Any], None] | None = None):  # type: ignore[no-untyped-def]
    from xdsl.passes import PassPipeline

    from irforge.model import first_line
    from irforge.passes import all_passes

    try:
        return PassPipeline.parse_spec(all_passes(), spec, callback)
    except ValueError as e:
        raise IrforgeError(
            f"bad pass pipeline '{spec}': {first_line(str(e))}",
            fix=f"passes are: {', '.join(sorted(all_passes()))}",
        ) from None


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
        raise IrforgeError(f"invalid IR: {first_line(str(e))}") from None


def pass_count(spec: str) -> int:
    return len(parse_pipeline(spec).passes)
