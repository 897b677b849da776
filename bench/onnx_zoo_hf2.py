"""The second Hugging Face zoo: families onnx_zoo.py and onnx_zoo_wide.py do not build.

Outside CI (the zoo venv). Same harness and columns as `onnx_zoo.py` (export by torch's
TorchScript and dynamo exporters, convert with irforge, compare OpenVINO on our IR, ref and
cpu with onnxruntime; fused attention ops against the model's attention blocks). Tiny configs,
random weights, no network: text encoders (sparse/linear/convolutional attention variants
included), causal LMs (one step without a cache, and LLaMA/GPT-2 steps with a KV cache as
inputs), seq2seq encoders and decoder steps, vision backbones and transformers, detection
transformers, speech encoders.

    PYTHONPATH=$PWD:$PWD/bench /work/zoo-venv/bin/python bench/onnx_zoo_hf2.py [--models gemma,detr] [--exporters torchscript,dynamo] [--out table.md]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from onnx_zoo import ZooModel, main  # bench/, next to this script
from onnx_zoo_wide import DEC, LM, PIX, SMALL, TOK, Call, decoder_inputs, gen, hf, pixels, tokens
from torch import nn

AUD = ("input_values",)


def audio() -> tuple[torch.Tensor, ...]:
    return (torch.randn(1, 400, generator=gen()),)


# -- text encoders -------------------------------------------------------------------------
def encoder(tf: Any, kind: str) -> nn.Module:
    lm = dict(**SMALL, **LM)
    if kind == "squeezebert":
        return tf.SqueezeBertModel(tf.SqueezeBertConfig(**lm, embedding_size=32, q_groups=2, k_groups=2, v_groups=2,
                                                        post_attention_groups=2, intermediate_groups=2, output_groups=2))
    if kind == "convbert":
        return tf.ConvBertModel(tf.ConvBertConfig(**lm, embedding_size=32, head_ratio=2, conv_kernel_size=3))
    if kind == "longformer":
        return tf.LongformerModel(tf.LongformerConfig(**SMALL, vocab_size=100, max_position_embeddings=40, pad_token_id=1,
                                                      attention_window=4), add_pooling_layer=False)
    if kind == "bigbird-full":
        return tf.BigBirdModel(tf.BigBirdConfig(**lm, attention_type="original_full"), add_pooling_layer=False)
    if kind == "bigbird-sparse":
        config = tf.BigBirdConfig(**SMALL, vocab_size=100, max_position_embeddings=64, attention_type="block_sparse", block_size=2,
                                  num_random_blocks=1)
        return tf.BigBirdModel(config, add_pooling_layer=False)
    if kind == "canine":
        return tf.CanineModel(tf.CanineConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                              downsampling_rate=2, num_hash_buckets=64, num_hash_functions=2, local_transformer_stride=4,
                                              max_position_embeddings=64))
    if kind == "layoutlm":
        return tf.LayoutLMModel(tf.LayoutLMConfig(**lm, max_2d_position_embeddings=64))
    if kind == "roformer":
        return tf.RoFormerModel(tf.RoFormerConfig(**lm, embedding_size=32))
    if kind == "nystromformer":
        return tf.NystromformerModel(tf.NystromformerConfig(**SMALL, vocab_size=100, max_position_embeddings=40, num_landmarks=4,
                                                            segment_means_seq_len=12, conv_kernel_size=3))
    if kind == "data2vec-text":
        return tf.Data2VecTextModel(tf.Data2VecTextConfig(**SMALL, vocab_size=100, max_position_embeddings=40, pad_token_id=1),
                                    add_pooling_layer=False)
    if kind == "esm":
        return tf.EsmModel(tf.EsmConfig(**SMALL, vocab_size=100, max_position_embeddings=40, pad_token_id=1, mask_token_id=4,
                                        position_embedding_type="rotary"), add_pooling_layer=False)
    if kind == "ernie":
        return tf.ErnieModel(tf.ErnieConfig(**lm), add_pooling_layer=False)
    if kind == "megatron-bert":
        return tf.MegatronBertModel(tf.MegatronBertConfig(**lm), add_pooling_layer=False)
    if kind == "rembert":
        return tf.RemBertModel(tf.RemBertConfig(**lm, input_embedding_size=16, output_embedding_size=16), add_pooling_layer=False)
    if kind == "xlnet":
        return tf.XLNetModel(tf.XLNetConfig(d_model=32, n_layer=2, n_head=2, d_inner=64, vocab_size=100))
    if kind == "deberta":
        return tf.DebertaModel(tf.DebertaConfig(**lm, relative_attention=True, max_relative_positions=16, pos_att_type=["p2c", "c2p"]))
    if kind == "ibert":
        return tf.IBertModel(tf.IBertConfig(**SMALL, vocab_size=100, max_position_embeddings=40, pad_token_id=1), add_pooling_layer=False)
    raise ValueError(kind)


# -- causal LMs (one step, no cache) ---------------------------------------------------------
def decoder_lm(tf: Any, kind: str) -> nn.Module:
    rope = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, **LM)
    if kind == "phi3":
        return tf.Phi3Model(tf.Phi3Config(**rope, pad_token_id=0))
    if kind == "gemma":
        return tf.GemmaModel(tf.GemmaConfig(**rope, head_dim=8))
    if kind == "gemma2":
        return tf.Gemma2Model(tf.Gemma2Config(**rope, head_dim=8, sliding_window=8, attn_logit_softcapping=None))
    if kind == "gemma3":
        return tf.Gemma3TextModel(tf.Gemma3TextConfig(**rope, head_dim=8, sliding_window=8))
    if kind == "stablelm":
        return tf.StableLmModel(tf.StableLmConfig(**rope, partial_rotary_factor=0.5))
    if kind == "codegen":
        return tf.CodeGenModel(tf.CodeGenConfig(n_embd=32, n_layer=2, n_head=4, rotary_dim=8, vocab_size=100, n_positions=32, n_ctx=32))
    if kind == "qwen3":
        return tf.Qwen3Model(tf.Qwen3Config(**rope, head_dim=8))
    if kind == "olmo":
        return tf.OlmoModel(tf.OlmoConfig(**rope, pad_token_id=0))
    if kind == "olmo2":
        return tf.Olmo2Model(tf.Olmo2Config(**rope, pad_token_id=0))
    if kind == "gpt-bigcode":
        return tf.GPTBigCodeModel(tf.GPTBigCodeConfig(n_embd=32, n_layer=2, n_head=2, vocab_size=100, n_positions=32, multi_query=True))
    if kind == "starcoder2":
        return tf.Starcoder2Model(tf.Starcoder2Config(**rope, sliding_window=None))
    if kind == "mixtral":
        return tf.MixtralModel(tf.MixtralConfig(**rope, num_local_experts=4, num_experts_per_tok=2, sliding_window=None))
    if kind == "persimmon":
        return tf.PersimmonModel(tf.PersimmonConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, **LM))
    if kind == "cohere":
        return tf.CohereModel(tf.CohereConfig(**rope, pad_token_id=0))
    if kind == "granite":
        return tf.GraniteModel(tf.GraniteConfig(**rope, pad_token_id=0))
    if kind == "xglm":
        return tf.XGLMModel(tf.XGLMConfig(d_model=32, num_layers=2, attention_heads=2, ffn_dim=64, vocab_size=100, max_position_embeddings=32))
    if kind == "ctrl":
        return tf.CTRLModel(tf.CTRLConfig(n_embd=32, n_layer=2, n_head=2, dff=64, vocab_size=100, n_positions=32))
    raise ValueError(kind)


# -- a decoding step with a KV cache as inputs ----------------------------------------------------
KV_PAST = 5


class CachedStep(nn.Module):
    """One decoding step of 3 new tokens after KV_PAST cached ones: the cache (per layer, keys
    and values [1, kv_heads, past, head_dim]) comes in as inputs, the new hidden state goes out."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, *kv: torch.Tensor) -> torch.Tensor:
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        for layer in range(len(kv) // 2):
            cache.update(kv[2 * layer], kv[2 * layer + 1], layer)
        return self.model(input_ids=ids, attention_mask=mask, past_key_values=cache, use_cache=True).last_hidden_state


def cached(kind: str) -> tuple[Callable[[], nn.Module], Callable[[], tuple[torch.Tensor, ...]], tuple[str, ...]]:
    heads, head_dim = (2, 8) if kind == "llama" else (2, 16)

    def build() -> nn.Module:
        import transformers as tf

        torch.manual_seed(0)
        if kind == "llama":
            model = tf.LlamaModel(tf.LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                 num_key_value_heads=2, **LM))
        else:
            model = tf.GPT2Model(tf.GPT2Config(n_embd=32, n_layer=2, n_head=2, vocab_size=100, n_positions=32))
        model.config._attn_implementation = "sdpa"
        return CachedStep(model.eval())

    def inputs() -> tuple[torch.Tensor, ...]:
        ids = torch.randint(3, 100, (1, 3), generator=gen())
        mask = torch.ones(1, KV_PAST + 3, dtype=torch.int64)
        mask[0, 0] = 0  # a padded first cached position
        kv = [torch.randn(1, heads, KV_PAST, head_dim, generator=gen()) for _ in range(4)]
        return ids, mask, *kv

    return build, inputs, ("input_ids", "attention_mask", "past_k0", "past_v0", "past_k1", "past_v1")


