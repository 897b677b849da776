"""irforge's Python API, shaped like OpenVINO's (`ov.convert_model`, `ov.save_model`,
`core.read_model`, `core.compile_model`):

    import irforge
    model = irforge.convert_model("resnet.onnx", input_shape=[1, 3, 224, 224], mean_values=[123.7, 116.3, 103.5])
    irforge.save_model(model, "resnet.xml", compress_to_fp16=False)
    compiled = irforge.compile(model, device="cpu")
    outputs = compiled(image)              # a dict, a list or a single array in; a dict out

`convert_model` takes exactly ir-convert's options, as keyword arguments named like its flags
(the options are ir-convert's parser's defaults updated by the keywords, so the two never
drift); an unknown keyword is an error naming it.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from irforge.errors import IrforgeError
from irforge.model import Model

ModelSource = str | os.PathLike[str] | bytes | Any
"""A path, serialized ONNX bytes, or an `onnx.ModelProto`."""

NOT_FOR_THE_API = {
    "output_dir": "save_model(model, PATH) writes the files",
    "model_name": "save_model(model, PATH) names the files",
    "output_model": "save_model(model, PATH) writes the files",
    "emit": "save_model(model, 'x.xml' or 'x.mlir') chooses by the suffix",
    "print_ir_after": "it is ir-convert's debugging flag; run ir-convert --print-ir-after",
    "print_ir_format": "it is ir-convert's debugging flag; run ir-convert --print-ir-after",
}


def _parser_actions() -> dict[str, argparse.Action]:
    from irforge.tools.ir_convert import build_parser

    return {a.dest: a for a in build_parser()._actions if a.dest != argparse.SUPPRESS and a.dest != "help"}


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, (str, os.PathLike, ModuleType)):
        return [value]
    return list(value)


def _shapes(value: Any) -> list[list[int]]:
    """[1,3,224,224] (one input) or [[1,3,224,224],[1,10]]."""
    items = list(value)
    if items and all(isinstance(d, (int, np.integer)) for d in items):
        return [[int(d) for d in items]]
    return [[int(d) for d in shape] for shape in items]


def _per_input(value: Any) -> dict[str, list[float]]:
    """{'data': [123, 117, 104]} or [123, 117, 104] (every input)."""
    if isinstance(value, Mapping):
        return {str(k): [float(x) for x in v] for k, v in value.items()}
    return {"": [float(x) for x in value]}


def _named_inputs(value: Any) -> tuple[list[str], list[list[int]] | None]:
    """ovc's `input=`: names, or {name: shape}, or [(name, shape), ...]."""
    if isinstance(value, str):
        return [value], None
    if isinstance(value, Mapping):
        pairs = list(value.items())
    else:
        items = list(value)
        if all(isinstance(i, str) for i in items):
            return items, None
        pairs = [tuple(i) for i in items]
    names = [str(n) for n, _ in pairs]
    shapes = [[int(d) for d in s] for _, s in pairs]
    return names, shapes


def _convert_value(key: str, value: Any, action: argparse.Action) -> Any:
    """A keyword's Python value as the parser would have produced it from the flag."""
    if isinstance(value, str) and action.type is not None and key not in ("input_model",):
        return action.type(value)  # the flag's own spelling: input_shape="[1,3,224,224]"
    if key == "input_shape":
        return _shapes(value)
    if key in ("mean_values", "scale_values"):
        return _per_input(value)
    if key in ("output", "extensions"):
        return _as_list(value)
    if key == "data_type":
        return str(value).upper()
    return value


