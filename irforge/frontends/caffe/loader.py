"""Reading a Caffe model: the deploy `.prototxt` (topology) and the `.caffemodel` (weights).

The prototxt is parsed with protobuf's text format against irforge's own schema, remembering
the line of every field (by layer position and dotted path) for error messages; fields the
schema lacks are collected as `UnknownField`s and judged by `fields.check_unknown_fields`
(an error unless they cannot change inference). The caffemodel is memory-mapped and its blob data cut out at
the wire level (`wire.py`), so weights are `np.frombuffer` views of the file. Blobs are
matched to the prototxt's layers by layer name, as Caffe's `CopyTrainedLayersFrom` does.
"""

from __future__ import annotations

import logging
import mmap
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from google.protobuf import text_format
from google.protobuf.message import DecodeError

from irforge.errors import IrforgeError
from irforge.frontends.caffe.fields import NeutralFields, UnknownField, check_unknown_fields
from irforge.frontends.caffe.schema import message_classes
from irforge.frontends.caffe.wire import NET_LAYER, NET_V1_LAYERS, BlobSpan, WireFormatError, split_blobs
from irforge.output_files import protect_inputs

log = logging.getLogger("irforge.caffe")

BARE_CAFFEMODEL_HINT = (
    "give the trained weights with --input_model NET.caffemodel; a model with only a prototxt "
    "needs a bare caffemodel, made with Caffe's Python interface: "
    "net = caffe.Net('NET.prototxt', caffe.TEST); net.save('NET.caffemodel')"
)


@dataclass
class CaffeModel:
    """The parsed topology, the blobs by layer name, and the warnings raised while reading."""

    net: Any
    blobs: dict[str, list[np.ndarray]]
    warnings: list[str] = field(default_factory=list)
    mapping: mmap.mmap | None = None
    lines: dict[tuple[str, int], dict[str, int]] = field(default_factory=dict)
    """(`layer` or `layers`, position) -> dotted field path -> prototxt line."""
    neutral: NeutralFields = field(default_factory=NeutralFields)
    proto_path: str = "prototxt"


class _TrackingParser(text_format._Parser):  # type: ignore[misc,name-defined]
    """protobuf's text parser, remembering the line of each field (by layer and dotted path)
    and the unknown fields with the layer they belong to."""

    def __init__(self) -> None:
        super().__init__(allow_unknown_field=True)
        self.stack: list[Any] = []
        self.names: list[str] = []
        self.counts = {"layer": -1, "layers": -1}
        self.lines: dict[tuple[str, int], dict[str, int]] = {}
        self.unknown: list[UnknownField] = []
        self.skipping = 0

    def _MergeField(self, tokenizer: Any, message: Any) -> None:  # noqa: N802 (protobuf's name)
        name = str(tokenizer.token)
        if not self.names and name in self.counts:
            self.counts[name] += 1
        elif self.names and self.names[0] in self.counts:
            key = (self.names[0], self.counts[self.names[0]])
            self.lines.setdefault(key, {}).setdefault(".".join([*self.names[1:], name]), tokenizer._line + 1)
        self.stack.append(message)
        self.names.append(name)
        try:
            super()._MergeField(tokenizer, message)
        finally:
            self.stack.pop()
            self.names.pop()

    def _SkipFieldContents(self, tokenizer: Any, field_name: str, immediate_message_type: str) -> None:  # noqa: N802
        # protobuf skips an unknown block field by field, through here: only its outermost
        # field is reported, with its path
        if not self.skipping:
            layer = self.stack[1] if len(self.stack) > 1 and self.names[0] in self.counts else None
            path = ".".join([*self.names[1:-1], field_name]) if layer is not None else field_name
            self.unknown.append(UnknownField(path, layer, tokenizer._line + 1))
        self.skipping += 1
        try:
            super()._SkipFieldContents(tokenizer, field_name, immediate_message_type)
        finally:
            self.skipping -= 1


def parse_prototxt(text: str, where: str) -> tuple[Any, _TrackingParser]:
    """The NetParameter of a prototxt text, and the parser with the fields' lines and the
    unknown fields."""
    net = message_classes()["NetParameter"]()
    parser = _TrackingParser()
    try:
        with warnings.catch_warnings():
            # protobuf decodes string escapes ("\-") with Python's deprecated lenient codec
            warnings.simplefilter("ignore", DeprecationWarning)
            parser.ParseLines(text.split("\n"), net)
    except text_format.ParseError as e:
        line = e.GetLine()
        message = str(e).split(" : ", 1)[-1] if line is not None else str(e)
        raise IrforgeError(
            f"malformed prototxt: {message}",
            where=f"{where}:{line}" if line is not None else where,
            fix="fix the text at that line (protobuf text format, Caffe's caffe.proto fields)",
            code="E299",
        ) from None
    return net, parser


