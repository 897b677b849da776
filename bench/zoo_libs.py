"""Models from the other libraries OpenVINO's Model Optimizer users bring (issue 14, session 8):
ultralytics YOLO, diffusers, segmentation_models_pytorch, sentence-transformers, torchaudio
and open_clip, with random weights built from the libraries' own configs (ultralytics' yaml
files shipped in the package, tiny diffusers / transformers configs); nothing is downloaded.

Each row is onnx_zoo.py's `run_one`: export, irforge import + default pipeline, then
OpenVINO 2026.4 on irforge's IR XML (f32), the reference interpreter and the CPU backend
against onnxruntime on the file (max abs error, relative where the output exceeds 1), and
the fused `nn.scaled_dot_product_attention` ops (the count: these zoos do not know the
blocks). Exporters: `torchscript` (opset 17), `dynamo` (opset 18) and, for ultralytics,
its own `model.export(format="onnx")`: `ultra<opset>[-dynamic][-simplify][-nms]` (nms=True:
its NMS written into the graph).

Libraries (pip-installed into /work/zoo-venv): ultralytics 8.4.190, diffusers 0.42.1,
segmentation-models-pytorch 0.6.0, sentence-transformers 6.2.0, open_clip_torch 3.3.0,
onnxslim (ultralytics' simplify=True). torchaudio 2.11's wheel is built for CUDA 13.0 and
refuses torch 2.15+cu132 at import (and then breaks transformers' AutoProcessor for every
zoo), so it lives outside site-packages in /work/zoo-venv/extras/torchaudio with its
compiled extension deleted: its models are Python.

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/zoo_libs.py                     # all rows
    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/zoo_libs.py --models yolov8n --out /tmp/t.md
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn

import zoo_torchvision  # noqa: F401  (before ultralytics/transformers, which import torchvision)
from onnx_zoo import COLUMNS, ZooModel, first_line, run_one

os.environ.setdefault("YOLO_OFFLINE", "1")
os.environ.setdefault("YOLO_VERBOSE", "False")
sys.path.append("/work/zoo-venv/extras/torchaudio")
Feeds = dict[str, np.ndarray]
TORCH = ("torchscript", "dynamo")
ULTRA = ("ultra12", "ultra17", "ultra17-dynamic", "ultra17-simplify")


def seeded(build: Callable[[], nn.Module]) -> Callable[[], nn.Module]:
    """build() with torch's generator seeded (the export and onnxruntime see the same weights
    anyway; a fixed seed makes the rows repeatable)."""

    def wrapped() -> nn.Module:
        torch.manual_seed(0)
        return build().eval()

    return wrapped


def randn(*shapes: tuple[int, ...]) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: tuple(torch.randn(*s, generator=torch.Generator().manual_seed(i)) for i, s in enumerate(shapes))


class First(nn.Module):
    """The first tensor of what the wrapped module returns (a tuple, or a tensor)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        out = self.model(*args)
        return out[0] if isinstance(out, (tuple, list)) else out


# -- ultralytics: its own exporter ----------------------------------------------------------
def rows_as_set(got: list[np.ndarray], want: list[np.ndarray]) -> str:
    """RT-DETR's (1, 300, 6) detections compared as a set of rows: with random weights many
    query scores tie to the last bit in onnxruntime (0.032060772 twice) and differ by an ulp
    in ours, so TopK orders those queries differently (onnxruntime's own optimised and
    unoptimised sessions differ the same way). Each row's error is to its nearest row on the
    other side; a wrong row still matches none."""
    worst, moved = 0.0, 0
    for g, w in zip(got, want):
        g, w = np.asarray(g, np.float64).reshape(-1, g.shape[-1]), np.asarray(w, np.float64).reshape(-1, w.shape[-1])
        if g.shape != w.shape:
            return f"shape {g.shape} vs {w.shape}"
        scale = max(1.0, float(np.abs(w).max()))
        near = np.abs(g[:, None, :] - w[None, :, :]).max(-1)
        worst = max(worst, float(near.min(1).max()) / scale, float(near.min(0).max()) / scale)
        moved += int((np.abs(g - w).max(-1) / scale > 1e-4).sum())
    return f"{worst:.1e}" + (f" ({moved} tied rows reordered)" if moved else "")