def options_for(input_model: str, options: Mapping[str, Any]) -> argparse.Namespace:
    """ir-convert's options: its parser's defaults, updated by `options` (flag names without
    dashes); unknown names are an error naming them."""
    actions = _parser_actions()
    unknown = sorted(k for k in options if k not in actions or k in ("input_model", "model", "version"))
    if unknown:
        known = ", ".join(sorted(k for k in actions if k not in NOT_FOR_THE_API and k not in ("input_model", "model", "version")))
        raise IrforgeError(
            f"convert_model got unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}",
            fix=f"the options are ir-convert's flags: {known}",
            code="E050",
        )
    for key in options:
        if key in NOT_FOR_THE_API:
            raise IrforgeError(f"convert_model does not take {key}", fix=NOT_FOR_THE_API[key], code="E050")
    args = argparse.Namespace(**{dest: action.default for dest, action in actions.items()})
    args.input_model = input_model
    for key, value in options.items():
        if key == "input" and not isinstance(value, str):
            args.input, shapes = _named_inputs(value)
            if shapes is not None:
                if options.get("input_shape") is not None:
                    raise IrforgeError("input= with shapes and input_shape= cannot be combined",
                                       fix="give the shapes in one of them", code="E050")
                args.input_shape = shapes
            continue
        if key == "input_shape" and isinstance(options.get("input"), Mapping):
            continue
        converted = _convert_value(key, value, actions[key])
        if actions[key].choices is not None and converted not in actions[key].choices:
            raise IrforgeError(f"bad value for {key}: {value!r}", fix=f"use one of: {', '.join(map(str, actions[key].choices))}",
                               code="E050")
        setattr(args, key, converted)
    from irforge.tools.convert_options import normalise_options

    normalise_options(args)
    return args


def _model_file(input_model: ModelSource, keep: list[tempfile.TemporaryDirectory[str]]) -> str:
    """A path for the frontends: ONNX bytes or ModelProto are written to a temporary file
    (the importer memory-maps files; the mapping outlives the file's name)."""
    if isinstance(input_model, (str, os.PathLike)):
        return os.fspath(input_model)
    if isinstance(input_model, (bytes, bytearray, memoryview)):
        data = bytes(input_model)
    elif hasattr(input_model, "SerializeToString") and hasattr(input_model, "graph"):
        data = input_model.SerializeToString()
    else:
        raise IrforgeError(
            f"convert_model cannot read a {type(input_model).__name__}",
            fix="pass a file path, an onnx.ModelProto or its serialized bytes",
            code="E051",
        )
    folder = tempfile.TemporaryDirectory(prefix="irforge-")
    keep.append(folder)
    path = Path(folder.name) / "model.onnx"
    path.write_bytes(data)
    return str(path)


def convert_model(input_model: ModelSource, **options: Any) -> Model:
    """Import and optimise a model as ir-convert does; returns the Model (nothing written).

    Options are ir-convert's flags by name: input_shape=[1,3,224,224], input=["data"] or
    {"data": [1,3,224,224]} (ovc's form), output=[...], batch=N, mean_values=[...] or
    {"data": [...]}, scale_values=..., scale=255, reverse_input_channels=True,
    data_type="FP16", compress_to_fp16=True, disable_fusing=True, layout="nhwc",
    transformations_config=PATH, extensions=[PATH or module], framework="onnx",
    pipeline="...", and each frontend's own (input_proto=..., input_model_is_text=True)."""
    from irforge.tools.convert_run import finish, framework_of, import_model, load_extensions, observers, planned_pipeline, run_passes
    from irforge.tools.pass_observers import report as report_observers

    temporaries: list[tempfile.TemporaryDirectory[str]] = []
    try:
        args = options_for(_model_file(input_model, temporaries), options)
        load_extensions(args.extensions)
        framework = options.get("framework") or framework_of(args)
        args.framework = framework
        model = import_model(args, framework)
        pipeline = planned_pipeline(args, framework, model)
        watchers = observers(args, model, pipeline)
        run_passes(model.module, pipeline, watchers)
        report_observers(watchers)
        finish(args, model)
        return model
    finally:
        for folder in temporaries:
            folder.cleanup()


