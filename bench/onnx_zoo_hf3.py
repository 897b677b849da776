"""The Hugging Face sweep: every transformers model type the other zoos do not build.

Outside CI (the zoo venv). Enumerates transformers' model types (CONFIG_MAPPING with a base
model in MODEL_MAPPING), drops those onnx_zoo.py / onnx_zoo_wide.py / onnx_zoo_hf2.py /
onnx_zoo_genai.py / onnx_zoo_video.py already build (by the config classes they name), and
builds each of the rest generically: the config class's defaults shrunk to a tiny model
(hidden 32, 2 layers, 4 heads of 8 with 2 KV heads, vocab 128, 1 block per stage; sub-configs
likewise), the base model with SDPA attention (eager where the model has no SDPA path), its
inputs read from forward()'s signature (token ids and a padding mask, pixels, raw audio or
mel features). Parameters are redrawn as hf2's `scrambled` does when the random model's
output is tiny. Same harness and columns as `onnx_zoo.py` (`run_one`): TorchScript (opset
17) and dynamo exports, convert, OpenVINO on our IR, ref and cpu against onnxruntime; the
attention column is fused ops / the model's leaf attention modules. Each row is capped at
--cap seconds (SIGALRM), so the sweep runs in pieces:

    PYTHONPATH=$PWD:$PWD/bench nice -n 10 /work/zoo-venv/bin/python bench/onnx_zoo_hf3.py --piece 1/8 [--cap 150] [--models mpt,biogpt] [--exporters torchscript,dynamo] [--out table.md]
    PYTHONPATH=$PWD:$PWD/bench /work/zoo-venv/bin/python bench/onnx_zoo_hf3.py --list
"""

from __future__ import annotations

import inspect
import re
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx_zoo  # bench/, next to this script
import torch
from onnx_zoo import ZooModel
from onnx_zoo_hf2 import scrambled
from onnx_zoo_wide import Call, gen
from torch import nn

def hide_torchaudio() -> None:
    """transformers imports torchaudio from every model (modeling_layers -> audio_utils) when
    it is installed; a torchaudio built for another CUDA than the venv's torch fails on import
    and with it every model class: tell transformers it is absent."""
    import transformers.utils
    import transformers.utils.import_utils as iu

    iu.is_torchaudio_available = transformers.utils.is_torchaudio_available = lambda: False  # type: ignore[attr-defined]


hide_torchaudio()

OTHER_ZOOS = ("onnx_zoo.py", "onnx_zoo_wide.py", "onnx_zoo_hf2.py", "onnx_zoo_genai.py", "onnx_zoo_video.py", "onnx_export_variants.py")
VOCAB = 128
SEQ = 12

# the shrunk sizes, by config field (only fields the config has are set)
TINY: dict[str, Any] = {
    **dict.fromkeys(("hidden_size", "d_model", "n_embd", "dim", "word_embed_proj_dim", "embedding_size", "projection_dim"), 32),
    **dict.fromkeys(("num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers", "num_decoder_layers",
                     "num_encoder_layers"), 2),
    **dict.fromkeys(("num_attention_heads", "n_head", "n_heads", "encoder_attention_heads", "decoder_attention_heads", "num_heads"), 4),
    **dict.fromkeys(("num_key_value_heads", "num_kv_heads", "multi_query_group_num"), 2),
    **dict.fromkeys(("head_dim", "d_kv", "d_head", "kv_channels", "qk_nope_head_dim", "v_head_dim", "attention_head_dim"), 8),
    **dict.fromkeys(("intermediate_size", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "d_ff", "d_inner", "ffn_hidden_size"), 64),
    **dict.fromkeys(("moe_intermediate_size", "shared_expert_intermediate_size", "expert_intermediate_size"), 32),
    **dict.fromkeys(("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts"), 4),
    **dict.fromkeys(("num_experts_per_tok", "moe_topk", "top_k"), 2),
    **dict.fromkeys(("kv_lora_rank", "q_lora_rank"), 16),
    "qk_rope_head_dim": 4,
    # state-space mixers (Mamba-2 heads must divide expand * hidden)
    "mamba_n_heads": 4, "mamba_d_head": 16, "mamba_n_groups": 1, "mamba_d_state": 8, "ssm_state_size": 8, "state_size": 8,
    **dict.fromkeys(("vocab_size", "n_vocab"), VOCAB),
    **dict.fromkeys(("max_position_embeddings", "n_positions", "max_source_positions", "max_target_positions", "n_ctx"), 64),
    "image_size": 32, "patch_size": 8, "num_channels": 3,
    # Qwen2-VL-style vision towers (flattened patches + grid_thw): depth, widths, window, the
    # learned position grid (8 x 8)
    "depth": 2, "embed_dim": 32, "out_hidden_size": 32, "window_size": 32, "num_position_embeddings": 64,
    # video models (V-JEPA 2: clip of frames_per_clip frames of crop_size, and its predictor)
    "crop_size": 32, "frames_per_clip": 4, "pred_hidden_size": 32, "pred_num_attention_heads": 4, "pred_num_hidden_layers": 2,
    # DETR queries: the top-k proposals of a tiny image's few tokens
    **dict.fromkeys(("num_queries", "num_denoising"), 10),
}
LATER = re.compile(r"vision|_text|audio|_encoder|_decoder|vl|omni|ocr|asr|tts|speech|video|sam|image")
SPECIAL = re.compile(r".*_token_id$")


