"""The wide ONNX zoo: many more real architectures than onnx_zoo.py, same harness.

Outside CI (the zoo venv). Hugging Face families built from tiny configs (random weights, no
network): encoders, decoders (a decoder step with `encoder_hidden_states` as an input), causal
LMs (use_cache=False), vision transformers, speech; the real torchvision classification,
segmentation and detection models (`zoo_torchvision.py` makes PyPI's torchvision importable on
the CPU torch); INT8 models from onnxruntime's quantizers (`zoo_int8.py`). Each row: export by
torch's TorchScript and dynamo exporters, convert with irforge, compare with onnxruntime.

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/onnx_zoo_wide.py [--models albert,llama] [--exporters torchscript,dynamo] [--out table.md]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from onnx_zoo import ZooModel, main, max_error  # bench/, next to this script
from torch import nn

SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
SEQ = 12


class Call(nn.Module):
    """Calls the model with its inputs by keyword and returns one tensor of its output."""

    def __init__(self, model: nn.Module, names: tuple[str, ...], field: str = "last_hidden_state") -> None:
        super().__init__()
        self.model, self.names, self.field = model, names, field

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        out = self.model(**dict(zip(self.names, args)))
        return out[0] if self.field == "0" else getattr(out, self.field)


def gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


def tokens() -> tuple[torch.Tensor, ...]:
    ids = torch.randint(3, 100, (1, SEQ), generator=gen())
    mask = torch.ones(1, SEQ, dtype=torch.int64)
    mask[0, 9:] = 0  # padding: the additive mask matters
    return ids, mask


def decoder_inputs() -> tuple[torch.Tensor, ...]:
    """A decoder step: its tokens, the encoder's states and the encoder's padding mask."""
    ids = torch.randint(3, 100, (1, 8), generator=gen())
    states = torch.randn(1, SEQ, 32, generator=gen())
    mask = torch.ones(1, SEQ, dtype=torch.int64)
    mask[0, 10:] = 0
    return ids, states, mask


def pixels(size: int = 32, batch: int = 1) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randn(batch, 3, size, size, generator=gen()),)


def audio() -> tuple[torch.Tensor, ...]:
    return (torch.randn(1, 400, generator=gen()),)


def hf(make: Callable[[Any], nn.Module], names: tuple[str, ...], field: str = "last_hidden_state", attn: str = "sdpa") -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import transformers as tf

        torch.manual_seed(0)
        model = make(tf)
        with torch.no_grad():  # MobileViT draws BatchNorm weights from N(0, 0.02): outputs ~1e-45
            for m in model.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.weight.uniform_(0.5, 1.5)
        if hasattr(model, "config"):
            model.config._attn_implementation = attn
            if hasattr(model.config, "use_cache"):
                model.config.use_cache = False
        model.eval()
        return Call(model, names, field)

    return build


TOK = ("input_ids", "attention_mask")
DEC = ("input_ids", "encoder_hidden_states", "encoder_attention_mask")
PIX = ("pixel_values",)
AUD = ("input_values",)
LM = dict(vocab_size=100, max_position_embeddings=32)


def seq2seq(tf: Any, kind: str) -> Any:
    common = dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
                  encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=100, max_position_embeddings=32, pad_token_id=1,
                  bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)
    config = {"bart": tf.BartConfig, "mbart": tf.MBartConfig, "marian": tf.MarianConfig}[kind](**common)
    return {"bart": tf.BartModel, "mbart": tf.MBartModel, "marian": tf.MarianModel}[kind](config)


def t5_decoder(tf: Any) -> nn.Module:
    model = tf.T5Model(tf.T5Config(d_model=32, d_kv=16, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=2, vocab_size=100))
    return model.get_decoder()


def whisper_decoder(tf: Any) -> nn.Module:
    config = tf.WhisperConfig(d_model=32, encoder_layers=1, encoder_attention_heads=2, decoder_layers=2, decoder_attention_heads=2,
                              encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=16, max_source_positions=16, max_target_positions=32,
                              vocab_size=100, pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    return tf.WhisperModel(config).get_decoder()


def wav2vec(tf: Any, kind: str) -> nn.Module:
    config = dict(**SMALL, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                  num_conv_pos_embedding_groups=2, feat_extract_norm="group", do_stable_layer_norm=False, vocab_size=32)
    if kind == "hubert":
        return tf.HubertModel(tf.HubertConfig(**config))
    return tf.Wav2Vec2Model(tf.Wav2Vec2Config(**config))


def decoder_lm(tf: Any, kind: str) -> nn.Module:
    rope = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, **LM)
    if kind == "llama":
        return tf.LlamaModel(tf.LlamaConfig(**rope))
    if kind == "mistral":
        return tf.MistralModel(tf.MistralConfig(**rope, sliding_window=None))
    if kind == "qwen2":
        return tf.Qwen2Model(tf.Qwen2Config(**rope))
    if kind == "phi":
        return tf.PhiModel(tf.PhiConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, partial_rotary_factor=0.5, **LM))
    if kind == "falcon":
        return tf.FalconModel(tf.FalconConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, vocab_size=100, alibi=False))
    if kind == "gpt-neox":
        return tf.GPTNeoXModel(tf.GPTNeoXConfig(**SMALL, rotary_pct=0.5, **LM))
    if kind == "gpt-neo":
        return tf.GPTNeoModel(tf.GPTNeoConfig(hidden_size=32, num_layers=2, num_heads=2, attention_types=[[["global", "local"], 1]], window_size=4, **LM))
    if kind == "gpt-j":
        return tf.GPTJModel(tf.GPTJConfig(n_embd=32, n_layer=2, n_head=2, rotary_dim=8, vocab_size=100, n_positions=32))
    if kind == "opt":
        return tf.OPTModel(tf.OPTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, ffn_dim=64, word_embed_proj_dim=32, **LM))
    if kind == "bloom":
        return tf.BloomModel(tf.BloomConfig(hidden_size=32, n_layer=2, n_head=2, vocab_size=100))
    raise ValueError(kind)


def encoder(tf: Any, kind: str) -> nn.Module:
    if kind == "albert":
        return tf.AlbertModel(tf.AlbertConfig(**SMALL, embedding_size=16, **LM), add_pooling_layer=False)
    if kind == "electra":
        return tf.ElectraModel(tf.ElectraConfig(**SMALL, embedding_size=16, **LM))
    if kind == "deberta-v2":
        return tf.DebertaV2Model(tf.DebertaV2Config(**SMALL, **LM, relative_attention=True, position_buckets=8, pos_att_type=["p2c", "c2p"]))
    if kind == "xlm-roberta":
        return tf.XLMRobertaModel(tf.XLMRobertaConfig(**SMALL, vocab_size=100, max_position_embeddings=40, pad_token_id=1), add_pooling_layer=False)
    if kind == "mpnet":
        return tf.MPNetModel(tf.MPNetConfig(**SMALL, vocab_size=100, max_position_embeddings=40), add_pooling_layer=False)
    if kind == "mobilebert":
        return tf.MobileBertModel(tf.MobileBertConfig(hidden_size=32, embedding_size=16, intra_bottleneck_size=16, true_hidden_size=16,
                                                      num_attention_heads=2, num_hidden_layers=2, intermediate_size=32,
                                                      num_feedforward_networks=2, **LM), add_pooling_layer=False)
    if kind == "funnel":
        return tf.FunnelBaseModel(tf.FunnelConfig(block_sizes=[1, 1], d_model=32, n_head=2, d_head=16, d_inner=64, vocab_size=100))
    if kind == "clip-text":
        return tf.CLIPTextModel(tf.CLIPTextConfig(**SMALL, **LM))
    raise ValueError(kind)


def vision(tf: Any, kind: str) -> nn.Module:
    vit = dict(**SMALL, image_size=32, patch_size=8)
    if kind == "clip-vision":
        return tf.CLIPVisionModel(tf.CLIPVisionConfig(**vit))
    if kind == "deit":
        return tf.DeiTModel(tf.DeiTConfig(**vit), add_pooling_layer=False)
    if kind == "beit":
        return tf.BeitModel(tf.BeitConfig(**vit, use_relative_position_bias=True), add_pooling_layer=False)
    if kind == "dinov2":
        return tf.Dinov2Model(tf.Dinov2Config(**vit))
    if kind == "yolos":
        return tf.YolosModel(tf.YolosConfig(**SMALL, image_size=[32, 32], patch_size=8, num_detection_tokens=5), add_pooling_layer=False)
    if kind == "swinv2":
        return tf.Swinv2Model(tf.Swinv2Config(image_size=32, patch_size=2, embed_dim=16, depths=[2, 2], num_heads=[1, 2], window_size=4))
    if kind == "convnextv2":
        return tf.ConvNextV2Model(tf.ConvNextV2Config(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], image_size=32))
    if kind == "mobilevit":
        return tf.MobileViTModel(tf.MobileViTConfig(image_size=64, hidden_sizes=[32, 48, 64], neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64],
                                                    num_attention_heads=2), expand_output=False)
    if kind == "segformer":
        return tf.SegformerForSemanticSegmentation(tf.SegformerConfig(depths=[1, 1, 1, 1], hidden_sizes=[8, 16, 32, 64],
                                                                      num_attention_heads=[1, 1, 2, 2], decoder_hidden_size=32, num_labels=4))
    raise ValueError(kind)


HF: list[ZooModel] = [
    *(ZooModel(k, hf(lambda tf, k=k: encoder(tf, k), TOK), tokens, TOK, 2)
      for k in ("albert", "electra", "deberta-v2", "xlm-roberta", "mpnet", "mobilebert", "funnel", "clip-text")),
    *(ZooModel(f"{k}-encoder", hf(lambda tf, k=k: seq2seq(tf, k).get_encoder(), TOK), tokens, TOK, 2) for k in ("bart", "mbart", "marian")),
    *(ZooModel(f"{k}-decoder", hf(lambda tf, k=k: seq2seq(tf, k).get_decoder(), DEC), decoder_inputs, DEC, 4) for k in ("bart", "mbart", "marian")),
    ZooModel("t5-decoder", hf(t5_decoder, DEC), decoder_inputs, DEC, 4),
    ZooModel("whisper-decoder", hf(whisper_decoder, ("input_ids", "encoder_hidden_states")), lambda: decoder_inputs()[:2], ("input_ids", "encoder_hidden_states"), 4),
    *(ZooModel(k, hf(lambda tf, k=k: decoder_lm(tf, k), TOK), tokens, TOK, 2)
      for k in ("llama", "mistral", "qwen2", "phi", "falcon", "gpt-neox", "gpt-neo", "gpt-j", "opt", "bloom")),
    *(ZooModel(k, hf(lambda tf, k=k: vision(tf, k), PIX), pixels(), PIX, 2) for k in ("clip-vision", "deit", "beit", "dinov2", "yolos")),
    ZooModel("swinv2", hf(lambda tf: vision(tf, "swinv2"), PIX), pixels(), PIX, 4),
    ZooModel("convnextv2", hf(lambda tf: vision(tf, "convnextv2"), PIX), pixels(), PIX),
    ZooModel("mobilevit", hf(lambda tf: vision(tf, "mobilevit"), PIX), pixels(64), PIX, 9),
    ZooModel("segformer", hf(lambda tf: vision(tf, "segformer"), PIX, "logits"), pixels(64), PIX, 4),
    *(ZooModel(k, hf(lambda tf, k=k: wav2vec(tf, k), AUD), audio, AUD, 2) for k in ("wav2vec2", "hubert")),
]


# -- torchvision (the real classes; zoo_torchvision.py makes the package importable) ------------
def tv(make: Callable[[Any], nn.Module]) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        from zoo_torchvision import torchvision

        torch.manual_seed(0)
        model = make(torchvision.models).eval()
        with torch.no_grad():  # random BatchNorm statistics, or the outputs are all bias
            for m in model.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.uniform_(-0.2, 0.2)
                    m.running_var.uniform_(0.5, 1.5)
            for p in model.parameters():  # zero-initialised heads (ViT) would output zeros
                if p.dim() > 1 and not p.any():
                    p.normal_(0, 0.02)
        if isinstance(model, Detect) and model.calm:
            if model.recalibrate:
                recalibrate_batch_norm(model, pixels(model.calm, model.batch)()[0])
            calm_detector(model, pixels(model.calm, model.batch)()[0])  # on the image(s) the row runs
        return model

    return build


class Segment(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)["out"]


class Detect(nn.Module):
    """A detector on one image: its boxes, scores and labels (and masks or keypoints)."""

    def __init__(self, model: nn.Module, *extra: str, calm: int = 0, recalibrate: bool = False, batch: int = 1) -> None:
        super().__init__()
        self.model, self.extra, self.calm, self.recalibrate, self.batch = model, extra, calm, recalibrate, batch

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        # torchvision takes a list of images: a batch of `batch` images of one size, each
        # image's outputs in turn (as a user's export of model([img1, img2]))
        outs = self.model([x[i] for i in range(self.batch)])
        return tuple(t for out in outs for t in (out["boxes"], out["scores"], out["labels"], *(out[k] for k in self.extra)))


HEAD_OUTPUTS = ("cls_score", "bbox_pred", "cls_logits", "bbox_reg", "bbox_ctrness", "mask_fcn_logits")
"""The last layers of torchvision's detection heads (RPN, RoI box predictor, RetinaNet/FCOS,
Mask R-CNN's mask logits: ~1e3 otherwise, so float32 rounding moved its sigmoids by 1e-3);
SSD's heads are `classification_head.module_list.N` / `regression_head.module_list.N`."""


