"""The same real models exported the many ways users export them: does irforge convert them all?

Outside CI (the zoo venv: torch, torchvision, transformers, timm, onnxruntime, openvino,
onnxconverter-common, onnxsim). Our zoos export each model one way; users' files vary by
exporter and opset, static or dynamic axes, float16 (`model.half()` or onnxconverter-common's
conversion), shape-inferred or onnxsim-simplified graphs, onnxruntime's offline-optimised
files (com.microsoft fused ops) and external-data weights. Each (model, variant) row:
`ir-convert` (with `--input_shape` where the file's axes are dynamic), then OpenVINO on the
written IR XML, and the reference interpreter and the CPU backend on that IR read back,
each against onnxruntime on the variant's file: max abs error / max abs reference value,
gated at 1e-3 (float16 files: F16_GATE).

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/onnx_export_variants.py [--models resnet18,bert]
        [--variants ts11,dynamo18] [--all] [--out table.md]

Without --models/--variants (or --all) a default subset runs (DEFAULT_MODELS x DEFAULT_VARIANTS,
under ~10 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

import zoo_torchvision  # noqa: F401  (before transformers and timm, which import torchvision)
from onnx_zoo_wide import convnext, detector, swin_t, tv, vit  # bench/, next to this script

GATE = 1e-3
F16_GATE = 2e-2
"""float16 files: irforge computes float16 tensors in float32 and rounds at op boundaries
(as OpenVINO's CPU plug-in does); onnxruntime rounds where its kernels do. A 10-bit mantissa
(4.9e-4 relative per rounding) accumulated over a network's layers: a few 1e-3 of the
output's magnitude."""


@dataclass
class Spec:
    name: str
    build: Callable[[], nn.Module]
    inputs: Callable[[], tuple[torch.Tensor, ...]]
    input_names: tuple[str, ...]
    dynamic: dict[str, dict[int, str]] = field(default_factory=dict)
    """The axes a dynamic export leaves symbolic (batch, sequence)."""


def gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


def pixels(size: int) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: (torch.randn(1, 3, size, size, generator=gen()),)


def tokens() -> tuple[torch.Tensor, ...]:
    ids = torch.randint(0, 100, (1, 12), generator=gen())
    mask = torch.ones(1, 12, dtype=torch.int64)
    mask[0, 9:] = 0  # padding: the additive mask matters
    return ids, mask


IMAGE_AXES = {"x": {0: "batch"}}
TOKEN_AXES = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}}


class First(nn.Module):
    """One tensor out of a model that returns a dict, a tuple or a ModelOutput."""

    def __init__(self, model: nn.Module, key: str | None = None) -> None:
        super().__init__()
        self.model, self.key = model, key

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        out = self.model(*args)
        if self.key is not None:
            return out[self.key]
        return out[0] if isinstance(out, (tuple, list)) else out


class Keywords(nn.Module):
    """A Hugging Face model called by keyword (GPT-2's second positional is past_key_values),
    its first output."""

    def __init__(self, model: nn.Module, names: tuple[str, ...]) -> None:
        super().__init__()
        self.model, self.names = model, names

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        return self.model(**dict(zip(self.names, args)))[0]


def hf(make: Callable[[Any], nn.Module], names: tuple[str, ...]) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import transformers

        torch.manual_seed(0)
        model = make(transformers)
        model.config._attn_implementation = "sdpa"
        return Keywords(model.eval(), names)

    return build


SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)


