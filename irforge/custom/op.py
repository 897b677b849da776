"""Declaring a custom layer's op in one class: attributes, shape inference, kernels.

    class Proposal(CustomOp):
        extension = "my_layers"               # its dialect, and its IR XML `version`
        op = "proposal"                       # -> my_layers.proposal
        num_inputs, num_outputs = 3, 1
        attrs = {"post_nms_topn": Attr(int, 300), "nms_thresh": Attr(float, 0.7)}

        def infer(self, shapes, dtypes):      # Model Optimizer's Op.infer / OpenCV's getMemoryShapes
            return [((shapes[0][0] * self.post_nms_topn, 5), dtypes[0])]

        def forward(self, scores, deltas, im_info):   # numpy: the reference and the fallback
            ...

Subclassing generates an IRDL op class (`Proposal.op_class`) in the extension's dialect
with one property per attribute, registers the dialect with the tools, the numpy `forward`
as the op's reference kernel and an IR XML emitter writing one layer of type `ir_type`. An
instance wraps one op: attributes read as Python values (`self.post_nms_topn`). A native
kernel is optional: `cpu` (LLVM IR through llvmlite) and `opencl` (source, work sizes,
argument order); backends without one run `forward` (HETERO for OpenCL).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import BoolAttr, DenseArrayBase, FloatAttr, IntegerAttr, StringAttr, TensorType, f32, i64
from xdsl.ir import Attribute, Dialect, Operation
from xdsl.irdl import irdl_op_definition, opt_prop_def, var_operand_def, var_result_def

from irforge.dialects.nn.base import DYN, NNOp, python_value
from irforge.weights.dtypes import from_xdsl, to_xdsl

Shape = tuple[int, ...]
ATTR_KINDS: dict[str, tuple[type[Attribute], Callable[[Any], Attribute]]] = {
    "int": (IntegerAttr, lambda v: IntegerAttr(int(v), i64)),
    "float": (FloatAttr, lambda v: FloatAttr(float(v), f32)),
    "bool": (IntegerAttr, lambda v: BoolAttr.from_bool(bool(v))),
    "str": (StringAttr, lambda v: StringAttr(str(v))),
    "ints": (DenseArrayBase, lambda v: DenseArrayBase.from_list(i64, [int(x) for x in v])),
    "floats": (DenseArrayBase, lambda v: DenseArrayBase.from_list(f32, [float(x) for x in v])),
}
_KIND_NAMES = {int: "int", float: "float", bool: "bool", str: "str"}


@dataclass(frozen=True)
class Attr:
    """An attribute of a custom op: its kind (int, float, bool, str, "ints", "floats"), default."""

    kind: type | str
    default: Any

    @property
    def kind_name(self) -> str:
        name = self.kind if isinstance(self.kind, str) else _KIND_NAMES.get(self.kind, "")
        if name not in ATTR_KINDS:
            raise TypeError(f"attribute kind must be int, float, bool, str, 'ints' or 'floats', got {self.kind!r}")
        return name

    def attribute(self, value: Any) -> Attribute:
        return ATTR_KINDS[self.kind_name][1](value)


@dataclass(frozen=True)
class OpenCLKernel:
    """An OpenCL kernel for a custom op (the seed's .cl + .xml description, in Python).

    `source` defines `entry`; it is called with the input buffers, then the output buffers
    (float*), then `scalars(op)` in order. `global_size(op, shapes)` gives the NDRange
    from the input shapes; `local_size` is optional."""

    source: str
    entry: str
    global_size: Callable[[Any, Sequence[Shape]], Sequence[int]]
    local_size: Sequence[int] | None = None
    scalars: Callable[[Any], Sequence[float | int]] = field(default=lambda op: ())


@dataclass(frozen=True)
class CpuKernel:
    """A native CPU kernel: `build(module, op, shapes)` adds an LLVM function to the llvmlite
    `module` with signature void(float* in..., float* out...) and returns its name."""

    build: Callable[[Any, Any, Sequence[Shape]], str]


class CustomOp:
    """Base of custom layers; see the module docstring."""

    extension: ClassVar[str]
    op: ClassVar[str]
    num_inputs: ClassVar[int] = 1
    num_outputs: ClassVar[int] = 1
    attrs: ClassVar[dict[str, Attr]] = {}
    ir_type: ClassVar[str | None] = None
    cpu: ClassVar[CpuKernel | None] = None
    opencl: ClassVar[OpenCLKernel | None] = None
    op_class: ClassVar[type[NNOp]]

    def __init__(self, op: Operation) -> None:
        self._op = op

    def __getattr__(self, name: str) -> Any:
        if name in type(self).attrs:
            return python_value(self._op.properties.get(name)) if name in self._op.properties else type(self).attrs[name].default
        raise AttributeError(name)

    # -- what a subclass overrides ------------------------------------------------------
    def infer(self, shapes: list[Shape], dtypes: list[np.dtype]) -> list[tuple[Shape, np.dtype]]:
        """Output shapes and element types; the default is the first input's, for every output."""
        return [(shapes[0], dtypes[0])] * self.num_outputs

    def verify(self) -> None:
        """Check attribute values; raise `self.error(...)` for a bad one."""

    def forward(self, *inputs: np.ndarray) -> np.ndarray | list[np.ndarray]:
        raise NotImplementedError(f"{type(self).__name__} has no forward")

    def error(self, message: str) -> Exception:
        return self._op.error(message)  # type: ignore[attr-defined]

    # -- registration ---------------------------------------------------------------------
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "op" not in vars(cls):
            return  # an intermediate base class
        cls.op_class = _op_class(cls)
        register_custom_op(cls)


CUSTOM_OPS: dict[str, type[CustomOp]] = {}
"""Custom ops by their full op name (`extension.op`)."""
_DIALECT_OPS: dict[str, list[type[NNOp]]] = {}


def _op_class(custom: type[CustomOp]) -> type[NNOp]:
    """The IRDL op class of a custom op: variadic tensors in and out, one property per attr."""

    def infer_shapes(self: NNOp) -> list[TensorType]:
        shapes = [self.operand_shape(i) for i in range(len(self.operands))]
        dtypes = [from_xdsl(self.operand_type(i).element_type) for i in range(len(self.operands))]
        return [TensorType(to_xdsl(np.dtype(dt)), [DYN if d < 0 else int(d) for d in shape]) for shape, dt in custom(self).infer(shapes, dtypes)]

    def verify_attributes(self: NNOp) -> None:
        if len(self.operands) != custom.num_inputs:
            raise self.error(f"takes {custom.num_inputs} inputs, got {len(self.operands)}")
        if len(self.results) != custom.num_outputs:
            raise self.error(f"gives {custom.num_outputs} outputs, got {len(self.results)}")
        custom(self).verify()

    namespace: dict[str, Any] = {
        "name": f"{custom.extension}.{custom.op}",
        "inputs": var_operand_def(TensorType),
        "outputs": var_result_def(TensorType),
        "infer_shapes": infer_shapes,
        "verify_attributes": verify_attributes,
        "__module__": custom.__module__,
        "__doc__": custom.__doc__,
    }
    for key, spec in custom.attrs.items():
        namespace[key] = opt_prop_def(ATTR_KINDS[spec.kind_name][0], default_value=spec.attribute(spec.default))
    return irdl_op_definition(type(custom.__name__, (NNOp,), namespace))


def register_custom_op(custom: type[CustomOp]) -> None:
    from irforge.backends.reference import kernel
    from irforge.extensions import register_dialect

    CUSTOM_OPS[custom.op_class.name] = custom
    ops = _DIALECT_OPS.setdefault(custom.extension, [])
    ops[:] = [op for op in ops if op.name != custom.op_class.name] + [custom.op_class]
    register_dialect(Dialect(custom.extension, list(ops), []), replace=True)
    kernel(custom.op_class)(lambda op, *inputs: custom(op).forward(*inputs))
    _register_ir_xml(custom)


def _register_ir_xml(custom: type[CustomOp]) -> None:
    """One IR XML layer of type `ir_type` (default: the class name), version = extension."""
    try:
        from irforge.backends.ir_xml.mapping import custom_layer, register_ir_xml_emitter
    except ImportError:  # the IR XML backend is optional for a custom op
        return
    register_ir_xml_emitter(custom.op_class, lambda ctx, op, inputs: custom_layer(ctx, op, inputs, type=custom.ir_type or custom.__name__))


__all__ = ["CUSTOM_OPS", "Attr", "CpuKernel", "CustomOp", "OpenCLKernel"]
