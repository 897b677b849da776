"""nnet3's config lines and descriptors.

    input-node name=input dim=40
    component-node name=tdnn1.affine component=tdnn1.affine input=Append(Offset(input, -1), input)
    dim-range-node name=part input-node=tdnn1.affine dim-offset=0 dim=10
    output-node name=output input=output.log-softmax objective=linear

A descriptor says which frames of which nodes feed a node: a node name, Append(d, ...),
Sum(d, ...), Offset(d, t[, x]), IfDefined(d), ReplaceIndex(d, t|x, value), Scale(s, d) and
Const(value, dim). Every syntax error is one line naming the config line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from irforge.errors import IrforgeError


@dataclass(frozen=True)
class Desc:
    """A descriptor: `kind` ("node", "Append", "Sum", "Offset", "IfDefined", "ReplaceIndex",
    "Scale", "Const"), its sub-descriptors and its numbers (Offset: t, x; ReplaceIndex:
    the index's value, `name` = "t" or "x"; Scale: the scale; Const: value, dim)."""

    kind: str
    parts: tuple[Desc, ...] = ()
    numbers: tuple[float, ...] = ()
    name: str = ""


@dataclass
class Node:
    kind: str
    """"input", "component", "dim-range" or "output"."""
    name: str
    line: int
    options: dict[str, str] = field(default_factory=dict)
    input: Desc | None = None


NODE_KINDS = {"input-node": "input", "component-node": "component", "dim-range-node": "dim-range", "output-node": "output"}
_OPTION = re.compile(r"(?:^|\s)([A-Za-z][\w-]*)=")
_TOKEN = re.compile(r"\s*(?:(?P<num>[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)|(?P<name>[A-Za-z_][\w.\-]*)|(?P<punct>[(),]))")


def config_error(line: int, what: str, where: str) -> IrforgeError:
    return IrforgeError(f"bad nnet3 config line {line}: {what}", where=where, fix="check the model's config lines (nnet3-info)", code="E507")


def parse_nodes(lines: list[tuple[int, str]], where: str) -> list[Node]:
    nodes = []
    for number, text in lines:
        words = text.split(None, 1)
        if not words or words[0] not in NODE_KINDS:
            raise config_error(number, f"unknown line type '{(words or [''])[0][:40]}'", where)
        node = Node(NODE_KINDS[words[0]], "", number, _options(words[1] if len(words) > 1 else "", number, where))
        node.name = node.options.get("name", "")
        if not node.name:
            raise config_error(number, "has no name=", where)
        if node.kind in ("component", "output"):
            if "input" not in node.options:
                raise config_error(number, f"node '{node.name}' has no input=", where)
            node.input = parse_descriptor(node.options["input"], number, where)
        nodes.append(node)
    return nodes


def _options(text: str, line: int, where: str) -> dict[str, str]:
    matches = list(_OPTION.finditer(text))
    if text.strip() and (not matches or text[: matches[0].start()].strip()):
        raise config_error(line, f"expected key=value, found '{text[:40]}'", where)
    options = {}
    for m, after in zip(matches, matches[1:] + [None]):
        options[m.group(1)] = text[m.end() : after.start() if after else len(text)].strip()
    return options


def parse_descriptor(text: str, line: int, where: str) -> Desc:
    tokens = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise config_error(line, f"cannot read the descriptor '{text[:60]}' at '{text[pos:pos + 20]}'", where)
        tokens.append(m.group(m.lastgroup or ""))
        pos = m.end()
    parser = _Parser(tokens, line, where, text)
    desc = parser.descriptor()
    if parser.i != len(tokens):
        raise parser.fail("extra text after the descriptor")
    return desc


class _Parser:
    def __init__(self, tokens: list[str], line: int, where: str, text: str) -> None:
        self.tokens, self.i, self.line, self.where, self.text = tokens, 0, line, where, text

    def fail(self, what: str) -> IrforgeError:
        return config_error(self.line, f"{what} in '{self.text[:80]}'", self.where)

    def next(self) -> str:
        if self.i >= len(self.tokens):
            raise self.fail("the descriptor ends early")
        self.i += 1
        return self.tokens[self.i - 1]

    def expect(self, token: str) -> None:
        if self.next() != token:
            raise self.fail(f"expected '{token}'")

    def number(self) -> float:
        word = self.next()
        try:
            return float(word)
        except ValueError:
            raise self.fail(f"expected a number, found '{word}'") from None

    def integer(self) -> int:
        value = self.number()
        if value != int(value):
            raise self.fail(f"expected an integer, found {value}")
        return int(value)

    def descriptor(self) -> Desc:
        head = self.next()
        if self.i >= len(self.tokens) or self.tokens[self.i] != "(":
            if not re.match(r"[A-Za-z_]", head):
                raise self.fail(f"expected a node name, found '{head}'")
            return Desc("node", name=head)
        self.expect("(")
        if head in ("Append", "Sum"):
            parts = [self.descriptor()]
            while self.next() == ",":
                parts.append(self.descriptor())
            self.i -= 1
            self.expect(")")
            return Desc(head, tuple(parts))
        if head == "Offset":
            inner = self.descriptor()
            self.expect(",")
            numbers = [self.integer()]
            if self.tokens[self.i : self.i + 1] == [","]:
                self.next()
                numbers.append(self.integer())
            self.expect(")")
            return Desc(head, (inner,), tuple(numbers))
        if head == "IfDefined":
            inner = self.descriptor()
            self.expect(")")
            return Desc(head, (inner,))
        if head == "ReplaceIndex":
            inner = self.descriptor()
            self.expect(",")
            variable = self.next()
            if variable not in ("t", "x"):
                raise self.fail(f"ReplaceIndex replaces t or x, not '{variable}'")
            self.expect(",")
            value = self.integer()
            self.expect(")")
            return Desc(head, (inner,), (value,), variable)
        if head == "Scale":
            scale = self.number()
            self.expect(",")
            inner = self.descriptor()
            self.expect(")")
            return Desc(head, (inner,), (scale,))
        if head == "Const":
            value = self.number()
            self.expect(",")
            dim = self.integer()
            self.expect(")")
            return Desc(head, (), (value, dim))
        raise self.fail(f"descriptor {head}(...) is not supported (supported: Append, Sum, Offset, IfDefined, ReplaceIndex, Scale, Const)")
