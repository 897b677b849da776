"""ONNX sequences and optionals from TorchScript (torch.jit.script + torch.onnx's TorchScript
exporter): Python lists appended to in a `for` over a constant range, torch.cat / torch.stack
of a list, torch.split then an index, an Optional argument. irforge resolves the sequences at
import (frontends/onnx/sequences.py); each row: convert, then OpenVINO (on irforge's IR XML,
f32), ref and cpu against onnxruntime (max abs error). The last row, a list grown in a loop
whose trip count is an input, is expected to be refused (E195) unless its count is frozen.
Needs torch (the zoo venv), outside CI:

    PYTHONPATH=. /work/zoo-venv/bin/python bench/sequences_torch.py [OUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Optional

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
import torch
from torch import Tensor, nn

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx.importer import import_onnx


class FeaturePyramid(nn.Module):
    """Feature maps collected in a list over a constant range, then concatenated (FPN-like)."""

    def __init__(self) -> None:
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(8, 8, 3, padding=1) for _ in range(3)])

    def forward(self, x: Tensor) -> Tensor:
        feats: list[Tensor] = []
        for conv in self.convs:
            x = torch.relu(conv(x))
            feats.append(x)
        return torch.cat(feats, 1)


class RangeStack(nn.Module):
    """`for i in range(4)` appending a step's state; torch.stack of the list and its last item."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(6, 6)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        states: list[Tensor] = []
        h = x
        for i in range(4):
            h = torch.tanh(self.lin(h)) + float(i)
            states.append(h)
        return torch.stack(states, 1), states[-1] * 2


class SplitHeads(nn.Module):
    """torch.split into chunks, the chunks indexed (first, last, by a negative index) and summed."""

    def forward(self, x: Tensor) -> Tensor:
        parts = torch.split(x, 3, dim=1)
        total = parts[0]
        for i in range(1, len(parts) - 1):  # (a slice of the list, parts[1:-1], exports as an invalid Slice of a sequence)
            total = total + parts[i]
        return torch.cat([total, parts[-1]], 1) * len(parts)


class OptionalBias(nn.Module):
    """An Optional[Tensor] argument tested with `is not None`."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(5, 5)

    def forward(self, x: Tensor, bias: Optional[Tensor] = None) -> Tensor:  # noqa: UP045 (TorchScript)
        y = self.lin(x)
        if bias is not None:
            y = y + bias
        return torch.relu(y)


class ShapeRange(nn.Module):
    """A list appended to in a `for` over range(x.size(0)) (a Loop whose trip count is a
    Shape: constant at static input shapes, so it unrolls at import), stacked, and its items
    read by index."""

    def forward(self, x: Tensor) -> Tensor:
        items: list[Tensor] = []
        for i in range(x.size(0)):
            items.append(torch.sin(x[i] * float(i)))
        return torch.stack(items, 0) + items[1] - items[-2]


class NoBias(nn.Module):
    """OptionalBias called with None inside the scripted code (an exported input cannot be None)."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = OptionalBias()

    def forward(self, x: Tensor) -> Tensor:
        return self.inner(x, None)


class RunTimeAppend(nn.Module):
    """A list grown `n` times, n an input: the sequence's length is known only at run time."""

    def forward(self, x: Tensor, n: int) -> Tensor:
        items: list[Tensor] = []
        for i in range(n):
            items.append(x * float(i))
        return torch.cat(items, 0)


class PrefixedAppend(nn.Module):
    """A list that starts with x and grows `n` times, n an input; stacked and indexed from the end."""

    def forward(self, x: Tensor, n: int) -> tuple[Tensor, Tensor]:
        items: list[Tensor] = [x]
        for i in range(n):
            items.append(torch.cos(x + float(i)))
        return torch.stack(items, 1), items[-1]


class DataIfLists(nn.Module):
    """A list built by an `if` on data, then concatenated."""

    def forward(self, x: Tensor) -> Tensor:
        if bool(x.sum() > 0):
            items = [x * 2.0, x]
        else:
            items = [x + 1.0, x - 1.0]
        return torch.cat(items, 0)


