"""The error catalog: every code raised in irforge/ is documented in docs/errors.md, every
documented code is raised somewhere, and every IrforgeError raised in irforge/ has a code."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = re.compile(r"^E\d{3}$")


def calls():
    for path in sorted((ROOT / "irforge").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                yield path, node


def raised_codes() -> set[str]:
    """Codes given as `code="E..."`, and string constants that are a code alone (passed to a
    helper that raises, or chosen by a conditional expression)."""
    codes = {
        k.value.value
        for _, node in calls()
        for k in node.keywords
        if k.arg == "code" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)
    }
    for path in sorted((ROOT / "irforge").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.match(node.value):
                codes.add(node.value)
    return codes


def documented_codes() -> set[str]:
    text = (ROOT / "docs" / "errors.md").read_text()
    return set(re.findall(r"^\| (E\d{3}) \|", text, re.MULTILINE))


def test_every_raised_code_is_documented_and_vice_versa():
    raised, documented = raised_codes(), documented_codes()
    assert all(CODE.match(c) for c in raised), sorted(c for c in raised if not CODE.match(c))
    assert raised - documented == set(), f"codes raised but not in docs/errors.md: {sorted(raised - documented)}"
    assert documented - raised == set(), f"codes documented but never raised: {sorted(documented - raised)}"


def test_every_irforge_error_has_a_code():
    missing = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path, node in calls()
        if isinstance(node.func, ast.Name) and node.func.id in ("IrforgeError", "NotConstantError")
        and not any(k.arg == "code" or k.arg is None for k in node.keywords)
        and not (path.name == "errors.py")
    ]
    assert missing == [], f"IrforgeError without code=: {missing}"


def test_codes_are_in_their_area_sections():
    text = (ROOT / "docs" / "errors.md").read_text()
    area = None
    for line in text.splitlines():
        if m := re.match(r"## E(\d)xx", line):
            area = m.group(1)
        elif m := re.match(r"\| (E\d{3}) \|", line):
            assert m.group(1)[1] == area, f"{m.group(1)} is listed under E{area}xx"
