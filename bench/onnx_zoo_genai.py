"""LLM ONNX files as onnxruntime's own tools write them, through irforge (outside CI).

onnxruntime-genai's model builder (`python -m onnxruntime_genai.models.builder`) turns a
Hugging Face folder into one ONNX decoder with com.microsoft GroupQueryAttention (rotary and
KV cache inside), SkipSimplifiedLayerNormalization and, at int4, MatMulNBits. This script
saves tiny random-weight LLaMA / Mistral / Qwen2 / Qwen3 / Phi-3 / Gemma / Gemma-2 / ...
models with transformers' `save_pretrained` (plus a word-level tokenizer, which the builder
needs), builds them at fp32 and int4 for the CPU execution provider, and checks two calls of
each at static shapes:

    prefill: input_ids [1, 5], attention_mask [1, 5], past [1, Nkv, 0, H]
    decode:  input_ids [1, 1], attention_mask [1, 7], past [1, Nkv, 6, H] (random)

Per row: irforge converts (`irforge.convert_model(..., input=shapes)`), OpenVINO on our IR
(f32), the reference interpreter and the cpu backend against onnxruntime (max |diff| over
every output / max(1, max |onnxruntime|)), and the fused attention ops against the layers.

    PYTHONPATH=$PWD:$PWD/bench /work/zoo-venv/bin/python bench/onnx_zoo_genai.py [--models llama,qwen2] [--precisions fp32,int4]

int4 rows are compared with onnxruntime on the same model with MatMulNBits' accuracy_level
4 set to 0 (irforge's numbers are those of the dequantized f32 weights); the note column
gives how far level 4's int8 activations are from that. Models of
onnxruntime.transformers.optimizer are not here: with transformers 5 and onnxruntime 1.32 its
attention fusions found nothing to fuse in the exports tried (docs/STATUS.md).
"""

from __future__ import annotations

import argparse
import runpy
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import zoo_torchvision  # noqa: F401  (before transformers: makes torchvision importable)

LAYERS = 2
VOCAB = 320  # unlike every hidden / intermediate size: the builder finds the LM head by its width


def _configs() -> dict[str, Callable[[], Any]]:
    import transformers as tf

    common = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=LAYERS, num_attention_heads=4,
                  num_key_value_heads=2, max_position_embeddings=64)
    return {
        "llama": lambda: tf.LlamaForCausalLM(tf.LlamaConfig(**common)),
        "llama-mha": lambda: tf.LlamaForCausalLM(tf.LlamaConfig(**{**common, "num_key_value_heads": 4})),
        "mistral": lambda: tf.MistralForCausalLM(tf.MistralConfig(**common, sliding_window=4)),
        "qwen2": lambda: tf.Qwen2ForCausalLM(tf.Qwen2Config(**common)),
        "qwen3": lambda: tf.Qwen3ForCausalLM(tf.Qwen3Config(**common, head_dim=16)),
        "phi3": lambda: tf.Phi3ForCausalLM(tf.Phi3Config(**common, pad_token_id=0, original_max_position_embeddings=64)),
        "gemma": lambda: tf.GemmaForCausalLM(tf.GemmaConfig(**common, head_dim=16)),
        "gemma2": lambda: tf.Gemma2ForCausalLM(tf.Gemma2Config(**common, head_dim=16, sliding_window=4)),
        "granite": lambda: tf.GraniteForCausalLM(tf.GraniteConfig(**common)),
        "olmo": lambda: tf.OlmoForCausalLM(tf.OlmoConfig(**common)),
        "smollm3": lambda: tf.SmolLM3ForCausalLM(tf.SmolLM3Config(**common, pad_token_id=0)),
        # partial rotary: onnxruntime wants cos_cache widths that are multiples of 8, so heads of 32
        "phi": lambda: tf.PhiForCausalLM(tf.PhiConfig(**{**common, "hidden_size": 128, "num_key_value_heads": 4})),
        "nemotron": lambda: tf.NemotronForCausalLM(tf.NemotronConfig(**{**common, "hidden_size": 128}, head_dim=32)),
        # encoder (com.microsoft Attention) + decoder (MultiHeadAttention: self with a cache,
        # cross with [B, N, L, H] keys); the builder fixes the audio at 3000 frames
        "whisper": lambda: tf.WhisperForConditionalGeneration(tf.WhisperConfig(
            vocab_size=VOCAB, d_model=64, encoder_layers=LAYERS, decoder_layers=LAYERS, encoder_attention_heads=4, decoder_attention_heads=4,
            encoder_ffn_dim=96, decoder_ffn_dim=96, num_mel_bins=80, max_source_positions=1500, max_target_positions=32, pad_token_id=0,
            decoder_start_token_id=1, bos_token_id=1, eos_token_id=2)),
    }