def rng(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


ROWS = [
    ("list-append-cat", FeaturePyramid, (torch.randn(1, 8, 10, 10),), {"x": rng(1, 1, 8, 10, 10)}),
    ("range-stack-index", RangeStack, (torch.randn(2, 6),), {"x": rng(2, 2, 6)}),
    ("shape-range-stack", ShapeRange, (torch.randn(4, 5),), {"x": rng(7, 4, 5)}),
    ("split-index", SplitHeads, (torch.randn(2, 11),), {"x": rng(3, 2, 11)}),
    ("optional-bias", OptionalBias, (torch.randn(3, 5), torch.randn(3, 5)), {"x": rng(4, 3, 5), "bias": rng(5, 3, 5)}),
    ("optional-none", NoBias, (torch.randn(3, 5),), {"x": rng(4, 3, 5)}),
    ("run-time-append", RunTimeAppend, (torch.randn(2, 3), 3), {"x": rng(6, 2, 3), "n": np.array(3, np.int64)}),
    ("prefixed-append", PrefixedAppend, (torch.randn(2, 3), 3), {"x": rng(8, 2, 3), "n": np.array(3, np.int64)}),
    ("data-if-lists", DataIfLists, (torch.randn(2, 3),), {"x": rng(9, 2, 3)}),
    ("data-if-lists-neg", DataIfLists, (torch.randn(2, 3),), {"x": -np.abs(rng(9, 2, 3))}),
]
RUN_TIME_COUNTS = {"run-time-append": ("n", [1, 3, 7]), "prefixed-append": ("n", [0, 1, 4])}
"""Rows whose input is a trip count: run at each of these values (the IR has one Loop)."""

SEQUENCE_OPS = {"SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceAt", "SequenceLength", "SequenceErase",
                "ConcatFromSequence", "SplitToSequence", "SequenceMap", "Optional", "OptionalHasElement", "OptionalGetElement"}  # fmt: skip


def ops(graph: onnx.GraphProto) -> list[str]:
    found = []
    for node in graph.node:
        found.append(node.op_type)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                found += ops(attr.g)
    return found


def row(name: str, make, args, feeds, out: Path) -> str:  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    path = out / f"{name}.onnx"
    names = list(feeds)
    torch.onnx.export(torch.jit.script(make().eval()), args, str(path), input_names=names, opset_version=17, dynamo=False)
    exported = onnx.load(str(path))
    used = sorted({op for op in ops(exported.graph) if op in SEQUENCE_OPS or op in ("Loop", "If")})
    feeds = {vi.name: feeds[vi.name] for vi in exported.graph.input if vi.name in feeds}  # the exporter may drop unused inputs
    try:
        want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    except Exception as error:  # noqa: BLE001
        return f"| {name} | {', '.join(used)} | onnxruntime cannot run it: {str(error).splitlines()[0][:120]} | - | - | - |"
    try:
        model = import_onnx(str(path))
    except IrforgeError as error:
        return f"| {name} | {', '.join(used)} | {error.code}: {error.what[:160]} | - | - | - |"
    xml, _ = write_ir_xml(model, out / f"{name}.xml")
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    cpu = compile_model(model, threads=1, cache_dir=out / "cache")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    errors = {"openvino": 0.0, "ref": 0.0, "cpu": 0.0}
    count_name, counts = RUN_TIME_COUNTS.get(name, (None, [None]))
    try:
        for count in counts:
            if count_name is not None:
                feeds = {**feeds, count_name: np.array(count, np.int64)}
            want = session.run(None, feeds)
            on_ov = compiled(feeds)
            got = {"openvino": [on_ov[o] for o in compiled.outputs], "ref": list(run(model, feeds).values()), "cpu": list(cpu(feeds).values())}
            for key, outputs in got.items():
                worst = max(float(np.abs(np.asarray(g) - w).max()) for g, w in zip(outputs, want, strict=True))
                errors[key] = max(errors[key], worst)
    finally:
        cpu.close()
    at = f" (n = {', '.join(map(str, counts))})" if count_name else ""
    return f"| {name} | {', '.join(used)} | yes{at} | {errors['openvino']:.1e} | {errors['ref']:.1e} | {errors['cpu']:.1e} |"


def main(out: Path) -> None:
    print("| module | ONNX ops (sequence / control) | convert | openvino | ref | cpu |")
    print("|---|---|---|---|---|---|")
    for name, make, args, feeds in ROWS:
        print(row(name, make, args, feeds, out), flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()))