# -- seq2seq ---------------------------------------------------------------------------------
def seq2seq(tf: Any, kind: str) -> Any:
    common = dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
                  encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=100, max_position_embeddings=32, pad_token_id=1,
                  bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)
    if kind == "pegasus":
        return tf.PegasusModel(tf.PegasusConfig(**common))
    if kind == "blenderbot":
        return tf.BlenderbotModel(tf.BlenderbotConfig(**common))
    if kind == "blenderbot-small":
        return tf.BlenderbotSmallModel(tf.BlenderbotSmallConfig(**common))
    if kind == "led":
        del common["max_position_embeddings"]
        return tf.LEDModel(tf.LEDConfig(**common, max_encoder_position_embeddings=32, max_decoder_position_embeddings=32, attention_window=4))
    if kind == "m2m100":
        return tf.M2M100Model(tf.M2M100Config(**common))
    if kind == "plbart":
        return tf.PLBartModel(tf.PLBartConfig(**common))
    raise ValueError(kind)


def speech2text(tf: Any) -> Any:
    return tf.Speech2TextModel(tf.Speech2TextConfig(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                                                    decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=100,
                                                    max_source_positions=64, max_target_positions=32, num_conv_layers=2,
                                                    conv_channels=16, input_feat_per_channel=8, input_channels=1))


