"""Reading frozen GraphDefs (binary .pb or text .pbtxt) and their tensors."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from google.protobuf import text_format
from google.protobuf.message import DecodeError

from irforge.errors import IrforgeError
from irforge.frontends.tf.schema import DATA_TYPES, DT_HALF, NUMPY_TYPES, message_classes


def load_graph(path: str | os.PathLike[str], is_text: bool | None = None) -> Any:
    """The GraphDef in `path`; text format when `is_text` (default: by the .pbtxt suffix)."""
    path = Path(path)
    if not path.is_file():
        raise IrforgeError(f"model file '{path}' not found", fix="check the path", code="E341")
    graph_def = message_classes()["GraphDef"]()
    text = path.suffix.lower() == ".pbtxt" if is_text is None else is_text
    try:
        if text:
            with warnings.catch_warnings():
                # protobuf decodes string escapes with Python's deprecated lenient codec
                warnings.simplefilter("ignore", DeprecationWarning)
                text_format.Parse(path.read_text(encoding="utf-8"), graph_def)
        else:
            graph_def.ParseFromString(path.read_bytes())
    except text_format.ParseError as e:
        raise IrforgeError(
            f"'{path}' is not a valid text GraphDef: {e}",
            fix="check the file, or drop --input_model_is_text for a binary .pb",
            code="E395",
        ) from None
    except (DecodeError, UnicodeDecodeError, ValueError) as e:
        raise IrforgeError(
            f"'{path}' is not a valid GraphDef ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'cannot parse'})",
            fix="give a frozen TensorFlow graph (.pb), or pass --input_model_is_text for a .pbtxt",
            code="E395",
        ) from None
    if not graph_def.node:
        raise IrforgeError(f"'{path}' holds no graph nodes (empty or truncated file)", fix="re-export the frozen graph", code="E395")
    return graph_def


def numpy_dtype(dtype: int, where: str) -> np.dtype:
    name = NUMPY_TYPES.get(dtype)
    if name is None:
        label = DATA_TYPES[dtype] if 0 <= dtype < len(DATA_TYPES) else str(dtype)
        raise IrforgeError(f"element type {label} is not supported", where=where, fix="convert the graph to float32/int32/int64/bool", code="E393")
    return np.dtype(name)


_VALUE_FIELDS = {
    "float32": "float_val", "float64": "double_val", "int32": "int_val", "uint8": "int_val", "int16": "int_val",
    "int8": "int_val", "uint16": "int_val", "int64": "int64_val", "bool": "bool_val", "float16": "half_val",
    "uint32": "uint32_val", "uint64": "uint64_val",
}


def tensor_to_array(tensor: Any, where: str) -> np.ndarray:
    """A numpy array for a TensorProto: `tensor_content` viewed without copying per element,
    or the typed value list, whose last value repeats to fill the shape (TensorFlow's rule)."""
    dtype = numpy_dtype(tensor.dtype, where)
    shape = tuple(int(d.size) for d in tensor.tensor_shape.dim)
    count = int(np.prod(shape, dtype=np.int64))
    if tensor.tensor_content:
        if len(tensor.tensor_content) != count * dtype.itemsize:
            raise IrforgeError(
                f"tensor has {len(tensor.tensor_content)} bytes for shape {list(shape)} of {dtype}",
                where=where, fix="the graph file is corrupt; re-export it",
                code="E394",
            )
        return np.frombuffer(tensor.tensor_content, dtype).reshape(shape)
    values = getattr(tensor, _VALUE_FIELDS[dtype.name])
    if tensor.dtype == DT_HALF:
        flat = np.asarray(values, np.uint16).view(np.float16)
    else:
        flat = np.asarray(values, dtype)
    if flat.size == count:
        return flat.reshape(shape)
    if flat.size == 0:
        return np.zeros(shape, dtype)
    if flat.size > count:
        raise IrforgeError(f"tensor has {flat.size} values for shape {list(shape)}", where=where, fix="re-export the graph", code="E394")
    return np.concatenate([flat, np.full(count - flat.size, flat[-1], dtype)]).reshape(shape)
