"""Seeds and mutators for the fuzz campaign's third set of inputs: the ops and import paths
that landed after the control-flow campaign. ONNX GridSample (nn.grid_sample), Slice with
run-time starts/ends (nn.slice_to), Split with run-time lengths, Resize with run-time sizes
(nn.resample_to), Flatten of dynamic dims, DFT, Col2Im, the composition ops
(`frontends/onnx/extractors/compositions.py`), BatchNormalization training_mode, int32/int64
MatMul, TopK / NonMaxSuppression / RoiAlign that select nothing, near-attention graphs
(`passes/attention_chains.py`), If branches reading outer values listed after the If; the
IR XML irforge writes of the GridSample / slice_to / resample_to ones and OpenVINO-written
IR of DFT / IDFT / RDFT / Col2Im. The mutators retype and reshape the inputs these ops
validate (grid, sizes, starts, lengths, axes), give attributes values outside their
schema's enumerations or ranges, drop inputs, feed empty / NaN / huge constants.
"""

from __future__ import annotations

import io
import random
import re
from typing import Any

import numpy as np

# -- ONNX seeds ---------------------------------------------------------------------------------


def _vi(name: str, elem: int, shape: list[Any] | None) -> Any:
    from onnx import helper

    return helper.make_tensor_value_info(name, elem, shape)


def _t(name: str, array: Any) -> Any:
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(array), name)


def _model(nodes: list[Any], inputs: list[Any], outputs: list[Any], inits: list[Any] = (), opset: int = 17) -> bytes:  # type: ignore[assignment]
    from onnx import helper

    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10 if opset >= 21 else 8
    return model.SerializeToString()


def grid_sample() -> bytes:
    """GridSample (opset 16) of a [1, 2, 4, 5] image by a grid input [1, 3, 3, 2]."""
    from onnx import TensorProto as T
    from onnx import helper

    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode="bilinear", padding_mode="border", align_corners=0)
    return _model([node], [_vi("x", T.FLOAT, [1, 2, 4, 5]), _vi("grid", T.FLOAT, [1, 3, 3, 2])], [_vi("y", T.FLOAT, [1, 2, 3, 3])], opset=16)


def slice_runtime() -> bytes:
    """Slice of [3, 6] with starts/ends model inputs (nn.slice_to), constant axes and steps."""
    from onnx import TensorProto as T
    from onnx import helper

    node = helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])
    inits = [_t("axes", np.array([1], np.int64)), _t("steps", np.array([1], np.int64))]
    return _model([node], [_vi("x", T.FLOAT, [3, 6]), _vi("starts", T.INT64, [1]), _vi("ends", T.INT64, [1])], [_vi("y", T.FLOAT, None)], inits)


def split_runtime() -> bytes:
    """Split of [2, 7] along axis 1 into two pieces whose lengths are a model input."""
    from onnx import TensorProto as T
    from onnx import helper

    node = helper.make_node("Split", ["x", "lengths"], ["a", "b"], axis=1)
    relu = helper.make_node("Relu", ["b"], ["c"])
    return _model([node, relu], [_vi("x", T.FLOAT, [2, 7]), _vi("lengths", T.INT64, [2])], [_vi("a", T.FLOAT, None), _vi("c", T.FLOAT, None)])


def resize_runtime() -> bytes:
    """Resize of [1, 1, 4, 4] to sizes that are a model input (nn.resample_to)."""
    from onnx import TensorProto as T
    from onnx import helper

    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear", coordinate_transformation_mode="half_pixel")
    return _model([node], [_vi("x", T.FLOAT, [1, 1, 4, 4]), _vi("sizes", T.INT64, [4])], [_vi("y", T.FLOAT, None)])


def flatten_dynamic() -> bytes:
    """Flatten (axis 2) of an input whose dims are named, not numbers, then Softmax."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("Flatten", ["x"], ["f"], axis=2), helper.make_node("Softmax", ["f"], ["y"], axis=-1)]
    return _model(nodes, [_vi("x", T.FLOAT, ["n", 3, "h", 2])], [_vi("y", T.FLOAT, None)])


def dft() -> bytes:
    """DFT (opset 17) of a real [2, 8, 1] signal along axis 1 with dft_length 8, then an
    inverse DFT of the result."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("DFT", ["x", "len"], ["f"], axis=1),
             helper.make_node("DFT", ["f", "len"], ["y"], axis=1, inverse=1)]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 8, 1])], [_vi("y", T.FLOAT, None)], [_t("len", np.array(8, np.int64))])


def col2im() -> bytes:
    """Col2Im (opset 18) of [1, 2 * 2 * 2, 9] blocks into a 2-channel 4x4 image."""
    from onnx import TensorProto as T
    from onnx import helper

    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], strides=[1, 1], pads=[0, 0, 0, 0], dilations=[1, 1])
    inits = [_t("image", np.array([4, 4], np.int64)), _t("block", np.array([2, 2], np.int64))]
    return _model([node], [_vi("x", T.FLOAT, [1, 8, 9])], [_vi("y", T.FLOAT, None)], inits, opset=18)


