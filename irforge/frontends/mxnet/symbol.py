"""Reading an MXNet symbol file (`NAME-symbol.json`) without MXNet.

    {"nodes": [{"op": "null", "name": "data", "inputs": []},
               {"op": "Convolution", "name": "conv0", "attrs": {"kernel": "(3, 3)", ...},
                "inputs": [[0, 0, 0], [1, 0, 0]]}, ...],
     "arg_nodes": [0, 1], "node_row_ptr": [...], "heads": [[5, 0, 0]]}

Weights and inputs are `op: "null"` nodes. The attributes are in `attrs` (MXNet >= 1.0),
`attr` (0.9), or `param` with user hints beside it in `attr` (0.8, whose BatchNorm nodes do
not list their moving statistics as inputs); every value is a string (`"(3, 3)"`, `"True"`,
`"1e-05"`), parsed on use by `Attrs`. An input entry is `[node, output, version]` (the
version is dropped; older files give two numbers). Nodes come in topological order, which
the reader checks: an input must name an earlier node.
"""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irforge.errors import IrforgeError

PERFORMANCE_ATTRIBUTES = frozenset({"workspace", "cudnn_tune", "cudnn_off", "cudnn_algo_verbose", "cudnn_algo_fwd", "cudnn_algo_bwdd", "cudnn_algo_bwdf"})
"""Attributes that choose how MXNet computes, never what: no extractor needs to read them.
Double-underscore attributes (`__lr_mult__`, `__init__`, ...) are trainer hints, except an
input's `__shape__`/`__dtype__`, which the importer reads."""


@dataclass(frozen=True)
class Node:
    index: int
    op: str
    name: str
    attrs: Attrs
    inputs: tuple[tuple[int, int], ...]
    """(node index, output index) per input."""


@dataclass
class Symbol:
    path: Path
    nodes: list[Node]
    heads: list[tuple[int, int]]


