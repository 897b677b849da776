"""MXNet zoo check: models written by real MXNet, converted by irforge, run against MXNet.

Two steps in two Python environments (MXNet 1.9.1 needs numpy < 1.24, irforge does not):

    # 1. with MXNet (a separate venv: pip install mxnet==1.9.1 "numpy<1.24" requests "graphviz<0.9")
    MXNET_MKLDNN_ENABLED=0 /tmp/mxvenv/bin/python bench/mxnet_zoo.py make /tmp/mxzoo
    # 2. with irforge
    python bench/mxnet_zoo.py check /tmp/mxzoo [--devices ref,cpu,openvino]

`make` exports gluon model-zoo architectures (random weights, randomised BatchNorm
statistics, no download) with `HybridBlock.export` (NAME-symbol.json + NAME-0000.params
with arg:/aux: names), a few symbol-API nets (SSD head with MultiBoxPrior/MultiBoxDetection,
Deconvolution with adj/target_shape, LeakyReLU variants, Reshape codes) saved with
`mx.model.save_checkpoint`, one gluon `save_parameters` file, and MXNet's outputs for a
seeded input. `check` converts each with ir-convert's frontend and prints the error of
each device against MXNet as a table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

GLUON = ["resnet18_v1", "resnet50_v2", "mobilenet1.0", "mobilenetv2_1.0", "squeezenet1.0", "squeezenet1.1",
         "densenet121", "vgg11_bn", "alexnet", "inceptionv3"]  # fmt: skip


def make(out: Path) -> None:
    import os

    os.environ.setdefault("MXNET_MKLDNN_ENABLED", "0")  # oneDNN refuses some Deconvolution geometries
    import mxnet as mx
    from mxnet.gluon.model_zoo import vision

    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    index = {}
    for name in GLUON:
        size = 299 if name == "inceptionv3" else 224
        net = vision.get_model(name, pretrained=False)
        net.initialize(mx.init.Xavier(magnitude=2.0))
        net.hybridize()
        x = mx.nd.array(rng.standard_normal((1, 3, size, size)).astype(np.float32))
        net(x)  # shapes the parameters
        for pname, param in net.collect_params().items():
            shape = param.shape
            if pname.endswith("running_var"):
                param.set_data(mx.nd.array(rng.uniform(0.5, 2.0, shape)))
            elif pname.endswith(("running_mean", "beta")):
                param.set_data(mx.nd.array(rng.uniform(-0.3, 0.3, shape)))
            elif pname.endswith("gamma"):
                param.set_data(mx.nd.array(rng.uniform(0.5, 1.5, shape)))
        y = net(x)
        stem = name.replace(".", "_")
        net.export(str(out / stem), epoch=0)
        np.savez(out / f"{stem}.npz", data=x.asnumpy(), out=y.asnumpy())
        index[stem] = {"params": f"{stem}-0000.params", "shape": [1, 3, size, size], "outputs": [json.loads(open(out / f"{stem}-symbol.json").read())["nodes"][-1]["name"]]}
    index.update(symbol_nets(mx, out, rng))
    (out / "index.json").write_text(json.dumps(index, indent=1))
    print(f"wrote {len(index)} models to {out}")


def save_symbol_net(mx, out: Path, name: str, sym, shape, rng, arg_init=None) -> dict:  # type: ignore[no-untyped-def]
    """Random weights for `sym`, saved with save_checkpoint; MXNet's outputs."""
    arg_shapes, _, aux_shapes = sym.infer_shape(data=shape)
    args = {n: mx.nd.array(rng.standard_normal(s).astype(np.float32) * 0.3) for n, s in zip(sym.list_arguments(), arg_shapes) if n != "data"}
    auxs = {n: mx.nd.array(rng.uniform(0.5, 1.5, s).astype(np.float32)) for n, s in zip(sym.list_auxiliary_states(), aux_shapes)}
    for key, value in (arg_init or {}).items():
        args[key] = mx.nd.array(value)
    x = mx.nd.array(rng.standard_normal(shape).astype(np.float32))
    exe = sym.bind(mx.cpu(), {"data": x, **args}, aux_states=auxs, grad_req="null")
    outs = [o.asnumpy() for o in exe.forward(is_train=False)]
    mx.model.save_checkpoint(str(out / name), 0, sym, args, auxs)
    np.savez(out / f"{name}.npz", data=x.asnumpy(), **{f"out{i}": o for i, o in enumerate(outs)})
    return {name: {"params": f"{name}-0000.params", "shape": list(shape), "outputs": [n.rsplit("_output", 1)[0] for n in sym.list_outputs()]}}


