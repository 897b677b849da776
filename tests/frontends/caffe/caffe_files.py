"""Writing Caffe test models with irforge's own schema: a prototxt text and a caffemodel
holding the given blobs (a real caffemodel repeats the topology; blobs are what irforge reads)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from irforge.frontends.caffe.schema import message_classes


def caffemodel_bytes(blobs: Mapping[str, Sequence[np.ndarray]], v1: bool = False, legacy_shapes: bool = False) -> bytes:
    """A binary NetParameter with one layer per entry of `blobs` (`layers` when v1)."""
    net = message_classes()["NetParameter"]()
    for name, arrays in blobs.items():
        layer = net.layers.add() if v1 else net.layer.add()
        layer.name = name
        for array in arrays:
            blob = layer.blobs.add()
            if legacy_shapes:
                dims = [1] * (4 - array.ndim) + list(array.shape)
                blob.num, blob.channels, blob.height, blob.width = dims
            else:
                blob.shape.dim.extend(array.shape)
            blob.data.extend(np.asarray(array, np.float32).ravel().tolist())
    return net.SerializeToString()


def write_caffe(
    directory: Path, name: str, prototxt: str, blobs: Mapping[str, Sequence[np.ndarray]], **options: bool
) -> tuple[Path, Path]:
    """NAME.prototxt and NAME.caffemodel in `directory`; their paths."""
    proto = directory / f"{name}.prototxt"
    model = directory / f"{name}.caffemodel"
    proto.write_text(prototxt)
    model.write_bytes(caffemodel_bytes(blobs, **options))
    return model, proto


def weights(*shape: int, seed: int, scale: float = 0.5) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)