def save_tokenizer(folder: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{f"t{i}": i for i in range(3, VOCAB)}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>", bos_token="<s>", eos_token="</s>").save_pretrained(folder)


def build(name: str, precision: str, workdir: Path) -> Path:
    """The builder's model.onnx for a random-weight `name` at `precision`."""
    import torch

    hf_dir, out = workdir / f"{name}-hf", workdir / f"{name}-{precision}"
    if not hf_dir.exists():
        torch.manual_seed(0)
        model = _configs()[name]()
        with torch.no_grad():  # random, not the init's zeros / ones: every weight counts
            for parameter in model.parameters():
                if parameter.dim() == 1:
                    parameter.copy_(1 + 0.1 * torch.randn_like(parameter))
        model.save_pretrained(hf_dir)
        save_tokenizer(hf_dir)
        if name == "whisper":
            from transformers import WhisperFeatureExtractor

            WhisperFeatureExtractor(feature_size=80).save_pretrained(hf_dir)
    argv = sys.argv
    sys.argv = ["builder", "-i", str(hf_dir), "-o", str(out), "-p", precision, "-e", "cpu", "-c", str(workdir / "cache")]
    try:
        runpy.run_module("onnxruntime_genai.models.builder", run_name="__main__")
    finally:
        sys.argv = argv
    return out / ("decoder.onnx" if name == "whisper" else "model.onnx")


def feeds_for(path: Path, length: int, past: int) -> tuple[dict[str, np.ndarray], dict[str, list[int]]]:
    import json

    import onnx

    rng = np.random.default_rng(length * 100 + past)
    config = json.loads((path.parent / "genai_config.json").read_text())["model"]["decoder"]
    kv_heads, head = config.get("num_key_value_heads", config.get("num_attention_heads")), config["head_size"]
    feeds, shapes = {}, {}
    for value in onnx.load(str(path), load_external_data=False).graph.input:
        if value.name == "input_ids":
            ids = np.int32 if value.type.tensor_type.elem_type == onnx.TensorProto.INT32 else np.int64  # whisper: int32
            feeds[value.name] = rng.integers(3, VOCAB, (1, length)).astype(ids)
        elif value.name == "attention_mask":
            feeds[value.name] = np.ones((1, past + length), np.int64)
        elif value.name == "position_ids":
            feeds[value.name] = np.arange(past, past + length, dtype=np.int64)[None]
        elif value.name.startswith("past_key_values") or value.name.startswith(("past_key_self", "past_value_self")):
            feeds[value.name] = rng.standard_normal((1, kv_heads, past, head)).astype(np.float32)
        elif value.name.startswith(("past_key_cross", "past_value_cross")):  # the encoder's keys of 1500 frames
            feeds[value.name] = rng.standard_normal((1, kv_heads, 1500, head)).astype(np.float32)
        elif value.name == "audio_features":
            feeds[value.name] = rng.standard_normal((1, 80, 3000)).astype(np.float32)
        else:
            raise ValueError(f"unknown input {value.name}")
        shapes[value.name] = list(feeds[value.name].shape)
    return feeds, shapes


def max_error(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> float:
    worst = 0.0
    for name, expected in want.items():
        value = np.asarray(got[name])
        if value.shape != expected.shape:
            return float("inf")
        scale = max(1.0, float(np.abs(expected).max())) if expected.size else 1.0
        worst = max(worst, float(np.abs(value.astype(np.float64) - expected).max()) / scale if expected.size else 0.0)
    return worst


def first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return (text[:110] + "...") if len(text) > 110 else text


def f32_weights_copy(path: Path) -> Path | None:
    """The model with MatMulNBits' accuracy_level 4 set to 0 (None: no such node)."""
    import onnx

    model = onnx.load(str(path))
    changed = False
    for node in model.graph.node:
        for attribute in node.attribute:
            if node.op_type == "MatMulNBits" and attribute.name == "accuracy_level" and attribute.i == 4:
                attribute.i, changed = 0, True
    if not changed:
        return None
    copy = path.with_name(f"{path.stem}-level0.onnx")
    onnx.save(model, str(copy), save_as_external_data=True, location=f"{path.stem}-level0.onnx.data")
    return copy


def check(path: Path, feeds: dict[str, np.ndarray], shapes: dict[str, list[int]], layers: int, workdir: Path, tag: str) -> dict[str, str]:
    """convert / openvino / ref / cpu / attention cells of one call of one model."""
    import onnxruntime as ort
    import openvino as ov

    import irforge
    from irforge.backends.cpu import compile_model
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.backends.reference import run

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
    row: dict[str, str] = {}
    exact = f32_weights_copy(path)
    if exact is not None:
        # MatMulNBits at accuracy_level 4 quantizes the activations to int8 per block in
        # onnxruntime; irforge multiplies by the dequantized f32 weights (level 0/1's
        # numbers): compare with those, and note how far level 4 is from them
        session = ort.InferenceSession(str(exact), providers=["CPUExecutionProvider"])
        level0 = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
        row["note"] = f"onnxruntime level 4 vs 0: {max_error(want, level0):.1e}"
        want = level0
    try:
        model = irforge.convert_model(str(path), input=shapes)
    except Exception as e:  # noqa: BLE001
        row["convert"] = first_line(e)
        return row
    row["convert"] = "yes"
    fused = sum(op.name == "nn.scaled_dot_product_attention" for op in model.module.walk())
    row["attention"] = f"{fused}/{layers}"
    xml = workdir / f"{tag}.xml"

    def openvino() -> dict[str, np.ndarray]:
        write_ir_xml(model, xml)
        core = ov.Core()
        compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        results = compiled(feeds)
        return {name: np.asarray(results[out]) for out in compiled.outputs for name in out.get_names()}

    for stage, fn in (("openvino", openvino), ("ref", lambda: run(model, feeds)), ("cpu", lambda: compile_model(model)(feeds))):
        try:
            row[stage] = f"{max_error(fn(), want):.1e}"
        except Exception as e:  # noqa: BLE001
            row[stage] = first_line(e)
    return row


COLUMNS = ("model", "precision", "call", "convert", "openvino", "ref", "cpu", "attention", "note")
CALLS = {"prefill": (5, 0), "decode": (1, 6)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(_configs()))
    parser.add_argument("--precisions", default="fp32,int4")
    parser.add_argument("--workdir", type=Path, default=None, help="keep the built models here (default: a temporary folder)")
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown table here")
    args = parser.parse_args()
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for name in args.models.split(","):
            for precision in args.precisions.split(","):
                start = time.time()
                rows = []
                try:
                    path = build(name, precision, workdir)
                except Exception as e:  # noqa: BLE001
                    traceback.print_exc(file=sys.stderr)
                    rows.append({"model": name, "precision": precision, "call": "-", "convert": f"builder failed: {first_line(e)}"})
                else:
                    calls = [(call, path, length, past) for call, (length, past) in CALLS.items()]
                    if name == "whisper":
                        calls.insert(0, ("encoder", path.with_name("encoder.onnx"), 0, 0))
                    for call, model_path, length, past in calls:
                        feeds, shapes = feeds_for(model_path, length, past)
                        # whisper's decoder: self and cross attention per layer
                        blocks = 2 * LAYERS if name == "whisper" and call != "encoder" else LAYERS
                        try:
                            row = check(model_path, feeds, shapes, blocks, workdir, f"{name}-{precision}-{call}")
                        except Exception as e:  # noqa: BLE001
                            traceback.print_exc(file=sys.stderr)
                            row = {"convert": f"harness: {first_line(e)}"}
                        rows.append({"model": name, "precision": precision, "call": call, **row})
                for row in rows:
                    line = "| " + " | ".join(row.get(c, "-").replace("|", "/") for c in COLUMNS) + " |"
                    lines.append(line)
                    print(line, flush=True)
                print(f"({name} {precision}: {time.time() - start:.0f} s)", file=sys.stderr, flush=True)
                if args.out:
                    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
