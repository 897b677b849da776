"""Interp: bilinear resizing to a fixed size with corners aligned, the custom layer of
OpenCV's custom-layer tutorial (Caffe `Interp` of the DeepLab/PSPNet forks), mapped from
Caffe's Interp and from TensorFlow's ResizeBilinear(align_corners=True).

    ir-convert --input_model net.caffemodel --extensions examples/custom_layers/interp.py
    ir-convert --input_model frozen.pb --extensions examples/custom_layers/interp.py

This replaces irforge's own Interp and ResizeBilinear importers while it is loaded.
"""

from __future__ import annotations

import numpy as np

from irforge.custom import Attr, ConversionNode, CustomOp, conversion_extension
from irforge.dialects.nn import Permute


class Interp(CustomOp):
    """out[n, c, y, x] = bilinear sample of in[n, c] at (y * (H - 1) / (h - 1), x * (W - 1) / (w - 1))."""

    extension = "opencv_layers"
    op = "interp"
    attrs = {"height": Attr(int, 0), "width": Attr(int, 0)}

    def verify(self) -> None:
        if self.height < 1 or self.width < 1:
            raise self.error(f"height and width must be positive, got {self.height}x{self.width}")

    def infer(self, shapes, dtypes):  # type: ignore[no-untyped-def]
        n, c = shapes[0][:2]
        return [((n, c, self.height, self.width), dtypes[0])]

    def forward(self, x: np.ndarray) -> np.ndarray:
        return _axis(_axis(x, 2, self.height), 3, self.width).astype(x.dtype)


def _axis(x: np.ndarray, axis: int, size: int) -> np.ndarray:
    n_in = x.shape[axis]
    coords = np.arange(size) * ((n_in - 1) / (size - 1) if size > 1 else 0.0)
    low = np.floor(coords).astype(int)
    high = np.minimum(low + 1, n_in - 1)
    frac = (coords - low).reshape([-1 if a == axis else 1 for a in range(x.ndim)])
    return np.take(x, low, axis=axis) * (1 - frac) + np.take(x, high, axis=axis) * frac


@conversion_extension("caffe", "Interp")
def caffe_interp(node: ConversionNode):  # type: ignore[no-untyped-def]
    height, width = node.get_attribute("interp_param.height"), node.get_attribute("interp_param.width")
    return node.make(Interp, [node.get_input(0)], suffix="", height=height, width=width)


@conversion_extension("tf", "ResizeBilinear")
def tf_resize_bilinear(node: ConversionNode):  # type: ignore[no-untyped-def]
    if not node.get_attribute("align_corners", False):
        raise node.fail("this Interp extension implements align_corners=True only")
    height, width = (int(v) for v in node.ctx.required_constant(1, "size"))
    nchw = node.make(Permute, [node.get_input(0)], order=[0, 3, 1, 2])
    resized = node.make(Interp, [nchw], height=height, width=width)
    return node.make(Permute, [resized], order=[0, 2, 3, 1], suffix="")
