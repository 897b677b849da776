"""Shared checks of the MXNet importer tests: a model written as symbol JSON + .params is
imported through the frontend table and run on the reference interpreter, the CPU backend
and (converted by ir-convert to IR XML) real OpenVINO, each against the expected outputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

import irforge
import irforge.frontends.plugins  # noqa: F401  (fills the frontend table)
from irforge.backends.reference import run
from irforge.frontends.registry import frontend_for
from irforge.model import Model
from irforge.tools.convert_options import normalise_options
from irforge.tools.ir_convert import build_parser, convert


def import_args(*argv: str) -> Model:
    args = build_parser().parse_args(list(argv))
    normalise_options(args)
    return frontend_for(args.input_model, args.framework).import_model(args)


def check_everywhere(
    tmp_path: Path,
    argv: Sequence[str],
    feeds: Mapping[str, np.ndarray],
    want: Mapping[str, np.ndarray],
    rtol: float = 1e-4,
    cpu: bool = True,
    openvino: bool = True,
) -> None:
    """The reference interpreter, the CPU backend and OpenVINO give `want` (within rtol of
    each output's scale) for the model ir-convert's `argv` names."""
    from tests.backends.ir_xml_support import assert_close, run_openvino

    model = import_args(*argv)
    got = run(model, dict(feeds))
    assert sorted(got) == sorted(want)
    for name, value in want.items():
        assert_close(got[name], value, rtol, f"ref {name}")
    if cpu:
        compiled = irforge.compile(import_args(*argv), device="cpu", cache_dir=False)
        out = compiled(dict(feeds))
        for name, value in want.items():
            assert_close(out[name], value, rtol, f"cpu {name}")
    if openvino:
        out_dir = tmp_path / "ir"
        convert([*argv, "-o", str(out_dir), "-n", "net"])
        ov = run_openvino(out_dir / "net.xml", feeds)
        for name, value in want.items():
            assert_close(ov[name], value, rtol, f"openvino {name}")
