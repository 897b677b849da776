"""CPU latency on a zoo of real architectures (full size, random weights): irforge's CPU
backend against onnxruntime and OpenVINO, with compile times and memory.

Outside CI (needs torch, transformers, onnxruntime and openvino: the zoo venv):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/zoo_latency.py [--models resnet50,vit_b16] [--runs 15] [--threads 1,2] [--out table.md]
    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/zoo_latency.py --check [--models ...]
    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/zoo_latency.py --wide [--runs 5 --threads 1]

`--check` only converts, compiles (1 thread), runs once and reports the max error against
the reference engine (no timing: fit for a loaded machine). The zoo is the models below plus
`zoo_more`'s (torchvision, transformers encoders, keras.applications); `--wide` runs the
further architectures of `zoo_latency_wide` instead (any row of either set can be named in
`--models` and in the bench/cpu_*.py scripts that take a zoo model). Keras rows are frozen
GraphDefs imported by irforge's TF importer, checked against TensorFlow's output, and
compared with OpenVINO's `convert_model` of the same .pb and onnxruntime on tf2onnx's
conversion of it.

Each model is exported by torch.onnx.export (TorchScript exporter, opset 17; ResNet-50 and
MobileNetV2 come from `irforge.testing.onnx_models`), imported by irforge with ir-convert's
default pipeline and compiled twice into a fresh cache directory: cold (every kernel
compiled) and cached (the whole program from the cache, once the cold compile's entry is on
disk: "entry write" is how long that write still took, 0 where the entry is small enough
to be written before compile returns). Then, per thread count, irforge,
onnxruntime (on the ONNX file) and OpenVINO (its own ONNX reader, f32) run alternately in
this one process, `--runs` rounds after two warm-up runs each; the table gives irforge's
median and its ratio to each engine's median (below 1: irforge is faster; on 1 thread also
the ratio of the medians of process CPU time per run, which other jobs on a shared host do
not inflate as they do wall time, and of their minima: "min /ort", the steadiest figure on
this host), irforge's max abs
error against onnxruntime relative to the largest |output| (random weights blow some outputs
up to ~1e12: an absolute figure says nothing there), the compile times, and memory: the model's weights, the packed
constants and arena of the compiled model, the peak RSS growth of the cold compile over the
process before it (VmHWM, reset through /proc/self/clear_refs) and the RSS the compiled model
keeps after a run. The machine may be shared: record `uptime` with the figures and read
ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import atexit
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).parent))
from onnx_zoo import HiddenState, conv_bn  # noqa: E402
from zoo_latency_wide import WIDE_KERAS, WIDE_TORCH  # noqa: E402
from zoo_more import KERAS_MODELS, TORCH_MODELS, freeze_keras, keras_onnx  # noqa: E402

MIB = 1 << 20


# -- CNN building blocks (torchvision's layouts, written here: no torchvision wheel) ------------
class SqueezeExcite(nn.Module):
    def __init__(self, c: int, squeeze: int, act: type[nn.Module], gate: type[nn.Module]) -> None:
        super().__init__()
        self.fc = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, squeeze, 1), act(), nn.Conv2d(squeeze, c, 1), gate())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.fc(x)


class MBConv(nn.Module):
    """MobileNetV2/V3 and EfficientNet's inverted residual (no expansion conv when hidden == i)."""

    def __init__(self, i: int, hidden: int, o: int, k: int, s: int, act: type[nn.Module], se: tuple | None = None) -> None:  # type: ignore[type-arg]
        super().__init__()
        layers: list[nn.Module] = [] if hidden == i else [conv_bn(i, hidden, 1, act=act)]
        layers.append(conv_bn(hidden, hidden, k, s, groups=hidden, act=act))
        if se is not None:
            layers.append(SqueezeExcite(hidden, *se))
        layers.append(conv_bn(hidden, o, 1, act=None))
        self.body = nn.Sequential(*layers)
        self.residual = s == 1 and i == o

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.body(x)
        return x + y if self.residual else y


