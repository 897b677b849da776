"""ir-conformance: ONNX's backend node cases through one or more of irforge's backends.

    ir-conformance --device ref,cpu,gpu [--cases REGEX] [--verbose]

Each case (model, inputs, expected outputs, tolerances, built offline by the onnx wheel) is
imported (`irforge.frontends.onnx.conformance`), run on the device and compared with the
case's own tolerances. Per backend: one `FAIL name: why` line per failing case, then a
summary line. The native backends run f32 cases; `cpu` only those whose every op has a CPU
kernel (the others are counted as not run), `gpu` all of them (HETERO falls back to the CPU).
Exit code 0 whatever the results (it is a report); 2 for bad flags.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from irforge.errors import IrforgeError
from irforge.tools.cli import exit_on_error
from irforge.tools.versions import add_version

DEVICES = ("ref", "cpu", "gpu")
Execute = Callable[[object, Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]


@dataclass
class Report:
    device: str
    run: int = 0
    passed: int = 0
    not_run: int = 0

    def line(self) -> str:
        skipped = f", not run here: {self.not_run} (no kernel for an op, or not f32)" if self.not_run else ""
        return f"{self.device}: node cases run: {self.run}, passed: {self.passed}, failed: {self.run - self.passed}{skipped}"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="ir-conformance", allow_abbrev=False,
                                description="Run ONNX's backend node cases through irforge's backends and report per backend.")
    add_version(p)
    p.add_argument("--device", default="ref", help=f"comma-separated backends: {', '.join(DEVICES)} (default: ref)")
    p.add_argument("--cases", metavar="REGEX", help="only cases whose name matches (e.g. 'test_conv|test_relu')")
    p.add_argument("--verbose", "-v", action="store_true", help="print a PASS line per case too")
    args = p.parse_args(argv)
    args.devices = [d.strip() for d in args.device.split(",") if d.strip()]
    unknown = [d for d in args.devices if d not in DEVICES]
    if unknown or not args.devices:
        raise IrforgeError(f"unknown device {', '.join(unknown) or repr(args.device)}", fix=f"use {', '.join(DEVICES)}", code="E058")
    try:
        args.pattern = re.compile(args.cases) if args.cases else None
    except (re.error, OverflowError, RecursionError) as e:  # a{99999999999}: too large a repetition
        raise IrforgeError(f"bad --cases pattern '{args.cases}': {e}", fix="give a Python regular expression", code="E058") from None
    return args


def executor(device: str) -> Execute:
    if device == "cpu":
        from irforge.backends.cpu import compile_model

        def on_cpu(model, feeds):  # type: ignore[no-untyped-def]
            compiled = compile_model(model, threads=1)
            try:
                return compiled(feeds)
            finally:
                compiled.close()

        return on_cpu
    if device == "gpu":
        from irforge.backends.opencl import compile_model as compile_opencl

        return lambda model, feeds: compile_opencl(model)(feeds)
    from irforge.backends.reference import run

    return run  # type: ignore[return-value]


def runs_on(device: str, case) -> bool:  # type: ignore[no-untyped-def]
    """Whether the device takes the case: the reference all; the native backends f32 cases,
    the CPU only those it has every kernel for."""
    if device == "ref":
        return True
    import onnx

    from irforge.frontends.onnx.conformance import graph_element_types

    if not set(graph_element_types(case.model.graph)) <= {onnx.TensorProto.FLOAT}:
        return False
    if device == "gpu":
        return True
    return _cpu_lowers(case)


def _cpu_lowers(case) -> bool:  # type: ignore[no-untyped-def]
    from xdsl.dialects.func import ReturnOp

    import irforge.backends.cpu.ops  # noqa: F401  (registers the lowerings)
    from irforge.backends.cpu.lower import LOWERINGS
    from irforge.dialects.nn.constant import Constant
    from irforge.frontends.onnx.conformance import _array, import_freezing
    from irforge.frontends.onnx.importer import model_inputs

    inputs, _ = case.data_sets[0]
    try:
        model, _ = import_freezing(case.model, dict(zip(model_inputs(case.model), [_array(v) for v in inputs])))
    except Exception:  # noqa: BLE001  (the reference report names import failures)
        return False
    return all(isinstance(op, Constant | ReturnOp) or type(op) in LOWERINGS for op in model.func.body.block.ops)


def report(device: str, cases: Sequence[object], verbose: bool) -> Report:
    from irforge.frontends.onnx.conformance import Outcome, run_case

    result = Report(device)
    execute = executor(device)
    for case in cases:
        if not runs_on(device, case):
            result.not_run += 1
            continue
        result.run += 1
        try:
            with np.errstate(all="ignore"):
                outcome = run_case(case, execute)
        except Exception as e:  # noqa: BLE001  (one case's failure is a line of the report)
            outcome = Outcome(False, f"{type(e).__name__}: {e}")
        if outcome.passed:
            result.passed += 1
            if verbose:
                print(f"PASS [{device}] {case.name}")  # type: ignore[attr-defined]
        else:
            print(f"FAIL [{device}] {case.name}: {outcome.message}")  # type: ignore[attr-defined]
        sys.stdout.flush()
    return result


def conformance(argv: Sequence[str]) -> None:
    args = parse_args(argv)
    import irforge.frontends.onnx.extractors  # noqa: F401  (registers the extractors)
    from irforge.frontends.onnx.conformance import supported_cases

    cases = [c for c in supported_cases() if args.pattern is None or args.pattern.search(c.name)]
    if not cases:
        raise IrforgeError(f"no supported node case matches '{args.cases}'", fix="loosen --cases", code="E058")
    reports = [report(device, cases, args.verbose) for device in args.devices]
    for entry in reports:
        print(entry.line())


def main(argv: Sequence[str] | None = None) -> None:
    exit_on_error(lambda: conformance(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
