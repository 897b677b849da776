"""Reading `.onnx` files: the graph through `onnx`, the weights without copies.

The file is memory-mapped; embedded initializers' `raw_data` are cut out at the wire level
(see `wire.py`) and viewed in place, and initializers stored in external data files are
memory-mapped at their recorded offsets, so a model over 2 GB costs page cache, not Python
memory. Only the small graph skeleton is parsed by protobuf.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import TensorProto, numpy_helper

from irforge.errors import IrforgeError, one_line, quoted
from irforge.frontends.onnx.wire import WireFormatError, split_weights
from irforge.output_files import protect_inputs


@dataclass
class OnnxFile:
    """A parsed model skeleton plus where its weights are (mapped file spans, data folder)."""

    proto: onnx.ModelProto
    base_dir: Path
    raw_data: dict[str, np.ndarray] = field(default_factory=dict)
    """Initializer name -> its raw_data bytes (uint8 view of the mapped file)."""


def load_onnx_file(path: str | os.PathLike[str]) -> OnnxFile:
    """Map `path` and parse all of it but the initializers' raw data."""
    path = Path(path)
    if not path.is_file():
        raise IrforgeError(f"model file '{path}' not found", fix="check the path", code="E141")
    if path.stat().st_size == 0:
        raise IrforgeError(f"'{path}' holds no ONNX graph (empty file)", fix="re-export the model", code="E159")
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        skeleton, spans = split_weights(mapped)
        proto = onnx.ModelProto.FromString(skeleton)
    except (WireFormatError, DecodeError):
        return OnnxFile(load_model_proto(path), path.parent)  # reports what is wrong
    check_graph(proto, path)
    whole = np.frombuffer(mapped, dtype=np.uint8)
    raw = {
        tensor.name: whole[span.offset : span.offset + span.length]
        for tensor, span in zip(proto.graph.initializer, spans)
        if span is not None
    }
    return OnnxFile(proto, path.parent, raw)


def check_graph(model: onnx.ModelProto, path: Path) -> None:
    if not model.HasField("graph") or not model.graph.node:
        raise IrforgeError(
            f"'{path}' holds no ONNX graph (empty or truncated file)",
            fix="re-export the model",
            code="E159",
        )
    check_text_fields(model.graph, path)


def check_text_fields(graph: onnx.GraphProto, path: Path) -> None:
    """Names that protobuf hands back as bytes (not UTF-8) would break every later step."""
    for node in graph.node:
        texts = [node.name, node.op_type, node.domain, *node.input, *node.output, *(a.name for a in node.attribute)]
        if any(isinstance(t, bytes) for t in texts):
            raise IrforgeError(
                f"{str(path)!r} has a node whose name, type or tensor names are not UTF-8 text",
                fix="the model file is corrupt; re-export it",
                code="E115",
            )
        for attribute in node.attribute:  # Loop / If / Scan bodies too
            for body in [attribute.g, *attribute.graphs]:
                check_text_fields(body, path)


def load_model_proto(path: str | os.PathLike[str]) -> onnx.ModelProto:
    """Parse `path` without reading external data (that is mapped per tensor later)."""
    path = Path(path)
    if not path.is_file():
        raise IrforgeError(f"model file '{path}' not found", fix="check the path", code="E141")
    try:
        model = onnx.load(str(path), load_external_data=False)
    except (DecodeError, ValueError, RuntimeError) as e:
        raise IrforgeError(
            f"'{path}' is not a valid ONNX model ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'cannot parse'})",
            fix="check that the file is a complete .onnx model (not truncated or of another format)",
            code="E159",
        ) from None
    check_graph(model, path)
    return model