def features() -> tuple[torch.Tensor, ...]:
    return (torch.randn(1, 24, 8, generator=gen()),)


# -- vision ----------------------------------------------------------------------------------
def vision(tf: Any, kind: str) -> nn.Module:
    vit = dict(**SMALL, image_size=32, patch_size=8)
    if kind == "vitmae":
        return tf.ViTMAEModel(tf.ViTMAEConfig(**vit, mask_ratio=0.5))
    if kind == "data2vec-vision":
        return tf.Data2VecVisionModel(tf.Data2VecVisionConfig(**vit, use_relative_position_bias=True), add_pooling_layer=False)
    if kind == "dpt":
        return tf.DPTForDepthEstimation(tf.DPTConfig(**dict(vit, num_hidden_layers=4), backbone_out_indices=[0, 1, 2, 3], neck_hidden_sizes=[8, 16, 32, 32],
                                                     fusion_hidden_size=16, head_hidden_size=8, reassemble_factors=[4, 2, 1, 0.5]))
    if kind == "glpn":
        return tf.GLPNForDepthEstimation(tf.GLPNConfig(depths=[1, 1, 1, 1], hidden_sizes=[8, 16, 32, 32], num_attention_heads=[1, 1, 2, 2],
                                                       decoder_hidden_size=16, num_channels=3))
    if kind == "levit":
        return tf.LevitModel(tf.LevitConfig(image_size=64, hidden_sizes=[16, 24, 32], num_attention_heads=[1, 2, 2], depths=[1, 1, 1],
                                            key_dim=[8, 8, 8], patch_size=16, embed_dim=[16, 24, 32]))
    if kind == "poolformer":
        return tf.PoolFormerModel(tf.PoolFormerConfig(hidden_sizes=[8, 16, 32, 32], depths=[1, 1, 1, 1]))
    if kind == "regnet":
        return tf.RegNetModel(tf.RegNetConfig(embedding_size=8, hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 1, 1], groups_width=8))
    if kind == "resnet":
        return tf.ResNetModel(tf.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 1, 1], layer_type="bottleneck"))
    if kind == "bit":
        return tf.BitModel(tf.BitConfig(embedding_size=8, hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 1, 1], global_padding="SAME",
                                        layer_type="preactivation", num_groups=4))
    if kind == "convnext":
        return tf.ConvNextModel(tf.ConvNextConfig(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1]))
    if kind == "mobilenetv2":
        return tf.MobileNetV2Model(tf.MobileNetV2Config(depth_multiplier=0.35, image_size=64))
    if kind == "efficientnet":
        return tf.EfficientNetModel(tf.EfficientNetConfig(width_coefficient=0.25, depth_coefficient=0.2, image_size=64, hidden_dim=320))
    if kind == "pvt":
        return tf.PvtModel(tf.PvtConfig(image_size=64, hidden_sizes=[8, 16, 32, 32], depths=[1, 1, 1, 1], num_attention_heads=[1, 1, 2, 2]))
    if kind == "pvt-v2":
        return tf.PvtV2Model(tf.PvtV2Config(image_size=64, hidden_sizes=[8, 16, 32, 32], depths=[1, 1, 1, 1], num_attention_heads=[1, 1, 2, 2]))
    if kind == "cvt":
        return tf.CvtModel(tf.CvtConfig(embed_dim=[16, 32, 48], num_heads=[1, 2, 3], depth=[1, 2, 3]), add_pooling_layer=False)
    if kind == "focalnet":
        return tf.FocalNetModel(tf.FocalNetConfig(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], focal_levels=[2, 2], focal_windows=[3, 3]))
    if kind == "mobilevitv2":
        return tf.MobileViTV2Model(tf.MobileViTV2Config(image_size=64, width_multiplier=0.25), expand_output=False)
    if kind == "swin2sr":
        return tf.Swin2SRModel(tf.Swin2SRConfig(image_size=16, patch_size=1, embed_dim=16, depths=[2], num_heads=[2], window_size=4, upscale=1))
    if kind == "siglip-vision":
        return tf.SiglipVisionModel(tf.SiglipVisionConfig(**vit))
    if kind == "owlvit-vision":
        return tf.OwlViTVisionModel(tf.OwlViTVisionConfig(**vit))
    raise ValueError(kind)


