"""Extensions add Kaldi component types, or replace built-in extractors, with @kaldi_extractor."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from xdsl.ir import SSAValue

from irforge.backends.reference import run
from irforge.dialects.nn import Eltwise
from irforge.frontends.kaldi import import_kaldi, kaldi_extractor
from irforge.frontends.kaldi.registry import EXTRACTORS, ComponentContext
from irforge.testing import kaldi_models as km


@pytest.fixture
def saved_extractors() -> Iterator[None]:
    saved = dict(EXTRACTORS)
    yield
    EXTRACTORS.clear()
    EXTRACTORS.update(saved)


def test_extension_adds_a_component_type(tmp_path: Path, saved_extractors: None) -> None:
    @kaldi_extractor("<MyScaleComponent>")
    def my_scale(ctx: ComponentContext) -> SSAValue:
        factor = ctx.constant(np.array([ctx.component.float("<Scale>")], np.float32))
        return ctx.value(Eltwise, [ctx.input, factor], operation="mul")

    spec = km.Nnet3Spec(
        ["input-node name=input dim=3", "component-node name=s component=s input=Offset(input, 1)", "output-node name=output input=s"],
        [km.Layer("<MyScaleComponent>", [("<Dim>", 3), ("<Scale>", 2.5)], name="s")],
    )
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    for binary in (True, False):
        path = tmp_path / "ext.raw"
        path.write_bytes(km.write_nnet3(spec, binary))
        got = run(import_kaldi(str(path), frames=4), {"input": x})["output"]
        np.testing.assert_allclose(got, 2.5 * x[[1, 2, 3, 3]])


def test_extension_replaces_a_builtin(tmp_path: Path, saved_extractors: None) -> None:
    kaldi_extractor("<Tanh>")(lambda ctx: ctx.input)
    layers = [km.Layer("<Tanh>", [], (3, 3))]
    path = tmp_path / "t.nnet"
    path.write_bytes(km.write_nnet1(layers, True))
    x = np.full((2, 3), 3.0, np.float32)
    np.testing.assert_array_equal(run(import_kaldi(str(path), frames=2), {"input": x})["output"], x)