def compositions() -> bytes:
    """The composition ops of opset 18 in one graph over x [2, 3, 4]."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [
        helper.make_node("Celu", ["x"], ["celu"], alpha=0.7),
        helper.make_node("ThresholdedRelu", ["celu"], ["thr"], alpha=0.1),
        helper.make_node("Shrink", ["x"], ["shr"], bias=0.2, lambd=0.3),
        helper.make_node("Sinh", ["shr"], ["sinh"]),
        helper.make_node("Cosh", ["thr"], ["cosh"]),
        helper.make_node("Tan", ["half"], ["tan"]),
        helper.make_node("Mul", ["x", "half_k"], ["half"]),
        helper.make_node("Add", ["sinh", "cosh"], ["sc"]),
        helper.make_node("Add", ["sc", "tan"], ["sct"]),
        helper.make_node("MeanVarianceNormalization", ["sct"], ["mvn"], axes=[0, 2]),
        helper.make_node("LpNormalization", ["mvn"], ["lp"], axis=-1, p=2),
        helper.make_node("CastLike", ["idx", "lp"], ["idx_f"]),
        helper.make_node("Add", ["lp", "idx_f"], ["y"]),
        helper.make_node("Size", ["x"], ["size"]),
        helper.make_node("EyeLike", ["sq"], ["eye"], k=1),
    ]
    inits = [_t("half_k", np.float32(0.5)), _t("idx", np.arange(4, dtype=np.int32))]
    outputs = [_vi("y", T.FLOAT, None), _vi("size", T.INT64, None), _vi("eye", T.FLOAT, None)]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 3, 4]), _vi("sq", T.FLOAT, [3, 5])], outputs, inits, opset=18)


def compositions_24() -> bytes:
    """RMSNormalization (opset 23) and Swish (opset 24) over x [2, 3, 4]."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("RMSNormalization", ["x", "scale"], ["r"], axis=-1, epsilon=1e-5),
             helper.make_node("Swish", ["r"], ["y"], alpha=1.5)]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 3, 4])], [_vi("y", T.FLOAT, None)], [_t("scale", np.linspace(0.5, 2, 4, dtype=np.float32))], opset=24)


def batchnorm_training() -> bytes:
    """BatchNormalization (opset 15) with training_mode=1, Y only (normalised by the batch's statistics)."""
    from onnx import TensorProto as T
    from onnx import helper

    # running mean / var named (onnxruntime's shape inference wants 3 outputs in training mode), not read
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"], training_mode=1, momentum=0.8, epsilon=1e-5)
    inits = [_t("s", np.linspace(0.5, 1.5, 3, dtype=np.float32)), _t("b", np.float32([0.1, -0.2, 0.3])),
             _t("m", np.zeros(3, np.float32)), _t("v", np.ones(3, np.float32))]
    return _model([node], [_vi("x", T.FLOAT, [2, 3, 4, 4])], [_vi("y", T.FLOAT, None)], inits, opset=15)


def integer_matmul() -> bytes:
    """int32 and int64 MatMul (integer host step): [2, 3] x [3, 4] constants and inputs."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("MatMul", ["a", "w32"], ["p"]), helper.make_node("MatMul", ["b", "w64"], ["q"])]
    inits = [_t("w32", np.arange(12, dtype=np.int32).reshape(3, 4) - 5), _t("w64", np.arange(12, dtype=np.int64).reshape(3, 4) * 3)]
    return _model(nodes, [_vi("a", T.INT32, [2, 3]), _vi("b", T.INT64, [2, 3])], [_vi("p", T.INT32, None), _vi("q", T.INT64, None)], inits)


def detection() -> bytes:
    """TopK with k an input, NonMaxSuppression with a score threshold no box passes (an
    empty selection), RoiAlign of the rois and batch indices given (any number of boxes)."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(3)
    corners = rng.uniform(0, 6, [1, 6, 2]).astype(np.float32)
    boxes = np.concatenate([corners, corners + 2], axis=2)
    nodes = [
        helper.make_node("TopK", ["scores_flat", "k"], ["top", "top_i"], axis=-1, largest=1, sorted=1),
        helper.make_node("Reshape", ["scores", "flat"], ["scores_flat"]),
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "thresh"], ["selected"]),
        helper.make_node("RoiAlign", ["feat", "rois", "batch"], ["pooled"], output_height=2, output_width=2, sampling_ratio=2,
                         spatial_scale=0.5, mode="avg"),
    ]
    inits = [_t("boxes", boxes), _t("max_out", np.array([3], np.int64)), _t("iou", np.array([0.5], np.float32)),
             _t("thresh", np.array([0.99], np.float32)), _t("flat", np.array([-1], np.int64))]
    # the box count is a named dim: ir-run may give 0 boxes
    inputs = [_vi("scores", T.FLOAT, [1, 1, 6]), _vi("k", T.INT64, [1]), _vi("feat", T.FLOAT, [1, 2, 8, 8]), _vi("rois", T.FLOAT, ["r", 4]),
              _vi("batch", T.INT64, ["r"])]
    outputs = [_vi("top", T.FLOAT, None), _vi("top_i", T.INT64, None), _vi("selected", T.INT64, None), _vi("pooled", T.FLOAT, None)]
    return _model(nodes, inputs, outputs, inits, opset=16)