def detr(tf: Any, kind: str) -> nn.Module:
    backbone = tf.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 1, 1], out_features=["stage4"])
    common = dict(use_timm_backbone=False, backbone_config=backbone, use_pretrained_backbone=False, d_model=32, encoder_layers=1,
                  decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                  num_queries=10)
    if kind == "detr":
        return tf.DetrModel(tf.DetrConfig(**common))
    if kind == "table-transformer":
        return tf.TableTransformerModel(tf.TableTransformerConfig(**common))
    if kind == "conditional-detr":
        return tf.ConditionalDetrModel(tf.ConditionalDetrConfig(**common))
    raise ValueError(kind)


def deformable(tf: Any, kind: str) -> nn.Module:
    """Multi-scale deformable attention (grid_sample of the value maps)."""
    backbone = tf.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 1, 1], out_features=["stage2", "stage3", "stage4"])
    if kind == "deformable-detr":
        return tf.DeformableDetrModel(tf.DeformableDetrConfig(use_timm_backbone=False, backbone_config=backbone, use_pretrained_backbone=False,
                                                              d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                                                              decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                                                              num_queries=10, num_feature_levels=3, encoder_n_points=2, decoder_n_points=2))
    raise ValueError(kind)


def perceiver(tf: Any) -> nn.Module:
    return tf.PerceiverModel(tf.PerceiverConfig(num_latents=8, d_latents=32, d_model=16, num_blocks=1, num_self_attends_per_block=2,
                                                num_self_attention_heads=2, num_cross_attention_heads=1))


def embeddings() -> tuple[torch.Tensor, ...]:
    return (torch.randn(1, 12, 16, generator=gen()),)