def whisper_encoder(t: Any) -> nn.Module:
    config = t.WhisperConfig(d_model=32, encoder_layers=2, encoder_attention_heads=2, decoder_layers=1, decoder_attention_heads=2,
                             encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=16, max_source_positions=16, vocab_size=100,
                             pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    return t.WhisperModel(config).get_encoder()


def timm_model(name: str, **kwargs: object) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import timm

        torch.manual_seed(0)
        return timm.create_model(name, pretrained=False, num_classes=10, **kwargs).eval()

    return build


TOK = ("input_ids", "attention_mask")
PIX = ("pixel_values",)
PIX_AXES = {"pixel_values": {0: "batch"}}
SPECS = [
    Spec("resnet18", tv(lambda m: m.resnet18(num_classes=10)), pixels(64), ("x",), IMAGE_AXES),
    Spec("mobilenet_v3", tv(lambda m: m.mobilenet_v3_small(num_classes=10)), pixels(64), ("x",), IMAGE_AXES),
    Spec("efficientnet_b0", tv(lambda m: m.efficientnet_b0(num_classes=10)), pixels(64), ("x",), IMAGE_AXES),
    Spec("convnext", tv(convnext), pixels(32), ("x",), IMAGE_AXES),
    Spec("vit", tv(vit), pixels(32), ("x",), IMAGE_AXES),
    Spec("swin", tv(swin_t), pixels(32), ("x",), IMAGE_AXES),
    Spec("deeplabv3", tv(lambda m: First(m.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=4), "out")),
         pixels(64), ("x",), IMAGE_AXES),
    Spec("ssdlite", tv(detector(lambda m: m.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=3),
                                recalibrate=True)), pixels(64), ("x",)),
    Spec("bert", hf(lambda t: t.BertModel(t.BertConfig(**SMALL, vocab_size=100, max_position_embeddings=32), add_pooling_layer=False), TOK),
         tokens, TOK, TOKEN_AXES),
    Spec("distilbert", hf(lambda t: t.DistilBertModel(t.DistilBertConfig(dim=32, n_layers=2, n_heads=2, hidden_dim=64, vocab_size=100,
                                                                           max_position_embeddings=32)), TOK), tokens, TOK, TOKEN_AXES),
    Spec("gpt2", hf(lambda t: t.GPT2Model(t.GPT2Config(n_embd=32, n_layer=2, n_head=2, vocab_size=100, n_positions=32)), TOK),
         tokens, TOK, TOKEN_AXES),
    Spec("t5-encoder", hf(lambda t: t.T5EncoderModel(t.T5Config(d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2, vocab_size=100)), TOK),
         tokens, TOK, TOKEN_AXES),
    Spec("whisper-encoder", hf(whisper_encoder, ("input_features",)), lambda: (torch.randn(1, 16, 32, generator=gen()),),
         ("input_features",), {"input_features": {0: "batch"}}),
    Spec("clip-text", hf(lambda t: t.CLIPTextModel(t.CLIPTextConfig(**SMALL, vocab_size=100, max_position_embeddings=32)), TOK),
         tokens, TOK, TOKEN_AXES),
    Spec("clip-vision", hf(lambda t: t.CLIPVisionModel(t.CLIPVisionConfig(**SMALL, image_size=32, patch_size=8)), PIX),
         lambda: (torch.randn(1, 3, 32, 32, generator=gen()),), PIX, PIX_AXES),
    Spec("timm-mobilevit", timm_model("mobilevit_xxs"), pixels(64), ("x",), IMAGE_AXES),
    Spec("timm-regnety", timm_model("regnety_002"), pixels(64), ("x",), IMAGE_AXES),
]


# -- the variants -------------------------------------------------------------------------------
@dataclass
class Variant:
    name: str
    make: Callable[[Spec, Path], tuple[Path, dict[str, np.ndarray]]]
    half: bool = False
    """A float16 file: F16_GATE."""
    twin: Callable[[Spec, Path], tuple[Path, dict[str, np.ndarray]]] | None = None
    """The float32 file the float16 one was made from: onnxruntime's reference where it
    refuses the float16 file (its CPU kernels lack float16 for some ops; torch's half
    exports can mix float16 and float32 operands where a schema wants one type)."""


