"""Detection ops on the CPU backend: sequential, data-dependent and small next to the
convolutions feeding them, they run their numpy reference kernels as host steps (explicit
buffers between native kernels; see host_steps.py). PriorBox / PriorBoxClustered usually
fold to constants first (canonicalize, at static shapes)."""

from irforge.backends.cpu.host_steps import host_step_op
from irforge.dialects.nn.detection import DetectionOutput, PriorBox, PriorBoxClustered
from irforge.dialects.nn.rcnn import Proposal, PSROIPooling, ROIPooling
from irforge.dialects.nn.yolo import RegionYolo, ReorgYolo

host_step_op(DetectionOutput, PriorBox, PriorBoxClustered, Proposal, ROIPooling, PSROIPooling, RegionYolo, ReorgYolo)