def covered_types() -> set[str]:
    """The model types the other zoos build (by the `XxxConfig` names they mention)."""
    from transformers import CONFIG_MAPPING

    here = Path(__file__).parent
    names: set[str] = set()
    for f in OTHER_ZOOS:
        names |= set(re.findall(r"\b(\w+)Config\b", (here / f).read_text()))
    by_class = {CONFIG_MAPPING[k].__name__.removesuffix("Config"): k for k in CONFIG_MAPPING.keys()}
    return {by_class[n] for n in names if n in by_class}


def candidates() -> list[str]:
    from transformers import CONFIG_MAPPING
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    done = covered_types()
    types = sorted(t for t in CONFIG_MAPPING.keys() if t in MODEL_MAPPING_NAMES and t not in done)
    # single-modality families first (the sweep may be cut short); a VLM's text path, its
    # vision tower and speech models after them
    return sorted(types, key=lambda t: bool(LATER.search(t)))


LAYER_COUNTS = ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers")
MROPE = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1]}  # sums to half of head_dim 8
# per-model fields the generic shrink cannot guess (a width tied to a fixed divisor, ...)
EXTRA: dict[str, dict[str, Any]] = {
    # its vision tower's and cross-modal nn.MultiheadAttention have hidden // 64 heads
    "bridgetower": {"hidden_size": 64, "vision_config": {"hidden_size": 64}, "text_config": {"hidden_size": 64}},
    "mamba2": {"num_heads": 8},  # num_heads * head_dim must be expand * hidden (2 * 32)
    "falcon_h1": {"mamba_d_ssm": 32},  # mamba_n_heads * mamba_d_head
    "lfm2_moe": {"layer_types": ["conv", "full_attention"], "num_dense_layers": 1},  # no default pattern
    # mRoPE without mrope_section in the config: the modeling code's default [16, 24, 24] is for head_dim 128
    **{t: {"rope_parameters": MROPE} for t in ("qwen2_vl_text", "qwen2_5_vl_text", "glm_image_text", "glm_ocr_text")},
    **{t: {"text_config": {"rope_parameters": MROPE}} for t in ("qwen2_vl", "qwen2_5_vl", "glm_image", "glm_ocr")},
    # the image-token vocabulary maps (None by default; a text-only forward reads two ids)
    "chameleon": {"vocabulary_map": {"<image>": 127, "IMGIMGAA": 126}},
    "emu3": {"vocabulary_map": {"<image>": 127, "<|extra_200|>": 126, "<|visual token000000|>": 125}},
}


