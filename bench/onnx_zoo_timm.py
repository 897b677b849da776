"""The timm zoo: one model per architecture family of PyTorch Image Models, random weights.

Outside CI (the zoo venv, `pip install timm`). timm is where many real image models users
export come from; its families cover convolutions, attention and MLP designs that
torchvision and transformers do not (TF-"same" padding, mixed depthwise kernels, reparam
blocks, halo / lambda / outlook / cross-covariance attention, axial and window attention,
recurrent mixers, weight-standardised convolutions). Same harness and columns as
`onnx_zoo.py`; the attention column is fused `nn.scaled_dot_product_attention` ops / the
family's softmax(q k^T) @ v blocks (`BLOCKS`), or the fused count alone where the family has
none (linear, outlook, lambda, talking-heads attention do not fuse into it by design).

    PYTHONPATH=$PWD:$PWD/bench /work/zoo-venv/bin/python bench/onnx_zoo_timm.py [--models a,b] [--exporters torchscript,dynamo] [--out table.md]

Both exporters run by default (dynamo: torch.export, opset 18; `dynamo23`: opset 23).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from onnx_zoo import ZooModel, main  # bench/, next to this script
from onnx_zoo_wide import gen
from torch import nn

SMALL_VIT = dict(depth=2)
"""Transformers cut to 2 blocks: the block is what is tested, not the depth."""

# name -> (input size, extra create_model kwargs)
FAMILIES: dict[str, tuple[int, dict[str, Any]]] = {
    "tf_efficientnet_b0": (64, {}),  # TF "same" padding: asymmetric pads
    "mixnet_s": (64, {}),
    "ghostnet_100": (64, {}),
    "rexnet_100": (64, {}),
    "lcnet_050": (64, {}),
    "tinynet_e": (64, {}),
    "hardcorenas_a": (64, {}),
    "fbnetc_100": (64, {}),
    "regnetx_002": (64, {}),
    "resnest14d": (64, {}),
    "skresnet18": (64, {}),
    "res2net50_14w_8s": (64, {}),
    "dla34": (64, {}),
    "dpn48b": (64, {}),
    "hrnet_w18_small": (64, {}),
    "cspresnet50": (64, {}),
    "ese_vovnet19b_dw": (64, {}),
    "selecsls42b": (64, {}),
    "tresnet_m": (64, {}),
    "gernet_s": (64, {}),
    "repvgg_a0": (64, {}),
    "mobileone_s0": (64, {}),
    "nf_resnet26": (64, {}),
    "dm_nfnet_f0": (64, {}),
    "inception_v4": (96, {}),
    "xception41": (71, {}),
    "convnext_atto": (64, {}),
    "convnextv2_atto": (64, {}),
    "inception_next_atto": (64, {}),
    "edgenext_xx_small": (64, {}),
    "poolformer_s12": (64, {}),
    "caformer_s18": (64, {}),
    "efficientformer_l1": (224, {}),
    "efficientformerv2_s0": (224, {}),
    "fastvit_t8": (64, {}),
    "repvit_m0_9": (64, {}),
    "starnet_s1": (64, {}),
    "mambaout_femto": (64, {}),
    "efficientvit_b0": (64, {}),
    "efficientvit_m0": (224, {}),
    "levit_128s": (224, {}),
    "mobilevit_xxs": (64, {}),
    "mobilevitv2_050": (64, {}),
    "tiny_vit_5m_224": (224, {}),
    "vit_tiny_patch16_224": (64, {"img_size": 64, **SMALL_VIT}),
    "deit3_small_patch16_224": (64, {"img_size": 64, **SMALL_VIT}),
    "eva02_tiny_patch14_224": (56, {"img_size": 56, **SMALL_VIT}),
    "cait_xxs24_224": (64, {"img_size": 64, **SMALL_VIT}),
    "xcit_nano_12_p16_224": (64, {"img_size": 64, **SMALL_VIT}),
    "pit_ti_224": (224, {}),
    "crossvit_tiny_240": (240, {}),
    "twins_pcpvt_small": (64, {}),
    "pvt_v2_b0": (64, {}),
    "coat_lite_tiny": (224, {}),
    "coatnet_nano_rw_224": (224, {}),
    "maxvit_nano_rw_256": (256, {}),
    "swin_tiny_patch4_window7_224": (224, {}),
    "swinv2_cr_tiny_ns_224": (224, {}),
    "gcvit_xxtiny": (224, {}),
    "davit_tiny": (64, {}),
    "focalnet_tiny_srf": (64, {}),
    "nest_tiny": (224, {}),
    "hiera_tiny_224": (224, {}),
    "volo_d1_224": (224, {}),
    "halonet26t": (256, {}),
    "botnet26t_256": (256, {}),
    "lambda_resnet26t": (256, {}),
    "mixer_s16_224": (224, {}),
    "resmlp_12_224": (224, {}),
    "gmlp_ti16_224": (224, {}),
    "sequencer2d_s": (64, {}),
    # relative-position and other attention layouts (issue 14, session 6)
    "swinv2_tiny_window8_256": (256, {}),  # cosine attention, clamped logit scale, continuous position bias
    "beit_base_patch16_224": (64, {"img_size": 64, **SMALL_VIT}),  # relative position bias table
    "vit_relpos_small_patch16_224": (64, {"img_size": 64, **SMALL_VIT}),
    "samvit_base_patch16": (64, {"img_size": 64, **SMALL_VIT}),  # decomposed relative positions
    "mvitv2_tiny": (224, {}),  # pooled attention, decomposed relative positions
    "mvitv2_small_cls": (224, {}),  # the same with a class token (the relative terms skip its row and column)
    "twins_svt_small": (64, {}),
    "nextvit_small": (64, {}),
    "fastvit_sa12": (64, {}),
    "mobilenetv4_hybrid_medium": (64, {}),
    "shvit_s1": (224, {}),
    "tnt_s_patch16_224": (224, {}),
    "visformer_tiny": (224, {}),
    "convit_tiny": (224, {}),
    "vit_base_patch16_rope_224": (64, {"img_size": 64, **SMALL_VIT}),
    # every timm 1.0.31 module the zoo did not run yet, one small model each, and the
    # sub-families with a layer of their own (session 8)
    "convmixer_768_32": (64, {}),
    "cpubone_nano": (64, {}),
    "csatv2": (64, {}),
    "cspnext_tiny": (64, {}),
    "deepseek_vit_412m": (56, {"img_size": 56, **SMALL_VIT}),
    "densenet121": (64, {}),
    "efficientvim_m1": (64, {}),
    "fasternet_t0": (64, {}),
    "gemma4_vit_167m": (64, {"img_size": 64, **SMALL_VIT}),
    "hgnetv2_b0": (64, {}),
    "hgnet_tiny": (64, {}),
    "sam2_hiera_tiny": (64, {}),
    "iformer_t": (64, {}),
    "lcnetv2_small": (64, {}),
    "lowformer_b0": (64, {}),
    "naflexvit_base_patch16_gap": (64, SMALL_VIT),
    "qwen3_vit_88m": (64, {"img_size": 64, **SMALL_VIT}),
    "rdnet_tiny": (64, {}),
    "repghostnet_050": (64, {}),
    "swiftformer_xs": (64, {}),
    "vgg11": (64, {}),
    "vit_tiny_r_s16_p8_224": (64, {"img_size": 64}),
    "vitamin_small_224": (64, {"img_size": 64}),
    "inception_resnet_v2": (96, {}),
    "inception_v3": (96, {}),
    "legacy_xception": (71, {}),
    "legacy_seresnet18": (64, {}),
    "resnetv2_18": (64, {}),
    "resnet18": (64, {}),
    # sub-families: normalisation layers (EvoNorm, FRN, GroupNorm, RMSNorm, LayerNorm in
    # convnets), anti-aliased / blur pooling, ECA, attention pooling heads, distillation
    # tokens, register tokens, parallel blocks, TF-style MaxViT, conv-mode LeViT
    "ecaresnet26t": (64, {}),
    "resnetblur18": (64, {}),
    "resnetaa34d": (64, {}),
    "seresnext26d_32x4d": (64, {}),
    "resnet50_gn": (64, {}),
    "resnetrs50": (64, {}),
    "resnetv2_50d_evos": (64, {}),
    "resnetv2_50d_frn": (64, {}),
    "resnetv2_50x1_bit": (64, {}),
    "test_efficientnet_evos": (64, {}),
    "test_efficientnet_gn": (64, {}),
    "test_efficientnet_ln": (64, {}),
    "test_convnext2": (64, {}),
    "test_convnext3": (64, {}),
    "test_nfnet": (64, {}),
    "test_byobnet": (64, {}),
    "efficientnet_b0": (64, {}),
    "mobilenetv2_050": (64, {}),
    "efficientnetv2_rw_t": (128, {}),  # BatchNorm calibrated (CALIBRATED_BN)
    "mobilenetv3_small_050": (64, {}),
    "mobilenetv4_conv_small": (64, {}),
    "ghostnetv2_100": (64, {}),
    "ghostnetv3_050": (64, {}),
    "regnety_002": (64, {}),
    "regnetz_b16": (64, {}),
    "nf_regnet_b0": (64, {}),
    "eca_nfnet_l0": (64, {}),
    "cs3darknet_s": (64, {}),
    "darknet17": (64, {}),
    "convformer_s18": (64, {}),
    "poolformerv2_s12": (64, {}),
    "convnext_zepto_rms": (64, {}),
    "gmixer_12_224": (224, {}),
    "fastvit_mci0": (64, {}),
    "levit_conv_128s": (224, {}),
    "hiera_small_abswin_256": (256, {}),
    "coatnet_0_224": (224, {}),
    "maxvit_tiny_tf_224": (224, {}),
    "lambda_resnet26rpt_256": (256, {}),
    "eca_halonext26ts": (256, {}),
    "sebotnet33ts_256": (256, {}),
    "deit_tiny_distilled_patch16_224": (64, {"img_size": 64, **SMALL_VIT}),
    "vit_base_patch16_siglip_224": (64, {"img_size": 64, **SMALL_VIT}),  # attention-pool (MAP) head
    "vit_base_patch16_clip_quickgelu_224": (64, {"img_size": 64, **SMALL_VIT}),
    "vit_small_patch14_dinov2": (56, {"img_size": 56, **SMALL_VIT}),
    "vit_betwixt_patch16_reg4_gap_256": (64, {"img_size": 64, **SMALL_VIT}),
    "vit_small_patch16_18x2_224": (64, {"img_size": 64, "depth": 1}),  # parallel blocks
    "vit_pe_core_tiny_patch16_384": (64, {"img_size": 64, **SMALL_VIT}),
    "vit_small_patch16_rope_mixed_224": (64, {"img_size": 64, **SMALL_VIT}),
    # session 9: variants whose structure differs from their family's row (not only size):
    # attention pools, global-context / bilinear-transform / halo-lambda-bot hybrids,
    # relative-MLP position bias, linear SRA, dagger patch embed, res-post-norm and shared
    # relative positions, flexible patch embed, GAP / MAP heads, parallel SwiGLU, conv-stem
    # ViT, lite / edge / aa MobileNets, overlapping stems, pre-activation Xception, timm's
    # own `test_*` builds
    "resnet50_clip": (64, {"img_size": 64}),  # AttentionPool2d: one SDPA over the map
    "gcresnet33ts": (64, {}),
    "bat_resnext26ts": (256, {}),
    "haloregnetz_b": (224, {}),
    "lamhalobotnet50ts_256": (256, {}),
    "coatnet_rmlp_nano_rw_224": (224, {}),
    "maxxvitv2_nano_rw_256": (256, {}),
    "swin_s3_tiny_224": (224, {}),
    "efficientvit_l1": (64, {}),
    "pvt_v2_b2_li": (64, {}),
    "crossvit_9_dagger_240": (240, {}),
    "vit_relpos_medium_patch16_rpn_224": (64, {"img_size": 64, **SMALL_VIT}),
    "vit_srelpos_small_patch16_224": (64, {"img_size": 64, **SMALL_VIT}),
    "flexivit_small": (64, {"img_size": 64, **SMALL_VIT}),
    "vit_medium_patch16_gap_256": (64, {"img_size": 64, **SMALL_VIT}),
    "vit_base_mci_224": (64, {"img_size": 64, **SMALL_VIT}),
    "vit_pwee_patch16_reg1_gap_256": (64, {"img_size": 64, **SMALL_VIT}),
    "vit_base_patch16_rope_reg1_gap_256": (64, {"img_size": 64, **SMALL_VIT}),
    "vit_so150m_patch16_reg4_map_256": (64, {"img_size": 64, **SMALL_VIT}),
    "vit_intern300m_patch14_448": (56, {"img_size": 56, **SMALL_VIT}),
    "test_vit3": (160, {}),
    "test_vit4": (64, {}),
    "test_vit_relpos": (160, {}),
    "test_maxvit": (160, {}),
    "test_coatnet": (160, {}),
    "test_mambaout": (64, {}),
    "focalnet_tiny_lrf": (64, {}),
    "efficientnet_lite0": (64, {}),
    "efficientnet_es": (64, {}),
    "efficientnet_x_b3": (64, {}),
    "efficientnet_h_b5": (64, {}),
    "fbnetv3_b": (64, {}),
    "mobilenetv4_conv_aa_medium": (64, {}),
    "convnext_atto_ols": (64, {}),
    "res2next50": (64, {}),
    "cspdarknet53": (64, {}),
    "dla60x_c": (64, {}),
    "nf_ecaresnet26": (64, {}),
    "rexnetr_100": (64, {}),
    "xception41p": (71, {}),
    # the large ones last (80-300M parameters; NASNet's cells have no small config)
    "nasnetalarge": (96, {}),
    "pnasnet5large": (96, {}),
    "mobilenetv5_300m": (64, {}),
}

# name -> softmax(q k^T) @ v blocks (the attention column reads fused/blocks; families not
# listed have none: their softmaxes are split attention over radix groups (ResNeSt, SK),
# linear / factorised / lambda attention (MobileViTv2, CoaT, LambdaNet), outlook attention
# (VOLO's 4 outlookers), talking heads (CaiT's and EfficientFormerV2's heads mixed before and
# after the softmax) or ConViT's gated mixture of two softmaxes: not one SDPA each)
BLOCKS: dict[str, int] = {
    "beit_base_patch16_224": 2, "botnet26t_256": 3, "caformer_s18": 12, "cait_xxs24_224": 2, "coatnet_nano_rw_224": 9,
    "convit_tiny": 2, "crossvit_tiny_240": 21, "davit_tiny": 12, "deit3_small_patch16_224": 2, "edgenext_xx_small": 3,
    "efficientformer_l1": 1, "efficientformerv2_s0": 1, "efficientvit_m0": 24, "eva02_tiny_patch14_224": 2, "fastvit_sa12": 2,
    "gcvit_xxtiny": 12, "halonet26t": 3, "hiera_tiny_224": 12, "levit_128s": 11, "maxvit_nano_rw_256": 14,
    "mobilenetv4_hybrid_medium": 8, "mobilevit_xxs": 9, "mvitv2_tiny": 10, "mvitv2_small_cls": 16, "nest_tiny": 12,
    "nextvit_small": 4, "pit_ti_224": 12, "pvt_v2_b0": 8, "samvit_base_patch16": 2, "shvit_s1": 9,
    "swin_tiny_patch4_window7_224": 12, "swinv2_cr_tiny_ns_224": 12, "swinv2_tiny_window8_256": 12, "tiny_vit_5m_224": 10,
    "tnt_s_patch16_224": 24, "twins_pcpvt_small": 16, "twins_svt_small": 18, "visformer_tiny": 8,
    "vit_base_patch16_rope_224": 2, "vit_relpos_small_patch16_224": 2, "vit_tiny_patch16_224": 2, "volo_d1_224": 16,
    "xcit_nano_12_p16_224": 4,
}


CALIBRATED_BN: set[str] = {"efficientnetv2_rw_t"}
"""Rows whose random BatchNorm statistics make the float32 model chaotic: efficientnetv2_rw_t's
14-block last stage grows its activations to 2e4 and float32 torch itself is 2.9e-1 off its
own float64 run at the logits (onnxruntime 10% off torch), so no backend can match. Their
statistics are the batch's own (one training-mode pass over 4 random images at the row's
size, 128 px: at 64 px the last stage's 2x2 maps still leave it 2e-1 off float64, at 128 px
9e-6), random images, so every BatchNorm normalises as a trained one does."""


def calibrate_batchnorm(model: nn.Module, size: int) -> None:
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # a cumulative average: exactly the calibration batch's statistics
    model.train()
    with torch.no_grad():
        model(torch.randn(4, 3, size, size, generator=torch.Generator().manual_seed(1)))
    model.eval()


class Classifier(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)


def timm_model(name: str, kwargs: dict[str, Any], size: int = 64) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        from zoo_torchvision import torchvision  # noqa: F401  (timm imports torchvision)

        import timm

        torch.manual_seed(0)
        model = timm.create_model(name, pretrained=False, num_classes=10, **kwargs).eval()
        if hasattr(model, "reparameterize"):  # deploy form of the reparameterisable families
            model.reparameterize()
        with torch.no_grad():  # random BatchNorm statistics, or the outputs are all bias
            for m in model.modules():
                if isinstance(m, nn.BatchNorm2d) and m.running_mean is not None:
                    m.running_mean.uniform_(-0.2, 0.2)
                    m.running_var.uniform_(0.5, 1.5)
            for p in model.parameters():  # zero-initialised heads (timm's MLP-Mixer, Hiera) would output zeros
                if p.dim() > 1 and not p.any():
                    p.normal_(0, 0.02)
        if name in CALIBRATED_BN:
            calibrate_batchnorm(model, size)
        return Classifier(model)

    return build


def pixels(size: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randn(1, 3, size, size, generator=gen()),)


def rows() -> list[ZooModel]:
    return [ZooModel(name, timm_model(name, kwargs, size), pixels(size), ("x",), BLOCKS.get(name, -1)) for name, (size, kwargs) in FAMILIES.items()]


if __name__ == "__main__":
    main(rows())