def ultralytics(cfg: str, size: int = 64) -> ZooModel:
    def write(exporter: str, path: Path) -> Feeds:
        from ultralytics import RTDETR, YOLO

        opset = int(exporter.removeprefix("ultra").split("-")[0])
        torch.manual_seed(0)
        model = (RTDETR if cfg.startswith("rtdetr") else YOLO)(cfg)
        with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp), contextlib.redirect_stdout(sys.stderr):
            out = model.export(format="onnx", imgsz=size, opset=opset, dynamic="dynamic" in exporter, simplify="simplify" in exporter,
                               nms="nms" in exporter, device="cpu")
            shutil.move(out, path)
        # a dynamic file runs at another size than it was exported at (anchors, grids)
        shape = (1, 3, size + 32, size) if "dynamic" in exporter else (1, 3, size, size)
        return {"images": np.random.default_rng(0).random(shape, dtype=np.float32)}

    return ZooModel(cfg.removesuffix(".yaml"), lambda: nn.Identity(), lambda: (), ("images",), attention_blocks=-1, write=write, fix_shapes=True,
                    compare=rows_as_set if cfg.startswith("rtdetr") else None)


# -- diffusers ----------------------------------------------------------------------------
def sd_unet() -> nn.Module:
    from diffusers import UNet2DConditionModel

    unet = UNet2DConditionModel(
        sample_size=16, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32, attention_head_dim=8, norm_num_groups=16,
    )
    return UNetCall(unet)


class UNetCall(nn.Module):
    def __init__(self, unet: nn.Module) -> None:
        super().__init__()
        self.unet = unet

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
        return self.unet(sample, timestep, encoder_hidden_states=text, return_dict=False)[0]


def tiny_vae() -> nn.Module:
    from diffusers import AutoencoderKL

    return AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(16, 32), layers_per_block=1,
                         down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2, norm_num_groups=8)


