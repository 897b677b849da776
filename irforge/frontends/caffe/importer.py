"""Caffe net -> `nn` module.

Caffe names data by blob: each layer reads its `bottom` blobs and writes its `top` blobs,
and an in-place layer (top == bottom, e.g. ReLU after a convolution) rebinds the name to its
result. Layers run in prototxt order (Caffe requires bottoms to be produced first). The
net's inputs come from `input:` with `input_shape`/`input_dim` (legacy) or from `Input`
layers; its outputs are the blobs no later layer reads, as in Caffe. Layers excluded from the
TEST phase by `include`/`exclude` rules are skipped. Every layer type without an extractor is
reported in one error before anything is built.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.ir import SSAValue

from irforge.errors import IrforgeError
from irforge.frontends.folding import FoldingBuilder
from irforge.frontends.caffe.fields import check_layer_fields, in_test_phase, log
from irforge.frontends.caffe.loader import CaffeModel, load_caffe
from irforge.frontends.caffe.registry import EXTRACTORS, LayerContext, extractor_key, layer_type
from irforge.model import Model

EXTENSION_HINT = (
    "make each a custom layer: `ir-extgen new --op NAME --framework caffe -o DIR` writes a "
    "working extension to fill in, loaded with --extensions PATH (or register an extractor "
    "with @irforge.frontends.caffe.caffe_extractor(\"Type\"))"
)


def net_layers(net: Any) -> list[Any]:
    """The net's layers in the TEST phase: `layer {}` entries, or legacy `layers {}` ones."""
    return [layer for layer in (net.layer if len(net.layer) else net.layers) if in_test_phase(layer)]


def legacy_inputs(net: Any) -> list[tuple[str, list[int]]]:
    """Inputs declared with `input:` and `input_shape {}` or four `input_dim:` each."""
    names = list(net.input)
    if len(net.input_shape):
        shapes = [[int(d) for d in s.dim] for s in net.input_shape]
    else:
        dims = [int(d) for d in net.input_dim]
        shapes = [dims[i : i + 4] for i in range(0, len(dims), 4)]
    if names and len(shapes) != len(names):
        raise IrforgeError(
            f"the net declares {len(names)} inputs but {len(shapes)} input shapes",
            fix="give one input_shape {} (or four input_dim) per input:, or use --input_shape",
            code="E240",
        )
    return list(zip(names, shapes))


def check_supported(layers: Sequence[Any]) -> None:
    """One error listing every layer type without an extractor, with counts and first layers."""
    missing: dict[str, list[str]] = defaultdict(list)
    for layer in layers:
        kind = layer_type(layer)
        if extractor_key(layer) not in EXTRACTORS:
            label = layer.name
            if kind == "Python" and layer.HasField("python_param"):
                label += f" = {layer.python_param.module}.{layer.python_param.layer}"
            missing[kind].append(label)
    if missing:
        parts = [
            f"{kind} x{len(names)} ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})"
            for kind, names in sorted(missing.items())
        ]
        hint = EXTENSION_HINT
        if "Python" in missing:
            hint += "; Python layers run Caffe's Python code (python_param module.layer named above), which an extractor must reimplement"
        raise IrforgeError(f"unsupported Caffe layer types: {'; '.join(parts)}", fix=hint, code="E297")


class NetImporter(FoldingBuilder):
    def __init__(self, model: CaffeModel, input_shapes: Mapping[str, Sequence[int]] | None = None) -> None:
        super().__init__()
        self.model = model
        self.net = model.net
        self.input_shapes = dict(input_shapes or {})
        self.values: dict[str, SSAValue] = {}
        self.unread: dict[str, SSAValue] = {}  # blobs written and not (yet) read: the outputs

    def value(self, blob: str, ctx: LayerContext) -> SSAValue:
        if blob not in self.values:
            raise ctx.fail(f"bottom blob '{blob}' is produced by no earlier layer or input", fix="check the prototxt's bottom/top names")
        self.unread.pop(blob, None)
        return self.values[blob]

    def add_input(self, name: str, shape: Sequence[int]) -> None:
        shape = list(self.input_shapes.get(name, shape))
        if not shape or any(d < 1 for d in shape):
            raise IrforgeError(
                f"input '{name}' has no usable shape ({shape})",
                fix=f"give it with --input {name} --input_shape [1,3,224,224]",
                code="E240",
            )
        self.values[name] = self.builder.input(name, shape)

    def input_names(self, layers: Sequence[Any]) -> list[str]:
        names = [n for n, _ in legacy_inputs(self.net)]
        return names + [str(t) for layer in layers if layer_type(layer) == "Input" for t in layer.top]

    def run(self) -> Model:
        layers = net_layers(self.net)
        check_supported(layers)
        unknown = sorted(set(self.input_shapes) - set(self.input_names(layers)))
        if unknown:
            raise IrforgeError(f"the model has no input named {', '.join(unknown)}", fix=f"its inputs are: {', '.join(self.input_names(layers))}", code="E240")
        for name, shape in legacy_inputs(self.net):
            self.add_input(name, shape)
        all_layers = list(self.net.layer) or list(self.net.layers)
        kind = "layer" if len(self.net.layer) else "layers"
        position = {id(layer): i for i, layer in enumerate(all_layers)}
        for layer in layers:
            self.import_layer(layer, self.model.lines.get((kind, position[id(layer)]), {}))
        for warning in self.model.neutral.warnings():
            log.warning(warning)
            self.model.warnings.append(warning)
        if not self.unread:
            raise IrforgeError("the net has no output blob (every blob is read by a later layer)", code="E240")
        for blob, value in self.unread.items():
            self.builder.output(value, blob)
        return self.builder.finish()

    def import_layer(self, layer: Any, line_of: dict[str, int]) -> None:
        ctx = LayerContext(self, layer)
        key = extractor_key(layer)
        produced = EXTRACTORS[key](ctx)
        if key.startswith("Python:"):
            ctx.read.add("python_param")  # module/layer chose the extension, which reads param_str
        where = f"{self.model.proto_path}: {ctx.where}"
        check_layer_fields(layer, ctx.type, ctx.read, where, line_of, self.model.neutral)
        results = [produced] if isinstance(produced, SSAValue) else list(produced)
        if len(results) != ctx.num_tops:
            raise ctx.fail(f"has {ctx.num_tops} top blobs, but irforge makes {len(results)} outputs for it")
        for blob, value in zip(layer.top, results):
            self.values[blob] = value
            self.unread.pop(blob, None)
            self.unread[blob] = value


def import_caffe(
    model: str | os.PathLike[str] | CaffeModel | None,
    proto: str | os.PathLike[str] | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> Model:
    """Import a Caffe model from its caffemodel and prototxt paths (or a loaded `CaffeModel`)."""
    import irforge.frontends.caffe.extractors  # noqa: F401  (registers the extractors)

    source = model if isinstance(model, CaffeModel) else load_caffe(model, proto)
    return NetImporter(source, input_shapes).run()


def net_inputs(net: Any) -> dict[str, list[int]]:
    """The net's inputs and their declared shapes (legacy declarations, then Input layers)."""
    inputs = dict(legacy_inputs(net))
    for layer in net_layers(net):
        if layer_type(layer) == "Input":
            shapes = [[int(d) for d in s.dim] for s in layer.input_param.shape]
            for i, top in enumerate(layer.top):
                inputs[str(top)] = shapes[min(i, len(shapes) - 1)] if shapes else []
    return inputs