def _read_text(path: Path, what: str) -> str:
    if path.exists() and not path.is_file():  # a FIFO or /dev/zero would block or never end
        raise IrforgeError(f"{what} '{path}' is not a regular file", fix="give the path of a prototxt file", code="E298")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise IrforgeError(f"{what} '{path}' does not exist", fix="check the path", code="E298") from None
    except (OSError, UnicodeDecodeError) as e:
        raise IrforgeError(f"cannot read {what} '{path}': {e}", fix="give a readable protobuf text file", code="E299") from None


def blob_array(blob: Any, span: BlobSpan | None, buf: mmap.mmap | bytes) -> np.ndarray:
    """A BlobProto's values as float32, shaped by `shape` or the legacy num/channels/height/width."""
    if blob.HasField("shape"):
        shape = tuple(int(d) for d in blob.shape.dim)
    elif any((blob.num, blob.channels, blob.height, blob.width)):
        shape = (blob.num, blob.channels, blob.height, blob.width)
    else:
        shape = None
    if span is not None:
        dtype = np.dtype("<f4") if span.itemsize == 4 else np.dtype("<f8")
        data = np.frombuffer(buf, dtype, span.span.length // span.itemsize, span.span.offset)
    elif len(blob.double_data):
        data = np.asarray(blob.double_data, np.float64)
    else:
        data = np.asarray(blob.data, np.float32)
    if data.dtype != np.float32:
        data = data.astype(np.float32)
    if shape is None:
        return data
    if int(np.prod(shape)) != data.size:
        raise IrforgeError(
            f"a blob of shape {list(shape)} holds {data.size} values",
            fix="the caffemodel is corrupt or does not match its schema",
            code="E241",
        )
    return data.reshape(shape)


def load_caffemodel(path: Path) -> tuple[dict[str, list[np.ndarray]], mmap.mmap | None]:
    """Blobs by layer name (from `layer` and legacy `layers`), as views of the mapped file."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            buf: mmap.mmap | bytes = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except FileNotFoundError:
        raise IrforgeError(f"caffemodel '{path}' does not exist", fix="check the path", code="E298") from None
    where = f"caffemodel '{path}'"
    try:
        skeleton, spans = split_blobs(buf)
        net = message_classes()["NetParameter"].FromString(skeleton)
    except (WireFormatError, DecodeError) as e:
        raise IrforgeError(
            f"{where} is not a binary Caffe NetParameter ({e})",
            fix="give the trained .caffemodel (a prototxt goes to --input_proto)",
            code="E241",
        ) from None
    blobs: dict[str, list[np.ndarray]] = {}
    for layers, layer_spans in ((net.layer, spans[NET_LAYER]), (net.layers, spans[NET_V1_LAYERS])):
        for layer, blob_spans in zip(layers, layer_spans):
            if len(layer.blobs):
                blobs[layer.name] = [blob_array(b, s, buf) for b, s in zip(layer.blobs, blob_spans)]
    return blobs, buf if isinstance(buf, mmap.mmap) else None


def proto_beside(model: Path) -> Path:
    """The prototxt mo.py finds when --input_proto is omitted: NET.prototxt beside NET.caffemodel."""
    return model.with_suffix(".prototxt")


def load_caffe(model_path: str | os.PathLike[str] | None, proto_path: str | os.PathLike[str] | None) -> CaffeModel:
    """Read a Caffe model from its caffemodel and prototxt (found beside it when not given)."""
    if model_path is not None and Path(model_path).suffix.lower() == ".prototxt":
        proto_path, model_path = proto_path or model_path, None
    if model_path is None:
        raise IrforgeError(f"the prototxt '{proto_path}' comes without weights", fix=BARE_CAFFEMODEL_HINT, code="E298")
    model = Path(model_path)
    proto = Path(proto_path) if proto_path is not None else proto_beside(model)
    if proto_path is None and not proto.exists():
        raise IrforgeError(
            f"no prototxt given for '{model}' and none found beside it ('{proto}')",
            fix="give the deploy topology with --input_proto NET.prototxt",
            code="E298",
        )
    protect_inputs(model, proto)  # ir-run --output NET.prototxt would replace them
    net, parser = parse_prototxt(_read_text(proto, "prototxt"), str(proto))
    neutral = NeutralFields()
    check_unknown_fields(parser.unknown, str(proto), neutral)
    blobs, mapping = load_caffemodel(model)
    return CaffeModel(net, blobs, [], mapping, parser.lines, neutral, str(proto))
