"""Real torchvision models on the CPU-only torch of the zoo venv (a no-op where torchvision matches torch).

PyPI's torchvision wheel ships `_C.so` linked against CUDA libraries that the CPU torch
lacks, so its compiled ops (`torchvision::nms`, `torchvision::roi_align`) never register and
`import torchvision` fails in `_meta_registrations` (`operator torchvision::nms does not
exist`). This module defines those ops first, with Python CPU kernels (greedy NMS,
torchvision's own pure-Python `_roi_align`) and fake kernels for torch.export, then imports
torchvision and tells it the ops exist, so its detection models run, trace to the ONNX ops
torchvision's symbolics write (NonMaxSuppression, RoiAlign) and export through dynamo
(onnxscript's torchvision translations). Nothing here is irforge: it makes the zoo's
reference models loadable.

    from zoo_torchvision import torchvision  # instead of `import torchvision`

Import it before transformers too: transformers imports torchvision when it is installed.
"""

from __future__ import annotations

import sys

import torch
from zoo_detection import greedy_nms  # bench/, next to this script


def _same_build() -> bool:
    """Whether torchvision's wheel was built for this torch (the same local version tag,
    `+cu132` or none): then its compiled ops load and nothing needs defining. Read from
    the installed metadata: a failed `import torchvision` leaves half-registered ops behind."""
    from importlib.metadata import version

    return version("torchvision").partition("+")[2] == version("torch").partition("+")[2]


if _same_build():
    import torchvision  # noqa: E402
else:
    _LIB = torch.library.Library("torchvision", "DEF")
    _LIB.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    _LIB.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    _LIB.define("roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
                "int sampling_ratio, bool aligned) -> Tensor")

    def _nms(dets: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
        return greedy_nms(dets, scores, iou_threshold) if len(dets) else torch.zeros(0, dtype=torch.int64)

    def _roi_align(input: torch.Tensor, rois: torch.Tensor, spatial_scale: float, pooled_height: int, pooled_width: int,
                   sampling_ratio: int, aligned: bool) -> torch.Tensor:
        # torchvision's pure-Python kernel, without its lazy torch.compile wrapper: compiling
        # inside torch.jit.trace (the TorchScript exporter runs this kernel) is refused
        python_roi_align = getattr(_ROI_ALIGN_MODULE._roi_align, "__wrapped__", _ROI_ALIGN_MODULE._roi_align)
        return python_roi_align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned)

    _LIB.impl("nms", _nms, "CPU")
    _LIB.impl("roi_align", _roi_align, "CPU")

    @torch.library.register_fake("torchvision::roi_align")
    def _(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):  # type: ignore[no-untyped-def]
        return input.new_empty((rois.shape[0], input.shape[1], pooled_height, pooled_width))

    @torch.library.register_fake("torchvision::nms")
    def _(dets, scores, iou_threshold):  # type: ignore[no-untyped-def]
        # how many boxes survive depends on the data: a dynamic size for torch.export
        return dets.new_empty((torch.library.get_ctx().new_dynamic_size(),), dtype=torch.int64)

    import torchvision  # noqa: E402  (after the ops exist)
    import torchvision.extension  # noqa: E402
    import torchvision.ops.roi_align  # noqa: E402

    # `torchvision.ops.roi_align` is the function (ops/__init__ imports it over the submodule's
    # name): patch the module itself, or roi_align still sees no C op and takes the torch.compile'd
    # Python path, which torch.jit.trace refuses ("using FX to torch.jit.trace a dynamo-optimized function")
    _ROI_ALIGN_MODULE = sys.modules["torchvision.ops.roi_align"]

    def _has_ops() -> bool:  # a def, not a lambda: torch.jit.script compiles the callers while tracing
        return True

    torchvision.extension._has_ops = _has_ops  # what _assert_has_ops reads
    _ROI_ALIGN_MODULE._has_ops = _has_ops  # imported by name: the C op, not the Python fallback

# torch.export (the dynamo exporter): batched_nms first compares boxes.numel() with 4000 to
# choose between a per-class loop and the coordinate trick; under torch.export the box count
# is data-dependent and that guard fails ("Could not guard on data-dependent expression");
# the coordinate trick (one NMS, boxes offset per class) is what the TorchScript export
# writes too, so take it whenever torch is compiling (eager runs keep torchvision's own)
_BOXES_MODULE = sys.modules["torchvision.ops.boxes"]
_batched_nms = _BOXES_MODULE.batched_nms


def _export_friendly_batched_nms(boxes: torch.Tensor, scores: torch.Tensor, idxs: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    if not torch.compiler.is_compiling():
        return _batched_nms(boxes, scores, idxs, iou_threshold)
    # torchvision's _batched_nms_coordinate_trick without its `if boxes.numel() == 0` (a
    # guard on a data-dependent size too): a 0 joins the max so that it exists for no box
    # (the same offset where boxes are clipped to the image, as every detector's are)
    max_coordinate = torch.cat([boxes.reshape(-1), boxes.new_zeros(1)]).max()
    offsets = idxs.to(boxes) * (max_coordinate + torch.tensor(1).to(boxes))
    return torch.ops.torchvision.nms(boxes + offsets[:, None], scores, iou_threshold)


_BOXES_MODULE.batched_nms = _export_friendly_batched_nms
torchvision.ops.batched_nms = _export_friendly_batched_nms

__all__ = ["torchvision"]