def per_layer(value: list[Any], n: int) -> list[Any]:
    """A per-layer list cut to `n` layers that keeps each kind it has (up to `n`): Gemma's
    sliding + full, a hybrid's linear + full attention, a MoE stack's dense + sparse MLP."""
    kinds = list(dict.fromkeys(map(repr, value)))[:n]
    picked = [next(v for v in value if repr(v) == k) for k in kinds]
    return [value[0]] * (n - len(picked)) + picked


def shrink(config: Any, top: bool = True) -> dict[str, Any]:
    """The overrides that make `config` (a default-constructed config) tiny; sub-configs as
    dicts of their own overrides (their constructors fill in the rest)."""
    out: dict[str, Any] = {}
    fields = config.to_dict() if hasattr(config, "to_dict") else {}
    layers = {k: fields[k] for k in LAYER_COUNTS if isinstance(fields.get(k), int) and fields[k] > 6}
    for key, value in fields.items():
        # only sub-configs are read as attributes: a per-layer field (Gemma 4's head_dim)
        # refuses global attribute access
        # (T5Gemma 2's `encoder` / `decoder` are sub-configs too, each holding more)
        sub = getattr(config, key, None) if (key.endswith("config") or isinstance(value, dict)) and key != "per_layer_config" else None
        if hasattr(sub, "to_dict"):
            out[key] = {**{k: v for k, v in sub.to_dict().items() if k != "per_layer_config"}, **shrink(sub, top=False)}
            continue
        if key in TINY and isinstance(value, int) and not isinstance(value, bool) and value > 0:
            out[key] = min(value, TINY[key]) if key not in ("image_size",) else TINY[key]
        elif key == "head_dim" and value is None and "hidden_size" in fields:
            out[key] = TINY[key]  # some models read head_dim without a fallback (HunYuan, Ministral)
        elif key in ("depths", "depth", "num_layers_per_stage", "stage_depths") and isinstance(value, list):
            out[key] = [1] * len(value)
        elif isinstance(value, list) and value and any(len(value) == n for n in layers.values()):
            # per-layer lists (layer_types, mlp_layer_types, per-layer widths, KV sources)
            count = TINY[next(k for k, n in layers.items() if len(value) == n)]
            # layer indices (KV-sharing sources) must point at the layers kept
            out[key] = value[:count] if "source" in key else per_layer(value, count)
        elif key == "layer_types" and isinstance(value, list):
            out[key] = None  # recomputed from the layer count
        elif SPECIAL.match(key) and isinstance(value, int) and value >= 100:
            out[key] = 100 + hash(key) % 28  # inside the vocabulary, outside the ids fed (3..99)
        elif key == "rope_parameters" and isinstance(value, dict) and "mrope_section" in value:
            out[key] = {**value, "mrope_section": [2, 1, 1]}  # sums to half of head_dim 8
    stages = fields.get("out_features")
    if isinstance(stages, list) and stages and all(re.fullmatch(r"stage\d+", f) for f in stages) and "num_hidden_layers" in out:
        # a ViT backbone's taps (stage9 of 12 layers): as many layers as taps, each one tapped
        out["num_hidden_layers"] = max(out["num_hidden_layers"], len(stages))
        out["out_features"], out["out_indices"] = [f"stage{i + 1}" for i in range(len(stages))], None
    if "head_dim" in out and "hidden_size" in out and "num_attention_heads" in out:
        out["head_dim"] = out["hidden_size"] // out["num_attention_heads"]
    return out


TIED = re.compile(r"`?([\w.]+)`? \((\d+)\) must (?:equal|match|be equal to|be the same as) `?([\w.]+)`? \((\d+)\)")


def tie(overrides: dict[str, Any], message: str) -> bool:
    """Applies a config validator's `a (x) must equal b (y)` to the overrides: the field the
    shrink did not set (a sub-config's projection width) takes the other's value; KV heads
    follow the query heads. False when the message is not of that form."""
    m = TIED.search(message)
    if not m:
        return False
    a, x, b, y = m.group(1), int(m.group(2)), m.group(3), int(m.group(4))

    def where(name: str) -> tuple[dict[str, Any], str]:
        """The overrides dict holding `name`: dotted from the top, else the (sub-)config
        dict that has it (a sub-config's validator names its own fields)."""
        d = overrides
        *subs, last = name.split(".")
        for s in subs:
            d = d.setdefault(s, {})
        if not subs and last not in d:
            d = next((v for v in overrides.values() if isinstance(v, dict) and last in v), d)
        return d, last

    (da, ka), (db, kb) = where(a), where(b)
    if "key_value" in kb or (ka in da and kb not in db and "key_value" not in ka):
        db[kb] = x
    else:
        da[ka] = y
    return True


