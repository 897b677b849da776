"""The wide latency set for `zoo_latency.py --wide`: real architectures outside its zoo
(full size, random weights), built offline in the zoo venv: torchvision builders without
weights, timm `pretrained=False` (`onnx_zoo_timm.timm_model`: BatchNorm statistics
randomised, deploy form of the reparameterisable families; a 10-class head), transformers
models from their configs, keras.applications `weights=None` (frozen like `zoo_more`'s).

Entries have `zoo_more.TORCH_MODELS`' form (a builder and its feeds) and `KERAS_MODELS`'
form; `zoo_latency` exports them the same way (TorchScript exporter, opset 17). The set is
the held-out check of issue 20 made visible: it is not what the CPU backend was tuned on.

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/zoo_latency.py --wide --runs 5 --threads 1 [--models a,b]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn
from zoo_more import Feeds, image, tokens, tv  # bench/, next to this script


class Keywords(nn.Module):
    """Calls a transformers model with its inputs by name (GPT-2's second positional input is
    the KV cache, LayoutLM's the boxes) and returns the first tensor of its output."""

    def __init__(self, model: nn.Module, names: tuple[str, ...]) -> None:
        super().__init__()
        self.model, self.names = model, names

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        return self.model(**dict(zip(self.names, args)))[0]


def hf(config: str, model: str, names: tuple[str, ...] = ("input_ids", "attention_mask"), part: str | None = None,
       **kwargs: object) -> Callable[[], nn.Module]:
    """A transformers model of the named config class (`part`: one of its methods, e.g.
    `get_encoder`, giving the module to run), sdpa attention where the class has it, no KV cache."""

    def build() -> nn.Module:
        import zoo_torchvision  # noqa: F401  (transformers imports torchvision when installed)
        import transformers as tf

        cfg, cls = getattr(tf, config)(**kwargs), getattr(tf, model)
        cfg._attn_implementation = "sdpa" if getattr(cls, "_supports_sdpa", False) else "eager"  # DeBERTa has no sdpa
        if hasattr(cfg, "use_cache"):
            cfg.use_cache = False
        m = cls(cfg)
        if part is not None:
            m = getattr(m, part)()
        return Keywords(m.eval(), names)

    return build


def tv_mha(name: str) -> Callable[[], nn.Module]:
    """A torchvision model with nn.MultiheadAttention: eval + no_grad would take its fast path,
    a fused kernel (aten::_native_multi_head_attention) the TorchScript exporter cannot write."""

    def build() -> nn.Module:
        torch.backends.mha.set_fastpath_enabled(False)
        return tv(name)()

    return build


def timm(name: str) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        from onnx_zoo_timm import timm_model

        return timm_model(name, {})()

    return build


def layout_tokens() -> Feeds:
    """LayoutLM's inputs: tokens, one box per token (x0 <= x1, y0 <= y1 in 0..1000), mask."""
    feeds = tokens()
    rng = np.random.default_rng(1)
    corner = rng.integers(0, 900, (1, 128, 2))
    boxes = np.concatenate([corner, corner + rng.integers(1, 100, (1, 128, 2))], axis=-1)
    return {"input_ids": feeds["input_ids"], "bbox": boxes.astype(np.int64), "attention_mask": feeds["attention_mask"]}


def speech() -> Feeds:
    """One second of 16 kHz audio."""
    return {"input_values": np.random.default_rng(0).standard_normal((1, 16000)).astype(np.float32)}


def gpt2_tokens() -> Feeds:
    return tokens(128, 50000)


def deberta_tokens() -> Feeds:
    return tokens(128, 128000)


PIX = ("pixel_values",)
BART_BASE = dict(d_model=768, encoder_layers=6, decoder_layers=6, encoder_attention_heads=12, decoder_attention_heads=12,
                 encoder_ffn_dim=3072, decoder_ffn_dim=3072)
DEBERTA_V3_SMALL = dict(hidden_size=768, num_hidden_layers=6, num_attention_heads=12, intermediate_size=3072, vocab_size=128100,
                        relative_attention=True, position_buckets=256, max_relative_positions=-1, norm_rel_ebd="layer_norm",
                        share_att_key=True, pos_att_type=["p2c", "c2p"], type_vocab_size=0)

WIDE_TORCH: dict[str, tuple[Callable[[], nn.Module], Callable[[], Feeds]]] = {
    # torchvision
    "resnet152": (tv("resnet152"), image),
    "wide_resnet50_2": (tv("wide_resnet50_2"), image),
    "mobilenet_v3_small": (tv("mobilenet_v3_small"), image),
    "efficientnet_b3": (tv("efficientnet_b3"), lambda: image(300)),
    "regnet_x_1_6gf": (tv("regnet_x_1_6gf"), image),
    "mnasnet0_5": (tv("mnasnet0_5"), image),
    "shufflenet_v2_x0_5": (tv("shufflenet_v2_x0_5"), image),
    "squeezenet1_0": (tv("squeezenet1_0"), image),
    "vgg11_bn": (tv("vgg11_bn"), image),
    "vit_b_32": (tv_mha("vit_b_32"), image),
    "swin_v2_t": (tv("swin_v2_t"), lambda: image(256)),
    "maxvit_t": (tv("maxvit_t"), image),
    "convnext_small": (tv("convnext_small"), image),
    "efficientnet_v2_m": (tv("efficientnet_v2_m"), lambda: image(384)),  # its eval size is 480
    # timm
    "timm_resnet26d": (timm("resnet26d"), image),
    "timm_cspdarknet53": (timm("cspdarknet53"), lambda: image(256)),
    "timm_dla34": (timm("dla34"), image),
    "timm_dpn68": (timm("dpn68"), image),
    "timm_hrnet_w18_small": (timm("hrnet_w18_small"), image),
    "timm_ghostnet_100": (timm("ghostnet_100"), image),
    "timm_mixnet_s": (timm("mixnet_s"), image),
    "timm_rexnet_100": (timm("rexnet_100"), image),
    "timm_tf_efficientnet_lite0": (timm("tf_efficientnet_lite0"), image),
    "timm_levit_128": (timm("levit_128"), image),
    "timm_poolformer_s12": (timm("poolformer_s12"), image),
    "timm_coat_lite_tiny": (timm("coat_lite_tiny"), image),
    "timm_mobilevit_s": (timm("mobilevit_s"), lambda: image(256)),
    "timm_edgenext_small": (timm("edgenext_small"), lambda: image(256)),
    "timm_fastvit_t8": (timm("fastvit_t8"), lambda: image(256)),
    # transformers (sequence 128, the last 16 tokens padding)
    "albert_base_seq128": (hf("AlbertConfig", "AlbertModel", hidden_size=768, num_attention_heads=12, intermediate_size=3072,
                              embedding_size=128), tokens),
    "electra_small_seq128": (hf("ElectraConfig", "ElectraModel"), tokens),
    "gpt2_seq128": (hf("GPT2Config", "GPT2Model"), gpt2_tokens),
    "mpnet_base_seq128": (hf("MPNetConfig", "MPNetModel"), tokens),
    "deberta_v3_small_seq128": (hf("DebertaV2Config", "DebertaV2Model", **DEBERTA_V3_SMALL), deberta_tokens),
    "bart_base_encoder_seq128": (hf("BartConfig", "BartModel", part="get_encoder", **BART_BASE), tokens),
    "mobilebert_seq128": (hf("MobileBertConfig", "MobileBertModel"), tokens),
    "layoutlm_base_seq128": (hf("LayoutLMConfig", "LayoutLMModel", names=("input_ids", "bbox", "attention_mask")), layout_tokens),
    "wav2vec2_base_1s": (hf("Wav2Vec2Config", "Wav2Vec2Model", names=("input_values",)), speech),
    "segformer_b0_512": (hf("SegformerConfig", "SegformerForSemanticSegmentation", names=PIX), lambda: image(512)),
}
"""name -> (builder, feeds), as `zoo_more.TORCH_MODELS`."""

WIDE_KERAS: dict[str, tuple[str, int]] = {
    "keras_ResNet50V2": ("ResNet50V2", 224),
    "keras_DenseNet169": ("DenseNet169", 224),
    "keras_EfficientNetV2B0": ("EfficientNetV2B0", 224),
    "keras_MobileNetV3Small": ("MobileNetV3Small", 224),
}
"""name -> (keras.applications class, input size), as `zoo_more.KERAS_MODELS`."""