def head_layers(model: nn.Module) -> list[tuple[str, nn.Module, nn.Module]]:
    """(name, module whose output is a head's, its last layer with weights) of every head."""
    heads = []
    for name, m in model.named_modules():
        parts = name.split(".")
        if parts[-1] in HEAD_OUTPUTS and hasattr(m, "weight"):
            heads.append((name, m, m))
        elif len(parts) >= 2 and parts[-2] == "module_list" and parts[-3:-2] in (["classification_head"], ["regression_head"]):
            layers = [x for x in m.modules() if isinstance(x, (nn.Conv2d, nn.Linear))]
            heads.append((name, m, layers[-1]))
    return heads


def recalibrate_batch_norm(model: nn.Module, image: torch.Tensor) -> None:
    """Each BatchNorm's running statistics set to those of its input on `image` (one pass,
    in the order the layers run): SSDlite's random backbone otherwise saturates its ReLU6s,
    its small maps come out constant over space and 92 of its detections share one score
    exactly, so any NMS's tie order decides which survive."""
    def calibrate(m: nn.Module, inputs: tuple[torch.Tensor, ...]) -> None:
        x = inputs[0]
        m.running_mean.copy_(x.mean(dim=(0, 2, 3)))
        m.running_var.copy_(x.var(dim=(0, 2, 3), unbiased=False) + 0.1)

    hooks = [m.register_forward_pre_hook(calibrate) for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        model(image)
    for h in hooks:
        h.remove()


def calm_detector(model: nn.Module, image: torch.Tensor, spread: float = 1.0, step: float = 0.1) -> nn.Module:
    """Random backbones (deep ResNets and VGG with random BatchNorm statistics) give
    features of magnitude ~1e3: every class logit and box delta saturates, so the background
    class wins every RoI (no detections), SSD's scores are all 1.0 (ties everywhere) or the
    boxes collapse to the image border. Scale each head's last layer, in the order the model
    runs them, so its outputs have a standard deviation of `spread` (class logits; their bias
    zeroed, so FCOS/RetinaNet's prior of 0.01 does not hide every score under the threshold)
    or `step` (box deltas): detections with distinct scores, boxes near their anchors.
    Deterministic (no random draw); documented in docs/STATUS.md ("The wide zoo")."""
    heads = head_layers(model)
    done: set[str] = set()
    for _ in heads:
        seen: list[tuple[str, nn.Module, float]] = []
        hooks = [m.register_forward_hook(lambda m, i, o, name=name, layer=layer: seen.append((name, layer, float(o.std()))))
                 for name, m, layer in heads]
        with torch.no_grad():
            model(image)
        for h in hooks:
            h.remove()
        todo = [(n, layer, std) for n, layer, std in seen if n not in done and std > 0]
        if not todo:
            break
        name, layer, std = todo[0]
        is_class = any(k in name for k in ("cls", "classification", "mask"))
        with torch.no_grad():
            if is_class and layer.bias is not None:
                layer.bias.zero_()
                std = max(std, 1e-12)
            factor = (spread if is_class else step) / std
            layer.weight.mul_(factor)
            if layer.bias is not None:
                layer.bias.mul_(factor)
        done.add(name)
    return model


def detector(make: Callable[[Any], nn.Module], *extra: str, size: int = 64, recalibrate: bool = False, batch: int = 1) -> Callable[[Any], nn.Module]:
    """A Detect of the model, its heads calmed by `tv` (on the row's `size` image) once its
    statistics are drawn (and its BatchNorms recalibrated on that image first)."""
    return lambda m: Detect(make(m), *extra, calm=size, recalibrate=recalibrate, batch=batch)


def swin_t(m: Any) -> nn.Module:
    from torchvision.models.swin_transformer import SwinTransformer

    return SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[1, 2], window_size=[4, 4], num_classes=10)