def same_heads(overrides: dict[str, Any], message: str) -> bool:
    """`num_key_value_heads must match num_attention_heads` (no numbers): KV heads := heads."""
    if not re.search(r"key_value_heads.*must (?:match|equal)", message):
        return False
    for d in [overrides, *(v for v in overrides.values() if isinstance(v, dict))]:
        if "num_key_value_heads" in d and "num_attention_heads" in d:
            d["num_key_value_heads"] = d["num_attention_heads"]
    return True


def tiny_config(model_type: str) -> Any:
    from transformers import CONFIG_MAPPING

    cls = CONFIG_MAPPING[model_type]
    overrides = shrink(cls())
    for key, value in EXTRA.get(model_type, {}).items():  # a sub-config's extras merge into its shrink
        overrides[key] = {**overrides.get(key, {}), **value} if isinstance(value, dict) and key.endswith("config") else value
    for _ in range(4):  # a few validator ties (sub-config widths, KV heads) at most
        try:
            return cls(**overrides)
        except Exception as e:  # noqa: BLE001
            if not (tie(overrides, str(e)) or same_heads(overrides, str(e))):
                raise
    return cls(**overrides)


def leaf_attentions(model: nn.Module) -> list[nn.Module]:
    """Modules named ...Attention with no ...Attention inside (BertSelfAttention, not BertAttention)."""
    def attn(m: nn.Module) -> bool:
        return "attention" in type(m).__name__.lower() and "mask" not in type(m).__name__.lower()

    return [m for m in model.modules() if attn(m) and not any(attn(c) for c in m.modules() if c is not m)]


def input_kind(model: nn.Module) -> tuple[str, ...]:
    params = inspect.signature(model.forward).parameters
    if "input_ids" in params:
        names = ["input_ids"] + (["attention_mask"] if "attention_mask" in params else [])
        if "decoder_input_ids" in params:
            names.append("decoder_input_ids")
        # dual encoders (CLIP-like) need both; a VLM (image tokens in its text) runs text alone
        tokens = [k for k in model.config.to_dict() if k.startswith("image_token")]
        if "pixel_values" in params and not tokens:
            names.append("pixel_values")
        return tuple(names)
    for name in ("pixel_values", "input_values", "input_features", "pixel_values_videos"):
        if name in params:
            return (name,)
    if "hidden_states" in params and "grid_thw" in params:
        # a Qwen2-VL-style vision tower: flattened patches, the grid fixed in the wrapper
        return ("hidden_states",)
    if "past_values" in params:
        # time series: the values plus the required companions a forecaster reads
        # (TimesFM's padding and frequency class; PatchTSMixer's observed mask is optional)
        required = [k for k, p in params.items() if p.default is inspect.Parameter.empty and p.kind is not p.VAR_KEYWORD]
        extra = [k for k in ("past_values_padding", "freq") if k in required]
        if set(required) - {"past_values", *extra}:
            raise NotImplementedError(f"time series forward needs {', '.join(sorted(set(required) - {'past_values', *extra}))}")
        return ("past_values", *extra)
    raise NotImplementedError(f"no token, pixel or audio input in forward({', '.join(list(params)[:4])}...)")


