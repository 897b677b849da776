"""No prototxt field silently ignored: which fields a layer's extractor honoured, and the one
table of fields that cannot change inference.

Extractors read their parameters through `TrackedMessage` (what `LayerContext.param`
returns), which records every field read. After a layer is built, `check_layer_fields`
walks the fields the prototxt set on it: a field the extractor read (to honour it or refuse
it), or one set to its explicit default, is fine; one listed in `INFERENCE_NEUTRAL` earns a
warning; any other one is an error naming the field, the layer and the prototxt line
(E202). Fields irforge's schema does not know at all (fork additions) go through the same
table in `check_unknown_fields` (E201); an unknown block is reported once, with its path.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from irforge.errors import IrforgeError

log = logging.getLogger("irforge.caffe")

TEST_PHASE = 1

INFERENCE_NEUTRAL: dict[str, str] = {
    "param": "learning-rate and decay multipliers (training only)",
    "lr_mult": "learning-rate multiplier (training only)",
    "decay_mult": "weight-decay multiplier (training only)",
    "blobs_lr": "learning-rate multiplier (training only)",
    "weight_decay": "weight-decay multiplier (training only)",
    "loss_weight": "loss weight (training only)",
    "propagate_down": "backward pass only",
    "weight_filler": "initialisation (weights come from the caffemodel)",
    "bias_filler": "initialisation (weights come from the caffemodel)",
    "filler": "initialisation (weights come from the caffemodel)",
    "scale_filler": "initialisation (weights come from the caffemodel)",
    "shift_filler": "initialisation (weights come from the caffemodel)",
    "slope_filler": "initialisation (weights come from the caffemodel)",
    "momentum": "running-statistics update (training only)",
    "frozen": "whether training updates the statistics (training only)",
    "engine": "implementation choice (CAFFE/CUDNN), same numbers",
    "moving_average_fraction": "running-statistics update (training only)",
    "stable_prod_grad": "gradient computation only",
    "force_nd_im2col": "implementation choice, same numbers",
    "visualize": "drawing detections (side effect only)",
    "visualize_threshold": "drawing detections (side effect only)",
    "save_output_param": "saving detections to files (side effect only)",
    "save_file": "saving detections to files (side effect only)",
    "phase": "the net's phase; irforge builds Caffe's TEST net",
    "include": "TEST-phase rules, applied: layers outside TEST are dropped",
    "exclude": "TEST-phase rules, applied: layers outside TEST are dropped",
    "force_backward": "backward pass only",
    "debug_info": "logging only",
    "state": "irforge builds the TEST net",
    "loss_param": "loss layers only",
}
"""Field name -> why it cannot change inference. Only these are ignored (with a warning)."""

STRUCTURE = {"name", "type", "bottom", "top"}
"""LayerParameter fields the importer itself honours for every layer."""

OWNERS = {
    "convolution_param": {"Convolution", "Deconvolution", "DepthwiseConvolution", "ConvolutionDepthwise"},
    "norm_param": {"Normalize"},
    "argmax_param": {"ArgMax"},
}
"""Parameter messages whose owner layer types do not follow from their name."""


def owns(layer_type: str, param_field: str) -> bool:
    """Whether `param_field` (e.g. `pooling_param`) is the parameter message of `layer_type`
    (Caffe reads only its own message; others on a layer are ignored by Caffe as well)."""
    if param_field in OWNERS:
        return layer_type in OWNERS[param_field]
    return param_field.removesuffix("_param").replace("_", "") == layer_type.lower()


class TrackedMessage:
    """A read-only view of a protobuf message that records the dotted path of every field read."""

    def __init__(self, message: Any, path: str, read: set[str]) -> None:
        object.__setattr__(self, "_message", message)
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_read", read)

    def __getattr__(self, name: str) -> Any:
        message = self._message
        value = getattr(message, name)
        descriptor = message.DESCRIPTOR.fields_by_name.get(name)
        if descriptor is None:
            return value
        path = f"{self._path}.{name}"
        if descriptor.type == FieldDescriptor.TYPE_MESSAGE and not _repeated(descriptor):
            return TrackedMessage(value, path, self._read)  # its fields are tracked one by one
        self._read.add(path)
        return value

    def HasField(self, name: str) -> bool:  # noqa: N802 (protobuf's name)
        descriptor = self._message.DESCRIPTOR.fields_by_name.get(name)
        if descriptor is not None and descriptor.type != FieldDescriptor.TYPE_MESSAGE:
            self._read.add(f"{self._path}.{name}")
        return bool(self._message.HasField(name))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Caffe layer parameters are read-only")


def _repeated(descriptor: FieldDescriptor) -> bool:
    return bool(descriptor.is_repeated)


def in_test_phase(layer: Any) -> bool:
    """Whether Caffe's TEST net has this layer (phase rules; level and stage rules are refused
    by `check_layer_fields`, since a deploy net sets neither)."""
    rules_include = list(layer.include)
    if rules_include and not any(not r.HasField("phase") or r.phase == TEST_PHASE for r in rules_include):
        return False
    return not any(r.HasField("phase") and r.phase == TEST_PHASE for r in layer.exclude)


@dataclass
class NeutralFields:
    """The inference-neutral fields met, by name, with the layers they were met in; reported
    as one warning per field name at the end."""

    layers: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(self, name: str, layer: str) -> None:
        if layer not in self.layers[name]:
            self.layers[name].append(layer)

    def warnings(self) -> list[str]:
        out = []
        for name, layers in sorted(self.layers.items()):
            shown = ", ".join(f"'{n}'" for n in layers[:3]) + (", ..." if len(layers) > 3 else "")
            out.append(f"field '{name}' ignored in {len(layers)} layer(s) ({shown}): {INFERENCE_NEUTRAL[name]}")
        return out


def _set_fields(message: Any, path: str) -> Iterator[tuple[str, str, FieldDescriptor, Any]]:
    """(path, leaf name, descriptor, value) of every set leaf field under `message`; a repeated
    message field is one leaf."""
    for descriptor, value in message.ListFields():
        sub = f"{path}.{descriptor.name}" if path else descriptor.name
        if descriptor.type == FieldDescriptor.TYPE_MESSAGE and not _repeated(descriptor):
            if descriptor.name in INFERENCE_NEUTRAL:
                yield sub, descriptor.name, descriptor, value
            else:
                yield from _set_fields(value, sub)
        else:
            yield sub, descriptor.name, descriptor, value


def _covered(path: str, read: set[str]) -> bool:
    parts = path.split(".")
    return any(".".join(parts[:i]) in read for i in range(1, len(parts) + 1))


def _explicit_default(descriptor: FieldDescriptor, value: Any) -> bool:
    return not _repeated(descriptor) and descriptor.has_default_value and value == descriptor.default_value


def check_layer_fields(
    layer: Any, layer_type: str, read: set[str], where: str, line_of: dict[str, int], neutral: NeutralFields
) -> None:
    """Refuse (E202) a set field of `layer` that its extractor did not read and that may change
    inference; record inference-neutral ones in `neutral`."""
    for descriptor, value in layer.ListFields():
        name = descriptor.name
        if name in STRUCTURE:
            continue
        if name in ("include", "exclude"):
            _check_rules(value, name, where, line_of)
            neutral.add(name, layer.name)
            continue
        if name in INFERENCE_NEUTRAL:
            neutral.add(name, layer.name)
            continue
        if name.endswith("_param") and not owns(layer_type, name) and not any(r.startswith(name + ".") for r in read):
            # another type's parameters: Caffe ignores them too
            log.warning("%s: '%s' is not read by a %s layer (Caffe ignores it too)", where, name, layer_type)
            continue
        leaves = _set_fields(value, name) if descriptor.type == FieldDescriptor.TYPE_MESSAGE and not _repeated(descriptor) else [(name, name, descriptor, value)]
        for path, leaf, sub, sub_value in leaves:
            if _covered(path, read) or _explicit_default(sub, sub_value):
                continue
            if leaf in INFERENCE_NEUTRAL:
                neutral.add(leaf, layer.name)
                continue
            raise IrforgeError(
                f"field '{path}' is not supported by irforge and would change the results",
                where=f"{where}, line {line_of.get(path, '?')}",
                fix="remove the field if the net does not need it, or convert with a Caffe extension (--extensions) that honours it",
                code="E202",
            )


def _check_rules(rules: Any, name: str, where: str, line_of: dict[str, int]) -> None:
    for rule in rules:
        for level in ("min_level", "max_level", "stage", "not_stage"):
            if (level in ("stage", "not_stage") and len(getattr(rule, level))) or (level not in ("stage", "not_stage") and rule.HasField(level)):
                raise IrforgeError(
                    f"the {name} rule's '{level}' decides whether this layer exists, and a deploy net has no levels or stages",
                    where=f"{where}, line {line_of.get(f'{name}.{level}', line_of.get(name, '?'))}",
                    fix=f"delete the layer or its {name} rule, as the net you deploy needs",
                    code="E203",
                )


@dataclass
class UnknownField:
    """A prototxt field irforge's schema does not know: its path inside its layer, the layer
    (None at net level) and the line."""

    path: str
    layer: Any
    line: int


def check_unknown_fields(unknown: list[UnknownField], where: str, neutral: NeutralFields) -> None:
    """Refuse (E201) the unknown fields of TEST-phase layers that may change inference."""
    for item in unknown:
        if item.layer is not None and not in_test_phase(item.layer):
            continue
        owner = f"layer '{item.layer.name}'" if item.layer is not None else "the net"
        name = next((part for part in item.path.split(".") if part in INFERENCE_NEUTRAL), None)
        if name is not None:
            neutral.add(name, item.layer.name if item.layer is not None else "(net)")
            continue
        raise IrforgeError(
            f"unknown field '{item.path}' in {owner}: irforge cannot honour it, and it may change the results",
            where=f"{where}:{item.line}",
            fix="remove the field if the net does not need it, or convert with a Caffe extension (--extensions) that honours it",
            code="E201",
        )
