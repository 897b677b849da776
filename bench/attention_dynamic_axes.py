"""torch's SDPA exported with dynamic axes: tiny BERT and GPT-2 (transformers, random
weights, `_attn_implementation="sdpa"`) through TorchScript with `dynamic_axes` and dynamo
with `dynamic_shapes` on batch and sequence, and torchvision's ViT with a dynamic batch;
converted without input shapes. Per file: the
fused `nn.scaled_dot_product_attention` ops of the 2 blocks, OpenVINO on irforge's IR (f32)
and the reference interpreter against onnxruntime (max abs error), and the CPU backend with
the input shapes set (it compiles static shapes only).

    PYTHONPATH=$PWD:$PWD/bench /work/zoo-venv/bin/python bench/attention_dynamic_axes.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx_zoo_hf3  # noqa: F401  (hides a torchaudio transformers cannot import)
import torch
from onnx_zoo import max_error, run_openvino


class Hidden(torch.nn.Module):
    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids, attention_mask=mask).last_hidden_state


def models() -> dict[str, torch.nn.Module]:
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model

    torch.manual_seed(0)
    bert = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, vocab_size=100)
    gpt2 = GPT2Config(n_embd=32, n_layer=2, n_head=4, vocab_size=100)
    for config in (bert, gpt2):
        config._attn_implementation = "sdpa"
    return {"bert": Hidden(BertModel(bert)).eval(), "gpt2": Hidden(GPT2Model(gpt2)).eval()}


def vit() -> torch.nn.Module:
    """torchvision's ViT (nn.MultiheadAttention: heads folded into the batch), its zero-
    initialised head redrawn (else the output is all zeros)."""
    from torchvision.models.vision_transformer import VisionTransformer

    torch.backends.mha.set_fastpath_enabled(False)  # (the fused kernel TorchScript cannot write)
    torch.manual_seed(0)
    model = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64, num_classes=10).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1 and not p.any():
                p.normal_(0, 0.02)
    return model


def export(model: torch.nn.Module, exporter: str, feeds: tuple[torch.Tensor, ...], path: Path) -> None:
    names = ["ids", "mask"][:len(feeds)] if len(feeds) == 2 else ["x"]
    axes = [{0: "batch", 1: "sequence"} if name != "x" else {0: "batch"} for name in names]
    if exporter == "dynamo":
        dims = tuple({axis: torch.export.Dim(label) for axis, label in a.items()} for a in axes)
        torch.onnx.export(model, feeds, str(path), input_names=names, dynamo=True, opset_version=18, dynamic_shapes=dims)
    else:
        torch.onnx.export(model, feeds, str(path), input_names=names, dynamo=False, opset_version=17,
                          dynamic_axes=dict(zip(names, axes)))


def row(path: Path, feeds: dict[str, np.ndarray]) -> str:
    import onnxruntime as ort
    import openvino as ov

    from irforge.backends.cpu import compile_model
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.backends.reference import run
    from irforge.frontends.onnx import import_onnx
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    model = import_onnx(str(path), None)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    fused = [op.name for op in model.func.body.block.ops].count("nn.scaled_dot_product_attention")
    openvino = max_error(run_openvino(model, path.with_suffix(".xml"), feeds, write_ir_xml, ov), want)
    ref = max_error(run(model, feeds), want)
    shaped = import_onnx(str(path), {n: a.shape for n, a in feeds.items()})
    apply_pipeline(shaped.module, DEFAULT_PIPELINE)
    cpu = max_error(compile_model(shaped)(feeds), want)
    return f"{fused}/2 | {openvino:.1e} | {ref:.1e} | {cpu:.1e}"


def main() -> None:
    ids = torch.randint(0, 100, (2, 7), generator=torch.Generator().manual_seed(0))
    mask = torch.ones(2, 7, dtype=torch.long)
    mask[1, 5:] = 0
    pixels = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    rows = [(name, model, (ids, mask)) for name, model in models().items()] + [("vit (dynamic batch)", vit(), (pixels,))]
    print("| model | exporter | attention | openvino | ref | cpu (shapes set) |\n|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, inputs in rows:
            feeds = {"ids": ids.numpy(), "mask": mask.numpy()} if len(inputs) == 2 else {"x": pixels.numpy()}
            for exporter in ("torchscript", "dynamo"):
                path = Path(tmp) / f"{name.split()[0]}-{exporter}.onnx"
                with torch.no_grad():
                    export(model, exporter, inputs, path)
                print(f"| {name} | {exporter} | {row(path, feeds)} |", flush=True)


if __name__ == "__main__":
    main()
