"""ir-opt: textual `nn` IR in, a pass pipeline applied, IR out (like mlir-opt / xdsl-opt).

Built on xDSL's opt main, but registering only irforge's dialects and passes. Weights: the
module's constants are read from `--weights` (default: NAME.weights beside NAME.mlir) and,
with `-o OUT.mlir`, written to OUT.weights (or `--weights-out`). An OpenVINO IR `NAME.xml`
(with NAME.bin beside it) is read as input too.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from io import StringIO
from typing import IO

from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.universe import Universe
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from irforge import __version__
from irforge.dialects.nn import NN
from irforge.errors import IrforgeError, quoted
from irforge.mlir_text import check_mlir_text
from irforge.extensions import load_entry_point_extensions, load_extension, loaded_dialects
from irforge.model import (
    attach_store,
    check_weights,
    first_line,
    parse_error_line,
    referenced_weights,
    store_of,
    weights_path_for,
)
from irforge.output_files import check_target, protect_inputs, write_files
from irforge.passes import all_passes
from irforge.passes.pipeline_errors import PIPELINE_ERRORS, bad_pipeline
from irforge.tools.cli import exit_on_error
from irforge.weights import WeightStore


class IrOptMain(xDSLOptMain):
    version_format = f"ir-opt (irforge) {__version__}, built on xdsl {{xdsl_version}}"

    def register_all_dialects(self) -> None:
        for dialect in (Builtin, Func, NN, *loaded_dialects()):
            self.ctx.register_dialect(dialect.name, lambda d=dialect: d)

    def register_all_passes(self) -> None:
        for name, factory in {**xdsl_generic_passes(), **all_passes()}.items():  # irforge's win a name clash
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        self.available_targets["mlir"] = Universe.get_multiverse().all_targets["mlir"]

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.allow_abbrev = False  # read at parse time: `--print-ir` must not pass for a flag
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--weights", help="weights file of the input (default: INPUT.weights if present)"
        )
        arg_parser.add_argument(
            "--weights-out", help="where to write the weights (default: OUTPUT.weights with -o)"
        )
        arg_parser.add_argument(
            "--extensions",
            action="append",
            default=[],
            metavar="PATH",
            help="load a Python file or package that registers extra ops and passes",
        )
        arg_parser.add_argument(
            "--print-ir-after-all",
            action="store_true",
            help="print the IR to stderr after every pass",
        )
        usage_and_options = arg_parser.format_help
        # pass modules are imported only when the help is shown
        arg_parser.format_help = lambda: usage_and_options() + _pass_list()  # type: ignore[method-assign]

    def setup_pipeline(self) -> None:
        try:
            super().setup_pipeline()
        except PIPELINE_ERRORS as e:  # unknown pass names, malformed options
            raise bad_pipeline(self.args.passes, e, sorted(all_passes())) from None
        if not self.args.print_ir_after_all:
            return
        callback = self.pipeline.callback

        def print_after(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
            if callback is not None:
                callback(previous, module, following)
            if previous is not None:
                print(f"// -----// IR Dump After {previous.name} //----- //", file=sys.stderr)
                Printer(stream=sys.stderr).print_op(module)
                print(file=sys.stderr)

        self.pipeline = PassPipeline(self.pipeline.passes, print_after)

    def register_all_frontends(self) -> None:
        super().register_all_frontends()
        # OpenVINO IR: read in parse_chunk, which knows the input's path (the .bin is beside it)
        self.available_frontends["xml"] = lambda chunk: ModuleOp([])

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        if file_extension == "xml":
            from irforge.frontends.ir_xml import read_ir_xml

            if self.args.input_file is None:
                raise IrforgeError("an OpenVINO IR must be given as a file", fix="pass the path of NAME.xml", code="E046")
            model = read_ir_xml(self.args.input_file)
            return model.module
        # xDSL's string lexer backtracks exponentially on an unterminated string: scan first
        text = check_mlir_text(chunk.read(), self.get_input_name())
        try:
            module = super().parse_chunk(StringIO(text), file_extension, start_offset)
        except NotImplementedError as e:  # xDSL: a type it cannot hold data of (i4294967296)
            raise IrforgeError(f"unsupported element type: {first_line(str(e))}", where=self.get_input_name(),
                               fix="use f16, f32, f64, i8, i32, i64, u8 or i1 tensors", code="E644") from None
        if module is not None:
            module.verify()
            attach_store(module, self._input_store(module))
        return module

    def _input_store(self, module: ModuleOp) -> WeightStore:
        path = self.args.weights
        if path is None and self.args.input_file is not None:
            candidate = weights_path_for(self.args.input_file)
            path = candidate if candidate.is_file() else None
        if path is None:
            if any(True for _ in referenced_weights(module)):
                raise IrforgeError(
                    "the IR refers to weights (@name) but no weights file was given",
                    where=self.get_input_name(),
                    fix="pass --weights PATH or put INPUT.weights beside the input",
                    code="E046",
                )
            return WeightStore()
        store = WeightStore.open(path)
        check_weights(module, store, self.get_input_name())
        return store

    def prepare_output(self) -> IO[str]:
        # written atomically in run(); nothing touches the output path before success
        return StringIO() if self.args.output_file is not None else sys.stdout

    def output_resulting_program(self, prog: ModuleOp) -> str:
        text = super().output_resulting_program(prog)
        weights_out = self.args.weights_out
        if weights_out is None and self.args.output_file is not None:
            weights_out = weights_path_for(self.args.output_file)
        names = list(dict.fromkeys(referenced_weights(prog)))
        if weights_out is not None and names:
            store = store_of(prog)
            self._weights_part = (weights_out, lambda f: store.write(f, names))
        return text

    def run(self) -> None:
        self._weights_part: tuple[str, Callable[[IO[bytes]], None]] | None = None
        if self.args.output_file is not None:
            check_target(self.args.output_file)
            if Path(self.args.output_file).suffix.lower() in (".xml", ".bin", ".weights"):
                # ir-opt prints irforge's IR: under an IR XML name OpenVINO could not read it
                raise IrforgeError(
                    f"-o {quoted(self.args.output_file)}: ir-opt writes irforge's IR (.mlir), not an OpenVINO IR",
                    fix="write -o NAME.mlir, then ir-convert -m NAME.mlir for NAME.xml + NAME.bin",
                    code="E049",
                )
        if self.args.weights_out is not None:
            check_target(self.args.weights_out)
        if self.args.output_file is None:
            super().run()
            if self._weights_part is not None:
                write_files([self._weights_part])
            return
        buffer = self.prepare_output()
        self.prepare_output = lambda: _Unclosable(buffer)  # type: ignore[method-assign]
        super().run()
        data = buffer.getvalue().encode("utf-8")  # type: ignore[attr-defined]
        parts = [] if self._weights_part is None else [self._weights_part]
        # the weights and the IR naming them appear together or not at all
        write_files([*parts, (self.args.output_file, lambda f: f.write(data))])


XDSL_GENERIC_PASSES = ("cse", "dce", "licm", "control-flow-hoist", "function-persist-arg-names")
"""xDSL's passes that work on any IR (irforge's ops are Pure): offered by name beside irforge's."""


