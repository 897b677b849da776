"""Real architectures, random weights, both torch exporters: does irforge convert and run them?

Outside CI (needs torch, transformers, onnxruntime and openvino: the zoo venv). Each model is
built small (tiny configs, so the whole zoo runs in minutes on 2 cores), exported with
torch.onnx.export's TorchScript exporter (dynamo=False) and its dynamo exporter, converted by
irforge (import + ir-convert's default pipeline), and compared with onnxruntime on the ONNX
file: OpenVINO on irforge's IR XML, the reference interpreter, the CPU backend. The table
gives the max abs error of each (divided by the output's max magnitude where that exceeds 1) (or the first line of the error), and the fused attention
ops against the model's attention blocks.

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/onnx_zoo.py [--models bert,gpt2] [--exporters torchscript,dynamo] [--out table.md]

PyPI's torchvision wheel is linked against CUDA libraries the CPU torch lacks, so the
torchvision architectures are written here as small torch modules (ResNet basic blocks,
MobileNetV2/V3 inverted residuals with squeeze-excitation, EfficientNet's MBConv, an SSD-like
head whose post-processing is TopK and NonMaxSuppression, and an SSDlite-like detector with
torchvision's full post-processing: `zoo_detection.py`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from zoo_detection import custom_translations, ssdlite  # bench/, next to this script

import zoo_torchvision  # noqa: F401  (before transformers, which imports torchvision when installed)


@dataclass
class ZooModel:
    name: str
    build: Callable[[], nn.Module]
    inputs: Callable[[], tuple[torch.Tensor, ...]]
    input_names: tuple[str, ...]
    attention_blocks: int = 0
    post: Callable[[Path, dict[str, np.ndarray]], None] | None = None
    """Rewrites the exported ONNX file in place (zoo_int8.py: onnxruntime's quantizers)."""
    compare: Callable[[list[np.ndarray], list[np.ndarray]], str] | None = None
    """The row's error text from (ours, onnxruntime's) outputs; None: max_error's."""
    write: Callable[[str, Path], dict[str, np.ndarray]] | None = None
    """Writes the ONNX file for an exporter name and returns the feeds (a library's own
    exporter, zoo_libs.py: ultralytics' `model.export`); None: torch.onnx.export of build()."""
    fix_shapes: bool = False
    """Import with the feeds' shapes, as `ir-convert --input_shape` (files with dynamic axes)."""


# -- transformers (tiny configs) ---------------------------------------------------------
def hf(name: str, attn: str = "sdpa") -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import transformers as tf

        small = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
        if name == "bert":
            model = tf.BertModel(tf.BertConfig(**small, vocab_size=100, max_position_embeddings=32), add_pooling_layer=False)
        elif name == "roberta":  # position ids by CumSum over the padding mask
            model = tf.RobertaModel(tf.RobertaConfig(**small, vocab_size=100, max_position_embeddings=40, pad_token_id=1), add_pooling_layer=False)
        elif name == "distilbert":
            model = tf.DistilBertModel(tf.DistilBertConfig(dim=32, n_layers=2, n_heads=2, hidden_dim=64, vocab_size=100, max_position_embeddings=32))
        elif name == "gpt2":
            model = tf.GPT2Model(tf.GPT2Config(n_embd=32, n_layer=2, n_head=2, vocab_size=100, n_positions=32))
        elif name == "vit":
            model = tf.ViTModel(tf.ViTConfig(**small, image_size=32, patch_size=8), add_pooling_layer=False)
        elif name == "swin":
            model = tf.SwinModel(tf.SwinConfig(image_size=32, patch_size=2, embed_dim=16, depths=[2, 2], num_heads=[1, 2], window_size=4))
        elif name == "t5-encoder":
            model = tf.T5EncoderModel(tf.T5Config(d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2, vocab_size=100))
        elif name == "whisper-encoder":
            config = tf.WhisperConfig(d_model=32, encoder_layers=2, encoder_attention_heads=2, decoder_layers=1, decoder_attention_heads=2,
                                      encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=16, max_source_positions=16, vocab_size=100,
                                      pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
            model = tf.WhisperModel(config).get_encoder()
        else:
            raise ValueError(name)
        model.config._attn_implementation = attn
        model.eval()
        return HiddenState(model)

    return build


class HiddenState(nn.Module):
    """The model's last hidden state alone (one output to compare)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        # by keyword: GPT-2's second positional parameter is past_key_values, not the mask
        names = ("input_ids", "attention_mask") if args[0].dtype == torch.int64 else ("input_features",) if args[0].dim() == 3 else ("pixel_values",)
        return self.model(**dict(zip(names, args))).last_hidden_state


def token_inputs() -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 100, (1, 12), generator=g)
    mask = torch.ones(1, 12, dtype=torch.int64)
    mask[0, 9:] = 0  # padding: the additive mask matters
    return ids, mask


def image(size: int, channels: int = 3) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randn(1, channels, size, size, generator=torch.Generator().manual_seed(0)),)


# -- torchvision-like CNNs -----------------------------------------------------------------
def conv_bn(i: int, o: int, k: int = 3, s: int = 1, groups: int = 1, act: type[nn.Module] | None = nn.ReLU) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Conv2d(i, o, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(o)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


class BasicBlock(nn.Module):
    def __init__(self, i: int, o: int, s: int) -> None:
        super().__init__()
        self.body = nn.Sequential(conv_bn(i, o, 3, s), conv_bn(o, o, 3, 1, act=None))
        self.skip = conv_bn(i, o, 1, s, act=None) if s != 1 or i != o else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.skip(x))


class SqueezeExcite(nn.Module):
    def __init__(self, c: int, gate: type[nn.Module] = nn.Hardsigmoid) -> None:
        super().__init__()
        self.fc = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, max(c // 4, 8), 1), nn.ReLU(), nn.Conv2d(max(c // 4, 8), c, 1), gate())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.fc(x)


class InvertedResidual(nn.Module):
    def __init__(self, i: int, o: int, s: int, expand: int, act: type[nn.Module] = nn.ReLU6, se: type[nn.Module] | None = None, k: int = 3) -> None:
        super().__init__()
        hidden = i * expand
        layers = [conv_bn(i, hidden, 1, act=act), conv_bn(hidden, hidden, k, s, groups=hidden, act=act)]
        if se is not None:
            layers.append(SqueezeExcite(hidden, se))
        layers.append(conv_bn(hidden, o, 1, act=None))
        self.body = nn.Sequential(*layers)
        self.residual = s == 1 and i == o

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.body(x)
        return x + y if self.residual else y


def resnet() -> nn.Module:
    return nn.Sequential(conv_bn(3, 16, 7, 2), nn.MaxPool2d(3, 2, 1), BasicBlock(16, 16, 1), BasicBlock(16, 32, 2),
                         BasicBlock(32, 64, 2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).eval()


def mobilenet_v2() -> nn.Module:
    return nn.Sequential(conv_bn(3, 16, 3, 2, act=nn.ReLU6), InvertedResidual(16, 16, 1, 1), InvertedResidual(16, 24, 2, 6),
                         InvertedResidual(24, 24, 1, 6), conv_bn(24, 64, 1, act=nn.ReLU6), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(64, 10)).eval()


def mobilenet_v3() -> nn.Module:
    hs = nn.Hardswish
    return nn.Sequential(conv_bn(3, 16, 3, 2, act=hs), InvertedResidual(16, 16, 2, 1, act=nn.ReLU, se=nn.Hardsigmoid),
                         InvertedResidual(16, 24, 2, 4, act=hs, se=nn.Hardsigmoid, k=5), InvertedResidual(24, 24, 1, 3, act=hs, se=nn.Hardsigmoid, k=5),
                         conv_bn(24, 48, 1, act=hs), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(48, 32), hs(), nn.Linear(32, 10)).eval()


def efficientnet() -> nn.Module:
    silu = nn.SiLU
    return nn.Sequential(conv_bn(3, 16, 3, 2, act=silu), InvertedResidual(16, 16, 1, 1, act=silu, se=nn.Sigmoid),
                         InvertedResidual(16, 24, 2, 6, act=silu, se=nn.Sigmoid), InvertedResidual(24, 24, 1, 6, act=silu, se=nn.Sigmoid, k=5),
                         conv_bn(24, 64, 1, act=silu), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(64, 10)).eval()


class SsdHead(nn.Module):
    """A backbone, box and score convolutions, the top 20 anchors by score (TopK), their
    boxes (Gather) and NonMaxSuppression's selected indices (as torchvision's SSD does)."""

    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Sequential(conv_bn(3, 16, 3, 2), conv_bn(16, 32, 3, 2))
        self.boxes = nn.Conv2d(32, 4 * 2, 3, padding=1)
        self.scores = nn.Conv2d(32, 2, 3, padding=1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        f = self.backbone(x)
        boxes = self.boxes(f).permute(0, 2, 3, 1).reshape(1, -1, 4)
        boxes = torch.cat([boxes[..., :2], boxes[..., :2] + boxes[..., 2:].exp()], dim=-1)
        scores = self.scores(f).permute(0, 2, 3, 1).reshape(1, -1).sigmoid()
        top, index = scores.topk(20, dim=1)
        chosen = boxes[0, index[0]]
        keep = Nms.apply(chosen.unsqueeze(0), top.unsqueeze(0))
        return chosen, keep


class Nms(torch.autograd.Function):
    """ONNX NonMaxSuppression (what torchvision.ops.nms exports to), 10 boxes, IoU 0.5."""

    @staticmethod
    def forward(ctx, boxes: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:  # type: ignore[no-untyped-def, override]
        order = scores[0, 0].argsort(descending=True)[:10]
        return torch.stack([torch.zeros_like(order), torch.zeros_like(order), order], dim=1)

    @staticmethod
    def symbolic(g, boxes, scores):  # type: ignore[no-untyped-def]
        limit = g.op("Constant", value_t=torch.tensor([10], dtype=torch.int64))
        iou = g.op("Constant", value_t=torch.tensor([0.5], dtype=torch.float32))
        return g.op("NonMaxSuppression", boxes, scores, limit, iou)


class UNet(nn.Module):
    """A two-level U-Net for segmentation: strided convolutions down, bilinear upsampling
    and a transposed convolution up, skip connections by concatenation, per-pixel classes."""

    def __init__(self) -> None:
        super().__init__()
        self.down1, self.down2 = conv_bn(3, 16, 3, 2), conv_bn(16, 32, 3, 2)
        self.up = nn.ConvTranspose2d(32, 16, 2, 2)
        self.fuse = conv_bn(32, 16)
        self.head = nn.Conv2d(16 + 3, 4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.down1(x)
        b = self.down2(a)
        y = self.fuse(torch.cat([self.up(b), a], dim=1))
        y = nn.functional.interpolate(y, scale_factor=2.0, mode="bilinear", align_corners=False)
        return self.head(torch.cat([y, x], dim=1)).softmax(dim=1)


ZOO = [
    ZooModel("bert", hf("bert"), token_inputs, ("input_ids", "attention_mask"), 2),
    ZooModel("bert-eager", hf("bert", "eager"), token_inputs, ("input_ids", "attention_mask"), 2),
    ZooModel("roberta", hf("roberta"), token_inputs, ("input_ids", "attention_mask"), 2),
    ZooModel("distilbert", hf("distilbert"), token_inputs, ("input_ids", "attention_mask"), 2),
    ZooModel("gpt2", hf("gpt2"), token_inputs, ("input_ids", "attention_mask"), 2),
    ZooModel("gpt2-eager", hf("gpt2", "eager"), token_inputs, ("input_ids", "attention_mask"), 2),
    ZooModel("vit", hf("vit"), image(32), ("pixel_values",), 2),
    ZooModel("swin", hf("swin"), image(32), ("pixel_values",), 4),
    ZooModel("t5-encoder", hf("t5-encoder"), token_inputs, ("input_ids", "attention_mask"), 2),
    ZooModel("whisper-encoder", hf("whisper-encoder"), lambda: (torch.randn(1, 16, 32, generator=torch.Generator().manual_seed(0)),), ("input_features",), 2),
    ZooModel("resnet", resnet, image(64), ("x",)),
    ZooModel("mobilenet_v2", mobilenet_v2, image(64), ("x",)),
    ZooModel("mobilenet_v3", mobilenet_v3, image(64), ("x",)),
    ZooModel("efficientnet", efficientnet, image(64), ("x",)),
    ZooModel("ssd-head", SsdHead, image(64), ("x",)),
    ZooModel("ssdlite", ssdlite, image(64), ("x",)),
    ZooModel("unet", lambda: UNet().eval(), image(64), ("x",)),
]


# -- one row ----------------------------------------------------------------------------------
def export(entry: ZooModel, exporter: str, path: Path) -> dict[str, np.ndarray]:
    if entry.write is not None:
        return entry.write(exporter, path)
    model = entry.build()
    inputs = entry.inputs()
    with torch.no_grad():
        dynamo = exporter.startswith("dynamo")  # "dynamo23": opset 23, where SDPA is one Attention node
        extra = {"custom_translation_table": custom_translations()} if dynamo else {}
        opset = {"torchscript": 17, "dynamo": 18, "dynamo23": 23}[exporter]
        torch.onnx.export(model, inputs, str(path), input_names=list(entry.input_names), dynamo=dynamo, opset_version=opset, **extra)
    feeds = {n: t.numpy() for n, t in zip(entry.input_names, inputs)}
    if entry.post is not None:
        entry.post(path, feeds)
    return feeds


def max_error(got: dict[str, np.ndarray] | list[np.ndarray], want: list[np.ndarray]) -> float:
    values = list(got.values()) if isinstance(got, dict) else got
    worst = 0.0
    for g, w in zip(values, want):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return float("inf")
        if g.size:
            # relative to the output's magnitude where it exceeds 1 (deep random CNNs reach
            # 1e9; detection boxes are pixel coordinates)
            g64, w64 = g.astype(np.float64), w.astype(np.float64)
            if not np.array_equal(np.isnan(g64), np.isnan(w64)):
                return float("inf")  # NaN on one side only (Python's max() would drop a NaN difference)
            g64, w64 = np.nan_to_num(g64, nan=0.0), np.nan_to_num(w64, nan=0.0)
            scale = max(1.0, float(np.max(np.abs(w64))))
            worst = max(worst, float(np.max(np.abs(g64 - w64))) / scale)
    return worst


def first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return (text[:110] + "...") if len(text) > 110 else text


def run_one(entry: ZooModel, exporter: str, workdir: Path) -> dict[str, str]:
    import onnxruntime as ort
    import openvino as ov

    from irforge.backends.cpu import compile_model
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.backends.reference import run
    from irforge.frontends.onnx import import_onnx
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    row = {"model": entry.name, "exporter": exporter}
    path = workdir / f"{entry.name}-{exporter}.onnx"
    try:
        feeds = export(entry, exporter, path)
    except Exception as e:  # noqa: BLE001
        row["convert"] = f"export failed: {first_line(e)}"
        return row
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = {i.name: feeds[i.name] for i in session.get_inputs()}
    want = session.run(None, feeds)
    note = ""
    if entry.post is not None:
        # a quantised graph: compare with onnxruntime's own execution of its QDQ/QLinear
        # nodes as written (graph optimisations off); its fused u8s8 kernels saturate 16-bit
        # intermediate sums on AVX2 hosts without VNNI, so the default session differs from
        # the graph's arithmetic by up to 10% (reported beside the row)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        exact = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]).run(None, feeds)
        note = f" (onnxruntime fused vs unfused {max_error(want, exact):.1e})"
        want = exact
    try:
        model = import_onnx(str(path), {n: f.shape for n, f in feeds.items()} if entry.fix_shapes else None)
        apply_pipeline(model.module, DEFAULT_PIPELINE)
    except Exception as e:  # noqa: BLE001
        row["convert"] = first_line(e)
        return row
    if any(np.isnan(np.asarray(w)).any() for w in want if np.asarray(w).dtype.kind == "f"):
        note += " (NaN in onnxruntime's output)"
    row["convert"] = "yes" + note
    names = [op.name for op in model.func.body.block.ops]
    fused = names.count("nn.scaled_dot_product_attention")
    # attention_blocks < 0: the count alone (zoos that do not know the model's blocks), beside
    # the exported graph's Softmax nodes: an upper bound on the attention blocks to read
    if entry.attention_blocks < 0:
        import onnx

        softmaxes = sum(n.op_type == "Softmax" for n in onnx.load(str(path), load_external_data=False).graph.node)
        row["attention"] = f"{fused} (softmax {softmaxes})" if softmaxes else str(fused)
    else:
        row["attention"] = f"{fused}/{entry.attention_blocks}" if entry.attention_blocks > 0 else "-"
    stages: dict[str, Callable[[], object]] = {
        "openvino": lambda: run_openvino(model, workdir / f"{entry.name}-{exporter}.xml", feeds, write_ir_xml, ov),
        "ref": lambda: run(model, feeds),
        "cpu": lambda: compile_model(model)(feeds),
    }
    for stage, fn in stages.items():
        try:
            got = fn()
            values = list(got.values()) if isinstance(got, dict) else got  # type: ignore[union-attr]
            row[stage] = entry.compare(values, want) if entry.compare else f"{max_error(values, want):.1e}"
        except Exception as e:  # noqa: BLE001
            row[stage] = first_line(e)
    return row


def run_openvino(model, xml: Path, feeds, write_ir_xml, ov):  # type: ignore[no-untyped-def]
    write_ir_xml(model, xml)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    results = compiled(feeds)
    return [np.asarray(results[out]) for out in compiled.outputs]


COLUMNS = ("model", "exporter", "convert", "openvino", "ref", "cpu", "attention")


def main(zoo: list[ZooModel] | None = None) -> None:
    zoo = ZOO if zoo is None else zoo
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(m.name for m in zoo))
    parser.add_argument("--exporters", default="torchscript,dynamo")
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown table here")
    args = parser.parse_args()
    wanted = args.models.split(",")
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for entry in [m for m in zoo if m.name in wanted]:
            for exporter in args.exporters.split(","):
                start = time.time()
                try:
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