def torch_export(spec: Spec, path: Path, opset: int, dynamo: bool = False, dynamic: bool = False, half: bool = False) -> dict[str, np.ndarray]:
    model = spec.build()
    inputs = spec.inputs()
    if isinstance(model, Keywords) and opset < 14 and not dynamo:
        # the TorchScript exporter writes SDPA from opset 14 on: below it users export eager attention
        model.model.config._attn_implementation = "eager"
    if half:
        model = model.half()
        inputs = tuple(t.half() if t.is_floating_point() else t for t in inputs)
    extra: dict[str, Any] = {}
    if dynamic:
        if not spec.dynamic:
            raise RuntimeError("the model has no dynamic axes to export")
        # a batch of 2: torch.export specialises a size-1 dimension to a constant
        inputs = tuple(torch.cat([t, t]) for t in inputs)
        if dynamo:
            shapes = tuple({a: torch.export.Dim.AUTO for a in spec.dynamic.get(n, {})} for n in spec.input_names)
            variadic = any(p.kind is p.VAR_POSITIONAL for p in inspect.signature(model.forward).parameters.values())
            extra["dynamic_shapes"] = (shapes,) if variadic else shapes  # forward(*args): one parameter
        else:
            extra["dynamic_axes"] = spec.dynamic
    if dynamo:
        from zoo_detection import custom_translations

        extra["custom_translation_table"] = custom_translations()
    with torch.no_grad():
        torch.onnx.export(model, inputs, str(path), input_names=list(spec.input_names), opset_version=opset, dynamo=dynamo, **extra)
    return {n: t.numpy() for n, t in zip(spec.input_names, inputs)}


def exported(opset: int, dynamo: bool = False, dynamic: bool = False, half: bool = False) -> Callable[[Spec, Path], tuple[Path, dict[str, np.ndarray]]]:
    def make(spec: Spec, path: Path) -> tuple[Path, dict[str, np.ndarray]]:
        return path, torch_export(spec, path, opset, dynamo, dynamic, half)

    return make


def derived(rewrite: Callable[[Path, Path], None]) -> Callable[[Spec, Path], tuple[Path, dict[str, np.ndarray]]]:
    """A file made from the opset-17 TorchScript export by a tool users run on it."""

    def make(spec: Spec, path: Path) -> tuple[Path, dict[str, np.ndarray]]:
        source = path.with_name(path.stem + ".source.onnx")
        feeds = torch_export(spec, source, 17)
        rewrite(source, path)
        return path, feeds

    return make


def float16_converted(source: Path, target: Path) -> None:
    import onnx
    from onnxconverter_common import float16

    onnx.save(float16.convert_float_to_float16(onnx.load(str(source)), keep_io_types=True), str(target))


def shape_inferred(source: Path, target: Path) -> None:
    import onnx

    onnx.save(onnx.shape_inference.infer_shapes(onnx.load(str(source)), strict_mode=True, data_prop=True), str(target))


def simplified(source: Path, target: Path) -> None:
    import onnx
    import onnxsim

    model, ok = onnxsim.simplify(onnx.load(str(source)))
    if not ok:
        raise RuntimeError("onnxsim could not validate its simplified model")
    onnx.save(model, str(target))


def ort_optimised(level: str) -> Callable[[Path, Path], None]:
    def rewrite(source: Path, target: Path) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, f"ORT_ENABLE_{level}")
        options.optimized_model_filepath = str(target)
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])

    return rewrite


def external_data(source: Path, target: Path) -> None:
    import onnx

    onnx.save(onnx.load(str(source)), str(target), save_as_external_data=True, all_tensors_to_one_file=True,
              location=target.name + ".data", size_threshold=64)