def xdsl_generic_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    from xdsl.transforms import get_all_passes

    available = get_all_passes()
    found = {name: available[name] for name in XDSL_GENERIC_PASSES if name in available}
    # also as xdsl-NAME, which stays xDSL's where irforge has a pass of the same name (cse)
    return {**found, **{f"xdsl-{name}": _renamed(factory, f"xdsl-{name}") for name, factory in found.items()}}


def _renamed(factory: Callable[[], type[ModulePass]], name: str) -> Callable[[], type[ModulePass]]:
    """The pass under another name (xDSL checks a spec's name against the class's)."""

    def make() -> type[ModulePass]:
        base = factory()
        return type(base.__name__, (base,), {"name": name, "__doc__": base.__doc__})

    return make


class _Unclosable:
    """Lets xDSL's run() 'close' our in-memory output before we write it atomically."""

    def __init__(self, buffer: IO[str]) -> None:
        self._buffer = buffer

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._buffer, name)

    def close(self) -> None:
        pass


def _pass_list() -> str:
    lines = [f"  {name:24} {_summary(factory())}" for name, factory in sorted(all_passes().items())]
    generic = ", ".join(sorted(xdsl_generic_passes()))
    return "\npasses:\n" + "\n".join(lines) + f"\n\nxDSL's generic passes: {generic}\n"


def _summary(pass_class: type[ModulePass]) -> str:
    import inspect

    module = inspect.getmodule(pass_class)
    doc = (module.__doc__ if module is not None else None) or pass_class.__doc__ or ""
    return first_line(doc).split(": ", 1)[-1] if doc else ""


def _preload_extensions(argv: Sequence[str]) -> None:
    """Extensions must be imported before the opt main registers dialects and passes."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--extensions", action="append", default=[])
    known, _ = pre.parse_known_args(argv)
    load_entry_point_extensions()
    for path in known.extensions:
        load_extension(path)


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)

    def run() -> None:
        _preload_extensions(argv)
        tool = IrOptMain(description="irforge IR optimizer: nn IR in, passes applied, IR out", args=argv)
        input_file = tool.args.input_file
        if input_file is not None and not Path(input_file).is_file():
            raise IrforgeError(f"input file '{input_file}' not found", fix="check the path", code="E046")
        protect_inputs(input_file, tool.args.weights)
        suffix = Path(input_file).suffix.lstrip(".") if input_file is not None else "mlir"
        if tool.args.frontend is None and suffix not in tool.available_frontends:
            raise IrforgeError(
                f"cannot tell the format of {quoted(input_file)} from its suffix",
                fix=f"give a .mlir or .xml file, or name the format with -f ({', '.join(sorted(tool.available_frontends))})",
                code="E048",
            )
        try:
            tool.run()
        except ParseError as e:
            raise IrforgeError(parse_error_line(e, tool.get_input_name()), code="E047") from None
        except DiagnosticException as e:
            raise IrforgeError(f"invalid IR: {first_line(str(e))}", where=tool.get_input_name(), code="E047") from None

    exit_on_error(run)


if __name__ == "__main__":
    main()