class Attrs:
    """A node's attributes (all strings), read as typed values with MXNet's defaults."""

    def __init__(self, values: Mapping[str, str], where: str, hints: Mapping[str, str] | None = None) -> None:
        self.values = {**(hints or {}), **values}
        self.hints = set(hints or {}) - set(values)
        self.where = where
        self.read: set[str] = set()

    def unread(self) -> list[str]:
        """Attributes no extractor asked for and that may change the numbers."""
        skipped = PERFORMANCE_ATTRIBUTES | self.hints | self.read
        return sorted(k for k in self.values if k not in skipped and not k.startswith("__"))

    def __contains__(self, key: str) -> bool:
        self.read.add(key)
        return key in self.values

    def fail(self, key: str, expected: str) -> IrforgeError:
        return IrforgeError(
            f"attribute {key}={self.values[key]!r} is not {expected}",
            where=self.where,
            fix="fix the symbol file (MXNet writes attribute values as Python literals)",
            code="E411",
        )

    def _literal(self, key: str) -> Any:
        self.read.add(key)
        text = self.values[key].strip()
        if text in ("None", "none"):
            return None
        if text in ("True", "true"):
            return True
        if text in ("False", "false"):
            return False
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return text

    def str(self, key: str, default: str) -> str:
        self.read.add(key)
        return self.values[key].strip() if key in self.values else default

    def bool(self, key: str, default: bool) -> bool:
        self.read.add(key)
        if key not in self.values:
            return default
        value = self._literal(key)
        if isinstance(value, bool) or value in (0, 1):
            return bool(value)
        raise self.fail(key, "a boolean")

    def float(self, key: str, default: float) -> float:
        self.read.add(key)
        if key not in self.values:
            return default
        value = self._literal(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise self.fail(key, "a number")

    def int(self, key: str, default: int) -> int:
        self.read.add(key)
        if key not in self.values:
            return default
        value = self._literal(key)
        if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
            return value
        if isinstance(value, float) and value.is_integer() and -(2.0**63) <= value < 2.0**63:
            return int(value)
        raise self.fail(key, "an integer (of 64 bits)")

    def optional_int(self, key: str) -> int | None:
        """An int, or None where absent or `None`."""
        self.read.add(key)
        if key not in self.values or self._literal(key) is None:
            return None
        return self.int(key, 0)

    def ints(self, key: str, default: Sequence[int] | None = None) -> list[int] | None:
        """A tuple such as `(3, 3)` (a bare number is a tuple of one; `None` or `()` give
        `default`). None entries (numpy-style `slice` ends) are kept out: see `optional_ints`."""
        values = self.optional_ints(key)
        if values is None or not values:
            return None if default is None else list(default)
        if any(v is None for v in values):
            raise self.fail(key, "a tuple of integers")
        return [v for v in values if v is not None]

    def optional_ints(self, key: str) -> list[int | None] | None:
        self.read.add(key)
        if key not in self.values:
            return None
        value = self._literal(key)
        if value is None:
            return None
        items = list(value) if isinstance(value, (tuple, list)) else [value]
        if not all(v is None or (isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63) for v in items):
            raise self.fail(key, "a tuple of integers (of 64 bits)")
        return items

    def floats(self, key: str, default: Sequence[float] | None = None) -> list[float] | None:
        self.read.add(key)
        if key not in self.values or self._literal(key) is None:
            return None if default is None else list(default)
        value = self._literal(key)
        items = list(value) if isinstance(value, (tuple, list)) else [value]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
            raise self.fail(key, "a tuple of numbers")
        return [float(v) for v in items]


def _fail(where: str, what: str) -> IrforgeError:
    return IrforgeError(
        f"{where} is not an MXNet symbol file: {what}",
        fix="give the NAME-symbol.json that MXNet's export/save_checkpoint wrote",
        code="E410",
    )


def _entry(raw: Any, where: str, what: str) -> tuple[int, int]:
    if not isinstance(raw, list) or len(raw) not in (2, 3) or not all(isinstance(v, int) and not isinstance(v, bool) for v in raw):
        raise _fail(where, f"{what} {raw!r} is not [node, output, version]")
    return int(raw[0]), int(raw[1])


def _node(index: int, raw: Any, where: str) -> Node:
    if not isinstance(raw, dict) or not isinstance(raw.get("op"), str) or not isinstance(raw.get("name"), str):
        raise _fail(where, f"node #{index} has no string 'op' and 'name'")
    if "param" in raw:  # MXNet < 0.9: op parameters in `param`, user hints (ctx_group, lr_mult) in `attr`
        attrs, hints = raw["param"], raw.get("attr", {})
    else:
        attrs, hints = raw.get("attrs", raw.get("attr", {})), {}
    for values in (attrs, hints):
        if not isinstance(values, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
            raise _fail(where, f"node '{raw['name']}' has attributes that are not strings")
    inputs = raw.get("inputs", [])
    if not isinstance(inputs, list):
        raise _fail(where, f"node '{raw['name']}' has inputs that are not a list")
    entries = tuple(_entry(e, where, f"an input of node '{raw['name']}'") for e in inputs)
    for source, _ in entries:
        if not 0 <= source < index:
            raise _fail(where, f"node '{raw['name']}' reads node #{source}, which is not an earlier node")
    return Node(index, raw["op"], raw["name"], Attrs(attrs, f"MXNet node '{raw['name']}' ({raw['op']})", hints), entries)


def parse_symbol(text: str, path: Path) -> Symbol:
    where = f"'{path}'"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise _fail(where, f"bad JSON at line {e.lineno} column {e.colno} ({e.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise _fail(where, "it has no 'nodes' list")
    nodes = [_node(i, raw, where) for i, raw in enumerate(data["nodes"])]
    heads = [_entry(h, where, "head") for h in data.get("heads", [])]
    if not heads:
        raise _fail(where, "it has no 'heads' (outputs)")
    for source, _ in heads:
        if not 0 <= source < len(nodes):
            raise _fail(where, f"a head names node #{source}, which does not exist")
    return Symbol(path, nodes, heads)


def load_symbol(path: str | os.PathLike[str]) -> Symbol:
    path = Path(path)
    if path.exists() and not path.is_file():  # a FIFO or /dev/zero would block or never end
        raise IrforgeError(f"MXNet symbol file '{path}' is not a regular file", fix="give the path of NAME-symbol.json", code="E400")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise IrforgeError(f"MXNet symbol file '{path}' does not exist", fix="check the path, or give it with --input_symbol", code="E400") from None
    except (OSError, UnicodeDecodeError) as e:
        raise _fail(f"'{path}'", f"it cannot be read as UTF-8 text ({e})") from None
    return parse_symbol(text, path)