def make_divisible(v: float, d: int = 8) -> int:
    new = max(d, int(v + d / 2) // d * d)
    return new + d if new < 0.9 * v else new


def mobilenet_v3_large() -> nn.Module:
    hs, re = nn.Hardswish, nn.ReLU
    cfg = [(3, 16, 16, False, re, 1), (3, 64, 24, False, re, 2), (3, 72, 24, False, re, 1), (5, 72, 40, True, re, 2),
           (5, 120, 40, True, re, 1), (5, 120, 40, True, re, 1), (3, 240, 80, False, hs, 2), (3, 200, 80, False, hs, 1),
           (3, 184, 80, False, hs, 1), (3, 184, 80, False, hs, 1), (3, 480, 112, True, hs, 1), (3, 672, 112, True, hs, 1),
           (5, 672, 160, True, hs, 2), (5, 960, 160, True, hs, 1), (5, 960, 160, True, hs, 1)]
    layers: list[nn.Module] = [conv_bn(3, 16, 3, 2, act=hs)]
    c = 16
    for k, hidden, o, se, act, s in cfg:
        layers.append(MBConv(c, hidden, o, k, s, act, (make_divisible(hidden // 4), nn.ReLU, nn.Hardsigmoid) if se else None))
        c = o
    layers += [conv_bn(c, 960, 1, act=hs), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(960, 1280), hs(), nn.Linear(1280, 1000)]
    return nn.Sequential(*layers).eval()


def efficientnet_b0() -> nn.Module:
    silu = nn.SiLU
    cfg = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3), (6, 5, 1, 80, 112, 3),
           (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1)]
    layers: list[nn.Module] = [conv_bn(3, 32, 3, 2, act=silu)]
    for expand, k, s, i, o, n in cfg:
        for j in range(n):
            cin = i if j == 0 else o
            layers.append(MBConv(cin, cin * expand, o, k, s if j == 0 else 1, silu, (max(1, cin // 4), silu, nn.Sigmoid)))
    layers += [conv_bn(320, 1280, 1, act=silu), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1280, 1000)]
    return nn.Sequential(*layers).eval()


class Bottleneck(nn.Module):
    def __init__(self, i: int, planes: int, s: int, groups: int = 1, base: int = 64, dilation: int = 1) -> None:
        super().__init__()
        width = int(planes * base / 64) * groups
        self.body = nn.Sequential(
            conv_bn(i, width, 1),
            nn.Sequential(nn.Conv2d(width, width, 3, s, dilation, dilation, groups, bias=False), nn.BatchNorm2d(width), nn.ReLU()),
            conv_bn(width, planes * 4, 1, act=None))
        self.skip = conv_bn(i, planes * 4, 1, s, act=None) if s != 1 or i != planes * 4 else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.skip(x))


def resnet_stages(groups: int = 1, base: int = 64, dilate_last: bool = False) -> list[nn.Module]:
    layers: list[nn.Module] = [conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1)]
    c = 64
    for index, (planes, blocks) in enumerate(((64, 3), (128, 4), (256, 6), (512, 3))):
        dilated = dilate_last and index == 3
        for j in range(blocks):
            stride = 2 if j == 0 and index > 0 and not dilated else 1
            layers.append(Bottleneck(c, planes, stride, groups, base, 2 if dilated else 1))
            c = planes * 4
    return layers


def resnext50() -> nn.Module:
    return nn.Sequential(*resnet_stages(32, 4), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000)).eval()


class Deeplab(nn.Module):
    """DeepLabV3's shape: a ResNet-50 at output stride 16 (last stage dilated), ASPP with
    rates 6/12/18 and image pooling, a 1x1 classifier, bilinear upsampling to the input."""

    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Sequential(*resnet_stages(dilate_last=True))
        self.branches = nn.ModuleList([conv_bn(2048, 256, 1)] + [
            nn.Sequential(nn.Conv2d(2048, 256, 3, 1, r, r, bias=False), nn.BatchNorm2d(256), nn.ReLU()) for r in (6, 12, 18)])
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), conv_bn(2048, 256, 1))
        self.project = conv_bn(5 * 256, 256, 1)
        self.head = nn.Sequential(conv_bn(256, 256, 3), nn.Conv2d(256, 21, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = self.backbone(x)
        pooled = nn.functional.interpolate(self.pool(f), size=f.shape[-2:], mode="bilinear", align_corners=False)
        y = self.head(self.project(torch.cat([b(f) for b in self.branches] + [pooled], 1)))
        return nn.functional.interpolate(y, size=x.shape[-2:], mode="bilinear", align_corners=False)


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c))
        self.gamma = nn.Parameter(torch.full((c,), 1e-6).uniform_(0.1, 1.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.mlp(self.norm(self.dw(x).permute(0, 2, 3, 1))) * self.gamma
        return x + y.permute(0, 3, 1, 2)


def convnext_tiny() -> nn.Module:
    dims, depths = (96, 192, 384, 768), (3, 3, 9, 3)
    layers: list[nn.Module] = [nn.Conv2d(3, 96, 4, 4), LayerNorm2d(96, eps=1e-6)]
    for index, (c, n) in enumerate(zip(dims, depths)):
        if index:
            layers += [LayerNorm2d(dims[index - 1], eps=1e-6), nn.Conv2d(dims[index - 1], c, 2, 2)]
        layers += [ConvNeXtBlock(c) for _ in range(n)]
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.LayerNorm(768, eps=1e-6), nn.Linear(768, 1000)]
    return nn.Sequential(*layers).eval()


def vit_b16() -> nn.Module:
    import zoo_torchvision  # noqa: F401  (transformers imports the zoo venv's torchvision, unloadable without it)
    import transformers as tf

    model = tf.ViTModel(tf.ViTConfig(), add_pooling_layer=False)  # the defaults are ViT-B/16 at 224
    model.config._attn_implementation = "sdpa"
    return HiddenState(model.eval())


def bert_base() -> nn.Module:
    import zoo_torchvision  # noqa: F401  (transformers imports the zoo venv's torchvision, unloadable without it)
    import transformers as tf

    model = tf.BertModel(tf.BertConfig(), add_pooling_layer=False)  # bert-base-uncased's shape
    model.config._attn_implementation = "sdpa"
    return HiddenState(model.eval())


class MaskedFillEncoder(nn.Module):
    """BERT-base's encoder (12 layers, 768 wide, 12 heads) with transformers 4's DistilBERT
    attention: scores.masked_fill(padding, float32's min) per layer, from the token mask
    (transformers 5's exports add one additive mask instead: no Where per layer)."""

    def __init__(self, layers: int = 12, width: int = 768, heads: int = 12) -> None:
        super().__init__()
        self.embed, self.heads = nn.Embedding(30522, width), heads
        self.layers = nn.ModuleList(nn.ModuleDict({"qkv": nn.Linear(width, 3 * width), "out": nn.Linear(width, width),
                                                   "norm1": nn.LayerNorm(width), "norm2": nn.LayerNorm(width),
                                                   "up": nn.Linear(width, 4 * width), "down": nn.Linear(4 * width, width)})
                                    for _ in range(layers))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        x = self.embed(input_ids)
        b, s, w = x.shape
        padded = (attention_mask == 0).view(b, 1, 1, s)
        for layer in self.layers:
            q, k, v = (t.view(b, s, self.heads, -1).transpose(1, 2) for t in layer["qkv"](x).chunk(3, dim=-1))
            scores = (q / (w // self.heads) ** 0.5) @ k.transpose(-1, -2)
            scores = scores.masked_fill(padded, torch.finfo(scores.dtype).min)
            a = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, w)
            x = layer["norm1"](x + layer["out"](a))
            x = layer["norm2"](x + layer["down"](nn.functional.gelu(layer["up"](x))))
        return x


def image(size: int = 224) -> dict[str, np.ndarray]:
    return {"pixel_values": np.random.default_rng(0).standard_normal((1, 3, size, size)).astype(np.float32)}


def tokens(length: int = 128) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    mask = np.ones((1, length), np.int64)
    mask[0, length - 16:] = 0
    return {"input_ids": rng.integers(0, 30000, (1, length)).astype(np.int64), "attention_mask": mask}


def onnx_builder(name: str) -> Callable[[Path], dict[str, np.ndarray]]:
    def write(path: Path) -> dict[str, np.ndarray]:
        import onnx

        from irforge.testing import onnx_models

        proto = (onnx_models.resnet((3, 4, 6, 3), 64, 224, 1000, bottleneck=True) if name == "resnet50"
                 else onnx_models.mobilenet_v2(onnx_models.MOBILENET_V2_FULL, 32, 224, 1000))
        onnx.save(proto, str(path))
        return {proto.graph.input[0].name: image()["pixel_values"]}

    return write


def torch_builder(build: Callable[[], nn.Module], feeds: Callable[[], dict[str, np.ndarray]]) -> Callable[[Path], dict[str, np.ndarray]]:
    def write(path: Path) -> dict[str, np.ndarray]:
        torch.manual_seed(0)
        model, inputs = build(), feeds()
        with torch.no_grad():
            torch.onnx.export(model, tuple(torch.from_numpy(a) for a in inputs.values()), str(path),
                              input_names=list(inputs), dynamo=False, opset_version=17)
        return inputs

    return write


ZOO: dict[str, Callable[[Path], dict[str, np.ndarray]]] = {
    "resnet50": onnx_builder("resnet50"),
    "mobilenet_v2": onnx_builder("mobilenet_v2"),
    "mobilenet_v3_large": torch_builder(mobilenet_v3_large, image),
    "efficientnet_b0": torch_builder(efficientnet_b0, image),
    "resnext50_32x4d": torch_builder(resnext50, image),
    "deeplab_resnet50_os16": torch_builder(lambda: Deeplab().eval(), image),
    "convnext_tiny": torch_builder(convnext_tiny, image),
    "vit_b16": torch_builder(vit_b16, image),
    "bert_base_seq128": torch_builder(bert_base, tokens),
    **{name: torch_builder(build, feeds) for name, (build, feeds) in TORCH_MODELS.items()},
}
"""ONNX models: `ZOO[name](path)` writes the .onnx and returns the feeds."""
MODELS = [*ZOO, *KERAS_MODELS]
"""Every row: ZOO's ONNX models, then the frozen keras.applications graphs (`zoo_more`),
whose reference is TensorFlow's output; onnxruntime runs tf2onnx's conversion of them."""
WIDE_MODELS = [*WIDE_TORCH, *WIDE_KERAS]
"""`--wide`: the further architectures of `zoo_latency_wide` (not what the backend was tuned on)."""
ZOO.update({name: torch_builder(build, feeds) for name, (build, feeds) in WIDE_TORCH.items()})
ZOO["masked_fill_bert_seq128"] = torch_builder(lambda: MaskedFillEncoder().eval(), tokens)  # by name only (cpu_knob_ab): no row
KERAS_MODELS.update(WIDE_KERAS)  # zoo_more's dict: freeze_keras reads it (after MODELS: rows only under --wide)


def scratch(prefix: str) -> Path:
    """A fresh temporary folder removed when the process exits: each bench run writes a model
    export (and ONNX weights) of up to 0.6 GB there, and runs left behind filled the disk."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def prepare(name: str, workdir: Path) -> tuple[object, dict[str, np.ndarray], Path]:
    """irforge's model (imported, default pipeline applied), the feeds and the model file."""
    from irforge.frontends.onnx import import_onnx
    from irforge.frontends.tf.importer import import_tf
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    if name in KERAS_MODELS:
        path = workdir / f"{name}.pb"
        feeds, want = freeze_keras(name, path)
        np.save(workdir / f"{name}.want.npy", want)
        model = import_tf(str(path))
    else:
        path = workdir / f"{name}.onnx"
        feeds = ZOO[name](path)
        model = import_onnx(str(path))
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    return model, feeds, path


def max_error(got: dict[str, np.ndarray], want: list[np.ndarray]) -> tuple[float, float]:
    """Max abs error over the outputs, and it relative to the largest |reference|."""
    pairs = [(np.asarray(g, np.float64).reshape(np.shape(w)), np.asarray(w, np.float64)) for g, w in zip(got.values(), want)]
    worst = max(float(np.max(np.abs(g - w))) for g, w in pairs)
    return worst, worst / max(max(float(np.max(np.abs(w))) for _, w in pairs), 1e-30)


def openvino_model(path: Path) -> object:
    import openvino as ov

    return ov.convert_model(str(path)) if path.suffix == ".pb" else ov.Core().read_model(str(path))


def check(name: str, workdir: Path) -> dict[str, str]:
    """Convert, compile (1 thread), run once; max error against the reference engine
    (onnxruntime for ONNX rows, TensorFlow for Keras rows, OpenVINO's own error beside it)."""
    import openvino as ov

    from irforge.backends.cpu import compile_model

    row = {"model": name}
    start = time.perf_counter()
    model, feeds, path = prepare(name, workdir)
    row["convert s"] = f"{time.perf_counter() - start:.0f}"
    start = time.perf_counter()
    compiled = compile_model(model, threads=1, cache_dir=workdir / f"{name}-cache")
    row["compile s"] = f"{time.perf_counter() - start:.0f}"
    got = compiled(feeds)
    row["host steps"] = host_steps(compiled)
    compiled.close()
    if path.suffix == ".pb":
        want = [np.load(workdir / f"{name}.want.npy")]
        row["reference"] = "tensorflow"
        ov_compiled = ov.Core().compile_model(openvino_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1})
        row["openvino rel"] = f"{max_error(dict(ov_compiled(list(feeds.values()))), want)[1]:.1e}"
        try:
            import onnxruntime as ort

            session = ort.InferenceSession(str(keras_onnx(path)), providers=["CPUExecutionProvider"])
            row["onnxruntime rel"] = f"{max_error(dict(enumerate(session.run(None, {session.get_inputs()[0].name: feeds['x']}))), want)[1]:.1e}"
        except Exception as e:  # noqa: BLE001 (tf2onnx's failure is a column, not the row's)
            row["onnxruntime rel"] = f"tf2onnx fails: {type(e).__name__}"
    else:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        want = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]).run(None, feeds)
        row["reference"] = "onnxruntime"
    absolute, relative = max_error(got, want)
    row["max abs"], row["rel"] = f"{absolute:.1e}", f"{relative:.1e}"
    return row


