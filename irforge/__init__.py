"""irforge: a neural-network model compiler built on xDSL.

Framework models are imported into the `nn` dialect, optimised by xDSL passes and
emitted as OpenVINO IR or run by one of the backends. The Python API (`irforge.api`) is
re-exported here lazily, so `import irforge` stays cheap:

    model = irforge.convert_model("model.onnx", input_shape=[1, 3, 224, 224])
    irforge.save_model(model, "model.xml")
    outputs = irforge.compile(model, device="cpu")(image)
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_API = {
    "convert_model": "irforge.api",
    "save_model": "irforge.api",
    "read_model": "irforge.api",
    "compile": "irforge.api",
    "openvino_extensions": "irforge.custom.openvino",
    "Model": "irforge.model",
    "CompiledModel": "irforge.compiled",
    "IrforgeError": "irforge.errors",
}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'irforge' has no attribute '{name}'")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
