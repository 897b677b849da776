"""The indexing and box families on the CPU backend: index-driven gathers and scatters,
sorting, scans and ROI pooling run once on small tensors in the models that have them
(position ids, masks, detection heads), so they run their numpy reference kernels as host
steps (host_steps.py); GatherElements has a native kernel (`movement.py`: DeBERTa's
relative-position scores, one per layer). Where an output size depends on the data (NonZero, NonMaxSuppression, Unique,
a Range of run-time bounds, a TopK of run-time k, a ShapeOf of such sizes, a Reshape, Slice, Pad or Resize to them), the model runs
in segments and these ops on the host between them (`irforge/backends/segments.py`)."""

from irforge.backends.cpu.host_steps import host_step_op
from irforge.dialects.nn.boxes import NonMaxSuppression, ROIAlign
from irforge.dialects.nn.resample import ResampleBy, ResampleTo
from irforge.dialects.nn.unique import Unique
from irforge.dialects.nn.indexing import (
    BroadcastTo,
    ReshapeTo,
    CumSum,
    GatherND,
    IsInf,
    NonZero,
    OneHot,
    Range,
    ScatterElements,
    ScatterND,
    ShapeOf,
    PadBy,
    SliceTo,
    TopK,
)

host_step_op(GatherND, ScatterND, ScatterElements, OneHot, TopK, CumSum, Range, IsInf, ROIAlign,
             NonZero, NonMaxSuppression, Unique, ShapeOf, BroadcastTo, ReshapeTo, SliceTo, PadBy, ResampleTo, ResampleBy)  # fmt: skip