# -- measuring ----------------------------------------------------------------------------------
def rss(field: str = "VmRSS") -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def reset_peak() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    except OSError:
        pass


def alternate(engines: dict[str, Callable[[], object]], runs: int) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """Median wall seconds of each engine, run in turn (one run each per round), and the
    median and minimum CPU seconds of this process over each run (on a shared host, other
    jobs stretch the wall time of whichever engine they preempt; they do not add to its CPU
    time, but this host's slow spells, `cpu_slow_spells.py`, stretch CPU time too, and a
    median can land in one: the minimum rarely does)."""
    times: dict[str, list[float]] = {name: [] for name in engines}
    cpu: dict[str, list[float]] = {name: [] for name in engines}
    for fn in engines.values():
        fn()
        fn()
    for _ in range(runs):
        for name, fn in engines.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return ({name: statistics.median(t) for name, t in times.items()}, {name: statistics.median(t) for name, t in cpu.items()},
            {name: min(t) for name, t in cpu.items()})


def host_steps(compiled: object) -> str:
    """The ops the compiled model runs as Python host steps (numpy, one thread), counted."""
    from collections import Counter

    steps = Counter(step.op_name for step in compiled._executable.program.host_steps)  # type: ignore[attr-defined]
    return " ".join(f"{op}x{n}" for op, n in sorted(steps.items())) or "-"


