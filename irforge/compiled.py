"""What `irforge.compile` returns: one face for every device, like OpenVINO's CompiledModel.

    compiled = irforge.compile(model, device="cpu")
    compiled.inputs[0].name, compiled.inputs[0].shape     # ports, as OpenVINO lists them
    results = compiled({"data": x}) or compiled([x]) or compiled(x)
    results["prob"], results[0], results[compiled.outputs[0]]

The backend's own object stays reachable (`compiled.backend`); its attributes (`stats`,
`fallbacks`, `close`, ...) are forwarded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType

from irforge.errors import IrforgeError
from irforge.model import Model, input_names, output_names, returned_values
from irforge.weights.dtypes import from_xdsl

DEVICES = {"cpu": "cpu", "gpu": "gpu", "ref": "ref", "opencl": "gpu", "reference": "ref"}


@dataclass(frozen=True)
class Port:
    """An input or output of a compiled model: name, shape (-1 for a dynamic size), dtype."""

    name: str
    index: int
    shape: tuple[int, ...]
    dtype: np.dtype

    def get_any_name(self) -> str:
        return self.name

    @property
    def any_name(self) -> str:
        return self.name

    def get_shape(self) -> list[int]:
        return list(self.shape)


class Results(dict):  # type: ignore[type-arg]
    """Outputs by name; also by index or by output Port, as OpenVINO's results are."""

    def __init__(self, arrays: Mapping[str, np.ndarray], ports: list[Port]) -> None:
        super().__init__(arrays)
        self._ports = ports

    def __getitem__(self, key: Any) -> np.ndarray:
        if isinstance(key, Port):
            key = key.name
        elif isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            key = self._ports[int(key)].name
        return super().__getitem__(key)

    def to_tuple(self) -> tuple[np.ndarray, ...]:
        return tuple(self[p.name] for p in self._ports)


def ports(names: list[str], values: Any) -> list[Port]:
    result = []
    for i, (name, value) in enumerate(zip(names, values)):
        t = value.type
        assert isinstance(t, TensorType)
        result.append(Port(name, i, tuple(t.get_shape()), np.dtype(from_xdsl(t.element_type))))
    return result


def compile_for_device(model: Model, device: str, options: dict[str, Any]) -> Callable[[Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]:
    """The backend's compiled model: a callable from arrays by input name to arrays by output name."""
    kind = DEVICES.get(str(device).lower())
    if kind is None:
        raise IrforgeError(f"unknown device '{device}'", fix="use device='cpu', 'gpu' or 'ref'", code="E890")
    if kind == "gpu":
        from irforge.backends.opencl import compile_model as compile_opencl

        return compile_opencl(model, options.pop("opencl_device", None), **options)
    if kind == "ref":
        if options:
            raise IrforgeError(f"device 'ref' takes no options ({', '.join(options)})", fix="drop them", code="E890")
        from irforge.backends.reference import run

        return lambda feeds: run(model, feeds)
    from irforge.backends.cpu import compile_model

    return compile_model(model, **options)


class CompiledModel:
    """A model compiled for a device, callable with a dict by name, a list in input order, or
    one array; returns `Results` (a dict by output name, also indexable by position/port)."""

    def __init__(self, model: Model, backend: Callable[[Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]) -> None:
        func = model.func
        self.backend = backend
        self.inputs = ports(input_names(func), func.args)
        self.outputs = ports(output_names(func), returned_values(func))

    def input(self, key: int | str = 0) -> Port:
        return _port(self.inputs, key, "input")

    def output(self, key: int | str = 0) -> Port:
        return _port(self.outputs, key, "output")

    def __call__(self, feeds: Any) -> Results:
        from irforge.api import input_arrays

        arrays = input_arrays([p.name for p in self.inputs], feeds)
        return Results(self.backend(arrays), self.outputs)

    def __getattr__(self, name: str) -> Any:
        # only reached for attributes this class lacks: the backend's stats, fallbacks, close...
        return getattr(self.__dict__["backend"], name)


def _port(ports_: list[Port], key: int | str, kind: str) -> Port:
    for port in ports_:
        if port.name == key or port.index == key:
            return port
    raise IrforgeError(f"the model has no {kind} {key!r}", fix=f"its {kind}s are: {', '.join(p.name for p in ports_)}", code="E053")