def vit(m: Any) -> nn.Module:
    from torchvision.models.vision_transformer import VisionTransformer

    # eval + no_grad would take nn.MultiheadAttention's fast path, a fused kernel
    # (aten::_native_multi_head_attention) the TorchScript exporter cannot write
    torch.backends.mha.set_fastpath_enabled(False)

    return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64, num_classes=10)


def maxvit(m: Any) -> nn.Module:
    from torchvision.models.maxvit import MaxVit

    return MaxVit(input_size=(64, 64), stem_channels=16, partition_size=2, block_channels=[16, 32], block_layers=[1, 1], head_dim=8,
                  stochastic_depth_prob=0.0, num_classes=10)


def convnext(m: Any) -> nn.Module:
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt

    return ConvNeXt([CNBlockConfig(16, 32, 2), CNBlockConfig(32, None, 2)], num_classes=10)


DET = dict(weights=None, weights_backbone=None, num_classes=3, min_size=64, max_size=64)
REAL = dict(weights=None, weights_backbone=None, num_classes=3)  # the models' own min_size / max_size


def real(name: str, make: Callable[[Any], nn.Module], size: int, *extra: str, batch: int = 1, recalibrate: bool = False) -> ZooModel:
    """A detector at the size users export it at (its transform's defaults: R-CNNs, RetinaNet
    and FCOS resize to min_size 800, SSD300 to 300, SSDlite to 320), `batch` images."""
    return ZooModel(name, tv(detector(make, *extra, size=size, recalibrate=recalibrate, batch=batch)), pixels(size, batch), ("x",),
                    compare=tie_aware(3 + len(extra)))