def save_model(model: Model, path: str | os.PathLike[str], compress_to_fp16: bool = True) -> list[Path]:
    """Write `model` as an OpenVINO IR (`x.xml` + `x.bin`) or irforge's IR (`x.mlir` +
    `x.weights`); returns the files written. `compress_to_fp16` (True by default, as in
    `openvino.save_model`): f32 weights stored as f16 and widened by Convert layers, as ovc
    stores them (the model itself is left unchanged); False keeps them f32."""
    path = Path(path)
    if not isinstance(model, Model):
        raise IrforgeError(f"save_model takes an irforge Model, not a {type(model).__name__}",
                           fix="convert or read it first: irforge.convert_model / irforge.read_model", code="E052")
    if path.suffix == ".xml":
        from irforge.backends.ir_xml import write_ir_xml

        return list(write_ir_xml(model, path, "FP16" if compress_to_fp16 else "FP32"))
    if path.suffix == ".mlir":
        from irforge.model import save_model as save_mlir, weights_path_for

        if compress_to_fp16:
            from irforge.passes import apply_pipeline

            model = Model(model.module.clone(), model.store)
            apply_pipeline(model.module, "compress-fp16")
        save_mlir(model, path)
        weights = weights_path_for(path)
        return [path, weights] if weights.is_file() else [path]
    raise IrforgeError(f"save_model cannot tell the format of '{path}'",
                       fix="name the file x.xml (OpenVINO IR) or x.mlir (irforge's IR)", code="E052")


def read_model(path: str | os.PathLike[str], weights: str | os.PathLike[str] | None = None,
               framework: str | None = None, **frontend_options: Any) -> Model:
    """Read any model irforge reads (OpenVINO IR, .mlir, ONNX, TensorFlow, Caffe, ...) as its
    frontend imports it, without ir-convert's optimisation pipeline (as OpenVINO's read_model)."""
    from irforge.tools.convert_run import framework_of, import_model, load_extensions

    args = options_for(os.fspath(path), {**frontend_options, **({"framework": framework} if framework else {})})
    args.weights = None if weights is None else os.fspath(weights)
    if not Path(args.input_model).exists():
        raise IrforgeError(f"model file '{args.input_model}' not found", fix="check the path", code="E001")
    load_extensions(args.extensions)
    return import_model(args, framework_of(args))


def compile(model_or_path: Model | str | os.PathLike[str], device: str = "cpu", **options: Any) -> "CompiledModel":  # noqa: A001
    """Compile for `device`: "cpu" (native code), "gpu" (OpenCL, HETERO fallback to the CPU)
    or "ref" (the numpy reference interpreter); OpenVINO's "CPU"/"GPU" spellings too.
    Options: cpu: threads=N, cache_dir=PATH|False; gpu: opencl_device=N|NAME, cpu_ops=[...]."""
    from irforge.compiled import CompiledModel, compile_for_device

    model = model_or_path if isinstance(model_or_path, Model) else read_model(model_or_path)
    if not isinstance(model, Model):
        raise IrforgeError(f"compile takes a Model or a path, not a {type(model_or_path).__name__}",
                           fix="pass irforge.read_model(PATH) or the path itself", code="E052")
    return CompiledModel(model, compile_for_device(model, device, options))


def input_arrays(names: Sequence[str], feeds: Any) -> dict[str, np.ndarray]:
    """A dict by name, a list in input order, or one array (single-input models)."""
    if isinstance(feeds, Mapping):
        return {getattr(k, "name", k): np.asarray(v) for k, v in feeds.items()}
    if isinstance(feeds, np.ndarray) or np.isscalar(feeds):
        feeds = [feeds]
    feeds = list(feeds)
    if len(feeds) != len(names):
        raise IrforgeError(
            f"the model has {len(names)} inputs ({', '.join(names)}) but {len(feeds)} arrays were given",
            fix="pass one array per input, in order, or a dict by input name", code="E053",
        )
    return {n: np.asarray(a) for n, a in zip(names, feeds)}
