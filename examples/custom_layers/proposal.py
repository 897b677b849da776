"""Proposal: the region-proposal layer of Faster R-CNN, as py-faster-rcnn ships it — a Caffe
`Python` layer (`rpn.proposal_layer.ProposalLayer`, settings in `param_str`:
`'feat_stride': 16`) — mapped onto irforge's built-in `nn.proposal`, OpenVINO's Proposal
(opset4), so the IR loads and runs in OpenVINO itself.

irforge maps py-faster-rcnn's module this way without any extension; this file shows the
mapping for a copy of the layer under another module name (change PYTHON_LAYER), the Model
Optimizer's FrontReplacementOp in one call:

    ir-convert --input_model net.caffemodel --extensions examples/custom_layers/proposal.py

The settings are py-faster-rcnn's cfg.TEST (6000 boxes before NMS, 300 after, IoU 0.7, min
size 16) unless param_str gives them. The rois are post_nms_topn rows (image index, x1, y1,
x2, y2); rows past the kept boxes are zero after a -1 end marker, where py-faster-rcnn outputs
only the kept rows. For a numpy implementation of the layer as a custom op, see
proposal_numpy.py.
"""

from __future__ import annotations

from typing import Any

from irforge.custom import op_extension
from irforge.custom.mapping import ConversionNode, python_param_dict
from irforge.dialects.nn import Proposal
from irforge.frontends.caffe.extractors.detection import python_proposal_attrs

PYTHON_LAYER = "Python:rpn.proposal_layer.ProposalLayer"


def proposal_attrs(node: ConversionNode) -> dict[str, Any]:
    return python_proposal_attrs(node.ctx, python_param_dict(node))


op_extension("caffe", PYTHON_LAYER, Proposal, attrs=proposal_attrs)