def symbol_nets(mx, out: Path, rng) -> dict:  # type: ignore[no-untyped-def]
    S = mx.sym
    nets = {}
    data = S.var("data")
    # SSD head: the detections are compared as a set by `check`
    feat = S.Activation(S.Convolution(data, kernel=(3, 3), pad=(1, 1), stride=(2, 2), num_filter=16, name="conv1"), act_type="relu")
    feat = S.L2Normalization(feat, mode="channel", name="norm")
    anchors = S.contrib.MultiBoxPrior(feat, sizes=(0.2, 0.35), ratios=(1, 2, 0.5), steps=(1 / 16, 1 / 16), clip=False, name="anchors")
    anchors = S.Reshape(S.Flatten(anchors), shape=(0, -1, 4), name="anchors_r")
    cls = S.Convolution(feat, kernel=(3, 3), pad=(1, 1), num_filter=4 * 3, name="cls")
    cls = S.transpose(S.Reshape(S.transpose(cls, axes=(0, 2, 3, 1)), shape=(0, -1, 3)), axes=(0, 2, 1), name="cls_t")
    cls_prob = S.SoftmaxActivation(cls, mode="channel", name="cls_prob")
    loc = S.Flatten(S.transpose(S.Convolution(feat, kernel=(3, 3), pad=(1, 1), num_filter=4 * 4, name="loc"), axes=(0, 2, 3, 1)), name="loc_flat")
    cls_weight = rng.standard_normal((12, 16, 3, 3)).astype(np.float32)
    for topk in (-1, 400):
        # nms_topk 400 is over all classes in MXNet, per class in DetectionOutput: with more
        # than 400 candidates the low-scoring tail differs (a known, documented difference)
        det = S.contrib.MultiBoxDetection(cls_prob, loc, anchors, threshold=0.5, nms_threshold=0.45, clip=True, nms_topk=topk, name="detection")
        name = "ssd_head" if topk < 0 else f"ssd_head_topk{topk}"
        nets.update(save_symbol_net(mx, out, name, S.Group([det, anchors]), (1, 3, 32, 32), np.random.default_rng(7), {"cls_weight": cls_weight}))
    # Deconvolution, LeakyReLU variants, scalar ops, Reshape codes, pooling conventions
    y = S.Deconvolution(data, kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 1), num_filter=6, name="deconv_adj")
    z = S.Deconvolution(data, kernel=(4, 4), stride=(2, 2), target_shape=(15, 16), num_filter=6, name="deconv_target")
    y = S.LeakyReLU(y, act_type="leaky", slope=0.1, name="leaky")
    y = S.LeakyReLU(y, act_type="prelu", name="prelu")
    y = S.LeakyReLU(y * 0.5 + 1.0, act_type="elu", slope=0.7, name="elu")
    y = S.LeakyReLU(S.Pooling(y, kernel=(3, 3), stride=(2, 2), pool_type="max", pooling_convention="full"), act_type="selu", name="selu")
    z = S.LeakyReLU(1.0 - z / 3.0, act_type="gelu", name="gelu")
    z = S.Pooling(z, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg", count_include_pad=False, name="avgpool")
    r = S.Reshape(S.Reshape(z, shape=(0, -3, -2)), shape=(-4, 1, -1, -2), name="reshape")
    bn = S.BatchNorm(data, fix_gamma=True, name="bn_fixed")
    nets.update(save_symbol_net(mx, out, "misc_ops", S.Group([y, r, bn]), (1, 4, 8, 8), rng))
    return nets


def detection_set(rows: np.ndarray, mxnet: bool) -> list[tuple]:
    """(class, score, box) rows rounded: MXNet's [A, 6] rows with class >= 0, or
    DetectionOutput's [K, 7] rows up to the first image_id -1 (labels count the background)."""
    if mxnet:
        kept = rows.reshape(-1, 6)
        kept = kept[kept[:, 0] >= 0]
        return sorted((int(r[0]), *np.round(r[1:].astype(np.float64), 3)) for r in kept)
    rows = rows.reshape(-1, 7)
    end = np.flatnonzero(rows[:, 0] < 0)
    rows = rows[: end[0] if end.size else len(rows)]
    return sorted((int(r[1]) - 1, *np.round(r[2:].astype(np.float64), 3)) for r in rows)


def run_on(device: str, directory: Path, name: str, argv: list[str], feeds: dict) -> dict:  # type: ignore[type-arg]
    import irforge
    from irforge.backends.reference import run
    from irforge.tools.ir_convert import convert
    from tests.frontends.mxnet.support import import_args

    if device == "ref":
        return run(import_args(*argv), feeds)
    if device == "cpu":
        return irforge.compile(import_args(*argv), device="cpu")(feeds)
    from tests.backends.ir_xml_support import run_openvino

    convert([*argv, "-o", str(directory / "ir"), "-n", name])
    return run_openvino(directory / "ir" / f"{name}.xml", feeds, check_dims=False)


def check(directory: Path, devices: list[str], only: list[str]) -> None:
    from tests.frontends.mxnet.support import import_args

    index = json.loads((directory / "index.json").read_text())
    print(f"| model | outputs | {' | '.join(devices)} | import s |")
    print("|---|---|" + "---|" * len(devices) + "---|")
    for name, spec in index.items():
        if only and name not in only:
            continue
        stored = np.load(directory / f"{name}.npz")
        feeds = {"data": stored["data"]}
        wants = [stored[k] for k in stored.files if k.startswith("out")]
        argv = ["--input_model", str(directory / spec["params"]), "--input_shape", "[" + ",".join(map(str, spec["shape"])) + "]"]
        began = time.perf_counter()
        try:
            import_args(*argv)
            seconds = f"{time.perf_counter() - began:.1f}"
        except Exception as e:  # noqa: BLE001  (a bench reports every failure and goes on)
            seconds = f"error: {str(e).splitlines()[0][:80]}"
        cells = []
        for device in devices:
            try:
                got = run_on(device, directory, name, argv, feeds)
                cells.append(compare(list(got.values()), wants, spec["outputs"], got))
            except Exception as e:  # noqa: BLE001
                cells.append(f"error: {str(e).splitlines()[0][:60]}")
        print(f"| {name} | {len(wants)} | {' | '.join(cells)} | {seconds} |")
        sys.stdout.flush()


def compare(values: list, wants: list, names: list, got: dict) -> str:  # type: ignore[type-arg]
    errors = []
    for name, want in zip(names, wants):
        value = got.get(name, values[len(errors)] if len(errors) < len(values) else None)
        if value is None:
            return f"no output {name}"
        if name == "detection":
            same = detection_set(value, False) == detection_set(want, True)
            errors.append("set equal" if same else f"sets differ ({len(detection_set(value, False))} vs {len(detection_set(want, True))})")
            continue
        value = np.asarray(value, np.float64).reshape(want.shape)
        scale = max(float(np.abs(want).max()), 1e-12)
        errors.append(f"{float(np.abs(value - want).max()) / scale:.1e}")
    return ", ".join(errors)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="step", required=True)
    sub.add_parser("make").add_argument("directory", type=Path)
    c = sub.add_parser("check")
    c.add_argument("directory", type=Path)
    c.add_argument("--devices", default="ref,cpu,openvino")
    c.add_argument("--models", default="", help="comma-separated names from index.json (default: all)")
    args = p.parse_args()
    if args.step == "make":
        make(args.directory)
    else:
        check(args.directory, args.devices.split(","), [m for m in args.models.split(",") if m])


if __name__ == "__main__":
    main()
