"""Writing MXNet models without MXNet, for tests: NDArray list files (.params, .nd) in every
NDArray version, and symbol JSON built node by node.

    b = SymbolBuilder()
    x = b.var("data")
    y = b.op("Convolution", "conv0", [x, b.param("conv0_weight", w)], kernel=(3, 3), num_filter=8, no_bias=True)
    b.save(tmp_path, "net", [y])          # net-symbol.json + net-0000.params (arg:/aux: names)

Attribute values are written as MXNet writes them: Python literals as strings ("(3, 3)",
"True", "0.001").
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

LIST_MAGIC = 0x112
MAGICS = {"v1": 0xF993FAC8, "v2": 0xF993FAC9, "v3": 0xF993FACA}
TYPE_FLAGS = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.float16): 2, np.dtype(np.uint8): 3,
              np.dtype(np.int32): 4, np.dtype(np.int8): 5, np.dtype(np.int64): 6, np.dtype(np.bool_): 7}  # fmt: skip


def ndarray_bytes(array: np.ndarray, version: str = "v2", type_flag: int | None = None) -> bytes:
    """One NDArray record: v1/v2/v3 (int64 dims), or legacy (the ndim as magic, u32 dims)."""
    array = np.asarray(array, order="C")  # ascontiguousarray would make a 0-d array 1-d
    shape = array.shape
    if version == "legacy":
        head = struct.pack("<I", len(shape)) + struct.pack(f"<{len(shape)}I", *shape)
    else:
        head = struct.pack("<I", MAGICS[version])
        if version != "v1":
            head += struct.pack("<i", 0)  # dense storage
        head += struct.pack("<i", len(shape)) + struct.pack(f"<{len(shape)}q", *shape)
    if not shape and version != "v3":
        return head  # an empty array: the record ends with its shape
    flag = TYPE_FLAGS[array.dtype] if type_flag is None else type_flag
    return head + struct.pack("<iii", 1, 0, flag) + array.astype(array.dtype.newbyteorder("<")).tobytes()


def ndarray_list_bytes(arrays: Mapping[str, np.ndarray], version: str = "v2") -> bytes:
    out = [struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays))]
    out += [ndarray_bytes(a, version) for a in arrays.values()]
    out.append(struct.pack("<Q", len(arrays)))
    for name in arrays:
        encoded = name.encode("utf-8")
        out.append(struct.pack("<Q", len(encoded)) + encoded)
    return b"".join(out)


def write_params(path: Path, arrays: Mapping[str, np.ndarray], version: str = "v2") -> Path:
    path.write_bytes(ndarray_list_bytes(arrays, version))
    return path


def attr_text(value: object) -> str:
    """A Python value as MXNet writes attributes: (3, 3), True, 0.001."""
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(attr_text(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return str(value)


class SymbolBuilder:
    """Nodes of a symbol file, with the weights of its `null` parameter nodes."""

    def __init__(self, attr_key: str = "attrs") -> None:
        self.nodes: list[dict] = []
        self.params: dict[str, np.ndarray] = {}
        self.aux: set[str] = set()
        self.attr_key = attr_key

    def _add(self, op: str, name: str, inputs: Sequence[tuple[int, int]], attrs: Mapping[str, object]) -> tuple[int, int]:
        node: dict = {"op": op, "name": name, "inputs": [[i, o, 0] for i, o in inputs]}
        if attrs:
            node[self.attr_key] = {k: attr_text(v) for k, v in attrs.items()}
        self.nodes.append(node)
        return len(self.nodes) - 1, 0

    def var(self, name: str, **attrs: object) -> tuple[int, int]:
        """A model input (a null node without weights); `__shape__=(1, 3, 8, 8)` declares its shape."""
        return self._add("null", name, [], attrs)

    def param(self, name: str, array: np.ndarray, aux: bool = False) -> tuple[int, int]:
        self.params[name] = np.asarray(array)
        if aux:
            self.aux.add(name)
        return self._add("null", name, [], {})

    def op(self, op: str, name: str, inputs: Sequence[tuple[int, int]], **attrs: object) -> tuple[int, int]:
        return self._add(op, name, inputs, attrs)

    def output(self, entry: tuple[int, int], port: int) -> tuple[int, int]:
        return entry[0], port

    def symbol_json(self, heads: Sequence[tuple[int, int]]) -> str:
        args = [i for i, n in enumerate(self.nodes) if n["op"] == "null"]
        return json.dumps(
            {
                "nodes": self.nodes,
                "arg_nodes": args,
                "node_row_ptr": list(range(len(self.nodes) + 1)),
                "heads": [[i, o, 0] for i, o in heads],
                "attrs": {"mxnet_version": ["int", 10901]},
            },
            indent=2,
        )

    def named_params(self, prefixed: bool = True) -> dict[str, np.ndarray]:
        if not prefixed:
            return dict(self.params)
        return {("aux:" if n in self.aux else "arg:") + n: a for n, a in self.params.items()}

    def save(self, directory: Path, name: str, heads: Sequence[tuple[int, int]], version: str = "v2", prefixed: bool = True, epoch: int | None = 0) -> Path:
        """NAME-symbol.json and NAME-0000.params (NAME.params with epoch None); the params path."""
        (directory / f"{name}-symbol.json").write_text(self.symbol_json(heads))
        params = directory / (f"{name}-{epoch:04d}.params" if epoch is not None else f"{name}.params")
        return write_params(params, self.named_params(prefixed), version)

    # -- common layers ----------------------------------------------------------------------
    def conv(self, x: tuple[int, int], name: str, cin: int, cout: int, k: int, rng: np.random.Generator, group: int = 1, bias: bool = True, **attrs: object) -> tuple[int, int]:
        w = self.param(f"{name}_weight", (rng.standard_normal((cout, cin // group, k, k)) / np.sqrt(cin // group * k * k)).astype(np.float32))
        inputs = [x, w]
        if bias:
            inputs.append(self.param(f"{name}_bias", rng.uniform(-0.5, 0.5, cout).astype(np.float32)))
        return self.op("Convolution", name, inputs, kernel=(k, k), num_filter=cout, num_group=group, no_bias=not bias, **attrs)

    def batch_norm(self, x: tuple[int, int], name: str, channels: int, rng: np.random.Generator, **attrs: object) -> tuple[int, int]:
        inputs = [
            x,
            self.param(f"{name}_gamma", rng.uniform(0.5, 1.5, channels).astype(np.float32)),
            self.param(f"{name}_beta", rng.uniform(-0.5, 0.5, channels).astype(np.float32)),
            self.param(f"{name}_moving_mean", rng.uniform(-0.5, 0.5, channels).astype(np.float32), aux=True),
            self.param(f"{name}_moving_var", rng.uniform(0.5, 2.0, channels).astype(np.float32), aux=True),
        ]
        return self.op("BatchNorm", name, inputs, **attrs)