# -- speech ----------------------------------------------------------------------------------
def speech(tf: Any, kind: str) -> nn.Module:
    conv = dict(**SMALL, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                num_conv_pos_embedding_groups=2, feat_extract_norm="group", vocab_size=32)
    if kind == "wavlm":
        return tf.WavLMModel(tf.WavLMConfig(**conv, num_buckets=32, max_bucket_distance=64))
    if kind == "unispeech":
        return tf.UniSpeechModel(tf.UniSpeechConfig(**conv))
    if kind == "unispeech-sat":
        return tf.UniSpeechSatModel(tf.UniSpeechSatConfig(**conv))
    if kind == "data2vec-audio":
        return tf.Data2VecAudioModel(tf.Data2VecAudioConfig(**{k: v for k, v in conv.items() if k not in ("num_conv_pos_embeddings", "feat_extract_norm")},
                                                            num_conv_pos_embeddings=4, conv_pos_kernel_size=5))
    if kind == "sew":
        return tf.SEWModel(tf.SEWConfig(**conv, squeeze_factor=2))
    if kind == "sew-d":
        return tf.SEWDModel(tf.SEWDConfig(**conv, squeeze_factor=2, position_buckets=8, max_relative_positions=16))
    raise ValueError(kind)


def ast(tf: Any) -> nn.Module:
    return tf.ASTModel(tf.ASTConfig(**SMALL, patch_size=8, frequency_stride=8, time_stride=8, max_length=32, num_mel_bins=16))


def spectrogram() -> tuple[torch.Tensor, ...]:
    return (torch.randn(1, 32, 16, generator=gen()),)


def long_tokens() -> tuple[torch.Tensor, ...]:
    """32 tokens: BigBird's block-sparse attention needs more than (5 + 2 * random blocks) blocks."""
    ids = torch.randint(3, 100, (1, 32), generator=gen())
    mask = torch.ones(1, 32, dtype=torch.int64)
    mask[0, 28:] = 0
    return ids, mask


def scrambled(build: Callable[[], nn.Module]) -> Callable[[], nn.Module]:
    """Redraws the parameters of models whose initialisation makes random-weight outputs tiny
    (DPT's head, LeViT's and MobileNetV2's BatchNorm scales: outputs 1e-8 to 1e-24, where
    any absolute error looks right): matrices N(0, 1/fan_in), norm scales U(0.5, 1.5), biases
    N(0, 0.1)."""

    def make() -> nn.Module:
        model = build()
        g = torch.Generator().manual_seed(1)
        with torch.no_grad():
            for name, p in model.named_parameters():
                if p.dim() > 1:
                    p.copy_(torch.randn(p.shape, generator=g) / max(1, p[0].numel()) ** 0.5)
                elif name.endswith("weight") or "scale" in name:
                    p.copy_(torch.rand(p.shape, generator=g) + 0.5)
                else:
                    p.copy_(torch.randn(p.shape, generator=g) * 0.1)
        return model

    return make


SCRAMBLE = ("swiftformer", "upernet", "sam-vision", "depth-anything", "dpt", "levit", "mobilenetv2", "efficientnet", "mobilevitv2", "poolformer", "data2vec-vision", "perceiver", "sew", "sew-d")


# -- a third batch: more families a held-out set may hold ------------------------------------------
def more_text(tf: Any, kind: str) -> nn.Module:
    lm = dict(**SMALL, **LM)
    if kind == "fnet":  # Fourier mixing instead of attention
        return tf.FNetModel(tf.FNetConfig(hidden_size=32, num_hidden_layers=2, intermediate_size=64, **LM), add_pooling_layer=False)
    if kind == "modernbert":
        return tf.ModernBertModel(tf.ModernBertConfig(**lm, global_attn_every_n_layers=2, local_attention=4, pad_token_id=0))
    if kind == "mt5-encoder":
        return tf.MT5EncoderModel(tf.MT5Config(d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2, vocab_size=100))
    if kind == "umt5-encoder":
        return tf.UMT5EncoderModel(tf.UMT5Config(d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2, vocab_size=100))
    if kind == "longt5-encoder":
        return tf.LongT5EncoderModel(tf.LongT5Config(d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2, vocab_size=100, local_radius=4,
                                                     encoder_attention_type="local"))
    if kind == "bert-generation":
        return tf.BertGenerationEncoder(tf.BertGenerationConfig(**lm))
    if kind == "markuplm":
        return tf.MarkupLMModel(tf.MarkupLMConfig(**lm, max_depth=8, xpath_unit_hidden_size=8), add_pooling_layer=False)
    if kind == "mamba":
        return tf.MambaModel(tf.MambaConfig(hidden_size=32, state_size=4, num_hidden_layers=2, vocab_size=100, expand=2, conv_kernel=4,
                                            use_mambapy=True))
    if kind == "qwen2-moe":
        return tf.Qwen2MoeModel(tf.Qwen2MoeConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                  num_key_value_heads=2, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                                                  shared_expert_intermediate_size=32, **LM))
    if kind == "bitnet":
        return tf.BitNetModel(tf.BitNetConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                                              num_key_value_heads=2, **LM))
    if kind == "glm4":
        return tf.Glm4Model(tf.Glm4Config(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                                          num_key_value_heads=2, head_dim=8, pad_token_id=0, **LM))
    raise ValueError(kind)