def attention_heads() -> bytes:
    """BERT-style attention: q/k/v projections, Reshape + Transpose into 2 heads, MatMul,
    Div by sqrt(d), Add a mask, Softmax, MatMul, Transpose + Reshape back."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(5)
    nodes = []
    for name in "qkv":
        nodes += [helper.make_node("MatMul", ["x", f"w{name}"], [f"{name}p"]),
                  helper.make_node("Reshape", [f"{name}p", "heads"], [f"{name}h"]),
                  helper.make_node("Transpose", [f"{name}h"], [f"{name}t"], perm=[0, 2, 3, 1] if name == "k" else [0, 2, 1, 3])]
    nodes += [helper.make_node("MatMul", ["qt", "kt"], ["s"]), helper.make_node("Div", ["s", "root"], ["sd"]),
              helper.make_node("Add", ["sd", "mask"], ["sm"]), helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", "vt"], ["o"]), helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["ot", "merged"], ["y"])]
    inits = [_t(f"w{n}", rng.standard_normal([8, 8]).astype(np.float32) * 0.3) for n in "qkv"]
    inits += [_t("heads", np.array([1, 5, 2, 4], np.int64)), _t("root", np.float32(2.0)), _t("merged", np.array([1, 5, 8], np.int64)),
              _t("mask", np.where(np.arange(5) < 4, 0, -10000).astype(np.float32).reshape(1, 1, 1, 5))]
    return _model(nodes, [_vi("x", T.FLOAT, [1, 5, 8])], [_vi("y", T.FLOAT, [1, 5, 8])], inits)


def outer_reads() -> bytes:
    """An If listed before the node producing a value its branches read (import order), and a
    Loop body reading an outer value listed after the Loop."""
    from onnx import TensorProto as T
    from onnx import helper

    then = helper.make_graph([helper.make_node("Add", ["late", "x"], ["t"])], "then", [], [_vi("t", T.FLOAT, [2, 3])])
    other = helper.make_graph([helper.make_node("Sub", ["late", "x"], ["e"])], "else", [], [_vi("e", T.FLOAT, [2, 3])])
    body = helper.make_graph([helper.make_node("Add", ["acc", "late"], ["acc2"]), helper.make_node("Identity", ["cond"], ["cond2"])],
                             "body", [_vi("i", T.INT64, []), _vi("cond", T.BOOL, []), _vi("acc", T.FLOAT, [2, 3])],
                             [_vi("cond2", T.BOOL, []), _vi("acc2", T.FLOAT, [2, 3])])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
             helper.make_node("Loop", ["n", "", "x"], ["z"], body=body),
             helper.make_node("Relu", ["x"], ["late"]),
             helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0), helper.make_node("Greater", ["s", "zero"], ["c"])]
    inits = [_t("zero", np.float32(0)), _t("n", np.array(3, np.int64))]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 3])], [_vi("y", T.FLOAT, [2, 3]), _vi("z", T.FLOAT, [2, 3])], inits, opset=13)


ONNX_SEEDS = {"grid.onnx": grid_sample, "slice.onnx": slice_runtime, "split.onnx": split_runtime, "resize.onnx": resize_runtime,
              "flatten.onnx": flatten_dynamic, "dft.onnx": dft, "col2im.onnx": col2im, "comp.onnx": compositions,
              "comp24.onnx": compositions_24, "bntrain.onnx": batchnorm_training, "intmm.onnx": integer_matmul,
              "detect.onnx": detection, "heads.onnx": attention_heads, "outer.onnx": outer_reads}
# models whose IR XML / .mlir (written by irforge) are seeds too: the new layers' readers
IR_SEEDS = ("grid", "slice", "resize", "split", "dft", "col2im")


def onnx_seeds() -> dict[str, bytes]:
    return {name: make() for name, make in ONNX_SEEDS.items()}


# -- ONNX mutators --------------------------------------------------------------------------------

# the new ops' attributes, with values outside what the op defines
BAD_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "GridSample": [("mode", "cubic"), ("mode", "trilinear"), ("padding_mode", "wrap"), ("align_corners", 2), ("align_corners", -1),
                   ("mode", "nearest"), ("padding_mode", "reflection"), ("mode", "bicubic")],
    "Split": [("axis", 5), ("axis", -3), ("axis", 0), ("num_outputs", 3), ("num_outputs", 0)],
    "Resize": [("mode", "cubic"), ("mode", "area"), ("coordinate_transformation_mode", "tf_crop_and_resize"), ("antialias", 1),
               ("keep_aspect_ratio_policy", "not_larger"), ("nearest_mode", "nope"), ("axes", [2, 2]), ("axes", [7]), ("exclude_outside", 1)],
    "Flatten": [("axis", 7), ("axis", -5), ("axis", 0), ("axis", 4)],
    "DFT": [("axis", 2), ("axis", 5), ("axis", -1), ("axis", -4), ("onesided", 1), ("inverse", 7), ("onesided", -1)],
    "Col2Im": [("strides", [0, 1]), ("strides", [1]), ("pads", [1, 1]), ("pads", [-1, 0, 0, 0]), ("dilations", [0, 1]), ("dilations", [3, 3]),
               ("strides", [2, 2]), ("pads", [1, 1, 1, 1])],
    "Celu": [("alpha", 0.0), ("alpha", float("nan")), ("alpha", -1.0), ("alpha", 1e-40)],
    "ThresholdedRelu": [("alpha", float("inf")), ("alpha", float("nan"))],
    "Shrink": [("lambd", -1.0), ("bias", float("nan")), ("lambd", float("inf"))],
    "MeanVarianceNormalization": [("axes", [5]), ("axes", [0, 0]), ("axes", []), ("axes", [-4]), ("axes", [1, 2])],
    "LpNormalization": [("p", 3), ("p", 0), ("axis", 3), ("axis", -4), ("axis", 0)],
    "RMSNormalization": [("axis", 3), ("axis", -4), ("stash_type", 10), ("epsilon", -1.0), ("epsilon", float("nan"))],
    "Swish": [("alpha", float("nan")), ("alpha", 0.0), ("alpha", -2.0)],
    "EyeLike": [("dtype", 99), ("dtype", 8), ("dtype", 9), ("k", 100), ("k", -3), ("dtype", 0)],
    "CastLike": [("saturate", 0), ("saturate", 2)],
    "BatchNormalization": [("training_mode", 2), ("momentum", float("nan")), ("momentum", 2.0), ("epsilon", -1.0), ("training_mode", 0)],
    "TopK": [("axis", 3), ("axis", -4), ("largest", 0), ("sorted", 0), ("largest", 5)],
    "NonMaxSuppression": [("center_point_box", 1), ("center_point_box", 3)],
    "RoiAlign": [("mode", "sum"), ("output_height", 0), ("output_width", -2), ("sampling_ratio", -1), ("spatial_scale", float("nan")),
                 ("coordinate_transformation_mode", "nope"), ("output_height", 100000)],
    "Softmax": [("axis", 1), ("axis", 0), ("axis", 7)],
    "Transpose": [("perm", [0, 1, 2, 3]), ("perm", [0, 2, 2, 1]), ("perm", [3, 2, 1, 0]), ("perm", [0, 1]), ("perm", [0, 2, 1, 7])],
    "Reshape": [("allowzero", 1)],
    "Slice": [],
    "MatMul": [],
}
# replacement constants for any initializer or an input turned constant
BAD_CONSTANTS = [
    np.array([], np.int64), np.array([0], np.int64), np.array([-1], np.int64), np.array([2**40], np.int64), np.array(2**62, np.int64),
    np.array([1, 2, 3, 4, 5], np.int64), np.array([[2, 2]], np.int64), np.array([0, 0], np.int64), np.array([-3, 9], np.int64),
    np.array([3], np.int32), np.array([1.5, 2.0], np.float32), np.array(np.nan, np.float32), np.array([np.inf], np.float32),
    np.zeros([0, 4], np.float32), np.array([1, 1, 0, 3], np.int64), np.array([1, 1, 100000, 100000], np.int64),
    np.array([1, 1, 8, 8], np.int64), np.array(-7, np.int64), np.array([7], np.int64), np.array([True]),
]
BAD_INPUT_TYPES = [  # (elem_type, shape) for a model input
    (1, [1, 3, 3, 2]), (1, [1, 3, 3]), (1, [1, 3, 3, 3]), (7, [4]), (7, [2]), (7, [1]), (7, []), (7, [3]), (6, [2]), (1, [2]),
    (11, [2, 3]), (9, [2]), (7, [0]), (1, [0, 3]), (10, [2, 3]), (1, ["d", 3]), (1, []), (8, [2]), (1, [2, 7]), (6, [2, 3]), (7, [2, 3]),
]


# session 5's extractors (ONNX Attention, com.microsoft ops, Asin..Atanh): their seeds and values join the sets above
from irforge.testing import fuzz_session5_ops as _s5  # noqa: E402

ONNX_SEEDS.update(_s5.SEEDS)
BAD_ATTRIBUTES.update(_s5.BAD_ATTRIBUTES)
BAD_CONSTANTS += _s5.BAD_CONSTANTS
BAD_INPUT_TYPES += _s5.BAD_INPUT_TYPES

from irforge.testing import fuzz_session6_ops as _s6  # noqa: E402

ONNX_SEEDS.update(_s6.SEEDS)
for _op, _values in _s6.BAD_ATTRIBUTES.items():  # merged: Attention, Resize, Pad... have lists already
    BAD_ATTRIBUTES[_op] = BAD_ATTRIBUTES.get(_op, []) + _values
BAD_CONSTANTS += _s6.BAD_CONSTANTS
BAD_INPUT_TYPES += _s6.BAD_INPUT_TYPES

from irforge.testing import fuzz_session7_ops as _s7  # noqa: E402

ONNX_SEEDS.update(_s7.SEEDS)
IR_SEEDS += _s7.IR_SEEDS  # their IR XML holds i4 / u4 constants
for _op, _values in _s7.BAD_ATTRIBUTES.items():
    BAD_ATTRIBUTES[_op] = BAD_ATTRIBUTES.get(_op, []) + _values
BAD_CONSTANTS += _s7.BAD_CONSTANTS
BAD_INPUT_TYPES += _s7.BAD_INPUT_TYPES

from irforge.testing import fuzz_session8_ops as _s8  # noqa: E402

ONNX_SEEDS.update(_s8.SEEDS)
IR_SEEDS += _s8.IR_SEEDS  # Pad-12 with input pads, StridedSlice, the Maximum barrier, unsqueezed SDPA inputs
for _op, _values in _s8.BAD_ATTRIBUTES.items():
    BAD_ATTRIBUTES[_op] = BAD_ATTRIBUTES.get(_op, []) + _values
BAD_CONSTANTS += _s8.BAD_CONSTANTS
BAD_INPUT_TYPES += _s8.BAD_INPUT_TYPES

from irforge.testing import fuzz_session9_ops as _s9  # noqa: E402

ONNX_SEEDS.update(_s9.SEEDS)
IR_SEEDS += _s9.IR_SEEDS  # SDPA with masks, the affine shift's Unsqueeze / Squeeze, GroupConvolution, AvgPool
for _op, _values in _s9.BAD_ATTRIBUTES.items():
    BAD_ATTRIBUTES[_op] = BAD_ATTRIBUTES.get(_op, []) + _values
BAD_CONSTANTS += _s9.BAD_CONSTANTS
BAD_INPUT_TYPES += _s9.BAD_INPUT_TYPES

from irforge.testing import fuzz_session10_ops as _s10  # noqa: E402

ONNX_SEEDS.update(_s10.SEEDS)
IR_SEEDS += _s10.IR_SEEDS  # Convolution + Add, dilated GroupConvolution, MatMul, SDPA with Select masks
for _op, _values in _s10.BAD_ATTRIBUTES.items():
    BAD_ATTRIBUTES[_op] = BAD_ATTRIBUTES.get(_op, []) + _values
BAD_CONSTANTS += _s10.BAD_CONSTANTS
BAD_INPUT_TYPES += _s10.BAD_INPUT_TYPES

from irforge.testing import fuzz_session11_ops as _s11  # noqa: E402

ONNX_SEEDS.update(_s11.SEEDS)
IR_SEEDS += _s11.IR_SEEDS  # 1x1 / 3x3 Convolution, MatMul, Gather / GatherElements, Transpose
for _op, _values in _s11.BAD_ATTRIBUTES.items():
    BAD_ATTRIBUTES[_op] = BAD_ATTRIBUTES.get(_op, []) + _values
BAD_CONSTANTS += _s11.BAD_CONSTANTS
BAD_INPUT_TYPES += _s11.BAD_INPUT_TYPES

from irforge.testing import fuzz_session12_ops as _s12  # noqa: E402

ONNX_SEEDS.update(_s12.SEEDS)
IR_SEEDS += _s12.IR_SEEDS  # 1x1 Convolution over 32x32 / 64x64, Deconvolution, depthwise -> 1x1, Concat, Gather
for _op, _values in _s12.BAD_ATTRIBUTES.items():
    BAD_ATTRIBUTES[_op] = BAD_ATTRIBUTES.get(_op, []) + _values
BAD_CONSTANTS += _s12.BAD_CONSTANTS
BAD_INPUT_TYPES += _s12.BAD_INPUT_TYPES

from irforge.testing import fuzz_session13_ops as _s13  # noqa: E402

ONNX_SEEDS.update(_s13.SEEDS)
IR_SEEDS += _s13.IR_SEEDS  # 3x3 stride-2 and grouped Convolution, squeeze-excite Multiply, MatMul
for _op, _values in _s13.BAD_ATTRIBUTES.items():
    BAD_ATTRIBUTES[_op] = BAD_ATTRIBUTES.get(_op, []) + _values
BAD_CONSTANTS += _s13.BAD_CONSTANTS
BAD_INPUT_TYPES += _s13.BAD_INPUT_TYPES


def _all_graphs(graph: Any) -> list[Any]:
    found = [graph]
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == attr.GRAPH:
                found.extend(_all_graphs(attr.g))
    return found


def mutate_onnx_new_ops(data: bytes, rng: random.Random) -> bytes:
    """One or two edits of a new-op seed: an attribute set to a value outside the op's
    definition, an input dropped / renamed / made empty, an initializer replaced by an
    empty / huge / negative / NaN / wrongly typed constant, a model input retyped or reshaped,
    an input turned constant, an opset changed, nodes reordered, an attention node's input
    swapped (a graph near attention that must fuse correctly or stay unfused)."""
    import onnx
    from google.protobuf.message import DecodeError
    from onnx import helper

    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except DecodeError:
        return data
    for _ in range(rng.randint(1, 2)):
        graph = rng.choice(_all_graphs(model.graph))
        if not graph.node:
            continue
        node = rng.choice(list(graph.node))
        choice = rng.randrange(10)
        if choice in (0, 1):  # an attribute value outside the op's definition
            options = BAD_ATTRIBUTES.get(node.op_type) or [("axis", rng.choice([-9, 9, 0])), ("bogus", 1)]
            name, value = rng.choice(options)
            for attr in list(node.attribute):
                if attr.name == name:
                    node.attribute.remove(attr)
            if value is not None:  # None: the attribute removed (a required one missing)
                node.attribute.append(helper.make_attribute(name, value, attr_type=onnx.AttributeProto.INTS if value == [] else None))
        elif choice == 2 and node.input:  # an input dropped, emptied or renamed
            i = rng.randrange(len(node.input))
            how = rng.randrange(3)
            if how == 0:
                del node.input[i]
            else:
                node.input[i] = "" if how == 1 else rng.choice(["nowhere", node.output[0], graph.node[-1].output[0]])
        elif choice in (3, 4) and model.graph.initializer:  # a constant replaced
            init = rng.choice(list(model.graph.initializer))
            init.CopyFrom(onnx.numpy_helper.from_array(rng.choice(BAD_CONSTANTS), init.name))
        elif choice == 5 and model.graph.input:  # a model input retyped / reshaped
            vi = rng.choice(list(model.graph.input))
            elem, shape = rng.choice(BAD_INPUT_TYPES)
            vi.CopyFrom(helper.make_tensor_value_info(vi.name, elem, shape))
        elif choice == 6 and model.graph.input:  # a model input turned constant (run-time becomes conversion-time)
            vi = model.graph.input[rng.randrange(len(model.graph.input))]
            model.graph.initializer.append(onnx.numpy_helper.from_array(rng.choice(BAD_CONSTANTS), vi.name))
            if rng.random() < 0.5:
                model.graph.input.remove(vi)
        elif choice == 7:  # the opset moved
            model.opset_import[0].version = rng.choice([7, 11, 13, 16, 17, 18, 20, 21, 23, 24, 26])
        elif choice == 8 and len(graph.node) >= 2:  # nodes reordered (import order)
            nodes = list(graph.node)
            rng.shuffle(nodes)
            del graph.node[:]
            graph.node.extend(nodes)
        else:  # an input swapped with another value of the graph (near-attention graphs)
            names = [n.output[0] for n in graph.node if n.output] + [i.name for i in model.graph.input] + [t.name for t in model.graph.initializer]
            if node.input and names:
                node.input[rng.randrange(len(node.input))] = rng.choice(names)
    return model.SerializeToString()


# attribute values each op defines: variants of a seed that onnxruntime runs, for the
# numerical check (bench/fuzz_numbers.py): irforge must agree with it, or refuse
VALID_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "GridSample": [("mode", "nearest"), ("mode", "bicubic"), ("mode", "bilinear"), ("padding_mode", "zeros"), ("padding_mode", "reflection"),
                   ("padding_mode", "border"), ("align_corners", 1), ("align_corners", 0)],
    "Resize": [("mode", "nearest"), ("mode", "cubic"), ("coordinate_transformation_mode", "align_corners"),
               ("coordinate_transformation_mode", "asymmetric"), ("coordinate_transformation_mode", "pytorch_half_pixel"),
               ("nearest_mode", "floor"), ("nearest_mode", "ceil"), ("nearest_mode", "round_prefer_ceil"), ("cubic_coeff_a", -0.5)],
    "Split": [("axis", 1), ("axis", -1)],
    "Flatten": [("axis", 0), ("axis", 1), ("axis", 3), ("axis", 4), ("axis", -1)],
    "DFT": [("onesided", 1), ("inverse", 1), ("inverse", 0), ("axis", 0), ("axis", -2)],
    "Col2Im": [("strides", [2, 2]), ("dilations", [2, 2]), ("pads", [1, 1, 1, 1]), ("pads", [0, 1, 0, 1]), ("strides", [1, 2])],
    "Celu": [("alpha", 2.0), ("alpha", 0.1)],
    "ThresholdedRelu": [("alpha", -0.5), ("alpha", 2.0)],
    "Shrink": [("lambd", 0.0), ("bias", -0.4), ("lambd", 1.5)],
    "MeanVarianceNormalization": [("axes", [1]), ("axes", [2]), ("axes", [0, 1, 2]), ("axes", [-1]), ("axes", [1, 2])],
    "LpNormalization": [("p", 1), ("axis", 0), ("axis", 1), ("axis", -2)],
    "RMSNormalization": [("axis", 1), ("axis", 2), ("axis", -2), ("epsilon", 1.0)],
    "Swish": [("alpha", -1.0), ("alpha", 0.5)],
    "EyeLike": [("k", -2), ("k", 7), ("dtype", 7), ("dtype", 6), ("dtype", 11), ("k", 0)],
    "BatchNormalization": [("epsilon", 0.5), ("momentum", 0.1)],
    "TopK": [("largest", 0), ("axis", 0), ("axis", 2)],  # not sorted=0: its order is undefined
    "NonMaxSuppression": [("center_point_box", 1)],
    "RoiAlign": [("mode", "max"), ("sampling_ratio", 0), ("sampling_ratio", 1), ("output_height", 3), ("spatial_scale", 1.0),
                 ("coordinate_transformation_mode", "output_half_pixel")],
    "Softmax": [("axis", -1), ("axis", 1), ("axis", 2), ("axis", 0)],
    "Transpose": [("perm", [0, 2, 1, 3]), ("perm", [0, 1, 3, 2]), ("perm", [0, 2, 3, 1])],
    "Mul": [], "Add": [], "Div": [], "MatMul": [],
}


VALID_ATTRIBUTES.update(_s5.VALID_ATTRIBUTES)
for _op, _values in [*_s6.VALID_ATTRIBUTES.items(), *_s7.VALID_ATTRIBUTES.items(), *_s8.VALID_ATTRIBUTES.items(), *_s9.VALID_ATTRIBUTES.items(),
                       *_s10.VALID_ATTRIBUTES.items(), *_s11.VALID_ATTRIBUTES.items(), *_s12.VALID_ATTRIBUTES.items(),
                       *_s13.VALID_ATTRIBUTES.items()]:
    VALID_ATTRIBUTES[_op] = VALID_ATTRIBUTES.get(_op, []) + _values


def vary_onnx_new_ops(data: bytes, rng: random.Random) -> bytes:
    """One to three edits that keep a seed valid most of the time: an attribute set to another
    value its op defines, a constant given other values of its shape and type (attention's
    scale and mask, NMS's thresholds, Col2Im's and DFT's sizes), two inputs of an elementwise
    node swapped."""
    import onnx
    from onnx import helper

    model = onnx.ModelProto()
    model.ParseFromString(data)
    for _ in range(rng.randint(1, 3)):
        graph = rng.choice(_all_graphs(model.graph))
        if not graph.node:
            continue
        node = rng.choice(list(graph.node))
        choice = rng.randrange(3)
        if choice == 0 and VALID_ATTRIBUTES.get(node.op_type):
            name, value = rng.choice(VALID_ATTRIBUTES[node.op_type])
            for attr in list(node.attribute):
                if attr.name == name:
                    node.attribute.remove(attr)
            node.attribute.append(helper.make_attribute(name, value))
        elif choice == 1 and model.graph.initializer:
            init = rng.choice(list(model.graph.initializer))
            old = onnx.numpy_helper.to_array(init)
            if old.dtype.kind == "f":
                new = rng.choice([np.full(old.shape, rng.choice([-1e4, 0.0, 3.0, -0.25, float("inf"), -float("inf")])),
                                  np.asarray(old) * rng.choice([-1.0, 2.0, 1e-3])]).astype(old.dtype)
            elif old.dtype.kind in "iu":
                new = (np.asarray(old).astype(np.int64) + rng.choice([-1, 1, 2])).astype(old.dtype)  # uint8 (packed weights) wraps
            else:
                continue
            init.CopyFrom(onnx.numpy_helper.from_array(np.asarray(new), init.name))
        elif node.op_type in ("Add", "Mul", "Sub", "Div", "MatMul") and len(node.input) == 2:
            node.input[0], node.input[1] = node.input[1], node.input[0]
    return model.SerializeToString()


# -- IR XML seeds written by OpenVINO: DFT / IDFT / RDFT / Col2Im ----------------------------------


def openvino_ir_seeds() -> dict[str, bytes]:
    """IR XML (and .bin) OpenVINO writes for DFT, IDFT, RDFT and Col2Im layers; {} without
    OpenVINO. irforge's IR reader has no such layers: a clean error is expected."""
    try:
        import openvino as ov
        import openvino.opset15 as ops
    except ImportError:
        return {}
    import tempfile
    from pathlib import Path

    x = ops.parameter([2, 8, 2], np.float32, name="x")
    axes = ops.constant(np.array([1], np.int64))
    dft_out = ops.dft(x, axes)
    idft_out = ops.idft(dft_out, axes, ops.constant(np.array([8], np.int64)))
    real = ops.parameter([2, 8], np.float32, name="r")
    rdft_out = ops.rdft(real, axes)
    blocks = ops.parameter([1, 8, 9], np.float32, name="b")
    folded = ops.col2im(blocks, ops.constant(np.array([4, 4], np.int64)), ops.constant(np.array([2, 2], np.int64)))
    model = ov.Model([idft_out, rdft_out, folded], [x, real, blocks], "spectral")
    with tempfile.TemporaryDirectory() as tmp:
        ov.save_model(model, str(Path(tmp) / "spec.xml"), compress_to_fp16=False)
        return {"spec.xml": (Path(tmp) / "spec.xml").read_bytes(), "spec.bin": (Path(tmp) / "spec.bin").read_bytes()}


# -- IR XML mutators ---------------------------------------------------------------------------------

_DATA_ATTR = re.compile(rb'<data ([^/]*)/>')
_ATTR = re.compile(rb'(\w+)="([^"]*)"')
_DIM = re.compile(rb"<dim>(-?\d+)</dim>")
_PRECISION = re.compile(rb'(precision|element_type)="(\w+)"')
XML_VALUES = [b"", b"-1", b"0", b"99", b"nope", b"2,2", b"1,1,1", b"nan", b"true", b"bicubic", b"nearest", b"reflection", b"sizes",
              b"scales", b"align_corners", b"asymmetric", b"cubic", b"linear_onnx", b"-5", b"4294967296", b"1e400", b"f64", b"i32"]


def mutate_ir_new_ops(data: bytes, rng: random.Random) -> bytes:
    """An edit of the IR XML of a new layer: a <data> attribute set to a value outside the
    layer's definition (modes, axes, sizes, pads), a port's dim changed (a grid of another
    rank or a last dim other than 2, sizes of another length), a precision swapped, a port
    removed, the layer type swapped (GridSample, Interpolate, Slice, DFT, IDFT, RDFT, Col2Im)."""
    text = data
    choice = rng.randrange(6)
    datas = list(_DATA_ATTR.finditer(text))
    if choice in (0, 1) and datas:
        m = rng.choice(datas)
        attrs = list(_ATTR.finditer(text, m.start(1), m.end(1)))
        if attrs:
            a = rng.choice(attrs)
            text = text[: a.start(2)] + rng.choice(XML_VALUES) + text[a.end(2) :]
    elif choice == 2:
        dims = list(_DIM.finditer(text))
        if dims:
            d = rng.choice(dims)
            text = text[: d.start(1)] + rng.choice([b"0", b"1", b"3", b"-1", b"7", b"1000000000000", b"-3"]) + text[d.end(1) :]
    elif choice == 3:
        precs = list(_PRECISION.finditer(text))
        if precs:
            p = rng.choice(precs)
            text = text[: p.start(2)] + rng.choice([b"FP64", b"I32", b"I64", b"U8", b"BOOL", b"FP16", b"nope", b"f32", b"i8"]) + text[p.end(2) :]
    elif choice == 4:  # a port removed (an input missing, or an output)
        ports = [m.span() for m in re.finditer(rb"<port id=\"\d+\"[^>]*>.*?</port>", text, re.S)]
        if ports:
            a, b = rng.choice(ports)
            text = text[:a] + text[b:]
    else:
        kinds = [m.span(1) for m in re.finditer(rb'type="(GridSample|Interpolate|Slice|StridedSlice|DFT|IDFT|RDFT|IRDFT|Col2Im|Split|VariadicSplit)"', text)]
        if kinds:
            a, b = rng.choice(kinds)
            text = text[:a] + rng.choice([b"GridSample", b"Interpolate", b"Slice", b"DFT", b"IDFT", b"RDFT", b"IRDFT", b"Col2Im",
                                          b"VariadicSplit", b"StridedSlice"]) + text[b:]
    return text


# -- ir-run cases -------------------------------------------------------------------------------------

RUN_ARRAYS: dict[str, list[tuple[str, Any]]] = {
    "grid": [("grid", np.full((1, 3, 3, 2), np.nan, np.float32)), ("grid", np.full((1, 3, 3, 2), 1e30, np.float32)),
             ("grid", np.zeros((1, 3, 3, 3), np.float32)), ("grid", np.zeros((1, 0, 3, 2), np.float32)),
             ("grid", np.full((1, 3, 3, 2), np.inf, np.float32)), ("grid", np.zeros((1, 3, 3, 2), np.float64)),
             ("x", np.full((1, 2, 4, 5), np.nan, np.float32))],
    "slice": [("starts", np.array([2**62], np.int64)), ("starts", np.array([-2**62], np.int64)), ("ends", np.array([0], np.int64)),
              ("ends", np.array([-100], np.int64)), ("starts", np.array([1, 2], np.int64)), ("starts", np.array([], np.int64)),
              ("starts", np.array([1], np.int32)), ("ends", np.array([2**63 - 1], np.int64)), ("starts", np.array([5], np.int64))],
    "split": [("lengths", np.array([3, 4], np.int64)), ("lengths", np.array([0, 7], np.int64)), ("lengths", np.array([-1, 8], np.int64)),
              ("lengths", np.array([5, 5], np.int64)), ("lengths", np.array([7], np.int64)), ("lengths", np.array([1, 2, 4], np.int64)),
              ("lengths", np.array([2**40, 3], np.int64)), ("lengths", np.array([3, 4], np.int32)), ("lengths", np.array([1, -1], np.int64))],
    "resize": [("sizes", np.array([1, 1, 8, 8], np.int64)), ("sizes", np.array([1, 1, 0, 8], np.int64)), ("sizes", np.array([1, 1, -2, 8], np.int64)),
               ("sizes", np.array([1, 1, 10**9, 10**9], np.int64)), ("sizes", np.array([2, 3, 8, 8], np.int64)), ("sizes", np.array([8, 8], np.int64)),
               ("sizes", np.array([1, 1, 8, 8], np.float32)), ("sizes", np.array([1, 1, 2**62, 1], np.int64)), ("sizes", np.array([1, 1, 1, 1], np.int64))],
    "flatten": [("x", np.zeros((0, 3, 5, 2), np.float32)), ("x", np.ones((2, 3, 0, 2), np.float32)), ("x", np.ones((2, 3, 4), np.float32)),
                ("x", np.ones((1, 3, 7, 2), np.float32))],
    "dft": [("x", np.full((2, 8, 1), np.nan, np.float32)), ("x", np.full((2, 8, 1), np.inf, np.float32)), ("x", np.ones((2, 8, 2), np.float32))],
    "col2im": [("x", np.full((1, 8, 9), np.nan, np.float32)), ("x", np.ones((1, 8, 8), np.float32))],
    "detect": [("k", np.array([0], np.int64)), ("k", np.array([7], np.int64)), ("k", np.array([-1], np.int64)), ("k", np.array([2, 3], np.int64)),
               ("rois", np.zeros((0, 4), np.float32)), ("rois", np.full((2, 4), np.nan, np.float32)), ("rois", np.full((2, 4), 1e20, np.float32)),
               ("scores", np.full((1, 1, 6), np.nan, np.float32)), ("k", np.array([2**40], np.int64)), ("rois", np.zeros((2, 5), np.float32)),
               ("batch", np.array([0, 3], np.int64)), ("batch", np.array([-1, 0], np.int64)), ("batch", np.zeros(0, np.int64))],
    "intmm": [("a", np.full((2, 3), 2**31 - 1, np.int32)), ("b", np.full((2, 3), 2**62, np.int64)), ("a", np.zeros((2, 3), np.float32))],
    "outer": [("x", np.full((2, 3), -1, np.float32)), ("x", np.full((2, 3), np.nan, np.float32))],
    "bntrain": [("x", np.full((2, 3, 4, 4), np.nan, np.float32)), ("x", np.zeros((2, 3, 4, 4), np.float32))],
}


def run_case(rng: random.Random, seeds: dict[str, dict[str, bytes]]) -> Any:
    """ir-run of a new-op model (ONNX, or the IR XML / .mlir irforge wrote) on ref or cpu with
    random inputs, or an input array that is huge, negative, empty, NaN or of another dtype."""
    from irforge.testing.fuzz_flags import Case, npy_bytes

    fmt = rng.choice(["onnx", "onnx", "xml", "mlir"])
    stems = [_stem(n) for n in ONNX_SEEDS] if fmt == "onnx" else list(IR_SEEDS)
    stem = rng.choice(stems)
    suffix = {"onnx": (".onnx",), "xml": (".xml", ".bin"), "mlir": (".mlir", ".weights")}[fmt]
    files = {stem + s: seeds[fmt][stem + s] for s in suffix if stem + s in seeds[fmt]}
    if not files:
        stem, fmt, suffix = "grid", "onnx", (".onnx",)
        files = {"grid.onnx": seeds["onnx"]["grid.onnx"]}
    argv = [f"IN/{stem}{suffix[0]}", "--device", rng.choice(["ref", "cpu"]), "--output", "OUT/o.npz"]
    if stem in RUN_ARRAYS and rng.random() < 0.8:
        name, array = rng.choice(RUN_ARRAYS[stem])
        files[f"{name}.npy"] = npy_bytes(array)
        argv += ["--input", f"{name}=IN/{name}.npy"]
    given = {a.split("=")[0] for a in argv if "=IN/" in a}
    rois = np.load(io.BytesIO(files["rois.npy"])) if "rois.npy" in files else None
    defaults = {"flatten": {"x": np.ones((2, 3, 5, 2), np.float32)},  # inputs of named dims: ir-run needs them
                "detect": {"rois": np.array([[0, 0, 4, 4], [1, 2, 6, 7]], np.float32),
                           "batch": np.zeros(2 if rois is None or rois.ndim != 2 else len(rois), np.int64)}}
    for name, array in defaults.get(stem, {}).items():
        if name not in given and fmt == "onnx":
            files[f"{name}.npy"] = npy_bytes(array)
            argv += ["--input", f"{name}=IN/{name}.npy"]
    if rng.random() < 0.3:
        argv += ["--seed", str(rng.randrange(100))]
    return Case("ir-run", argv, files, f"run:{stem}{suffix[0]}")


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[0]


__all__ = ["IR_SEEDS", "ONNX_SEEDS", "mutate_ir_new_ops", "mutate_onnx_new_ops", "onnx_seeds", "openvino_ir_seeds", "run_case", "vary_onnx_new_ops"]
