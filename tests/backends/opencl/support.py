"""Helpers of the OpenCL backend tests: many one-op cases compiled as one model (one program
build on the device), checked against the reference interpreter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from irforge.backends.opencl import CompiledModel, compile_model
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn.base import NNOp
from irforge.model import Model


@dataclass
class Case:
    cls: type[NNOp]
    inputs: Sequence[np.ndarray]
    constants: Sequence[np.ndarray] = ()
    props: dict[str, object] = field(default_factory=dict)
    results: int = 1

    def label(self) -> str:
        shapes = ",".join("x".join(map(str, x.shape)) for x in self.inputs)
        return f"{self.cls.name}({shapes}) {self.props}"


def case(cls: type[NNOp], inputs: Sequence[np.ndarray], constants: Sequence[np.ndarray] = (), results: int = 1, **props: object) -> Case:
    return Case(cls, inputs, constants, props, results)


def grid_model(cases: Sequence[Case]) -> tuple[Model, dict[str, np.ndarray], dict[str, str]]:
    """One model applying every case's op to inputs of its own; feeds; output -> case label."""
    b = ModelBuilder()
    feeds, labels = {}, {}
    for i, c in enumerate(cases):
        args = []
        for j, x in enumerate(c.inputs):
            feeds[f"in{i}_{j}"] = x
            args.append(b.input(f"in{i}_{j}", x.shape, x.dtype))
        consts = [b.constant(k, f"c{i}_{j}") for j, k in enumerate(c.constants)]
        op = b.add(c.cls, [*args, *consts], num_results=c.results, **c.props)
        for r, result in enumerate(op.results):
            b.output(result, f"out{i}_{r}")
            labels[f"out{i}_{r}"] = c.label()
    return b.finish(), feeds, labels


def check_cases(cases: Sequence[Case], rtol: float = 1e-4, atol: float = 1e-5) -> CompiledModel:
    """Every case on the OpenCL device (none may fall back) equals the reference."""
    model, feeds, labels = grid_model(cases)
    compiled = compile_model(model)
    assert compiled.fallbacks == [], [f.describe() for f in compiled.fallbacks]
    got = compiled(feeds)
    want = run(model, feeds)
    for name, expected in want.items():
        assert got[name].dtype == expected.dtype, labels[name]
        assert got[name].shape == expected.shape, labels[name]
        np.testing.assert_allclose(got[name], expected, rtol=rtol, atol=atol, err_msg=labels[name])
    return compiled