def feeds_for(names: tuple[str, ...], config: Any) -> tuple[torch.Tensor, ...]:
    out: list[torch.Tensor] = []
    g = gen()
    for name in names:
        if name in ("input_ids", "decoder_input_ids"):
            # ids below the vocabulary (ESMC's is 64) and the special ids (100..127)
            text = getattr(config, "text_config", None) or config
            top = min(100, getattr(text, "vocab_size", VOCAB) or VOCAB)
            out.append(torch.randint(3, top, (1, SEQ if name == "input_ids" else 6), generator=g))
        elif name == "attention_mask":
            mask = torch.ones(1, SEQ, dtype=torch.int64)
            mask[0, 9:] = 0  # padding: the additive mask matters
            out.append(mask)
        elif name == "pixel_values":
            config = getattr(config, "vision_config", None) or config
            size = getattr(config, "image_size", 64)
            size = size if isinstance(size, int) and size >= 32 else 64
            out.append(torch.randn(1, getattr(config, "num_channels", 3) or 3, size, size, generator=g))
        elif name == "hidden_states":
            # the patches of a 1 x 4 x 4 grid, each in_channels x temporal x patch x patch
            width = config.in_channels * config.temporal_patch_size * config.patch_size ** 2
            out.append(torch.randn(GRID_THW.prod().item(), width, generator=g))
        elif name == "pixel_values_videos":
            # [1, frames, channels, size, size]: two tubelets of the shrunk crop
            frames = 2 * (getattr(config, "tubelet_size", 2) or 2)
            size = getattr(config, "crop_size", None) or getattr(config, "image_size", 32)
            out.append(torch.randn(1, frames, getattr(config, "num_channels", 3) or 3, size, size, generator=g))
        elif name == "past_values":
            # TimesFM: [1, 4 patches]; PatchTSMixer and the like: [1, context, channels]
            if hasattr(config, "num_input_channels"):
                out.append(torch.randn(1, config.context_length, config.num_input_channels, generator=g))
            else:
                out.append(torch.randn(1, 4 * config.patch_length, generator=g))
        elif name == "past_values_padding":
            pad = torch.zeros(1, 4 * config.patch_length, dtype=torch.int64)
            pad[0, :config.patch_length // 2] = 1  # the first half patch is padding
            out.append(pad)
        elif name == "freq":
            out.append(torch.ones(1, dtype=torch.int64))
        elif name == "input_values":
            out.append(torch.randn(1, 800, generator=g))
        else:  # input_features: [1, mel bins, frames]
            out.append(torch.randn(1, getattr(config, "num_mel_bins", 80), 32, generator=g))
    return tuple(out)


GRID_THW = torch.tensor([[1, 4, 4]])  # a vision tower's image: one frame of 4 x 4 patches (2 x 2 merged)
NORM_WIDTH = re.compile(r"normalized_shape=\[(\d+)\], expected input with shape \[\*, \1\], but got input of size\s*\[1, (\d+)")


def reshape_feeds(names: tuple[str, ...], feeds: tuple[torch.Tensor, ...], config: Any, message: str) -> tuple[torch.Tensor, ...] | None:
    """The feeds in the layout the forward's error asks for, or None: a codec's mono channel
    ([1, 1, samples]: DAC, EnCodec, X-Codec), a video model's frames ([1, frames, 3, H, W]:
    X-CLIP), stacked features read as [1, frames, width] (Wav2Vec2-BERT's 160 = 80 mel bins x
    stride 2)."""
    out = list(feeds)
    for i, (name, x) in enumerate(zip(names, feeds)):
        if name == "input_values" and x.dim() == 2 and re.search(r"mono|channel|3D|3-D|expected 3|batch_size, channels", message, re.I):
            out[i] = x[:, None]
        elif name == "pixel_values" and x.dim() == 4 and re.search(r"expected 5, got 4", message):
            vision = getattr(config, "vision_config", None) or config
            frames = getattr(vision, "num_frames", None) or getattr(config, "num_frames", None) or 2
            out[i] = x[:, None].expand(-1, frames, -1, -1, -1).contiguous()
        elif name == "input_features" and (m := NORM_WIDTH.search(message)):
            out[i] = torch.randn(1, 32, int(m.group(1)), generator=gen())
    return tuple(out) if any(a is not b for a, b in zip(out, feeds)) else None


def sweep_row(model_type: str) -> ZooModel:
    """A row whose input names and attention count are known once the model is built."""
    entry = ZooModel(model_type, lambda: nn.Identity(), lambda: (), ())
    state: dict[str, Any] = {}

    def make() -> nn.Module:
        from transformers import AutoModel

        torch.manual_seed(0)
        try:
            config = tiny_config(model_type)
        except Exception as e:  # noqa: BLE001
            raise RuntimeError(f"build: tiny config: {onnx_zoo.first_line(e)}") from e
        if hasattr(config, "use_cache"):
            config.use_cache = False
        model = None
        for attn in ("sdpa", "eager"):
            try:
                torch.manual_seed(0)
                model = AutoModel.from_config(config, attn_implementation=attn)
                break
            except Exception as e:  # noqa: BLE001
                error = e
        if model is None:
            raise RuntimeError(f"build: {onnx_zoo.first_line(error)}")
        model.eval()
        names = input_kind(model)
        feeds = feeds_for(names, config)
        wrapped = First(model, names, "0")
        # the attention blocks: leaf attention modules this forward runs (a VLM's text path
        # leaves its vision tower's out)
        ran: set[int] = set()
        hooks = [m.register_forward_hook(lambda m, i, o: ran.add(id(m))) for m in leaf_attentions(model)]
        try:
            for attempt in range(3):
                try:
                    with torch.no_grad():
                        out = wrapped(*feeds)
                    break
                except Exception as e:  # noqa: BLE001  (the tiny model or its inputs, in torch itself)
                    reshaped = None if attempt == 2 else reshape_feeds(names, feeds, config, str(e))
                    if reshaped is None:
                        raise RuntimeError(f"build: forward: {onnx_zoo.first_line(e)}") from e
                    feeds = reshaped
        finally:
            for hook in hooks:
                hook.remove()
        state.update(names=names, feeds=feeds)
        entry.input_names = names
        entry.attention_blocks = len(ran) if ran else -1
        if out.is_floating_point() and float(out.abs().max()) < 1e-3:
            return scrambled(lambda: First(model, names, "0"))()
        return wrapped

    def build() -> nn.Module:
        return make()

    entry.build = build
    entry.inputs = lambda: state["feeds"]
    return entry


class First(Call):
    """Call's first output; a backbone's first output is its tuple of feature maps: the last.
    A vision tower fed flattened patches gets its grid_thw as a constant (the export's
    shapes follow from it, as in a real tower exported for one image size)."""

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        if self.names == ("hidden_states",):
            out = self.model(hidden_states=args[0], grid_thw=GRID_THW)
            out = out[0] if not isinstance(out, torch.Tensor) else out
        else:
            out = super().forward(*args)
        while isinstance(out, (tuple, list)):
            out = out[-1]
        return out


class Timeout(Exception):
    pass


def capped(run_one: Callable[..., dict[str, str]], seconds: int) -> Callable[..., dict[str, str]]:
    """run_one with a SIGALRM cap: a row past it reads `timeout (N s)`."""
    def on_alarm(signum: int, frame: Any) -> None:
        raise Timeout(f"timeout ({seconds} s)")

    def run(entry: ZooModel, exporter: str, workdir: Path) -> dict[str, str]:
        signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(seconds)
        try:
            return run_one(entry, exporter, workdir)
        except Timeout as e:
            return {"model": entry.name, "exporter": exporter, "convert": str(e)}
        finally:
            signal.alarm(0)

    return run


def take(flag: str) -> str | None:
    """Removes `flag VALUE` from sys.argv (onnx_zoo.main parses the rest)."""
    if flag not in sys.argv:
        return None
    i = sys.argv.index(flag)
    value = sys.argv[i + 1]
    del sys.argv[i:i + 2]
    return value


if __name__ == "__main__":
    if "--list" in sys.argv:
        names = candidates()
        print(len(names), "model types:", " ".join(names))
        sys.exit(0)
    piece, cap = take("--piece"), int(take("--cap") or 150)
    types = candidates()
    if piece:
        k, n = map(int, piece.split("/"))
        types = types[(k - 1) * len(types) // n:k * len(types) // n]
    onnx_zoo.run_one = capped(onnx_zoo.run_one, cap)
    onnx_zoo.main([sweep_row(t) for t in types])
