"""The torchvision models no other zoo runs: every name of `torchvision.models.list_models()`
(classification, segmentation, detection, video, optical flow, quantization) is a row here
or in `onnx_zoo_wide.py` (`tv-*`), `onnx_zoo_video.py` or `onnx_zoo_wild.py`, one model per
architecture where the sizes of a family share their layers (resnet101 is resnet50 deeper).

Outside CI (the zoo venv). Random weights, the harness and columns of `onnx_zoo.py`.
Quantized models (`torchvision.models.quantization`) are torchvision's own eager
quantization (fused, calibrated on a random image, fbgemm); torch's exporters write them as
quantized ONNX where they can.

    PYTHONPATH=$PWD:$PWD/bench /work/zoo-venv/bin/python bench/onnx_zoo_torchvision.py [--models a,b] [--exporters torchscript,dynamo] [--out table.md]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from onnx_zoo import ZooModel, main  # bench/, next to this script
from onnx_zoo_wide import DET, Segment, detector, pixels, tie_aware, tv
from torch import nn


def swin_v2(m: Any) -> nn.Module:
    """swin_v2_t's layers (cosine attention, log-spaced continuous position bias, post-norm
    blocks, PatchMergingV2) at a small config, as `onnx_zoo_wide.swin_t`."""
    from torchvision.models.swin_transformer import PatchMergingV2, SwinTransformer, SwinTransformerBlockV2

    return SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[1, 2], window_size=[4, 4], num_classes=10,
                           block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2)


def quantized(name: str, **kwargs: Any) -> Callable[[Any], nn.Module]:
    """torchvision's quantized `name`: the float model with random BatchNorm statistics
    (drawn by `tv` first, so the fused convolutions carry them), then torchvision's own
    fuse / prepare / calibrate / convert."""
    def make(m: Any) -> nn.Module:
        from torchvision.models.quantization.utils import quantize_model

        model = getattr(m.quantization, name)(weights=None, quantize=False, num_classes=10, **kwargs).eval()
        torch.manual_seed(0)
        with torch.no_grad():
            for layer in model.modules():
                if isinstance(layer, nn.BatchNorm2d):
                    layer.running_mean.uniform_(-0.2, 0.2)
                    layer.running_var.uniform_(0.5, 1.5)
        quantize_model(model, "fbgemm")  # calibrates on torch.rand(1, 3, 299, 299)
        return model

    return make


def as_written(path: object, feeds: object) -> None:
    """No rewrite: a `post` makes the harness compare with onnxruntime's own execution of the
    QDQ nodes as written (graph optimisations off), as `zoo_int8.py`'s rows; its fused int8
    kernels round differently (reported beside the row)."""


ZOO: list[ZooModel] = [
    ZooModel("tv-resnet50", tv(lambda m: m.resnet50(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-resnext50_32x4d", tv(lambda m: m.resnext50_32x4d(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-wide_resnet50_2", tv(lambda m: m.wide_resnet50_2(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-mobilenet_v2", tv(lambda m: m.mobilenet_v2(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-mobilenet_v3_large", tv(lambda m: m.mobilenet_v3_large(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-efficientnet_v2_s", tv(lambda m: m.efficientnet_v2_s(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-regnet_x_400mf", tv(lambda m: m.regnet_x_400mf(num_classes=10)), pixels(64), ("x",)),
    # a 2x2 map into AdaptiveAvgPool2d((7, 7)): the adaptive pool upsamples
    ZooModel("tv-vgg11_bn", tv(lambda m: m.vgg11_bn(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-squeezenet1_0", tv(lambda m: m.squeezenet1_0(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-swin_v2", tv(swin_v2), pixels(64), ("x",), 4),
    ZooModel("tv-deeplabv3_resnet50", tv(lambda m: Segment(m.segmentation.deeplabv3_resnet50(weights=None, weights_backbone=None, num_classes=4, aux_loss=False))),
             pixels(64), ("x",)),
    ZooModel("tv-q-resnet18", tv(quantized("resnet18")), pixels(64), ("x",), post=as_written),
    ZooModel("tv-q-resnet50", tv(quantized("resnet50")), pixels(64), ("x",), post=as_written),
    ZooModel("tv-q-mobilenet_v2", tv(quantized("mobilenet_v2")), pixels(64), ("x",), post=as_written),
    ZooModel("tv-q-mobilenet_v3_large", tv(quantized("mobilenet_v3_large")), pixels(64), ("x",), post=as_written),
    ZooModel("tv-q-googlenet", tv(quantized("googlenet", aux_logits=False, init_weights=True)), pixels(64), ("x",), post=as_written),
    ZooModel("tv-q-inception_v3", tv(quantized("inception_v3", aux_logits=False, init_weights=False)), pixels(80), ("x",), post=as_written),
    ZooModel("tv-q-shufflenet_v2_x0_5", tv(quantized("shufflenet_v2_x0_5")), pixels(64), ("x",), post=as_written),
    ZooModel("tv-q-resnext101_32x8d", tv(quantized("resnext101_32x8d")), pixels(64), ("x",), post=as_written),
    # the detectors last (the slowest rows)
    ZooModel("tv-fasterrcnn_mobilenet_v3_large_fpn",
             tv(detector(lambda m: m.detection.fasterrcnn_mobilenet_v3_large_fpn(**{**DET, "min_size": 160, "max_size": 160}), size=160)),
             pixels(160), ("x",)),
    # (detections whose scores tie within 1e-5 compared in either order: onnx_zoo_wide.tie_aware)
    ZooModel("tv-fasterrcnn_resnet50_fpn_v2", tv(detector(lambda m: m.detection.fasterrcnn_resnet50_fpn_v2(**DET))), pixels(64), ("x",),
             compare=tie_aware(3)),
    ZooModel("tv-maskrcnn_resnet50_fpn_v2", tv(detector(lambda m: m.detection.maskrcnn_resnet50_fpn_v2(**DET), "masks")), pixels(64), ("x",),
             compare=tie_aware(4)),
    ZooModel("tv-retinanet_resnet50_fpn_v2", tv(detector(lambda m: m.detection.retinanet_resnet50_fpn_v2(**DET))), pixels(64), ("x",),
             compare=tie_aware(3)),
]

if __name__ == "__main__":
    main(ZOO)
