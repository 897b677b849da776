"""What watches ir-convert's passes one by one: `--print-ir-after` and `--verify-numerics`.

    ir-convert model.onnx --print-ir-after fuse-linear-ops [--print-ir-format xml]
    ir-convert model.onnx --verify-numerics[=1e-3]

`--print-ir-after PASS|all` prints the IR after that pass (every pass of that name) or after
every pass to stderr, as irforge's textual IR or as the OpenVINO IR XML the writer would emit.

`--verify-numerics` runs the reference interpreter on seeded random inputs after the import
and after every pass, and compares each pass's outputs with those before it: the first pass
that changes an output by more than the tolerance (max abs error / max |output|) stops the
conversion with error E790 naming it; otherwise one line says every pass kept the numbers.
Passes that change the model by design start a new baseline instead: `preprocess` (mean and
scale values), `cut` and `set-shapes`, and any pass that changes the inputs or outputs
(`convert-layout{interface=...}`). `compress-fp16` is held to f16's 1e-2.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Mapping, Sequence
from typing import IO

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irforge.errors import IrforgeError
from irforge.model import Model, input_names, main_function, output_names, print_module, store_of

BY_DESIGN = {"preprocess": "mean/scale values", "cut": "new inputs or outputs", "set-shapes": "new input shapes"}
PASS_TOLERANCE = {"compress-fp16": 1e-2}
"""Passes whose change of the numbers is bounded by their precision, not by --verify-numerics."""


class PrintIrAfter:
    """Prints the IR after the pass named (or after all) to `stream`."""

    def __init__(self, which: str, fmt: str, passes: Sequence[ModulePass], stream: IO[str] | None = None) -> None:
        names = [p.name for p in passes]
        if which != "all" and which not in names:
            raise IrforgeError(f"--print-ir-after names '{which}', which is not in the pipeline",
                               fix=f"use all or one of: {', '.join(dict.fromkeys(names))}", code="E790")
        self.which, self.fmt = which, fmt
        self.stream = stream if stream is not None else sys.stderr

    def __call__(self, done: ModulePass, module: ModuleOp) -> None:
        if self.which not in ("all", done.name):
            return
        if self.fmt == "xml":
            from irforge.backends.ir_xml.writer import emit_graph, write_bin
            from irforge.backends.ir_xml.xml_text import graph_xml

            graph = emit_graph(Model(module, store_of(module)))
            write_bin(graph, io.BytesIO())  # gives the Consts their offsets, as the .bin would
            print(f"<!-- IR Dump After {done.name} -->\n{graph_xml(graph)}", file=self.stream)
        else:
            print(f"// -----// IR Dump After {done.name} //----- //\n{print_module(module)}", file=self.stream)


def _interface(module: ModuleOp) -> tuple[object, ...]:
    func = main_function(module)
    return (tuple(input_names(func)), tuple(str(a.type) for a in func.args),
            tuple(output_names(func)), tuple(str(t) for t in func.function_type.outputs))


def _error(got: np.ndarray, want: np.ndarray) -> float:
    if got.shape != want.shape:
        return float("inf")
    if not want.size:
        return 0.0
    g, w = got.astype(np.float64), want.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    diff = np.where(both_nan, 0.0, np.abs(g - w))
    scale = float(np.nanmax(np.abs(w))) if np.isfinite(w).any() else 0.0
    worst = float(np.nanmax(diff)) if diff.size else 0.0
    return worst / scale if scale > 0 else worst


class VerifyNumerics:
    """See the module docstring; `report()` prints the closing line."""

    def __init__(self, model: Model, tolerance: float, seed: int = 0, stream: IO[str] | None = None) -> None:
        self.tolerance, self.seed = tolerance, seed
        self.stream = stream if stream is not None else sys.stdout
        self.checked = 0
        self.worst = 0.0
        self.notes: list[str] = []
        self._baseline(model.module)

    def _baseline(self, module: ModuleOp) -> None:
        from irforge.backends.reference import run
        from irforge.tools.ir_run import random_inputs

        model = Model(module, store_of(module))
        try:
            self.inputs = random_inputs(model, {}, self.seed)
        except IrforgeError as e:
            raise IrforgeError(f"--verify-numerics needs static input shapes: {e.what}",
                               fix="give them with --input_shape or --input NAME[1,3,224,224]", code="E791") from None
        self.interface = _interface(module)
        self.outputs = self._run(run, model)

    def _run(self, run, model: Model) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
        with np.errstate(all="ignore"):
            return {k: np.array(v) for k, v in run(model, self.inputs).items()}

    def __call__(self, done: ModulePass, module: ModuleOp) -> None:
        from irforge.backends.reference import run

        if done.name in BY_DESIGN or _interface(module) != self.interface:
            self.notes.append(f"{done.name} ({BY_DESIGN.get(done.name, 'new inputs or outputs')}: new baseline)")
            self._baseline(module)
            return
        outputs = self._run(run, Model(module, store_of(module)))
        tolerance = max(self.tolerance, PASS_TOLERANCE.get(done.name, 0.0))
        self.checked += 1
        for name, want in self.outputs.items():
            error = _error(outputs[name], want)
            if error > tolerance:
                raise IrforgeError(
                    f"--verify-numerics: pass '{done.name}' changes output '{name}' by {error:.3e} "
                    f"(max abs error / max |output|, tolerance {tolerance:g}, seed {self.seed})",
                    fix=f"convert without it (--pipeline) and report the model; ir-convert --print-ir-after {done.name} shows its result",
                    code="E790",
                )
            self.worst = max(self.worst, error)
        self.outputs = outputs

    def report(self) -> None:
        by_design = f"; changed by design: {', '.join(self.notes)}" if self.notes else ""
        print(f"[ir-convert] verify-numerics: all {self.checked} passes kept the numbers (largest change {self.worst:.3e}, "
              f"tolerance {self.tolerance:g}, seed {self.seed}){by_design}", file=self.stream)


def observers_for(print_ir_after: str | None, print_ir_format: str, verify: float | None, model: Model,
                  passes: Sequence[ModulePass]) -> list:  # type: ignore[type-arg]
    found: list = []  # type: ignore[type-arg]
    if print_ir_after:
        found.append(PrintIrAfter(print_ir_after, print_ir_format, passes))
    if verify is not None:
        if not verify > 0:
            raise IrforgeError(f"bad --verify-numerics tolerance {verify}", fix="give a positive number such as 1e-3", code="E790")
        found.append(VerifyNumerics(model, verify))
    return found


def report(observers: Mapping[int, object] | Sequence[object]) -> None:
    for observer in observers:
        if isinstance(observer, VerifyNumerics):
            observer.report()
