"""The video and volumetric ONNX zoo: torchvision's video classifiers, RAFT optical flow,
AlexNet at 224 px and a 3-D UNet, on the wide zoo's harness (`onnx_zoo.main`).

Outside CI (the zoo venv). Each row: export by torch's TorchScript and dynamo exporters,
convert with irforge, compare with onnxruntime: OpenVINO on irforge's IR XML, the
reference interpreter, the CPU backend (3-D convolution, transposed convolution and
pooling: `irforge/backends/cpu/ops/volumetric.py`). Random weights; BatchNorm statistics
(2-D and 3-D) randomised so that no layer is an identity. The heavy rows (s3d and the MViTs
need 16 x 224 x 224 clips) take minutes each on 2 cores.

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/onnx_zoo_video.py [--models tv-r3d_18,unet3d] [--exporters torchscript,dynamo] [--out table.md]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from onnx_zoo import ZooModel, main  # bench/, next to this script
from onnx_zoo_wide import gen, tv
from torch import nn


def video(make: Callable[[Any], nn.Module]) -> Callable[[], nn.Module]:
    """`tv`'s builder, with the 3-D BatchNorms' statistics randomised too."""

    def build() -> nn.Module:
        model = tv(make)()
        torch.manual_seed(1)
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, nn.BatchNorm3d):
                    m.running_mean.uniform_(-0.2, 0.2)
                    m.running_var.uniform_(0.5, 1.5)
        return model

    return build


def mvit(variant: str, t: int, size: int) -> Callable[[Any], nn.Module]:
    """torchvision's MViT (its real block settings) built for a t x size x size clip: the
    factories fix 16 x 224 x 224 (position embeddings), whose run took 22 GB on this machine
    (the OOM killer ended it), so the clip size is passed through to `_mvit`."""

    def make(models: Any) -> nn.Module:
        from torchvision.models.video import mvit as module

        original = module._mvit

        def sized(**kwargs: Any) -> nn.Module:
            return original(**{**kwargs, "spatial_size": (size, size), "temporal_size": t})

        module._mvit = sized
        try:
            return getattr(module, variant)(num_classes=10)
        finally:
            module._mvit = original

    return make


def clip(t: int, size: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randn(1, 3, t, size, size, generator=gen()),)


class Flow(nn.Module):
    """RAFT on two frames, a few refinement steps; the last flow field."""

    def __init__(self, model: nn.Module, updates: int = 2) -> None:
        super().__init__()
        self.model, self.updates = model, updates

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return self.model(a, b, num_flow_updates=self.updates)[-1]


def frames(size: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    def make() -> tuple[torch.Tensor, ...]:
        g = gen()
        return torch.randn(1, 3, size, size, generator=g), torch.randn(1, 3, size, size, generator=g)

    return make


def block3d(i: int, o: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv3d(i, o, 3, padding=1), nn.BatchNorm3d(o), nn.ReLU(),
                         nn.Conv3d(o, o, 3, padding=1, bias=False), nn.BatchNorm3d(o), nn.ReLU())


class UNet3d(nn.Module):
    """A small 3-D UNet (medical segmentation): two levels down by max pooling, up by a
    ConvTranspose3d and by trilinear upsampling, skip connections concatenated."""

    def __init__(self, c: int = 8, classes: int = 3) -> None:
        super().__init__()
        self.enc1, self.enc2, self.mid = block3d(1, c), block3d(c, 2 * c), block3d(2 * c, 4 * c)
        self.pool = nn.MaxPool3d(2)
        self.up2 = nn.ConvTranspose3d(4 * c, 2 * c, 2, stride=2)
        self.dec2 = block3d(4 * c, 2 * c)
        self.up1 = nn.Upsample(scale_factor=2, mode="trilinear", align_corners=False)
        self.dec1 = block3d(3 * c, c)
        self.head = nn.Conv3d(c, classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        m = self.mid(nn.functional.avg_pool3d(e2, 2, ceil_mode=True))
        d2 = self.dec2(torch.cat([self.up2(m), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.head(d1)


def unet3d() -> nn.Module:
    torch.manual_seed(0)
    model = UNet3d().eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm3d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
    return model


class VNet3d(nn.Module):
    """A medical-imaging style 3-D network: strided-conv downsampling, dilated 3-D
    convolutions (MedicalNet), InstanceNorm3d and GroupNorm, PReLU / LeakyReLU / ELU, a
    ceil-mode MaxPool3d, a global-pool gate and nearest upsampling (MaxUnpool3d does
    not export in torch 2.13)."""

    def __init__(self, c: int = 8) -> None:
        super().__init__()
        self.inp = nn.Sequential(nn.Conv3d(2, c, 5, padding=2), nn.InstanceNorm3d(c, affine=True), nn.PReLU(c))
        self.down = nn.Sequential(nn.Conv3d(c, 2 * c, 2, stride=2), nn.GroupNorm(4, 2 * c), nn.LeakyReLU(0.1))
        self.dilated = nn.Sequential(nn.Conv3d(2 * c, 2 * c, 3, padding=2, dilation=2), nn.BatchNorm3d(2 * c), nn.ReLU(),
                                     nn.Conv3d(2 * c, 2 * c, (3, 3, 3), padding=(4, 2, 2), dilation=(4, 2, 2)))
        self.pool = nn.MaxPool3d(3, stride=2, padding=1, ceil_mode=True)
        self.context = nn.Sequential(nn.AdaptiveAvgPool3d(1), nn.Conv3d(2 * c, 2 * c, 1), nn.Sigmoid())
        self.up = nn.Sequential(nn.ConvTranspose3d(2 * c, c, 3, stride=2, padding=1, output_padding=1), nn.ELU())
        self.out = nn.Conv3d(2 * c, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.inp(x)
        b = self.down(a)
        b = b + self.dilated(b)
        b = nn.functional.interpolate(self.pool(b), size=b.shape[2:], mode="nearest") + b
        gate = nn.functional.interpolate(self.context(b), size=b.shape[2:], mode="nearest")
        return torch.softmax(self.out(torch.cat([self.up(b * gate), a], 1)), 1)


def vnet3d() -> nn.Module:
    torch.manual_seed(0)
    model = VNet3d().eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm3d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
    return model


ZOO = [
    ZooModel("tv-r3d_18", video(lambda m: m.video.r3d_18(num_classes=10)), clip(8, 64), ("x",)),
    ZooModel("tv-mc3_18", video(lambda m: m.video.mc3_18(num_classes=10)), clip(8, 64), ("x",)),
    ZooModel("tv-r2plus1d_18", video(lambda m: m.video.r2plus1d_18(num_classes=10)), clip(8, 64), ("x",)),
    ZooModel("tv-swin3d_t", video(lambda m: m.video.swin3d_t(num_classes=10)), clip(8, 64), ("x",), 12),
    ZooModel("tv-raft_small", video(lambda m: Flow(m.optical_flow.raft_small())), frames(128), ("a", "b")),
    ZooModel("tv-raft_large", video(lambda m: Flow(m.optical_flow.raft_large())), frames(128), ("a", "b")),
    ZooModel("tv-alexnet", tv(lambda m: m.alexnet(num_classes=10)), lambda: (torch.randn(1, 3, 224, 224, generator=gen()),), ("x",)),
    ZooModel("unet3d", unet3d, lambda: (torch.randn(1, 1, 16, 24, 24, generator=gen()),), ("x",)),
    ZooModel("vnet3d", vnet3d, lambda: (torch.randn(1, 2, 16, 20, 24, generator=gen()),), ("x",)),
    ZooModel("tv-mvit_v2_s", video(mvit("mvit_v2_s", 8, 96)), clip(8, 96), ("x",), 16),
    ZooModel("tv-mvit_v1_b", video(mvit("mvit_v1_b", 8, 96)), clip(8, 96), ("x",), 16),
    # a 16 x 224 x 224 clip: s3d's last AvgPool3d is a fixed (2, 7, 7) window
    ZooModel("tv-s3d", video(lambda m: m.video.s3d(num_classes=10)), clip(16, 224), ("x",)),
]

if __name__ == "__main__":
    main(ZOO)
