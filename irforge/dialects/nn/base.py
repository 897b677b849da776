"""What every `nn` op shares: the layer name, the textual form, shape inference, verification.

An `nn` op is declared as an IRDL class deriving from `NNOp`. It lists its operands,
results and properties, implements `infer_shapes` (result types from operand types and
properties), and may add `verify_attributes` for property checks. `NNOp.verify_` runs both,
then checks that the declared result types agree with the inferred ones, so a wrong shape in
hand-written IR is caught where it is written.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar, TypeVar

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    NoneType,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, OptPropertyDef, ParsePropInAttrDict, opt_prop_def, traits_def
from xdsl.irdl.constraints import VerificationContext
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

DYN = DYNAMIC_INDEX
"""A dimension whose size is not known until run time (`?` in the IR)."""

Shape = tuple[int, ...]

IntArrayAttr = DenseArrayBase.constr(i64)
FloatArrayAttr = DenseArrayBase.constr(f32)


class NNOp(IRDLOperation, ABC):
    """Base of all `nn` ops: a pure tensor op with a framework layer name."""

    layer_name = opt_prop_def(StringAttr, prop_name="name")

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    STRING_CHOICES: ClassVar[Mapping[str, frozenset[str]]] = {}
    """Allowed values of string-valued properties, checked by the verifier."""

    SAME_ELEMENT_TYPE: ClassVar[tuple[str, ...]] = ()
    """Operands (by field name; optional and variadic ones too) that must share one element
    type: OpenVINO refuses to read e.g. an f16 input into an f32 Convolution."""

    @abstractmethod
    def infer_shapes(self) -> list[TensorType]:
        """Result types computed from the operand types and the properties."""

    def verify_attributes(self) -> None:
        """Property checks beyond their types; raise `self.error(...)` on violation."""

    # -- helpers for subclasses ------------------------------------------------------
    @property
    def label(self) -> str:
        layer = self.layer_name
        return f"{self.name} '{layer.data}'" if layer is not None else self.name

    def error(self, message: str) -> VerifyException:
        return VerifyException(f"{self.label}: {message}")

    def operand_type(self, index: int) -> TensorType:
        t = self.operands[index].type
        if not isinstance(t, TensorType):
            raise self.error(f"operand #{index} must be a tensor, got {t}")
        return t

    def operand_shape(self, index: int) -> Shape:
        return tuple(self.operand_type(index).get_shape())

    def ints(self, prop: str) -> tuple[int, ...]:
        value = getattr(self, prop)
        if value is None:
            return ()
        assert isinstance(value, DenseArrayBase)
        return tuple(int(v) for v in value.get_values())

    def floats(self, prop: str) -> tuple[float, ...]:
        value = getattr(self, prop)
        if value is None:
            return ()
        assert isinstance(value, DenseArrayBase)
        return tuple(float(v) for v in value.get_values())

    def int_prop(self, prop: str) -> int:
        value = getattr(self, prop)
        assert isinstance(value, IntegerAttr)
        return int(value.value.data)

    def float_prop(self, prop: str) -> float:
        value = getattr(self, prop)
        assert isinstance(value, FloatAttr)
        return float(value.value.data)

    def bool_prop(self, prop: str) -> bool:
        value = getattr(self, prop)
        assert isinstance(value, IntegerAttr)
        return bool(value.value.data)

    def str_prop(self, prop: str) -> str:
        value = getattr(self, prop)
        assert isinstance(value, StringAttr)
        return value.data

    def property_value(self, prop: str) -> object:
        """The Python value of a property, whatever its kind (for interpreters)."""
        return python_value(getattr(self, prop))

    # -- verification ----------------------------------------------------------------
    def check_properties(self) -> None:
        """Property checks that need no operand types: enumerations, then the op's own."""
        for prop, allowed in self.STRING_CHOICES.items():
            if prop not in self.properties and not isinstance(self.get_irdl_definition().properties.get(prop), OptPropertyDef):
                # a required choice left out (a transformations_config replacement without its
                # custom_attributes): xdsl's property lookup raised KeyError
                raise self.error(f"{prop} is required: one of {', '.join(sorted(allowed))}")
            if getattr(self, prop) is not None and self.str_prop(prop) not in allowed:
                raise self.error(
                    f"{prop} must be one of {', '.join(sorted(allowed))}, "
                    f"got '{self.str_prop(prop)}'"
                )
        self.verify_attributes()

    def check_element_types(self) -> None:
        typed: list[tuple[str, Attribute]] = []
        for field in self.SAME_ELEMENT_TYPE:
            operand = getattr(self, field)
            values = [] if operand is None else list(operand) if isinstance(operand, Sequence) else [operand]
            typed += [(field, v.type.element_type) for v in values if isinstance(v.type, TensorType)]
        if any(t != typed[0][1] for _, t in typed):
            shown = ", ".join(f"{f} {t}" for f, t in typed[:4])
            raise self.error(f"operands must have one element type, got {shown}")

    def verify_(self) -> None:
        self.check_properties()
        if any(not isinstance(o.type, TensorType) for o in self.operands):
            return
        self.check_element_types()
        inferred = self.infer_shapes()
        if len(inferred) != len(self.results):
            raise self.error(f"expected {len(inferred)} results, got {len(self.results)}")
        for i, (result, expected) in enumerate(zip(self.results, inferred)):
            if not isinstance(result.type, TensorType):
                raise self.error(f"result #{i} must be a tensor, got {result.type}")
            if not types_compatible(result.type, expected):
                raise self.error(
                    f"result #{i} has type {result.type} but the operands imply {expected}"
                )