def bench(name: str, workdir: Path, runs: int, threads: list[int]) -> dict[str, str]:
    import onnxruntime as ort
    import openvino as ov

    from irforge.backends.cpu import compile_model, program_cache

    row = {"model": name}
    model, feeds, path = prepare(name, workdir)
    keras = path.suffix == ".pb"
    cache = workdir / f"{name}-cache"
    before = rss()
    reset_peak()
    cold = compile_model(model, threads=threads[0], cache_dir=cache)
    peak = rss("VmHWM") - before
    # the cold compile writes its program-cache entry in a thread; a cached compile right
    # after would wait for it (BERT-base: 1-2.5 s for 414 MiB), which a later process never does
    write_seconds = program_cache.wait_for_writes()
    cached = compile_model(model, threads=threads[0], cache_dir=cache)
    got = cached(feeds)
    cold_seconds = cold.stats.seconds
    cold.close()
    del cold
    sessions = {}
    ort_missing = ""
    try:
        ort_path = keras_onnx(path) if keras else path
        for t in threads:
            options = ort.SessionOptions()
            options.intra_op_num_threads, options.inter_op_num_threads = t, 1
            sessions[t] = ort.InferenceSession(str(ort_path), options, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 (tf2onnx's failure is two columns, not the row's: ConvNeXtTiny)
        if not keras:
            raise
        sessions, ort_missing = {}, f"tf2onnx fails: {type(e).__name__}"
    if keras:
        ort_feeds = {sessions[threads[0]].get_inputs()[0].name: feeds["x"]} if sessions else {}
    else:
        ort_feeds = feeds
    want = [np.load(workdir / f"{name}.want.npy")] if keras else sessions[threads[0]].run(None, feeds)
    row["error"] = f"{max_error(got, want)[1]:.1e}"
    s = cached.stats
    row["compile cold"] = f"{cold_seconds:.1f} s"
    row["compile cached"] = f"{s.seconds:.2f} s" + ("" if s.program_cached else " (not cached)")
    row["entry write"] = f"{write_seconds:.2f} s"
    row["weights MiB"] = f"{s.weight_bytes / MIB:.0f}"
    row["packed+arena MiB"] = f"{s.constant_bytes / MIB:.0f}+{s.arena_bytes / MIB:.0f}"
    row["cold peak +MiB"] = f"{peak / MIB:.0f}"
    row["host steps"] = host_steps(cached)
    core = ov.Core()
    ov_model = openvino_model(path)
    ov_feeds = list(feeds.values()) if keras else feeds  # OpenVINO names a TF input otherwise
    for t in threads:
        mine = cached if t == threads[0] else compile_model(model, threads=t, cache_dir=cache)
        ov_compiled = core.compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": t})
        request = ov_compiled.create_infer_request()
        engines = {"irforge": lambda: mine(feeds), "openvino": lambda: request.infer(ov_feeds)}
        if t in sessions:
            engines["onnxruntime"] = lambda session=sessions[t]: session.run(None, ort_feeds)
        medians, cpu, cpu_min = alternate(engines, runs)
        row[f"{t}T ms"] = f"{medians['irforge'] * 1e3:.1f}"
        row[f"{t}T /ort"] = f"{medians['irforge'] / medians['onnxruntime']:.2f}" if t in sessions else ort_missing
        row[f"{t}T /ov"] = f"{medians['irforge'] / medians['openvino']:.2f}"
        if t == 1:  # one thread each: the process's CPU time is the engine's work
            row["1T cpu /ort"] = f"{cpu['irforge'] / cpu['onnxruntime']:.2f}" if t in sessions else ort_missing
            row["1T cpu /ov"] = f"{cpu['irforge'] / cpu['openvino']:.2f}"
            row["1T min /ort"] = f"{cpu_min['irforge'] / cpu_min['onnxruntime']:.2f}" if t in sessions else ort_missing
            row["1T min /ov"] = f"{cpu_min['irforge'] / cpu_min['openvino']:.2f}"
        if mine is not cached:
            mine.close()
    row["resident +MiB"] = f"{(rss() - before) / MIB:.0f}"
    cached.close()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", help="comma-separated rows (default: the zoo, or the wide set with --wide)")
    parser.add_argument("--wide", action="store_true", help="the wide set (zoo_latency_wide.py) by default instead of the zoo")
    parser.add_argument("--check", action="store_true",
                        help="only convert, compile, run once and report the max error against the reference engine (no timing)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--out", help="also write the table (markdown) here")
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    names = args.models.split(",") if args.models else WIDE_MODELS if args.wide else MODELS
    rows = []
    with tempfile.TemporaryDirectory(prefix="zoo-latency-") as tmp:
        for name in names:
            start = time.perf_counter()
            try:
                rows.append(check(name, Path(tmp)) if args.check else bench(name, Path(tmp), args.runs, threads))
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                rows.append({"model": name, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}"})
            print(f"{name}: {rows[-1]} ({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(row.get(c, "") for c in columns) + " |" for row in rows]
    print("\n".join(lines))
    summary = ratio_medians(rows)
    if summary:
        lines += ["", "medians over the rows: " + ", ".join(f"{c} {m:.3f} ({n} rows)" for c, (m, n) in summary.items())]
        print(lines[-1])
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    bad = [f"{row['model']} ({row.get('error', row.get('rel'))})" for row in rows
           if not error_ok(row.get("error", row.get("rel", "")))]
    if bad:
        # A wrong number hides in a 38-row table (FCN-ResNet50's 9.9e-01 went unseen for a
        # session): say it last and fail the run.
        print(f"WRONG OR FAILED ({len(bad)}): " + "; ".join(bad), file=sys.stderr)
        sys.exit(1)


def ratio_medians(rows: list[dict[str, str]]) -> dict[str, tuple[float, int]]:
    """Per ratio column (`/ort`, `/ov`), the median over the rows that hold a number, and their count."""
    out = {}
    for column in dict.fromkeys(k for row in rows for k in row if k.endswith(("/ort", "/ov"))):
        values = []
        for row in rows:
            try:
                values.append(float(row.get(column, "")))
            except ValueError:
                continue
        if values:
            out[column] = (statistics.median(values), len(values))
    return out


WRONG_ABOVE = 1e-3  # relative error; every correct row of the zoo reads <= 2e-5


def error_ok(error: str) -> bool:
    """Whether a row's error column is a number under `WRONG_ABOVE` (not a failure)."""
    try:
        return float(error) <= WRONG_ABOVE
    except ValueError:
        return False


if __name__ == "__main__":
    main()