TIE = 1e-5
"""Scores closer than this (onnxruntime's) are a tie: float32 rounding of a deep backbone
(1e-7 relative) may order them either way."""


def tie_aware(group: int) -> Callable[[list[np.ndarray], list[np.ndarray]], str]:
    """Detections compared as the zoo's max_error does, after putting ours in onnxruntime's
    order where its scores tie within TIE: at real sizes 100 detections of random-weight
    heads hold pairs of scores 1e-7 apart (Faster R-CNN R50 at 800 px: 0.81624448 and
    0.81624436), whose order any rounding difference swaps. Within each run of tied scores
    (per image), ours are matched to onnxruntime's by label and nearest box; every output of
    the image (boxes, scores, labels, masks, keypoints) is permuted alike. The text says how
    many rows were reordered."""

    def compare(got: list[np.ndarray], want: list[np.ndarray]) -> str:
        got, moved = list(got), 0
        for start in range(0, len(want), group):
            boxes, scores, labels = (np.asarray(a) for a in want[start : start + 3])
            ours = [np.asarray(a) for a in got[start : start + group]]
            if len(ours) < 3 or ours[0].shape != boxes.shape:
                continue  # a count mismatch: max_error reports it
            order = np.arange(len(scores))
            i = 0
            while i < len(scores):
                j = i + 1
                while j < len(scores) and abs(float(scores[j - 1]) - float(scores[j])) < TIE:
                    j += 1
                free = list(range(i, j))
                for k in range(i, j):  # greedy: onnxruntime's row k takes our nearest free row
                    cost = [np.abs(ours[0][m] - boxes[k]).max() + (1e9 if ours[2][m] != labels[k] else 0) for m in free]
                    order[k] = free.pop(int(np.argmin(cost)))
                i = j
            moved += int((order != np.arange(len(order))).sum())
            for n in range(min(group, len(ours))):
                got[start + n] = ours[n][order]
        text = f"{max_error(got, want):.1e}"
        return text + (f" ({moved} tied rows reordered)" if moved else "")

    return compare