def more_vision(tf: Any, kind: str) -> nn.Module:
    vit = dict(**SMALL, image_size=32, patch_size=8)
    if kind == "vit-msn":
        return tf.ViTMSNModel(tf.ViTMSNConfig(**vit))
    if kind == "dinov2-registers":
        return tf.Dinov2WithRegistersModel(tf.Dinov2WithRegistersConfig(**vit, num_register_tokens=2))
    if kind == "hiera":
        return tf.HieraModel(tf.HieraConfig(embed_dim=16, image_size=[64, 64], patch_size=[7, 7], patch_stride=[4, 4], patch_padding=[3, 3],
                                            depths=[1, 1], num_heads=[1, 2], embed_dim_multiplier=2.0, num_query_pool=1,
                                            query_stride=[2, 2], masked_unit_size=[8, 8], masked_unit_attention=[True, False]),
                            add_pooling_layer=False)
    if kind == "swiftformer":
        return tf.SwiftFormerModel(tf.SwiftFormerConfig(depths=[1, 1, 1, 1], embed_dims=[8, 16, 24, 32]))
    if kind == "sam-vision":
        return tf.SamVisionModel(tf.SamVisionConfig(hidden_size=32, output_channels=16, num_hidden_layers=2, num_attention_heads=2,
                                                    image_size=64, patch_size=8, mlp_dim=64, window_size=4, global_attn_indexes=[1]))
    if kind == "vitdet":
        return tf.VitDetModel(tf.VitDetConfig(**dict(SMALL), image_size=32, patch_size=8, pretrain_image_size=32, window_size=2,
                                              window_block_indices=[0], use_relative_position_embeddings=True))
    if kind == "depth-anything":
        backbone = tf.Dinov2Config(**dict(SMALL, num_hidden_layers=4), image_size=28, patch_size=14, out_features=["stage1", "stage2", "stage3", "stage4"],
                                   reshape_hidden_states=False)
        return tf.DepthAnythingForDepthEstimation(tf.DepthAnythingConfig(backbone_config=backbone, neck_hidden_sizes=[8, 16, 32, 32],
                                                                         fusion_hidden_size=16, head_hidden_size=8, reassemble_hidden_size=32,
                                                                         patch_size=14))
    if kind == "upernet":
        backbone = tf.ConvNextConfig(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], out_features=["stage1", "stage2", "stage3", "stage4"])
        return tf.UperNetForSemanticSegmentation(tf.UperNetConfig(backbone_config=backbone, hidden_size=16, auxiliary_in_channels=32,
                                                                  use_auxiliary_head=False, num_labels=4))
    raise ValueError(kind)


def more_speech(tf: Any, kind: str) -> nn.Module:
    conv = dict(**SMALL, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                num_conv_pos_embedding_groups=2, feat_extract_norm="group", vocab_size=32)
    if kind == "wav2vec2-conformer":
        return tf.Wav2Vec2ConformerModel(tf.Wav2Vec2ConformerConfig(**conv, position_embeddings_type="rotary", conv_depthwise_kernel_size=3))
    if kind == "wav2vec2-conformer-rel":
        return tf.Wav2Vec2ConformerModel(tf.Wav2Vec2ConformerConfig(**conv, position_embeddings_type="relative", conv_depthwise_kernel_size=3))
    raise ValueError(kind)


def trocr_decoder(tf: Any) -> nn.Module:
    model = tf.TrOCRForCausalLM(tf.TrOCRConfig(d_model=32, decoder_layers=2, decoder_attention_heads=2, decoder_ffn_dim=64, vocab_size=100,
                                               max_position_embeddings=32, cross_attention_hidden_size=32))
    return model.model.decoder


