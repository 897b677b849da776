"""onnxruntime as a reference for ir-run's --compare-onnxruntime and --bisect: its failures
(a file that is not an ONNX model, a graph it rejects, inputs it does not take) are the
user's input, so they become one-line errors (E895) instead of onnxruntime's exceptions."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np

from irforge.errors import IrforgeError, one_line, quoted

T = TypeVar("T")


def _guarded(what: str, action: Callable[[], T]) -> T:
    try:
        return action()
    except ImportError:
        raise IrforgeError(f"{what} needs onnxruntime", fix="pip install onnxruntime", code="E860") from None
    except Exception as e:  # noqa: BLE001  (onnxruntime's pybind errors derive from Exception only)
        if not type(e).__module__.startswith(("onnxruntime", "onnx", "google.protobuf")):
            raise
        raise IrforgeError(
            f"onnxruntime cannot run {what}: {type(e).__name__}: {one_line(str(e))[:160]}",
            fix="give the ONNX model the compared model was converted from, with inputs of its types and shapes",
            code="E895",
        ) from None


def session(model: str | bytes, what: str) -> Any:
    """An onnxruntime session on `model` (a path or serialized bytes), unoptimised."""

    def make() -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    return _guarded(quoted(what), make)


def run(sess: Any, feeds: Mapping[str, np.ndarray], what: str) -> list[np.ndarray]:
    return _guarded(quoted(what), lambda: sess.run(None, dict(feeds)))


def load_onnx(path: str) -> Any:
    """onnx.load with its parse errors as E895."""
    import onnx

    return _guarded(quoted(path), lambda: onnx.load(path))
