"""Custom layers round-trip through IR XML: a layer whose version is a loaded extension's
name and whose type is one of its ops' IR type reads back into that op, attributes parsed
by their declared kinds."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.custom import Attr, CustomOp
from irforge.errors import IrforgeError
from irforge.frontends.ir_xml import read_ir_xml
from tests.helpers import rand


class ScaledShift(CustomOp):
    """Every attribute kind changes the outputs, so a misread one shows."""

    extension = "xml_custom_test"
    op = "scaled_shift"
    num_outputs = 2
    attrs = {
        "scale": Attr(float, 1.0),
        "shift": Attr(int, 0),
        "negate": Attr(bool, False),
        "mode": Attr(str, "plain"),
        "axes": Attr("ints", [1]),
        "weights": Attr("floats", [1.0]),
    }

    def forward(self, x: np.ndarray) -> list[np.ndarray]:
        y = x * self.scale + self.shift
        y = -y if self.negate else y
        if self.mode == "square":
            y = y * y
        return [y, x.sum(axis=tuple(self.axes), keepdims=True) * sum(self.weights) + np.zeros_like(x)]


class SoftClamp(CustomOp):
    """An IR type that is also an opset type: the version decides which reads it."""

    extension = "xml_custom_test"
    op = "soft_clamp"
    ir_type = "Clamp"
    attrs = {"limit": Attr(float, 1.0)}

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.limit * np.tanh(x / self.limit)


X = rand(2, 3, 4, seed=1, low=-3.0, high=3.0)


def custom_model(**props: object):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", X.shape)
    first = b.add(ScaledShift.op_class, [x], num_results=2, **props)
    clamped = b.add(SoftClamp.op_class, [first.results[0]], limit=2.5)
    b.output(clamped.results[0], "y")
    b.output(first.results[1], "total")
    return b.finish()


@pytest.mark.parametrize(
    "props",
    [
        {},
        dict(scale=0.5, shift=2, negate=True, mode="square", axes=[0, 2], weights=[0.25, 2.0]),
        dict(axes=[], weights=[]),
    ],
    ids=["defaults", "all-set", "empty-lists"],
)
def test_custom_layers_round_trip(tmp_path, props) -> None:
    model = custom_model(**props)
    write_ir_xml(model, tmp_path / "a.xml")
    text = (tmp_path / "a.xml").read_text()
    assert 'type="ScaledShift" version="xml_custom_test"' in text and 'type="Clamp" version="xml_custom_test"' in text
    again = read_ir_xml(tmp_path / "a.xml")
    assert {op.name for op in again.func.body.block.ops} >= {"xml_custom_test.scaled_shift", "xml_custom_test.soft_clamp"}
    want, got = run(model, {"x": X}), run(again, {"x": X})
    for name in ("y", "total"):
        np.testing.assert_array_equal(got[name], want[name])
    write_ir_xml(again, tmp_path / "b.xml")
    assert (tmp_path / "b.xml").read_text() == text
    assert (tmp_path / "b.bin").read_bytes() == (tmp_path / "a.bin").read_bytes()


def test_another_version_is_not_the_custom_op(tmp_path) -> None:
    write_ir_xml(custom_model(), tmp_path / "m.xml")
    text = (tmp_path / "m.xml").read_text()
    (tmp_path / "m.xml").write_text(text.replace('type="ScaledShift" version="xml_custom_test"', 'type="ScaledShift" version="other_ext"'))
    with pytest.raises(IrforgeError, match=r"unsupported IR layer types: ScaledShift \(other_ext\) x1 .*; load the extension"):
        read_ir_xml(tmp_path / "m.xml")


def test_unknown_attribute_of_a_custom_layer(tmp_path) -> None:
    write_ir_xml(custom_model(), tmp_path / "m.xml")
    text = (tmp_path / "m.xml").read_text()
    (tmp_path / "m.xml").write_text(text.replace('<data limit=', '<data lmit="1" limit='))
    with pytest.raises(IrforgeError, match=r"attribute 'lmit' is not one of xml_custom_test.soft_clamp's \(limit\) \(IR layer .*\); regenerate") as error:
        read_ir_xml(tmp_path / "m.xml")
    assert "\n" not in str(error.value)


def test_badly_typed_attribute_of_a_custom_layer(tmp_path) -> None:
    write_ir_xml(custom_model(shift=3), tmp_path / "m.xml")
    text = (tmp_path / "m.xml").read_text()
    (tmp_path / "m.xml").write_text(text.replace('shift="3"', 'shift="3.5"'))
    with pytest.raises(IrforgeError, match=r"attribute shift='3.5' is not a 64-bit integer"):
        read_ir_xml(tmp_path / "m.xml")