def patchtst(tf: Any) -> nn.Module:
    return tf.PatchTSTModel(tf.PatchTSTConfig(num_input_channels=2, context_length=32, patch_length=8, patch_stride=8, d_model=32,
                                              num_hidden_layers=2, num_attention_heads=2, ffn_dim=64, do_mask_input=False))


def series() -> tuple[torch.Tensor, ...]:
    return (torch.randn(1, 32, 2, generator=gen()),)


MORE_TEXT = {"fnet": 0, "modernbert": 2, "mt5-encoder": 2, "umt5-encoder": 2, "longt5-encoder": 2, "bert-generation": 2, "markuplm": 2,
             "mamba": 0, "qwen2-moe": 2, "bitnet": 2, "glm4": 2}
MORE_VISION = {"vit-msn": 2, "dinov2-registers": 2, "hiera": 2, "swiftformer": 0, "sam-vision": 2, "vitdet": 2, "depth-anything": 4,
               "upernet": 0}
MORE_SIZE = {"hiera": 64, "swiftformer": 64, "sam-vision": 64, "depth-anything": 28, "upernet": 64}
MORE_FIELD = {"depth-anything": "predicted_depth", "upernet": "logits"}


def vitmae_inputs() -> tuple[torch.Tensor, ...]:
    # ViTMAE shuffles patches by argsort of a noise tensor: give the noise as an input
    return torch.randn(1, 3, 32, 32, generator=gen()), torch.rand(1, 16, generator=gen())


def kv_row(kind: str, blocks: int) -> ZooModel:
    build, inputs, names = cached(kind)
    return ZooModel(f"{kind}-kv", build, inputs, names, blocks)


def maybe_scrambled(kind: str, build: Callable[[], nn.Module]) -> Callable[[], nn.Module]:
    return scrambled(build) if kind in SCRAMBLE else build


BLOCKS = {"canine": 6}
"""CANINE: 2 deep layers and 2 character layers, the initial one local attention in 3 chunks
of 4 characters (one attention each)."""
TEXT = ("squeezebert", "convbert", "longformer", "bigbird-full", "bigbird-sparse", "canine", "layoutlm", "roformer",
        "data2vec-text", "esm", "ernie", "megatron-bert", "rembert", "xlnet", "ibert", "deberta")  # and nystromformer, below
LMS = ("phi3", "gemma", "gemma2", "gemma3", "stablelm", "codegen", "qwen3", "olmo", "olmo2", "gpt-bigcode", "starcoder2", "mixtral",
       "persimmon", "cohere", "granite", "xglm", "ctrl")
VISION = {"vitmae": 2, "data2vec-vision": 2, "dpt": 4, "glpn": 4, "levit": 5, "poolformer": 0, "regnet": 0, "resnet": 0, "bit": 0,
          "convnext": 0, "mobilenetv2": 0, "efficientnet": 0, "pvt": 4, "pvt-v2": 4, "cvt": 6, "focalnet": 0, "mobilevitv2": 0,
          "swin2sr": 2, "siglip-vision": 2, "owlvit-vision": 2}
SPEECH = ("wavlm", "unispeech", "unispeech-sat", "data2vec-audio", "sew", "sew-d")
VISION_SIZE = {"levit": 64, "poolformer": 64, "regnet": 64, "resnet": 64, "bit": 64, "convnext": 64, "mobilenetv2": 64, "efficientnet": 64,
               "pvt": 64, "pvt-v2": 64, "cvt": 64, "glpn": 64, "mobilevitv2": 64, "swin2sr": 16}