class VaeEncode(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.vae = tiny_vae()

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        return self.vae.encode(image).latent_dist.mean


class VaeDecode(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.vae = tiny_vae()

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        return self.vae.decode(latent).sample


class Sd3Block(nn.Module):
    """A tiny SD3 MMDiT (joint text-image attention blocks)."""

    def __init__(self) -> None:
        super().__init__()
        from diffusers import SD3Transformer2DModel

        self.model = SD3Transformer2DModel(sample_size=16, patch_size=2, in_channels=4, num_layers=2, attention_head_dim=8, num_attention_heads=2,
                                           joint_attention_dim=32, caption_projection_dim=16, pooled_projection_dim=16, out_channels=4, pos_embed_max_size=16)

    def forward(self, latent: torch.Tensor, text: torch.Tensor, pooled: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        return self.model(latent, encoder_hidden_states=text, pooled_projections=pooled, timestep=timestep, return_dict=False)[0]


def unet_inputs() -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(0)
    return torch.randn(1, 4, 16, 16, generator=g), torch.tensor([10], dtype=torch.int64), torch.randn(1, 8, 32, generator=g)


def sd3_inputs() -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(0)
    return torch.randn(1, 4, 16, 16, generator=g), torch.randn(1, 8, 32, generator=g), torch.randn(1, 16, generator=g), torch.tensor([10.0])


# -- segmentation_models_pytorch -----------------------------------------------------------
def smp_model(arch: str, encoder: str) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import segmentation_models_pytorch as smp

        return getattr(smp, arch)(encoder_name=encoder, encoder_weights=None, classes=3)

    return build


# -- sentence-transformers (a tiny checkpoint written offline, then loaded as users do) ------
def sentence(kind: str) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import transformers as tf
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

        small = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, vocab_size=100, max_position_embeddings=40)
        folder = Path(tempfile.mkdtemp(prefix="st-"))
        vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<s>", "</s>", "<pad>", "<unk>", "<mask>"] + [f"w{i}" for i in range(90)]
        (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
        if kind == "mpnet":
            tf.MPNetModel(tf.MPNetConfig(**small, pad_token_id=1)).save_pretrained(folder)
            tf.MPNetTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
        else:
            tf.BertModel(tf.BertConfig(**small)).save_pretrained(folder)
            tf.BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
        body = Transformer(str(folder), max_seq_length=32)
        pooling = Pooling(body.get_embedding_dimension(), "mean")
        model = SentenceTransformer(modules=[body, pooling, Normalize()], device="cpu")
        shutil.rmtree(folder)
        return SentenceEmbedding(model)

    return build


class SentenceEmbedding(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model({"input_ids": input_ids, "attention_mask": attention_mask})["sentence_embedding"]


def tokens() -> tuple[torch.Tensor, ...]:
    ids = torch.randint(10, 100, (2, 12), generator=torch.Generator().manual_seed(0))
    mask = torch.ones(2, 12, dtype=torch.int64)
    mask[1, 8:] = 0
    return ids, mask


# -- torchaudio ----------------------------------------------------------------------------
def wav2vec2(kind: str) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        from torchaudio.models import hubert_pretrain_model, wav2vec2_model, wavlm_model

        conv = [(16, 10, 5), (16, 3, 2), (16, 2, 2)]
        common = dict(extractor_mode="group_norm", extractor_conv_layer_config=conv, extractor_conv_bias=False, encoder_embed_dim=32,
                      encoder_projection_dropout=0.0, encoder_pos_conv_kernel=16, encoder_pos_conv_groups=4, encoder_num_layers=2,
                      encoder_attention_dropout=0.0, encoder_ff_interm_features=64, encoder_ff_interm_dropout=0.0, encoder_dropout=0.0,
                      encoder_layer_norm_first=False, encoder_layer_drop=0.0)
        if kind == "wavlm":
            return First(wavlm_model(**common, encoder_num_heads=2, encoder_num_buckets=16, encoder_max_distance=32, aux_num_out=None))
        if kind == "hubert":
            pre = hubert_pretrain_model(**common, encoder_num_heads=2, mask_prob=0.0, mask_selection="static", mask_other=0.0, mask_length=1,
                                        no_mask_overlap=False, mask_min_space=1, mask_channel_prob=0.0, mask_channel_selection="static",
                                        mask_channel_other=0.0, mask_channel_length=1, no_mask_channel_overlap=False, mask_channel_min_space=1,
                                        skip_masked=False, skip_nomask=False, num_classes=10, final_dim=16, feature_grad_mult=None)
            return First(pre.wav2vec2)
        return First(wav2vec2_model(**common, encoder_num_heads=2, aux_num_out=8))

    return build


class LengthsFirst(nn.Module):
    """Conformer / Emformer: (features, lengths) -> the features' output."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self.model(x, lengths)[0]


def conformer() -> nn.Module:
    from torchaudio.models import Conformer

    return LengthsFirst(Conformer(input_dim=16, num_heads=2, ffn_dim=32, num_layers=2, depthwise_conv_kernel_size=3))


def emformer() -> nn.Module:
    from torchaudio.models import Emformer

    return LengthsFirst(Emformer(input_dim=16, num_heads=2, ffn_dim=32, num_layers=2, segment_length=4, right_context_length=1))


def lengths_inputs(frames: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randn(2, frames, 16, generator=torch.Generator().manual_seed(0)), torch.tensor([frames, frames - 3]))


def wavernn() -> nn.Module:
    from torchaudio.models import WaveRNN

    return WaveRNN(upsample_scales=[2, 2], n_classes=16, hop_length=4, n_res_block=1, n_rnn=16, n_fc=16, kernel_size=5, n_freq=8, n_hidden=8, n_output=8)


def conv_tasnet() -> nn.Module:
    from torchaudio.models import ConvTasNet

    return ConvTasNet(num_sources=2, enc_kernel_size=8, enc_num_feats=16, msk_kernel_size=3, msk_num_feats=8, msk_num_hidden_feats=16, msk_num_layers=2, msk_num_stacks=1)


# -- open_clip --------------------------------------------------------------------------------
def open_clip_tower(tower: str) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        from open_clip.model import CLIP, CLIPTextCfg, CLIPVisionCfg

        clip = CLIP(embed_dim=16, vision_cfg=CLIPVisionCfg(layers=2, width=32, head_width=16, patch_size=8, image_size=32),
                    text_cfg=CLIPTextCfg(context_length=12, vocab_size=100, width=32, heads=2, layers=2))
        return ClipTower(clip, tower)

    return build


class ClipTower(nn.Module):
    def __init__(self, clip: nn.Module, tower: str) -> None:
        super().__init__()
        self.clip, self.tower = clip, tower

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.clip.encode_image(x, normalize=True) if self.tower == "image" else self.clip.encode_text(x, normalize=True)


ZOO: list[tuple[ZooModel, tuple[str, ...]]] = [
    *[(ultralytics(cfg), ULTRA) for cfg in ("yolov8n.yaml", "yolov5nu.yaml", "yolo11n.yaml")],
    *[(ultralytics(cfg), ("ultra12", "ultra17-dynamic")) for cfg in ("yolov8n-seg.yaml", "yolov8n-pose.yaml", "yolov8n-cls.yaml", "yolov8n-obb.yaml", "yolo11n-seg.yaml", "yolo11n-pose.yaml")],
    (ultralytics("rtdetr-l.yaml"), ("ultra17", "ultra17-simplify")),
    *[(ultralytics(cfg), ("ultra17", "ultra17-dynamic")) for cfg in ("yolov10n.yaml", "yolo12n.yaml", "yolo26n.yaml", "yolo26n-seg.yaml", "yolo26n-pose.yaml",
                                                                     "yolo26n-obb.yaml", "yolov9t.yaml", "yolov6n.yaml", "yolov3-tinyu.yaml")],
    (ultralytics("yolov8n.yaml"), ("ultra17-nms", "ultra13", "ultra15-simplify")),
    (ZooModel("sd-unet", seeded(sd_unet), unet_inputs, ("sample", "timestep", "encoder_hidden_states"), -1), TORCH),
    (ZooModel("vae-encoder", seeded(VaeEncode), randn((1, 3, 32, 32)), ("image",), -1), TORCH),
    (ZooModel("vae-decoder", seeded(VaeDecode), randn((1, 4, 8, 8)), ("latent",), -1), TORCH),
    (ZooModel("sd3-transformer", seeded(Sd3Block), sd3_inputs, ("hidden_states", "encoder_hidden_states", "pooled_projections", "timestep"), -1), TORCH),
    *[(ZooModel(f"smp-{arch.lower()}-{enc}", seeded(smp_model(arch, enc)), randn((1, 3, 128 if arch == "PAN" else 64, 128 if arch == "PAN" else 64)), ("image",), -1), TORCH)
      for arch, enc in (("Unet", "resnet18"), ("FPN", "efficientnet-b0"), ("DeepLabV3Plus", "resnet18"), ("PAN", "resnet18"),
                        ("Unet", "timm-efficientnet-b0"), ("FPN", "mit_b0"), ("Segformer", "mit_b0"))],
    (ZooModel("st-bert-mean", seeded(sentence("bert")), tokens, ("input_ids", "attention_mask"), -1), TORCH),
    (ZooModel("st-mpnet-mean", seeded(sentence("mpnet")), tokens, ("input_ids", "attention_mask"), -1), TORCH),
    (ZooModel("ta-wav2vec2", seeded(wav2vec2("wav2vec2")), randn((1, 800)), ("waveform",), -1), TORCH),
    (ZooModel("ta-hubert", seeded(wav2vec2("hubert")), randn((1, 800)), ("waveform",), -1), TORCH),
    (ZooModel("ta-wavlm", seeded(wav2vec2("wavlm")), randn((1, 800)), ("waveform",), -1), TORCH),
    (ZooModel("ta-conformer", seeded(conformer), lengths_inputs(20), ("features", "lengths"), -1), TORCH),
    (ZooModel("ta-emformer", seeded(emformer), lengths_inputs(21), ("features", "lengths"), -1), TORCH),
    (ZooModel("ta-conv-tasnet", seeded(conv_tasnet), randn((1, 1, 256)), ("mixture",), -1), TORCH),
    (ZooModel("ta-wavernn", seeded(wavernn), randn((1, 1, 32), (1, 1, 8, 12)), ("waveform", "specgram"), -1), TORCH),
    (ZooModel("openclip-image", seeded(open_clip_tower("image")), randn((1, 3, 32, 32)), ("image",), -1), TORCH),
    (ZooModel("openclip-text", seeded(open_clip_tower("text")), lambda: (torch.randint(1, 100, (2, 12), generator=torch.Generator().manual_seed(0)),), ("text",), -1), TORCH),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=None, help="comma-separated row names (default: all)")
    parser.add_argument("--exporters", default=None, help="comma-separated exporters (default: each model's own list)")
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown table here")
    args = parser.parse_args()
    wanted = None if args.models is None else set(args.models.split(","))
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    print("\n".join(lines), flush=True)
    rows = [(entry, exporter) for entry, exporters in ZOO if wanted is None or entry.name in wanted
            for exporter in (args.exporters.split(",") if args.exporters else exporters)]
    unique = [row for i, row in enumerate(rows) if (row[0].name, row[1]) not in {(e.name, x) for e, x in rows[:i]}]
    with tempfile.TemporaryDirectory() as tmp:
        for entry, exporter in unique:
            start = time.time()
            try:
                with contextlib.redirect_stdout(sys.stderr):  # the libraries' chatter
                    row = run_one(entry, exporter, Path(tmp))
            except Exception as e:  # noqa: BLE001
                traceback.print_exc(file=sys.stderr)
                row = {"model": entry.name, "exporter": exporter, "convert": f"harness: {first_line(e)}"}
            line = "| " + " | ".join(row.get(c, "-").replace("|", "/") for c in COLUMNS) + " |"
            lines.append(line)
            print(line, f"({time.time() - start:.0f} s)", file=sys.stderr, flush=True)
            print(line, flush=True)
            if args.out:
                args.out.write_text("\n".join(lines) + "\n")

if __name__ == "__main__":
    main()
