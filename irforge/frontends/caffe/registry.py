"""The table from Caffe layer type to its extractor, and the context an extractor works in.

An extractor is a small function `(ctx: LayerContext) -> SSAValue | Sequence[SSAValue]`
returning one value per top of the layer. It reads the bottoms, the layer's `*_param`
message and its blobs (weights from the caffemodel) and builds `nn` ops. Extensions register
more with `@caffe_extractor("MyLayer")`; legacy V1 layers (enum types) reach the same
extractors through `V1_TYPES`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irforge.frontends.caffe.fields import TrackedMessage
from irforge.frontends.context import BuildContext

if TYPE_CHECKING:
    from irforge.frontends.caffe.importer import NetImporter

Extractor = Callable[["LayerContext"], "SSAValue | Sequence[SSAValue]"]

EXTRACTORS: dict[str, Extractor] = {}

V1_TYPES = {
    "ABSVAL": "AbsVal", "ARGMAX": "ArgMax", "BNLL": "BNLL", "CONCAT": "Concat",
    "CONVOLUTION": "Convolution", "DECONVOLUTION": "Deconvolution", "DROPOUT": "Dropout",
    "ELTWISE": "Eltwise", "EXP": "Exp", "FLATTEN": "Flatten", "INNER_PRODUCT": "InnerProduct",
    "LRN": "LRN", "MVN": "MVN", "POOLING": "Pooling", "POWER": "Power", "RELU": "ReLU",
    "SIGMOID": "Sigmoid", "SOFTMAX": "Softmax", "SPLIT": "Split", "SLICE": "Slice",
    "TANH": "TanH", "THRESHOLD": "Threshold", "SILENCE": "Silence", "ACCURACY": "Accuracy",
    "DATA": "Data", "SOFTMAX_LOSS": "SoftmaxWithLoss", "IMAGE_DATA": "ImageData",
    "MEMORY_DATA": "MemoryData", "DUMMY_DATA": "DummyData", "HDF5_DATA": "HDF5Data",
    "WINDOW_DATA": "WindowData", "IM2COL": "Im2col",
}  # fmt: skip
"""V1LayerParameter.LayerType names -> the layer type strings of current Caffe."""


def caffe_extractor(*layer_types: str) -> Callable[[Extractor], Extractor]:
    """Register the decorated function as the extractor of `layer_types`."""

    def register(fn: Extractor) -> Extractor:
        for layer_type in layer_types:
            EXTRACTORS[layer_type] = fn
        return fn

    return register


def extractor_key(layer: Any) -> str:
    """The EXTRACTORS key of a layer: its type, or `Python:module.layer` for a Python layer
    that an extension maps (a Python layer's type says nothing of what it computes)."""
    kind = layer_type(layer)
    if kind == "Python" and layer.HasField("python_param"):
        key = f"Python:{layer.python_param.module}.{layer.python_param.layer}"
        if key in EXTRACTORS:
            return key
    return kind


def layer_type(layer: Any) -> str:
    """The type string of a layer, for both `layer {}` and legacy `layers {}` entries."""
    if layer.DESCRIPTOR.name == "V1LayerParameter":
        enum_name = layer.DESCRIPTOR.fields_by_name["type"].enum_type.values_by_number[layer.type].name
        return V1_TYPES.get(enum_name, enum_name)
    return str(layer.type)


class LayerContext(BuildContext):
    """What an extractor sees of one Caffe layer: bottoms, parameters, blobs, and a builder."""

    def __init__(self, importer: NetImporter, layer: Any) -> None:
        self.importer = importer
        self.layer = layer
        self.type = layer_type(layer)
        self.name = layer.name or f"{self.type}_{layer.top[0] if len(layer.top) else '?'}"
        self.read: set[str] = set()
        """Dotted paths of the parameter fields the extractor read (see fields.py)."""

    # -- bottoms -------------------------------------------------------------------------
    @property
    def num_bottoms(self) -> int:
        return len(self.layer.bottom)

    @property
    def num_tops(self) -> int:
        return len(self.layer.top)

    def bottom(self, index: int) -> SSAValue:
        if index >= self.num_bottoms:
            raise self.fail(f"needs at least {index + 1} bottom blobs, has {self.num_bottoms}")
        return self.importer.value(self.layer.bottom[index], self)

    def bottoms(self) -> list[SSAValue]:
        return [self.bottom(i) for i in range(self.num_bottoms)]

    def shape(self, index: int = 0, rank: int | None = None) -> tuple[int, ...]:
        """The static shape of input `index`; with `rank`, a one-line error for another rank."""
        t = self.bottom(index).type
        assert isinstance(t, TensorType)
        shape = tuple(t.get_shape())
        if rank is not None and len(shape) != rank:
            raise self.fail(f"input #{index} has rank {len(shape)} (shape {list(shape)}), this layer needs rank {rank}")
        return shape

    # -- parameters and blobs ------------------------------------------------------------
    def param(self, field: str) -> Any:
        """The layer's `field` message (e.g. convolution_param), with defaults when absent; a
        read-only view recording the fields read, so that no set field goes unnoticed."""
        if field not in self.layer.DESCRIPTOR.fields_by_name:
            raise self.fail(f"legacy V1 layers have no {field}", fix="convert the prototxt to the current layer {} format")
        return TrackedMessage(getattr(self.layer, field), field, self.read)

    def has_param(self, field: str) -> bool:
        return field in self.layer.DESCRIPTOR.fields_by_name and self.layer.HasField(field)

    @property
    def num_blobs(self) -> int:
        return len(self.importer.model.blobs.get(self.layer.name, ()))

    def blob(self, index: int, shape: Sequence[int] | None = None) -> np.ndarray:
        """Blob `index` from the caffemodel; with `shape`, reshaped to it (legacy caffemodels
        store 4-D blobs, e.g. an InnerProduct's [1, 1, O, K] weights)."""
        blobs = self.importer.model.blobs.get(self.layer.name, [])
        if index >= len(blobs):
            raise self.fail(
                f"the caffemodel has {len(blobs)} blobs for this layer, blob #{index} is needed",
                fix="give the caffemodel trained with this prototxt (layers are matched by name)",
            )
        array = blobs[index]
        if shape is None:
            return array
        if array.size != int(np.prod(shape)):
            raise self.fail(f"blob #{index} has shape {list(array.shape)}, expected {list(shape)}")
        return array.reshape(tuple(shape))

    # -- building --------------------------------------------------------------------------
    def constant(self, array: np.ndarray, suffix: str = "/const") -> SSAValue:
        return self.importer.constant(np.asarray(array, np.float32), self.name + suffix)

    @property
    def where(self) -> str:
        return f"Caffe layer '{self.name}' of type {self.type}"