def _external_file(tensor: TensorProto, location: str, base_dir: Path) -> Path:
    """The external data file, which must lie inside the model's folder (as onnx and
    onnxruntime require): no absolute path, no `..`, no symlink leading out of it."""
    relative = Path(location)
    parts = Path(location.replace("\\", "/")).parts
    escapes = not parts or "\0" in location or relative.is_absolute() or location.startswith(("/", "\\")) or ".." in parts
    root = base_dir.resolve()
    file = (base_dir / relative).resolve() if not escapes else root
    if escapes or root not in file.parents:
        raise IrforgeError(
            f"external data of initializer {tensor.name!r} is outside the model's folder "
            f"(location {location!r})",
            fix="external data must be a file in the model's folder; keep it beside the model",
            code="E110",
        )
    if not file.is_file():
        raise IrforgeError(
            f"external data file {location!r} of initializer {tensor.name!r} not found",
            fix=f"keep it beside the model in {str(base_dir)!r}",
            code="E111",
        )
    protect_inputs(file)  # ir-run --output m.onnx.data would replace the weights
    return file


def _external_int(tensor: TensorProto, info: dict[str, str], key: str, default: int) -> int:
    text = info.get(key)
    try:
        value = default if text is None else int(text)
    except ValueError:
        value = -1
    if value < 0 or value >= 2**63:
        raise IrforgeError(
            f"external data of initializer {tensor.name!r} has a bad {key} {text!r}",
            fix="re-export the model with its external data",
            code="E112",
        )
    return value


def _external_array(tensor: TensorProto, base_dir: Path) -> np.ndarray:
    info = {entry.key: entry.value for entry in tensor.external_data}
    location = info.get("location")
    if not location:
        raise IrforgeError(
            f"initializer {tensor.name!r} has external data without a location",
            fix="re-export the model with its external data",
            code="E112",
        )
    file = _external_file(tensor, location, base_dir)
    four_bit = tensor.data_type in FOUR_BIT
    dtype = np.dtype(np.uint8) if four_bit else element_dtype(tensor.data_type, tensor.name)
    shape = _dims(tensor)
    count = int(np.prod(shape, dtype=object))
    size = (count + 1) // 2 if four_bit else count * dtype.itemsize
    offset = _external_int(tensor, info, "offset", 0)
    length = _external_int(tensor, info, "length", size)
    if length != size or offset + length > file.stat().st_size:
        raise IrforgeError(
            f"external data of initializer {tensor.name!r} is truncated or inconsistent ({location!r})",
            fix="re-export the model with its external data",
            code="E112",
        )
    if four_bit:
        return unpack_four_bit(tensor, np.fromfile(file, dtype=np.uint8, count=size, offset=offset))
    if count == 0:
        return np.zeros(shape, dtype)
    return np.memmap(file, dtype=dtype, mode="r", offset=offset, shape=shape)


FOUR_BIT = {TensorProto.INT4: np.dtype(np.int8), TensorProto.UINT4: np.dtype(np.uint8)}
"""Packed 4-bit element types irforge reads, and the one-byte type their values are held in."""


def element_dtype(data_type: int, name: str) -> np.dtype:
    """The numpy type of an ONNX element type number; unknown numbers are user errors."""
    if data_type in (TensorProto.INT4, TensorProto.UINT4, TensorProto.FLOAT4E2M1):
        # packed two per byte: not an array of one-byte elements (initializers of INT4 / UINT4
        # are unpacked by `unpack_four_bit`; a graph input or FLOAT4E2M1 is refused)
        raise IrforgeError(
            f"tensor {quoted(name)} has the packed 4-bit ONNX element type {TensorProto.DataType.Name(data_type)}, which irforge reads only in INT4 / UINT4 initializers",
            fix="make it an INT4 / UINT4 initializer, or use int8 / uint8 (or MatMulNBits / GatherBlockQuantized's packed uint8 form)",
            code="E113",
        )
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(data_type))
    except (KeyError, ValueError, TypeError):
        raise IrforgeError(
            f"tensor {quoted(name)} has unknown or unsupported ONNX element type {data_type}",
            fix="re-export the model with float32/float16/int32/int64/bool tensors",
            code="E113",
        ) from None