def video(tf: Any, kind: str) -> nn.Module:
    """Video transformers on 4 frames of 32x32: tubelet (Conv3d) or per-frame patch embeddings."""
    common = dict(image_size=32, num_frames=4, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    if kind == "videomae":
        return tf.VideoMAEModel(tf.VideoMAEConfig(**common, patch_size=8, tubelet_size=2))
    if kind == "timesformer":
        return tf.TimesformerModel(tf.TimesformerConfig(**common, patch_size=8))
    return tf.VivitModel(tf.VivitConfig(**common, tubelet_size=[2, 8, 8]))


def clip_frames() -> tuple[torch.Tensor, ...]:
    return (torch.randn(1, 4, 3, 32, 32, generator=gen()),)


VIDEO = {"videomae": 2, "timesformer": 4, "vivit": 2}
"""TimeSformer's divided space-time attention: a time and a space attention per layer."""

HF2: list[ZooModel] = [
    *(ZooModel(k, hf(lambda tf, k=k: encoder(tf, k), TOK), long_tokens if k == "bigbird-sparse" else tokens, TOK, BLOCKS.get(k, 2)) for k in TEXT),
    # Nystromformer's landmark path adds the [1, 1, 1, S] mask to [1, H, landmarks, S] scores
    # and fails in transformers itself with a padding mask: ids alone
    ZooModel("nystromformer", hf(lambda tf: encoder(tf, "nystromformer"), TOK[:1]), lambda: tokens()[:1], TOK[:1], 2),
    *(ZooModel(k, hf(lambda tf, k=k: decoder_lm(tf, k), TOK), tokens, TOK, 2) for k in LMS),
    kv_row("llama", 2),
    kv_row("gpt2", 2),
    *(ZooModel(f"{k}-encoder", hf(lambda tf, k=k: seq2seq(tf, k).get_encoder(), TOK), tokens, TOK, 2)
      for k in ("pegasus", "blenderbot", "blenderbot-small", "led", "m2m100", "plbart")),
    *(ZooModel(f"{k}-decoder", hf(lambda tf, k=k: seq2seq(tf, k).get_decoder(), DEC), decoder_inputs, DEC, 4)
      for k in ("pegasus", "blenderbot", "blenderbot-small", "led", "m2m100", "plbart")),
    ZooModel("speech2text-encoder", hf(lambda tf: speech2text(tf).get_encoder(), ("input_features",)), features, ("input_features",), 2),
    ZooModel("vitmae", hf(lambda tf: vision(tf, "vitmae"), ("pixel_values", "noise")), vitmae_inputs, ("pixel_values", "noise"), 2),
    *(ZooModel(k, maybe_scrambled(k, hf(lambda tf, k=k: vision(tf, k), PIX, "predicted_depth" if k in ("dpt", "glpn") else "last_hidden_state")),
               pixels(VISION_SIZE.get(k, 32)), PIX, n) for k, n in VISION.items() if k != "vitmae"),
    # 1 encoder and 1 decoder layer: 3 attentions, but the first decoder self-attention
    # reads only the learned queries (the decoder's input is zeros): constant, it folds
    *(ZooModel(k, hf(lambda tf, k=k: detr(tf, k), PIX), pixels(64), PIX, 2) for k in ("detr", "table-transformer", "conditional-detr")),
    *(ZooModel(k, hf(lambda tf, k=k: deformable(tf, k), PIX), pixels(64), PIX, 2) for k in ("deformable-detr",)),
    ZooModel("perceiver", scrambled(hf(perceiver, ("inputs",))), embeddings, ("inputs",), 3),
    *(ZooModel(k, maybe_scrambled(k, hf(lambda tf, k=k: speech(tf, k), AUD)), audio, AUD, 2) for k in SPEECH),
    ZooModel("ast", hf(ast, AUD), spectrogram, AUD, 2),
    *(ZooModel(k, hf(lambda tf, k=k: more_text(tf, k), TOK[:1] if k == "mamba" else TOK), (lambda: tokens()[:1]) if k == "mamba" else tokens,
               TOK[:1] if k == "mamba" else TOK, n) for k, n in MORE_TEXT.items()),
    *(ZooModel(k, maybe_scrambled(k, hf(lambda tf, k=k: more_vision(tf, k), PIX, MORE_FIELD.get(k, "last_hidden_state"))),
               pixels(MORE_SIZE.get(k, 32)), PIX, n) for k, n in MORE_VISION.items()),
    *(ZooModel(k, hf(lambda tf, k=k: more_speech(tf, k), AUD), audio, AUD, 2) for k in ("wav2vec2-conformer", "wav2vec2-conformer-rel")),
    ZooModel("trocr-decoder", hf(trocr_decoder, DEC[:2]), lambda: decoder_inputs()[:2], DEC[:2], 4),
    ZooModel("patchtst", hf(patchtst, ("past_values",)), series, ("past_values",), 2),
    *(ZooModel(k, hf(lambda tf, k=k: video(tf, k), PIX), clip_frames, PIX, n) for k, n in VIDEO.items()),
]

if __name__ == "__main__":
    main(HF2)
