"""What an emitter works with: ports, layer creation, constants, and the emitter table.

An emitter is a small function `(ctx, op, inputs) -> outputs` that turns one op into opset
layers; `inputs` and `outputs` are `Port`s. Constants stay *deferred* until a layer reads
them, so an emitter may reshape a weight (`ctx.reshape`) without leaving the original Const
behind, and a constant used by several layers becomes one Const layer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from xdsl.ir import Operation

from irforge.backends.ir_xml.xml_text import escape_name
from irforge.backends.ir_xml.graph import Edge, IrGraph, Layer, PortType, element_name, fmt_ints, fmt_partial_shape, packed_element_name
from irforge.errors import IrforgeError

F16_MAX = float(np.finfo(np.float16).max)
_RANGE_CHUNK = 1 << 20


class Port:
    """An output of an emitted layer, or a constant whose Const layer is made on first use."""

    def __init__(self, type: PortType, layer: int | None = None, index: int = 0, array: np.ndarray | None = None, name: str = "", bits: int = 0) -> None:
        self.type = type
        self.layer = layer
        self.index = index
        self.array = array
        self.name = name
        self.bits = bits  # 4: a constant stored packed (i4 / u4), see nn.constant's `bits`
        self.keep_precision = False  # a constant an FP16 IR keeps in f32 (compressed weights' scales)

    @property
    def dims(self) -> tuple[int, ...]:
        return self.type.dims

    @property
    def dtype(self) -> np.dtype:
        return self.type.dtype


Emitter = Callable[["EmitContext", Operation, list[Port]], Sequence[Port]]
EMITTERS: dict[type[Operation], Emitter] = {}


def register_ir_xml_emitter(op_class: type[Operation], fn: Emitter) -> Emitter:
    """Make `fn` the IR XML emitter of `op_class` (extensions call this for their ops)."""
    EMITTERS[op_class] = fn
    return fn


def ir_xml_emitter(*op_classes: type[Operation]) -> Callable[[Emitter], Emitter]:
    """Decorator form of `register_ir_xml_emitter` for several op classes."""

    def register(fn: Emitter) -> Emitter:
        for cls in op_classes:
            register_ir_xml_emitter(cls, fn)
        return fn

    return register


def fits_f16(array: np.ndarray) -> bool:
    """Whether every finite value survives the cast to f16 (read chunk by chunk: weights
    are memory-mapped and may be larger than what should be copied at once)."""
    flat = array.reshape(-1)
    for start in range(0, flat.size, _RANGE_CHUNK):
        chunk = flat[start : start + _RANGE_CHUNK]
        finite = chunk[np.isfinite(chunk)]
        if finite.size and float(np.abs(finite).max()) > F16_MAX:
            return False
    return True


def check_packable(array: np.ndarray, bits: int, name: str) -> None:
    """Raise E124 unless `array` (int8 / uint8) holds only values of the `bits`-bit range."""
    signed = array.dtype == np.int8
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    flat = array.reshape(-1)
    for start in range(0, flat.size, _RANGE_CHUNK):
        chunk = flat[start : start + _RANGE_CHUNK]
        if array.dtype not in (np.int8, np.uint8) or (chunk.size and (int(chunk.min()) < low or int(chunk.max()) > high)):
            raise IrforgeError(
                f"constant '{name}' is marked {bits}-bit (bits = {bits}) but holds {array.dtype} values outside {low}..{high}",
                fix="drop `bits` from the nn.constant, or give it values of the packed range", code="E124",
            )  # fmt: skip


class EmitContext:
    """Builds the `IrGraph`: layers in creation order, which is a topological order."""

    def __init__(self, name: str, compress_to_fp16: bool = False) -> None:
        self.graph = IrGraph(name)
        self.compress_to_fp16 = compress_to_fp16
        self._used: set[str] = set()
        self._decompression: set[tuple[int, int]] = set()
        """Outputs of integer weights' decompression subgraphs (Convert, Subtract, Multiply)."""

    # -- names ---------------------------------------------------------------------------
    def unique(self, name: str) -> str:
        """`name`, suffixed if a layer already has it (OpenVINO looks layers up by name)."""
        fresh, i = name, 0
        while fresh in self._used:
            i += 1
            fresh = f"{name}_{i}"
        self._used.add(fresh)
        return fresh

    def name(self, op: Operation, suffix: str = "") -> str:
        """The layer name for `op` (its `name` property, else its type), plus `suffix`."""
        layer = op.properties.get("name")
        base = getattr(layer, "data", None) or type(op).__name__
        return base + (f"/{suffix}" if suffix else "")

    # -- layers --------------------------------------------------------------------------
    def layer(
        self,
        type: str,
        inputs: Sequence[Port],
        outputs: Sequence[PortType],
        *,
        name: str,
        data: Mapping[str, str] | None = None,
        version: str = "opset1",
        rt_info: Sequence[str] = (),
    ) -> list[Port]:
        """Append a layer reading `inputs`; returns its output ports."""
        sources = [self.materialize(p) for p in inputs]
        layer = Layer(
            len(self.graph.layers), self.unique(name), type, version, dict(data or {}),
            [p.type for p in sources], list(outputs), [[] for _ in outputs], list(rt_info),
        )  # fmt: skip
        self.graph.layers.append(layer)
        for i, p in enumerate(sources):
            assert p.layer is not None
            producer = self.graph.layers[p.layer]
            self.graph.edges.append(Edge(p.layer, producer.output_port_id(p.index), layer.id, i))
        return [Port(t, layer.id, i) for i, t in enumerate(outputs)]

    def single(self, type: str, inputs: Sequence[Port], output: PortType, *, name: str, data: Mapping[str, str] | None = None, version: str = "opset1") -> Port:
        return self.layer(type, inputs, [output], name=name, data=data, version=version)[0]

    def parameter(self, name: str, t: PortType) -> Port:
        data = {"shape": fmt_partial_shape(t.dims), "element_type": element_name(t.dtype)}
        port = self.single("Parameter", [], t, name=name, data=data)
        self.add_tensor_name(port, name)
        return port

    def result(self, port: Port, name: str) -> None:
        port = self.materialize(port)
        self.add_tensor_name(port, name)
        producer = self.graph.layers[port.layer]  # type: ignore[index]
        self.layer("Result", [port], [], name=f"{name}/sink_port_0")
        # the name of this output alone, where the port carries several; not for an input
        # returned as it is, whose own name OpenVINO would then lose
        if producer.type != "Parameter":
            self.graph.layers[-1].attributes["output_names"] = escape_name(name)

    def add_tensor_name(self, port: Port, name: str) -> None:
        assert port.layer is not None
        names = self.graph.layers[port.layer].output_names[port.index]
        if name not in names:
            names.append(name)

    # -- compressed weights --------------------------------------------------------------
    def mark_decompression(self, port: Port) -> None:
        """`port` is integer weights being decompressed (their scales then stay f32)."""
        self._decompression.add((port.layer, port.index))  # type: ignore[arg-type]

    def is_decompression(self, port: Port) -> bool:
        return port.layer is not None and (port.layer, port.index) in self._decompression

    # -- constants -----------------------------------------------------------------------
    def const(self, array: np.ndarray, name: str = "Constant", bits: int = 0) -> Port:
        """A deferred constant: it becomes a Const layer when a layer first reads it; with
        `bits` 4, an i4 / u4 one (int8 / uint8 values that fit in 4 bits)."""
        array = np.asarray(array)
        return Port(PortType(array.dtype, array.shape, bits), array=array, name=name, bits=bits)

    def ints(self, values: Sequence[int], name: str = "Constant") -> Port:
        """A 1-D i64 constant (axes, shapes, pads)."""
        return self.const(np.asarray(list(values), dtype=np.int64).reshape(-1), name)

    def scalar(self, value: float, like: Port | PortType, name: str = "Constant", rank: int = 0) -> Port:
        """A constant of `like`'s element type with one value, of rank `rank` (all dims 1)."""
        dtype = like.dtype
        return self.const(np.full((1,) * rank, value, dtype=dtype), name)

    def materialize(self, port: Port) -> Port:
        """The layer output behind `port`: a deferred constant gets its Const layer now."""
        if port.layer is not None:
            return port
        assert port.array is not None
        array = port.array
        if self.compress_to_fp16 and not port.keep_precision and array.dtype == np.float32 and array.size and fits_f16(array):
            stored = self._const_layer(array, np.dtype(np.float16), f"{port.name}_compressed")
            data = {"destination_type": "f32"}
            converted = self.layer("Convert", [stored], [port.type], name=port.name, data=data, rt_info=["decompression"])[0]
            port.layer, port.index = converted.layer, converted.index
        else:
            if port.bits:
                check_packable(array, port.bits, port.name)
            stored = self._const_layer(array, array.dtype, port.name, port.bits)
            port.layer, port.index = stored.layer, stored.index
        return port

    def _const_layer(self, array: np.ndarray, dtype: np.dtype, name: str, bits: int = 0) -> Port:
        t = PortType(np.dtype(dtype), tuple(array.shape), bits)
        element = packed_element_name(t.dtype, bits) if bits else element_name(t.dtype)
        data = {"element_type": element, "shape": fmt_ints(t.dims)}
        port = self.single("Const", [], t, name=name, data=data)
        layer = self.graph.layers[port.layer]  # type: ignore[index]
        layer.blob = array
        layer.blob_bits = bits
        return port

    def reshape(self, port: Port, dims: Sequence[int], name: str) -> Port:
        """`port` with new dims: a reshaped constant when its value is known (no layer), else
        a Reshape layer. `dims` must be fully known."""
        dims = tuple(int(d) for d in dims)
        if any(d < 0 for d in dims):
            raise IrforgeError(f"layer '{name}' needs static dims to reshape to, got {list(dims)}", fix="give static input shapes", code="E848")
        if port.array is not None:
            return self.const(port.array.reshape(dims), port.name, port.bits)
        if port.dims == dims:
            return port
        return self.single("Reshape", [port, self.ints(dims, f"{name}/shape")], port.type.with_dims(dims), name=name, data={"special_zero": "false"})


def unsupported_ops(ops: Sequence[Operation]) -> IrforgeError | None:
    """One error naming every op without an emitter (with counts and first layers)."""
    missing: dict[str, list[str]] = {}
    for op in ops:
        if type(op) not in EMITTERS:
            layer = op.properties.get("name")
            missing.setdefault(op.name, []).append(getattr(layer, "data", None) or "?")
    if not missing:
        return None
    parts = [
        f"{name} x{len(layers)} ({', '.join(layers[:3])}{', ...' if len(layers) > 3 else ''})"
        for name, layers in sorted(missing.items())
    ]
    return IrforgeError(
        f"no OpenVINO IR mapping for: {'; '.join(parts)}",
        fix="register one with irforge.backends.ir_xml.register_ir_xml_emitter(OpClass, fn)",
        code="E848",
    )
