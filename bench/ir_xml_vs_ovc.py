"""Benchmark: ONNX -> OpenVINO IR with `ir-convert --emit xml` against OpenVINO's own `ovc`.

On a ResNet-50-size ONNX model built here (25.6 M parameters, ~102 MB of weights), each
converter runs as its own process under /usr/bin/time -v (wall time and peak RSS of that
process alone), both writing FP32 weights (ovc with --compress_to_fp16=False), then both
writing FP16. Prints the figures and irforge/ovc ratios, and a layer-type histogram of
both IRs for the test models (irforge with its default pipeline).

    python bench/ir_xml_vs_ovc.py [--keep DIR] [--skip-resnet50]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

VENV_BIN = Path(sys.executable).parent


def timed(command: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of `command`, measured by GNU time."""
    result = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stderr[-2000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", result.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr)
    assert wall and rss, result.stderr
    seconds = int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
    return seconds, int(rss.group(1)) / 1024


def converters(onnx_path: Path, out: Path, fp16: bool) -> dict[str, list[str]]:
    tag = "fp16" if fp16 else "fp32"
    ours = [str(VENV_BIN / "ir-convert"), "--input_model", str(onnx_path), "--emit", "xml", "-o", str(out / f"irforge_{tag}")]
    if fp16:
        ours += ["--data_type", "FP16"]
    ovc = [str(VENV_BIN / "ovc"), str(onnx_path), "--output_model", str(out / f"ovc_{tag}" / onnx_path.with_suffix(".xml").name), f"--compress_to_fp16={fp16}"]
    return {"irforge": ours, "ovc": ovc}


def compare_resnet50(folder: Path) -> None:
    import onnx

    from irforge.testing.onnx_models import resnet

    path = folder / "resnet50.onnx"
    model = resnet((3, 4, 6, 3), 64, 224, 1000, bottleneck=True)
    onnx.save_model(model, str(path))
    del model
    print(f"model: ResNet-50 shapes, ONNX file {path.stat().st_size / 1e6:.1f} MB")
    for fp16 in (False, True):
        figures = {name: timed(command) for name, command in converters(path, folder, fp16).items()}
        tag = "FP16" if fp16 else "FP32"
        for name, (seconds, mb) in figures.items():
            print(f"  {tag} {name:8} {seconds:6.2f} s  peak RSS {mb:7.0f} MB")
        (ts, tm), (os_, om) = figures["irforge"], figures["ovc"]
        print(f"  {tag} ratio irforge/ovc: time {ts / os_:.2f}x, peak memory {tm / om:.2f}x")
        sizes = {n: sum(f.stat().st_size for f in (folder / f"{n}_{tag.lower()}").glob("*.bin")) for n in figures}
        print(f"  {tag} .bin sizes: irforge {sizes['irforge'] / 1e6:.1f} MB, ovc {sizes['ovc'] / 1e6:.1f} MB")


def compare_histograms(folder: Path) -> None:
    import onnx
    import openvino as ov

    from irforge.backends.ir_xml import write_ir_xml
    from irforge.frontends.onnx import import_onnx
    from irforge.passes import apply_pipeline
    from irforge.testing import onnx_models
    from irforge.testing.ir_stats import layer_histogram
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    print(f"layer types (without Parameter/Result/Const/Convert); irforge pipeline {DEFAULT_PIPELINE}")
    for name in ("resnet", "mobilenet_v2", "vgg", "transformer_encoder"):
        proto = getattr(onnx_models, name)()
        onnx.save_model(proto, str(folder / f"{name}.onnx"))
        ov.save_model(ov.convert_model(str(folder / f"{name}.onnx")), str(folder / f"{name}_ovc.xml"))
        model = import_onnx(proto)
        apply_pipeline(model.module, DEFAULT_PIPELINE)
        write_ir_xml(model, folder / f"{name}_irforge.xml")
        ours = layer_histogram((folder / f"{name}_irforge.xml").read_text())
        theirs = layer_histogram((folder / f"{name}_ovc.xml").read_text())
        print(f"  {name}: irforge {sum(ours.values())} layers, ovc {sum(theirs.values())}")
        for kind in sorted(set(ours) | set(theirs)):
            if ours[kind] != theirs[kind]:
                print(f"    {kind:28} irforge {ours[kind]:3}  ovc {theirs[kind]:3}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="write the models and IRs into this folder and keep them")
    parser.add_argument("--skip-resnet50", action="store_true", help="only the layer histograms")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    if not args.skip_resnet50:
        compare_resnet50(folder)
    compare_histograms(folder)


if __name__ == "__main__":
    main()