REAL_SIZE = [
    real("tv800-fasterrcnn-r50", lambda m: m.detection.fasterrcnn_resnet50_fpn(**REAL), 800),
    real("tv800-retinanet", lambda m: m.detection.retinanet_resnet50_fpn(**REAL), 800),
    real("tv800-fcos", lambda m: m.detection.fcos_resnet50_fpn(**REAL), 800),
    real("tv800-maskrcnn", lambda m: m.detection.maskrcnn_resnet50_fpn(**REAL), 800, "masks"),
    real("tv800-keypointrcnn", lambda m: m.detection.keypointrcnn_resnet50_fpn(**REAL, num_keypoints=5), 800, "keypoints"),
    real("tv300-ssd300", lambda m: m.detection.ssd300_vgg16(**REAL), 300),
    real("tv320-ssdlite", lambda m: m.detection.ssdlite320_mobilenet_v3_large(**REAL), 320, recalibrate=True),
    real("tv320-fasterrcnn-b2", lambda m: m.detection.fasterrcnn_mobilenet_v3_large_320_fpn(**REAL), 320, batch=2),
    real("tv64-maskrcnn-b2", lambda m: m.detection.maskrcnn_resnet50_fpn(**DET), 64, "masks", batch=2),
]
TV: list[ZooModel] = [
    ZooModel("tv-resnet18", tv(lambda m: m.resnet18(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-mobilenet_v3_small", tv(lambda m: m.mobilenet_v3_small(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-efficientnet_b0", tv(lambda m: m.efficientnet_b0(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-regnet_y_400mf", tv(lambda m: m.regnet_y_400mf(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-shufflenet_v2", tv(lambda m: m.shufflenet_v2_x0_5(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-squeezenet", tv(lambda m: m.squeezenet1_1(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-densenet121", tv(lambda m: m.densenet121(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-googlenet", tv(lambda m: m.googlenet(num_classes=10, aux_logits=False, init_weights=True)), pixels(64), ("x",)),
    ZooModel("tv-inception_v3", tv(lambda m: m.inception_v3(num_classes=10, aux_logits=False, init_weights=True)), pixels(80), ("x",)),
    ZooModel("tv-mnasnet", tv(lambda m: m.mnasnet0_5(num_classes=10)), pixels(64), ("x",)),
    ZooModel("tv-convnext", tv(convnext), pixels(64), ("x",)),
    ZooModel("tv-swin", tv(swin_t), pixels(64), ("x",), 4),
    ZooModel("tv-vit", tv(vit), pixels(32), ("x",), 2),
    ZooModel("tv-maxvit", tv(maxvit), pixels(64), ("x",), 4),
    ZooModel("tv-lraspp", tv(lambda m: Segment(m.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=4))), pixels(64), ("x",)),
    ZooModel("tv-deeplabv3", tv(lambda m: Segment(m.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=4, aux_loss=False))), pixels(64), ("x",)),
    ZooModel("tv-fcn", tv(lambda m: Segment(m.segmentation.fcn_resnet50(weights=None, weights_backbone=None, num_classes=4, aux_loss=False))), pixels(64), ("x",)),
    ZooModel("tv-ssdlite", tv(detector(lambda m: m.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=3), recalibrate=True)), pixels(64), ("x",)),
    # at 64 pixels its stride-32 maps are 2x2: RoIs share features and three scores tie to
    # 1e-7, so any rounding reorders them; at 160 the closest two scores are 2e-5 apart
    ZooModel("tv-fasterrcnn", tv(detector(lambda m: m.detection.fasterrcnn_mobilenet_v3_large_320_fpn(**{**DET, "min_size": 160, "max_size": 160}), size=160)),
             pixels(160), ("x",)),
    ZooModel("tv-fasterrcnn-r50", tv(detector(lambda m: m.detection.fasterrcnn_resnet50_fpn(**DET))), pixels(64), ("x",)),
    ZooModel("tv-retinanet", tv(detector(lambda m: m.detection.retinanet_resnet50_fpn(**DET))), pixels(64), ("x",)),
    ZooModel("tv-maskrcnn", tv(detector(lambda m: m.detection.maskrcnn_resnet50_fpn(**DET), "masks")), pixels(64), ("x",)),
    ZooModel("tv-keypointrcnn", tv(detector(lambda m: m.detection.keypointrcnn_resnet50_fpn(**DET, num_keypoints=5), "keypoints")), pixels(64), ("x",)),
    ZooModel("tv-fcos", tv(detector(lambda m: m.detection.fcos_resnet50_fpn(**DET))), pixels(64), ("x",)),
    ZooModel("tv-ssd300", tv(detector(lambda m: m.detection.ssd300_vgg16(weights=None, weights_backbone=None, num_classes=3))), pixels(64), ("x",)),
    # no detection survives the score threshold: empty outputs (dims of 0) everywhere
    ZooModel("tv-maskrcnn-empty", tv(detector(lambda m: m.detection.maskrcnn_resnet50_fpn(**DET, box_score_thresh=0.999), "masks")), pixels(64), ("x",)),
    *REAL_SIZE,
]


def int8_rows() -> list[ZooModel]:
    from onnx_zoo import hf as hf_small, resnet, token_inputs
    from zoo_int8 import quantizer

    rows = []
    for tag, kind, per_channel in (("qdq", "qdq", False), ("qdq-pc", "qdq", True), ("qop", "qop", False), ("qop-pc", "qop", True),
                                   ("dyn", "dynamic", False), ("dyn-pc", "dynamic", True)):
        rows.append(ZooModel(f"int8-resnet-{tag}", resnet, pixels(64), ("x",), post=quantizer(kind, per_channel)))
        rows.append(ZooModel(f"int8-bert-{tag}", hf_small("bert"), token_inputs, TOK, 2, post=quantizer(kind, per_channel)))
    return rows


WIDE: list[ZooModel] = [*HF, *TV, *int8_rows()]

if __name__ == "__main__":
    main(WIDE)
