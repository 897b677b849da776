"""The MXNet frontend's entry in the frontend table, with mo.py's MXNet flags.

    --input_model NAME-0000.params [--input_symbol NAME-symbol.json]
    --input_model NAME-symbol.json            (the one NAME-NNNN.params beside it)
    --input_symbol S --nd_prefix_name P --pretrained_model_name M-0000.params
                                              (M's weights merged with P_args.nd, P_auxs.nd)

The symbol is found beside the weights as NAME-symbol.json when --input_symbol is omitted
(NAME-0000.params and gluon's NAME.params alike). MXNet symbols carry no input shapes unless
an input has a `__shape__` attribute, so --input_shape is usually required.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from irforge.errors import IrforgeError
from irforge.frontends.registry import Frontend, register_frontend
from irforge.model import Model

EPOCH = re.compile(r"^(?P<stem>.*?)(-\d+)?\.params$", re.IGNORECASE)
SYMBOL_SUFFIX = "-symbol.json"
ND_FLAGS_FIX = "give all of --input_symbol, --nd_prefix_name and --pretrained_model_name, or none of them (mo.py's rule)"


def symbol_beside(weights: Path) -> Path:
    """NAME-symbol.json for NAME-0000.params (or gluon's NAME.params)."""
    match = EPOCH.match(weights.name)
    stem = match.group("stem") if match else weights.stem
    return weights.with_name(stem + SYMBOL_SUFFIX)


def weights_beside(symbol: Path) -> Path:
    """The single NAME-NNNN.params (or NAME.params) beside NAME-symbol.json."""
    stem = symbol.name[: -len(SYMBOL_SUFFIX)] if symbol.name.lower().endswith(SYMBOL_SUFFIX) else symbol.stem
    found = sorted(p for p in symbol.parent.glob(f"{glob_escape(stem)}*.params") if (m := EPOCH.match(p.name)) and m.group("stem") == stem)
    if len(found) != 1:
        what = "none" if not found else ", ".join(p.name for p in found)
        raise IrforgeError(
            f"the symbol '{symbol}' needs its weights: found {what} beside it",
            fix="give the weights with --input_model NAME-0000.params --input_symbol NAME-symbol.json",
            code="E409",
        )
    return found[0]


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def resolve_paths(args: argparse.Namespace) -> tuple[Path, list[Path]]:
    """The symbol file and the weight files, merged in order (later ones win)."""
    model = Path(args.input_model)
    given_symbol = getattr(args, "input_symbol", None)
    prefix, pretrained = getattr(args, "nd_prefix_name", None), getattr(args, "pretrained_model_name", None)
    is_symbol = model.name.lower().endswith(SYMBOL_SUFFIX) or model.suffix.lower() == ".json"
    symbol = Path(given_symbol) if given_symbol else (model if is_symbol else None)
    if prefix or pretrained:
        if not (prefix and pretrained and symbol is not None):
            raise IrforgeError("--nd_prefix_name and --pretrained_model_name come together, with the symbol", fix=ND_FLAGS_FIX, code="E409")
        base = Path(pretrained)
        if not base.exists() and base.suffix.lower() != ".params":
            base = base.with_name(base.name + "-0000.params")
        return symbol, [base, base.parent / f"{prefix}_args.nd", base.parent / f"{prefix}_auxs.nd"]
    if is_symbol:
        return model, [weights_beside(model)]
    if symbol is None:
        symbol = symbol_beside(model)
        if not symbol.exists():
            raise IrforgeError(
                f"no symbol file given for '{model}' and none found beside it ('{symbol}')",
                fix="give the topology with --input_symbol NAME-symbol.json",
                code="E409",
            )
    return symbol, [model]


def import_from_args(args: argparse.Namespace) -> Model:
    from irforge.frontends.mxnet.importer import SymbolImporter, Weights, import_mxnet
    from irforge.frontends.mxnet.loader import load_ndarray_list
    from irforge.frontends.mxnet.symbol import load_symbol
    from irforge.output_files import protect_inputs
    from irforge.tools.convert_args import match_shapes

    symbol_path, weight_paths = resolve_paths(args)
    protect_inputs(symbol_path, *weight_paths)  # ir-run --output NAME-0000.params would replace them
    symbol = load_symbol(symbol_path)
    named: dict = {}
    bfloat16: set[str] = set()
    for path in weight_paths:
        loaded = load_ndarray_list(path)
        part = Weights.from_named(loaded.arrays, loaded.bfloat16)
        named.update(part.arrays)
        bfloat16 = (bfloat16 - set(part.arrays)) | part.bfloat16
    weights = Weights(named, bfloat16)
    outputs = list(args.output or [])
    probe = SymbolImporter(symbol, weights, outputs=outputs)
    needed = probe.needed()
    probe.check(needed)  # unsupported ops and missing weights before any shape question
    names = [n.name for n in probe.input_nodes(needed)]
    shapes = match_shapes(args.input, args.input_shape, names) if args.input_shape else {}
    if args.batch is not None:
        declared = {n.name: n.attrs.ints("__shape__") for n in probe.input_nodes(needed)}
        missing = [n for n in names if n not in shapes and not declared[n]]
        if missing:
            raise IrforgeError(f"--batch needs the shape of input {', '.join(missing)}", fix="give --input_shape instead (MXNet symbols carry no input shapes)", code="E405")
        shapes = {n: [args.batch, *(shapes.get(n) or declared[n])[1:]] for n in names}  # type: ignore[index]
    return import_mxnet(symbol, weights, shapes, outputs)


def _add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--input_symbol", help="MXNet: the NAME-symbol.json (default: beside NAME-0000.params)")
    group.add_argument("--nd_prefix_name", help="MXNet: prefix P of P_args.nd and P_auxs.nd, merged into --pretrained_model_name's weights")
    group.add_argument("--pretrained_model_name", help="MXNet: the NAME-0000.params that P_args.nd/P_auxs.nd complete")


def _sniff(head: bytes) -> bool:
    return head[:8] == (0x112).to_bytes(8, "little")


FRONTEND = register_frontend(Frontend("mxnet", (".params", ".nd", SYMBOL_SUFFIX), import_from_args, sniff=_sniff, add_arguments=_add_arguments))