def types_compatible(declared: TensorType, inferred: TensorType) -> bool:
    """Same element type and rank, and equal sizes where both are known."""
    if declared.element_type != inferred.element_type:
        return False
    a, b = declared.get_shape(), inferred.get_shape()
    return len(a) == len(b) and all(x == y or DYN in (x, y) for x, y in zip(a, b))


def tensor(shape: Iterable[int], element_type: Attribute) -> TensorType:
    return TensorType(element_type, list(shape))


def known(*dims: int) -> bool:
    return all(d != DYN for d in dims)


def product(dims: Iterable[int]) -> int:
    """Product of sizes, DYN if any size is DYN."""
    result = 1
    for d in dims:
        if d == DYN:
            return DYN
        result *= d
    return result


def normalize_axis(op: NNOp, axis: int, rank: int, prop: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise op.error(f"{prop} {axis} is out of range for rank {rank}")
    return axis % rank


def broadcast_shapes(op: NNOp, a: Shape, b: Shape) -> Shape:
    """Numpy broadcasting of two shapes, with DYN for sizes known only at run time."""
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        elif DYN in (x, y):
            out.append(x if y == DYN else y)
        else:
            raise op.error(f"shapes {list(a)} and {list(b)} cannot be broadcast")
    return tuple(out)


# -- building ops ----------------------------------------------------------------------
def _plain(value: object) -> object:
    """numpy scalars and arrays as the Python values they hold."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def attr(value: object) -> Attribute:
    """The attribute for a Python property value (int, float, bool, str, int/float list)."""
    value = _plain(value)
    if isinstance(value, Attribute):
        return value
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, f32)
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, Sequence):
        values = [_plain(v) for v in value]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return DenseArrayBase.from_list(i64, [int(v) for v in values])
        return DenseArrayBase.from_list(f32, [float(v) for v in values])
    raise TypeError(f"no attribute for property value {value!r}")


def _candidates(value: object) -> list[Attribute]:
    """Attributes `value` may stand for, most natural first (1 may be an int, float or bool)."""
    value = _plain(value)
    first = attr(value)
    if isinstance(value, bool) or isinstance(value, Attribute):
        return [first]
    if isinstance(value, int):
        others: list[Attribute] = [FloatAttr(float(value), f32)]
        if value in (0, 1):
            others.append(BoolAttr.from_bool(bool(value)))
        return [first, *others]
    if isinstance(value, Sequence) and not isinstance(value, str) and isinstance(first, DenseArrayBase):
        if first.elt_type == i64:
            return [first, DenseArrayBase.from_list(f32, [float(v) for v in value])]  # type: ignore[arg-type]
    return [first]


def property_attr(cls: type[NNOp], prop: str, value: object) -> Attribute:
    """The attribute for `value` that satisfies property `prop` of `cls` (or a clear error)."""
    definition = cls.get_irdl_definition().properties.get(prop)
    label = cls.name if isinstance(cls.name, str) else cls.__name__
    if definition is None:
        raise VerifyException(f"{label}: unknown property '{prop}'")
    candidates = _candidates(value)
    for candidate in candidates:
        try:
            definition.constr.verify(candidate, VerificationContext())
        except VerifyException:
            continue
        return candidate
    raise VerifyException(f"{label}: property '{prop}' cannot be {value!r} ({candidates[0]})")


def python_value(value: Attribute | None) -> object:
    """Inverse of `attr`: the Python value held by a property attribute."""
    if value is None:
        return None
    if isinstance(value, IntegerAttr):
        data = int(value.value.data)
        return bool(data) if value.type.width.data == 1 else data
    if isinstance(value, FloatAttr):
        return float(value.value.data)
    if isinstance(value, StringAttr):
        return value.data
    if isinstance(value, DenseArrayBase):
        return tuple(value.get_values())
    return value


OpT = TypeVar("OpT", bound=NNOp)


def build(
    cls: type[OpT],
    operands: Sequence[SSAValue],
    *,
    num_results: int = 1,
    name: str | None = None,
    **props: object,
) -> OpT:
    """Create an `nn` op with its result types inferred from operands and properties.

    Raises `VerifyException` (naming the op and the property) for invalid properties.
    """
    properties = {k: property_attr(cls, k, v) for k, v in props.items() if v is not None}
    if name is not None:
        properties["name"] = StringAttr(name)
    probe = cls.create(
        operands=list(operands), result_types=[NoneType()] * num_results, properties=properties
    )
    try:
        probe.check_properties()
        result_types = probe.infer_shapes()
    finally:
        probe.drop_all_references()
    return cls.create(operands=list(operands), result_types=result_types, properties=properties)
