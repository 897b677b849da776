"""A small seeded fuzz campaign in every `make test` (bench/fuzz_campaign.py runs longer ones):
mutated ONNX, Caffe, TensorFlow (.pb, .pbtxt), MXNet, Kaldi, IR XML and .mlir inputs and bad
flags of ir-convert, ir-run, ir-opt, ir-extgen and ir-conformance must end
in exit 0 or a one-line coded error (exit 2), never an internal error, a traceback, a hang,
a partial output or a file touched outside the case's folders."""

import pytest

from irforge.testing.fuzz import FORMATS, make_cases, run_case, seed_files

CASES_PER_FORMAT = 12


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    return seed_files(tmp_path_factory.mktemp("seeds"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_mutated_inputs_are_handled_cleanly(tmp_path, seeds, fmt):
    findings = []
    for i, case in enumerate(make_cases(fmt, CASES_PER_FORMAT, seed=19, seeds=seeds)):
        outcome = run_case(case, tmp_path / str(i), in_process=True, timeout=20)
        if outcome.kind not in ("ok", "clean"):
            findings.append(f"{outcome.kind}: {case.tool} {case.label} {case.argv}: {outcome.stderr[:300]}")
    assert findings == [], "\n".join(findings)


@pytest.mark.parametrize("fmt", ["onnx", "xml", "mlir", "run"])
def test_mutated_new_op_inputs_are_handled_cleanly(tmp_path, seeds, fmt):
    """fuzz_new_ops's seeds only (GridSample, run-time Slice/Split/Resize, DFT, Col2Im,
    compositions, detection heads, attention, outer reads), as `--focus new-ops` runs them."""
    findings = []
    for i, case in enumerate(make_cases(fmt, 8, seed=23, seeds=seeds, focus="new-ops")):
        outcome = run_case(case, tmp_path / str(i), in_process=True, timeout=20)
        if outcome.kind not in ("ok", "clean"):
            findings.append(f"{outcome.kind}: {case.tool} {case.label} {case.argv}: {outcome.stderr[:300]}")
    assert findings == [], "\n".join(findings)
