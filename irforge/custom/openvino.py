"""Custom layers in OpenVINO's own runtime: `openvino.Op` classes generated from CustomOps.

    import openvino as ov, irforge
    core = ov.Core()
    for op_class in irforge.openvino_extensions("my_layers.py"):
        core.add_extension(op_class)
    compiled = core.compile_model(core.read_model("model.xml"), "CPU")

Each generated class has the IR layer's type and version (`ir_type` or the class name, and
the extension's name, as irforge's IR XML writer writes them), visits the CustomOp's
attributes (OpenVINO fills them from the layer's <data>), infers output types with the
CustomOp's `infer`, and evaluates with its numpy `forward`: the same reference numbers irforge
runs, now inside an OpenVINO graph (on OpenVINO's CPU plugin, as a host op).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
from xdsl.ir import Attribute

from irforge.custom.op import CUSTOM_OPS, CustomOp
from irforge.errors import IrforgeError


class _Properties:
    """What a CustomOp instance reads its attributes from, outside an xDSL op: the values
    OpenVINO visited, as the xDSL attributes CustomOp expects."""

    def __init__(self, custom: type[CustomOp], values: dict[str, Any]) -> None:
        self.custom = custom
        self.properties: dict[str, Attribute] = {k: custom.attrs[k].attribute(v) for k, v in values.items()}

    def error(self, message: str) -> Exception:
        return IrforgeError(f"{self.custom.ir_type or self.custom.__name__}: {message}", code="E990")


def _default(value: Any, kind: str) -> Any:
    """The attribute's Python value in the type OpenVINO's visitor reads it as."""
    if kind == "ints":
        return [int(v) for v in value]
    if kind == "floats":  # OpenVINO's visitor reads a float list into a float32 array, not a list
        return np.asarray(value, np.float32)
    return {"int": int, "float": float, "bool": bool, "str": str}[kind](value)


def _extension_customs(source: str | os.PathLike[str] | ModuleType | None) -> list[type[CustomOp]]:
    """The CustomOps a module (or a .py file / package, loaded as --extensions loads it)
    declares; all loaded ones for None."""
    if source is None:
        return list(CUSTOM_OPS.values())
    if isinstance(source, ModuleType):
        module = source
    else:
        from irforge.extensions import load_extension

        module = load_extension(os.fspath(source))
    prefix = module.__name__
    customs = [c for c in CUSTOM_OPS.values() if c.__module__ == prefix or c.__module__.startswith(prefix + ".")]
    if not customs:
        raise IrforgeError(f"extension '{getattr(module, '__file__', prefix)}' declares no CustomOp",
                           fix="OpenVINO needs ops for layers irforge writes as custom layers; op_extension/conversion_extension "
                           "mappings onto irforge's own ops need no runtime extension", code="E991")
    return customs


def openvino_extensions(source: str | os.PathLike[str] | ModuleType | None = None) -> list[type]:
    """`openvino.Op` classes for the CustomOps of `source` (a .py file, a package folder or an
    imported module; None: every loaded CustomOp), to pass to `core.add_extension`."""
    try:
        import openvino
    except ImportError:
        raise IrforgeError("openvino_extensions needs OpenVINO", fix="pip install openvino", code="E992") from None
    return [openvino_op_class(custom, openvino) for custom in _extension_customs(source)]


def openvino_op_class(custom: type[CustomOp], ov: Any) -> type:
    """One CustomOp as an `openvino.Op` subclass (see the module docstring)."""
    kinds = {name: spec.kind_name for name, spec in custom.attrs.items()}
    defaults = {name: _default(spec.default, kinds[name]) for name, spec in custom.attrs.items()}
    layer_type = custom.ir_type or custom.__name__

    class GeneratedOp(ov.Op):  # type: ignore[misc, name-defined]
        # the layer's type and version; kept on the class, as OpenVINO holds a reference
        type_info = ov.DiscreteTypeInfo(layer_type, custom.extension)

        def __init__(self, inputs: Sequence[Any] | None = None, attrs: dict[str, Any] | None = None) -> None:
            super().__init__(self)
            self.attrs = {**defaults, **(attrs or {})}
            if inputs:
                self.set_arguments(list(inputs))
                self.constructor_validate_and_infer_types()

        def get_type_info(self) -> Any:
            return GeneratedOp.type_info

        def instance(self) -> CustomOp:
            values = {k: _default(v, kinds[k]) for k, v in self.attrs.items()}
            return custom(_Properties(custom, values))  # type: ignore[arg-type]

        def visit_attributes(self, visitor: Any) -> bool:
            visitor.on_attributes(self.attrs)
            return True

        def validate_and_infer_types(self) -> None:
            count = self.get_input_size()
            shapes = [self.get_input_partial_shape(i) for i in range(count)]
            dtypes = [self.get_input_element_type(i) for i in range(count)]
            if not all(s.is_static for s in shapes):  # infer takes sizes: only the rank is known
                for i in range(custom.num_outputs):
                    self.set_output_type(i, dtypes[0], ov.PartialShape.dynamic())
                return
            results = self.instance().infer([tuple(s.to_shape()) for s in shapes], [np.dtype(t.to_dtype()) for t in dtypes])
            for i, (shape, dtype) in enumerate(results):
                self.set_output_type(i, ov.Type(np.dtype(dtype)), ov.PartialShape([int(d) for d in shape]))

        def clone_with_new_inputs(self, new_inputs: Sequence[Any]) -> GeneratedOp:
            return GeneratedOp(new_inputs, dict(self.attrs))

        def has_evaluate(self, *args: Any) -> bool:
            return True

        def evaluate(self, outputs: Any, inputs: Any) -> bool:
            produced = self.instance().forward(*[np.asarray(t.data) for t in inputs])
            arrays = [produced] if isinstance(produced, np.ndarray) else list(produced)
            for tensor, array in zip(outputs, arrays):
                tensor.shape = ov.Shape(list(array.shape))
                np.copyto(tensor.data, np.asarray(array), casting="same_kind")
            return True

    GeneratedOp.__name__ = GeneratedOp.__qualname__ = f"{custom.__name__}OpenVINO"
    GeneratedOp.__doc__ = f"OpenVINO op {layer_type} (version {custom.extension}) from irforge's {custom.__name__}."
    return GeneratedOp


__all__ = ["openvino_extensions", "openvino_op_class"]