VARIANTS = [
    *(Variant(f"ts{o}", exported(o)) for o in (11, 13, 14, 17, 18)),
    Variant("ts17-dynamic", exported(17, dynamic=True)),
    Variant("dynamo18", exported(18, dynamo=True)),
    Variant("dynamo23", exported(23, dynamo=True)),
    Variant("dynamo18-dynamic", exported(18, dynamo=True, dynamic=True)),
    Variant("ts17-half", exported(17, half=True), half=True, twin=exported(17)),
    Variant("dynamo18-half", exported(18, dynamo=True, half=True), half=True, twin=exported(18, dynamo=True)),
    Variant("fp16-converted", derived(float16_converted), half=True, twin=exported(17)),
    Variant("shape-inferred", derived(shape_inferred)),
    Variant("onnxsim", derived(simplified)),
    Variant("ort-basic", derived(ort_optimised("BASIC"))),
    Variant("ort-extended", derived(ort_optimised("EXTENDED"))),
    Variant("external-data", derived(external_data)),
]
DEFAULT_MODELS = ("resnet18", "mobilenet_v3", "vit", "bert", "gpt2", "whisper-encoder")
DEFAULT_VARIANTS = ("ts11", "ts17-dynamic", "dynamo18-dynamic", "dynamo23", "ts17-half", "fp16-converted", "onnxsim", "ort-extended",
                    "external-data")


# -- one row ------------------------------------------------------------------------------------
def relative_error(got: list[np.ndarray], want: list[np.ndarray]) -> float:
    """max |got - want| / max |want| over the outputs (their worst), inf on a shape or NaN mismatch."""
    worst = 0.0
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return float("inf")
        if not g.size:
            continue
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        if not np.array_equal(np.isnan(g64), np.isnan(w64)):
            return float("inf")
        g64, w64 = np.nan_to_num(g64), np.nan_to_num(w64)
        worst = max(worst, float(np.max(np.abs(g64 - w64))) / max(float(np.max(np.abs(w64))), 1e-12))
    return worst


def first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    text = text.split(".onnx failed:")[-1]  # onnxruntime's "Load model from PATH failed:"
    return (text[:120] + "...") if len(text) > 120 else text


def dynamic_inputs(path: Path) -> bool:
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    initialisers = {t.name for t in graph.initializer}
    return any(not d.HasField("dim_value") for i in graph.input if i.name not in initialisers for d in i.type.tensor_type.shape.dim)


def ir_convert(path: Path, feeds: dict[str, np.ndarray], out_dir: Path) -> Path:
    """irforge's ir-convert as a user runs it (its argv), `--input_shape` where axes are dynamic."""
    from irforge.tools.ir_convert import convert

    argv = ["--input_model", str(path), "--output_dir", str(out_dir), "--no-progress"]
    if dynamic_inputs(path):
        argv += ["--input", ",".join(feeds),
                 "--input_shape", ",".join("[" + ",".join(str(d) for d in a.shape) + "]" for a in feeds.values())]
    convert(argv)
    return out_dir / (path.stem + ".xml")


