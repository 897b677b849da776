"""ir-extgen: write a working custom-layer extension and its test, to fill in.

    ir-extgen new --op MyOp --framework onnx [--domain com.example] [--attr alpha:float=0.5 ...]
                  [--cpu] [--gpu] -o DIR

writes DIR/my_op.py (the op, its framework mapping, its numpy forward and, with --cpu and
--gpu, native kernels) and DIR/test_my_op.py. As generated the op is the identity and the
test passes; the places for the real math are marked YOUR MATH.
"""

from __future__ import annotations

import argparse
import keyword
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from irforge.errors import IrforgeError
from irforge.output_files import prepare_output_dir, write_files
from irforge.tools.cli import exit_on_error
from irforge.tools.versions import add_version
from irforge.tools.extgen_templates import ATTR_TYPES, Spec, render

ATTR = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):(int|float|bool|str|ints|floats)=(.*)$")


def parse_attr(text: str) -> tuple[str, str, str]:
    """`name:type=default` -> (name, type, default as Python source)."""
    match = ATTR.match(text)
    if not match or keyword.iskeyword(match.group(1)):
        raise IrforgeError(f"bad --attr '{text}'", fix=f"write name:type=default with type one of {', '.join(ATTR_TYPES)}, e.g. alpha:float=0.5", code="E941")
    name, kind, default = match.groups()
    try:
        value = {"int": int, "float": float, "str": str}.get(kind, lambda v: v)(default)
        if kind == "bool":
            value = {"true": True, "false": False, "1": True, "0": False}[default.lower()]
        elif kind in ("ints", "floats"):
            cast = int if kind == "ints" else float
            value = [cast(v) for v in default.strip("[]").split(",") if v.strip()]
    except (ValueError, KeyError):
        raise IrforgeError(f"bad default in --attr '{text}': '{default}' is not a {kind}", fix="e.g. alpha:float=0.5, axes:ints=[1,2]", code="E941") from None
    return name, kind, repr(value)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ir-extgen", description="Generate a custom-layer extension for irforge.", allow_abbrev=False)
    add_version(p)
    sub = p.add_subparsers(dest="command", required=True)
    new = sub.add_parser("new", help="write an extension module and its test", allow_abbrev=False)
    new.add_argument("--op", required=True, help="the framework op / layer type, e.g. MyRelu")
    new.add_argument("--framework", required=True, choices=["onnx", "caffe", "tf"])
    new.add_argument("--domain", default="", help="ONNX: the op's domain (default: the standard one)")
    new.add_argument("--attr", action="append", default=[], type=parse_attr, metavar="NAME:TYPE=DEFAULT")
    new.add_argument("--cpu", action="store_true", help="add a native CPU kernel (LLVM IR through llvmlite)")
    new.add_argument("--gpu", action="store_true", help="add an OpenCL kernel")
    new.add_argument("-o", "--output_dir", required=True, help="where to write the two files")
    new.add_argument("--force", action="store_true", help="overwrite existing files")
    return p


def generate(argv: Sequence[str]) -> None:
    args = build_parser().parse_args(argv)
    # a class name, and part of two file names: 100 characters keep them within NAME_MAX
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,99}", args.op) or keyword.iskeyword(args.op):
        raise IrforgeError(f"bad --op '{args.op}'", fix="give a name usable as a Python class name (at most 100 characters), e.g. MyRelu", code="E941")
    if args.domain and args.framework != "onnx":
        raise IrforgeError("--domain applies to ONNX ops only", fix="leave it out", code="E941")
    spec = Spec(args.op, args.framework, args.domain, tuple(args.attr), args.cpu, args.gpu)
    module, test = render(spec)
    out = Path(args.output_dir)
    targets = {out / f"{spec.snake}.py": module, out / f"test_{spec.snake}.py": test}
    existing = [str(p) for p in targets if p.exists()]
    if existing and not args.force:
        raise IrforgeError(f"{', '.join(existing)} already exist", fix="choose another -o folder, or pass --force", code="E941")
    prepare_output_dir(out)
    write_files([(path, lambda f, text=text: f.write(text.encode("utf-8"))) for path, text in targets.items()])
    print(f"wrote {', '.join(str(p) for p in targets)}")
    print(f"next: fill in the parts marked YOUR MATH, then `python -m pytest {out / f'test_{spec.snake}.py'}`")


def main(argv: Sequence[str] | None = None) -> None:
    exit_on_error(lambda: generate(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