def unpack_four_bit(tensor: TensorProto, packed: np.ndarray | bytes) -> np.ndarray:
    """An INT4 / UINT4 tensor's values as int8 / uint8: two per byte, the low nibble first,
    INT4 sign-extended; an odd count leaves the last high nibble unused (ONNX's layout)."""
    shape = _dims(tensor)
    count = int(np.prod(shape, dtype=object))
    data = np.frombuffer(packed, dtype=np.uint8) if isinstance(packed, bytes) else np.asarray(packed, dtype=np.uint8).reshape(-1)
    if len(data) != (count + 1) // 2:
        raise IrforgeError(
            f"tensor {quoted(tensor.name)} has {len(data)} bytes of packed 4-bit data for shape {list(tensor.dims)[:8]}",
            fix="the model file is corrupt; re-export it",
            code="E114",
        )
    nibbles = np.stack([data & 0x0F, data >> 4], axis=-1).reshape(-1)[:count]
    if tensor.data_type == TensorProto.INT4:
        values = (nibbles.astype(np.int8) ^ 8) - 8  # sign-extend bit 3
    else:
        values = nibbles.astype(np.uint8)
    values = values.reshape(shape)
    values.flags.writeable = False
    return values


def _dims(tensor: TensorProto) -> tuple[int, ...]:
    if any(d < 0 for d in tensor.dims):
        raise IrforgeError(
            f"tensor {quoted(tensor.name)} has negative dimensions {list(tensor.dims)[:8]}",
            fix="the model file is corrupt; re-export it",
            code="E114",
        )
    return tuple(tensor.dims)


def _raw_array(tensor: TensorProto, raw: np.ndarray | bytes) -> np.ndarray:
    dtype = element_dtype(tensor.data_type, tensor.name)
    count = int(np.prod(_dims(tensor), dtype=object))
    if len(raw) != count * dtype.itemsize:
        raise IrforgeError(
            f"tensor {quoted(tensor.name)} has {len(raw)} bytes of data for shape {list(tensor.dims)[:8]}",
            fix="the model file is corrupt; re-export it",
            code="E114",
        )
    array = np.frombuffer(raw, dtype=np.uint8).view(dtype) if count else np.zeros(0, dtype)
    return array.reshape(tuple(tensor.dims))


def tensor_to_array(tensor: TensorProto, base_dir: Path, raw_data: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """A read-only numpy array for an ONNX tensor, without per-element Python objects."""
    if tensor.data_location == TensorProto.EXTERNAL:
        return _external_array(tensor, base_dir)
    if tensor.data_type in (TensorProto.STRING, TensorProto.UNDEFINED):
        raise IrforgeError(f"tensor '{tensor.name}' has an unsupported element type (string or undefined)", fix="re-export the model with numeric tensors", code="E113")
    if tensor.data_type in FOUR_BIT:
        if raw_data is not None and tensor.name in raw_data:
            return unpack_four_bit(tensor, raw_data[tensor.name])
        # int32_data holds the packed bytes, one per entry, when raw_data is absent
        packed = tensor.raw_data if tensor.HasField("raw_data") else np.array(tensor.int32_data, dtype=np.int64)
        if not isinstance(packed, bytes) and (packed.size and (packed.min() < 0 or packed.max() > 255)):
            raise IrforgeError(f"tensor {quoted(tensor.name)} has packed 4-bit int32_data outside 0..255", fix="the model file is corrupt; re-export it", code="E114")
        return unpack_four_bit(tensor, packed)
    if raw_data is not None and tensor.name in raw_data:
        return _raw_array(tensor, raw_data[tensor.name])
    if tensor.HasField("raw_data"):
        return _raw_array(tensor, tensor.raw_data)
    element_dtype(tensor.data_type, tensor.name)
    _dims(tensor)
    try:
        array = numpy_helper.to_array(tensor)
    except (ValueError, TypeError, KeyError) as e:
        raise IrforgeError(
            f"tensor {quoted(tensor.name)} cannot be read ({one_line(str(e))[:100]})",
            fix="the model file is corrupt; re-export it",
            code="E114",
        ) from None
    array.flags.writeable = False
    return array