def run_openvino(xml: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    results = compiled(feeds)
    return [np.asarray(results[out]) for out in compiled.outputs]


def reference_outputs(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def onnx_feeds(path: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The feeds in the file's input element types (float16 inputs of a half export)."""
    import onnx
    from onnx import helper

    graph = onnx.load(str(path), load_external_data=False).graph
    types = {i.name: helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type) for i in graph.input}
    return {n: a.astype(types[n]) for n, a in feeds.items() if n in types}


def run_row(spec: Spec, variant: Variant, workdir: Path) -> dict[str, str]:
    from irforge.errors import IrforgeError
    from irforge.tools.ir_run import load

    row = {"model": spec.name, "variant": variant.name}
    path = workdir / f"{spec.name}-{variant.name}.onnx"
    try:
        path, feeds = variant.make(spec, path)
        feeds = onnx_feeds(path, feeds)
    except Exception as e:  # noqa: BLE001  (the export: no row to judge)
        row["convert"] = f"n/a: {first_line(e)}"
        return row
    note = ""
    try:
        want = reference_outputs(path, feeds)
    except Exception as e:  # noqa: BLE001
        if variant.twin is None:
            row["convert"] = f"n/a: onnxruntime: {first_line(e)}"
            return row
        twin, twin_feeds = variant.twin(spec, path.with_name(path.stem + ".f32.onnx"))
        want = reference_outputs(twin, onnx_feeds(twin, twin_feeds))
        note = f" (vs float32 file: onnxruntime refuses this one: {first_line(e)})"
    try:
        xml = ir_convert(path, feeds, workdir / "ir")
    except IrforgeError as e:
        # a coded refusal of a file onnxruntime refuses too (it contradicts itself) is no failure
        row["convert"] = f"{'refused, as by onnxruntime' if note else 'FAIL'}: {first_line(e)}"
        row["gate"] = "n/a (invalid file)" if note else "FAIL"
        return row
    row["convert"] = "yes" + note
    gate = F16_GATE if variant.half else GATE
    stages: dict[str, Callable[[], list[np.ndarray]]] = {
        "openvino": lambda: run_openvino(xml, feeds),
        "ref": lambda: _values(__import__("irforge.backends.reference", fromlist=["run"]).run(load(str(xml), None), feeds)),
        "cpu": lambda: _values(__import__("irforge.backends.cpu", fromlist=["compile_model"]).compile_model(load(str(xml), None))(feeds)),
    }
    passed = True
    for stage, fn in stages.items():
        try:
            err = relative_error(fn(), want)
            row[stage] = f"{err:.1e}"
            passed &= err <= gate
        except Exception as e:  # noqa: BLE001
            row[stage] = f"FAIL: {first_line(e)}"
            passed = False
    row["gate"] = f"{'pass' if passed else 'FAIL'} ({gate:g})"
    return row


def _values(got: dict[str, np.ndarray] | list[np.ndarray]) -> list[np.ndarray]:
    return list(got.values()) if isinstance(got, dict) else list(got)


COLUMNS = ("model", "variant", "convert", "openvino", "ref", "cpu", "gate")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", help=f"comma-separated (default: {','.join(DEFAULT_MODELS)}); all: {','.join(s.name for s in SPECS)}")
    parser.add_argument("--variants", help=f"comma-separated (default: {','.join(DEFAULT_VARIANTS)}); all: {','.join(v.name for v in VARIANTS)}")
    parser.add_argument("--all", action="store_true", help="every model and variant (default: the subset)")
    parser.add_argument("--out", type=Path, help="also write the markdown table here")
    args = parser.parse_args()
    models = args.models.split(",") if args.models else [s.name for s in SPECS] if args.all else list(DEFAULT_MODELS)
    variants = args.variants.split(",") if args.variants else [v.name for v in VARIANTS] if args.all else list(DEFAULT_VARIANTS)
    unknown = set(models) - {s.name for s in SPECS} | set(variants) - {v.name for v in VARIANTS}
    if unknown:
        parser.error(f"unknown model or variant: {', '.join(sorted(unknown))}")
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for spec in [s for s in SPECS if s.name in models]:
            for variant in [v for v in VARIANTS if v.name in variants]:
                start = time.time()
                workdir = Path(tmp) / f"{spec.name}-{variant.name}"
                workdir.mkdir()
                try:
                    with contextlib.redirect_stdout(sys.stderr):  # the exporters' and ir-convert's chatter
                        row = run_row(spec, variant, workdir)
                except Exception as e:  # noqa: BLE001  (an internal error of irforge: the row says so)
                    traceback.print_exc(file=sys.stderr)
                    row = {"model": spec.name, "variant": variant.name, "convert": f"FAIL (internal): {first_line(e)}"}
                line = "| " + " | ".join(row.get(c, "-").replace("|", "/") for c in COLUMNS) + " |"
                lines.append(line)
                print(line, f"({time.time() - start:.0f} s)", file=sys.stderr, flush=True)
                print(line, flush=True)
                if args.out:
                    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
