"""ONNX's backend node test cases (built offline by the onnx package) through irforge.

Every case whose ops all have extractors runs import -> reference interpreter and is
compared with its expected outputs at the case's own tolerances. Known failures are listed
with their reasons in onnx_node_expected_failures.txt and marked strict xfail, so a case
that starts passing must be taken off the list.
"""

from pathlib import Path

import pytest

from irforge.frontends.onnx.conformance import run_case, supported_cases
from tests.helpers import read_expected_failures

EXPECTED_FAILURES_FILE = Path(__file__).with_name("onnx_node_expected_failures.txt")


def expected_failures() -> dict[str, str]:
    return read_expected_failures(EXPECTED_FAILURES_FILE)


XFAIL = expected_failures()
CASES = supported_cases()


def test_expected_failures_name_real_supported_cases():
    names = {c.name for c in CASES}
    assert not set(XFAIL) - names, f"stale entries: {sorted(set(XFAIL) - names)}"


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=XFAIL[c.name])) if c.name in XFAIL else c for c in CASES],
    ids=lambda c: c.name,
)
def test_node_case(case):
    outcome = run_case(case)
    assert outcome.passed, outcome.message
