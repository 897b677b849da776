"""Lowering an `nn` function to a sequence of parallel phases over planned buffers.

Each op is lowered by the function registered for its class in `LOWERINGS` (see
`irforge.backends.cpu.ops`). A lowering asks the `Lowering` context for its operands'
buffers, allocates its results (or aliases its input, for views), packs weights into new
constant buffers, requests scratch, generates kernels (deduplicated by their spec: ResNet
repeats most layers) and appends phases: a phase is one kernel call by every thread,
followed by a barrier. Buffer liveness is recorded in phase indices for the planner.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from llvmlite import ir
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Operation, SSAValue

from irforge.backends.reference import constant_value
from irforge.backends.reference.run_time_sizes import memory_bytes
from irforge.dialects.nn.constant import Constant
from irforge.errors import IrforgeError
from irforge.model import Model, input_names, output_names
from irforge.weights.dtypes import from_xdsl

Lowerer = Callable[["Lowering", Operation], None]
LOWERINGS: dict[type[Operation], Lowerer] = {}


def lowering(*classes: type[Operation]) -> Callable[[Lowerer], Lowerer]:
    """Register the decorated function as the CPU lowering of `classes`."""

    def register(fn: Lowerer) -> Lowerer:
        for cls in classes:
            LOWERINGS[cls] = fn
        return fn

    return register


@dataclass(eq=False)
class Buffer:
    """Storage: an arena tensor or scratch (placed by the planner), a constant, an input."""

    nbytes: int
    kind: str
    """arena | scratch | const | input | check | workspace (`Lowering.workspace`)"""
    array: np.ndarray | None = None
    first: int = -1
    last: int = -1
    offset: int = -1
    parent: "Buffer | None" = None
    """An arena buffer stored inside another (a Concat's input in its slice of the output,
    `ops.movement.concat`): placed with it, `within` bytes in; the planner sets `offset`."""
    within: int = 0
    note: str = ""
    """a check word's error code and message, `{}` standing for the value the kernel stored
    (see `Lowering.check_word`)"""

    def touch(self, phase: int) -> None:
        self.first = phase if self.first < 0 else min(self.first, phase)
        self.last = max(self.last, phase)


@dataclass
class Phase:
    function: str
    args: list[Buffer]
    tag: str = ""
    """layer class for profiling: conv3x3, conv1x1, depthwise, fc, ... (empty: other)"""
    flops: int = 0


@dataclass
class Program:
    """What lowering produces: LLVM modules, phases, buffers, and the model's interface."""

    modules: list[ir.Module]
    phases: list[Phase]
    buffers: list[Buffer]
    inputs: list[tuple[str, Buffer, tuple[int, ...], np.dtype]]
    outputs: list[tuple[str, Buffer, tuple[int, ...], np.dtype]]
    host_steps: list = field(default_factory=list)
    """Phases run by Python callbacks (custom layers' numpy forward), checked after a run."""


@dataclass
class Lowering:
    """The state lowerings share; see the module docstring."""

    new_module: Callable[[str, str], ir.Module]
    """(function name, kernel specification) -> a module (see `Jit.module`)"""
    built: Callable[[ir.Module], None] | None = None
    """called with each kernel's module once its IR is built (`Jit.submit`: LLVM starts on it)"""
    modules: list[ir.Module] = field(default_factory=list)
    phases: list[Phase] = field(default_factory=list)
    buffers: list[Buffer] = field(default_factory=list)
    values: dict[SSAValue, Buffer] = field(default_factory=dict)
    constants: dict[SSAValue, np.ndarray] = field(default_factory=dict)
    kernels: dict[str, str] = field(default_factory=dict)
    absorbed: set[Operation] = field(default_factory=set)
    uses: dict[SSAValue, int] = field(default_factory=dict)
    order: dict[Operation, int] = field(default_factory=dict)
    """each op's position in the function body (lowered in this order)"""
    host_steps: list = field(default_factory=list)
    channel_scales: dict[SSAValue, tuple[Operation, Buffer]] = field(default_factory=dict)
    """A Multiply's result whose per-channel scale the 1x1 convolution using it folds into its
    weights (`ops/excite.py`): the Multiply and the scale's buffer."""
    input_activations: dict[SSAValue, tuple[Operation, str, tuple[float, ...]]] = field(default_factory=dict)
    """A ReLU / Clamp result that the depthwise layer reading it applies to its input as it
    copies it (`ops/input_activation.py`): the op, its epilogue kind and params."""
    b_panels: set[Buffer] = field(default_factory=set)
    """Arena buffers a depthwise layer wrote as the next 1x1 layer's B panels
    (`depthwise.PANEL_OUTPUT`): that layer's GEMM reads them as they are."""
    heads_rows: set[Buffer] = field(default_factory=set)
    """Arena buffers of a [B, H, L, Dv] attention output that its kernel wrote as [B, L, H, Dv]
    rows (`attention.HEADS_ROWS`): their one user, the merged-heads output projection, reads
    them as [B * L, H * Dv] (`linear.merged_heads`)."""
    packed_rows: dict[tuple, Buffer] = field(default_factory=dict)
    """B panels a copy made of a buffer's rows, by (that buffer, K, N): later 1x1 layers over
    the same input read them (`linear.SHARED_PACKS`)."""
    workspaces: dict[str, int] = field(default_factory=dict)
    """Kernels that take a per-chunk workspace as their last argument: its bytes, by name."""
    derived: dict[tuple, Buffer] = field(default_factory=dict)
    """Constants made from a weight (packed panels), by (the weight's value, how): layers that
    share a weight share them (`derived_const`)."""

    # -- buffers ---------------------------------------------------------------------
    def buffer(self, nbytes: int, kind: str, array: np.ndarray | None = None) -> Buffer:
        buf = Buffer(max(int(nbytes), 4), kind, array)
        self.buffers.append(buf)
        return buf

    def input(self, op: Operation, index: int) -> Buffer:
        return self.values[op.operands[index]]

    def output(self, op: Operation, index: int = 0) -> Buffer:
        """A fresh arena buffer for result `index`."""
        return self.result(op.results[index])

    def result(self, value: SSAValue) -> Buffer:
        """A fresh arena buffer for `value`."""
        buf = self.buffer(nbytes_of(value), "arena")
        self.values[value] = buf
        return buf

    def alias(self, value: SSAValue, buf: Buffer) -> None:
        """`value` is stored in `buf` (views, and results absorbed into a producer). A result
        stored over `buf` in place (`fusion.residual_in_place`, element-wise ops in place)
        makes B panels copied from `buf`'s earlier content stale: they are forgotten
        (`linear.SHARED_PACKS` keys them by buffer; a view forgets them too, which only costs
        a second copy)."""
        self.values[value] = buf
        if self.packed_rows:
            self.packed_rows = {key: panels for key, panels in self.packed_rows.items() if key[0] is not buf}

    def scale_pending(self, buf: Buffer, here: int) -> bool:
        """Whether a deferred channel scale (`channel_scales`) held in `buf`, or in a buffer
        stored inside it (`Buffer.parent`), is yet to be read by its 1x1 layer at or after
        position `here`: the Multiply that deferred it is lowered, but the scale is read
        later, so nothing may store over `buf` in place before that layer."""
        for product, (_, held) in self.channel_scales.items():
            inner = held
            while inner is not None and inner is not buf:
                inner = inner.parent
            if inner is not None and any(self.order.get(use.operation, here) >= here for use in product.uses):
                return True
        return False

    def const(self, array: np.ndarray) -> Buffer:
        array = np.ascontiguousarray(array)
        return self.buffer(array.nbytes, "const", array)

    def derived_const(self, value: SSAValue, how: tuple, make: Callable[[], np.ndarray]) -> Buffer:
        """The constant `make()` computes from `value`'s array (packed weights; `how` names the
        layout), made once per (value, how): ALBERT's 12 layers run one set of weights, which
        were packed 12 times (339 MiB of packed constants for 42 MiB of weights)."""
        key = (value, how)
        buf = self.derived.get(key)
        if buf is None:
            buf = self.derived[key] = self.const(make())
        return buf

    def scratch(self, nbytes: int) -> Buffer:
        return self.buffer(nbytes, "scratch")

    def workspace(self, nbytes: int) -> Buffer:
        """A kernel's working memory per chunk: the executable places `threads` slices of the
        program's largest workspace after the arena, one region every phase shares (phases
        run one after another), and the kernel finds chunk c's `nbytes` at the slot's address
        + c * nbytes (a chunk runs on one thread at a time). For blocks too large for a
        thread's stack: the caller's thread runs chunk 0, and a caller on a small-stack thread
        (256 KiB) crashed in a 640 KiB frame."""
        return self.buffer(-(-int(nbytes) // 64) * 64, "workspace")

    def check_word(self, code: str, message: str) -> Buffer:
        """Two i64 words a kernel sets when it meets bad run-time data (an index out of
        range): [1, the bad value]. The executable zeroes them before each run and, after a
        run that set them, raises the reference's error: `code` and `message`, whose `{}`
        the value replaces. The reference raises there; a native kernel must neither read
        outside nor give a silent number."""
        buf = self.buffer(16, "check")
        buf.note = f"{code} {message}"
        return buf

    def constant_of(self, value: SSAValue) -> np.ndarray | None:
        """The array of a value defined by nn.constant, else None."""
        return self.constants.get(value)

    # -- kernels and phases ------------------------------------------------------------
    def kernel(self, key: tuple, build: Callable[[ir.Module, str], None], workspace: int = 0) -> str:
        """The function generated by `build` for `key` (generated once per distinct key).
        `workspace` > 0: the kernel takes a per-chunk workspace of that many bytes as its last
        argument (a spec's `workspace_bytes()`), which `phase` appends."""
        spec = repr(key)
        digest = hashlib.sha1(spec.encode()).hexdigest()[:16]
        name = self.kernels.get(digest)
        if name is None:
            name = self.kernels[digest] = f"k{digest}_{key[0]}"
            if workspace > 0:
                self.workspaces[name] = workspace
            module = self.new_module(name, spec)
            if getattr(module, "cached", None) is None:  # a cached kernel needs no IR
                build(module, name)
                if self.built is not None:
                    self.built(module)
            self.modules.append(module)
        return name

    def phase(self, function: str, args: list[Buffer], tag: str = "", flops: int = 0) -> None:
        if function in self.workspaces:
            args = [*args, self.workspace(self.workspaces[function])]
        index = len(self.phases)
        self.phases.append(Phase(function, args, tag, flops))
        for buf in args:
            buf.touch(index)

    def single_use(self, value: SSAValue) -> Operation | None:
        """The only user of `value`, if it has exactly one use."""
        if self.uses.get(value, 0) != 1:
            return None
        return next(iter(value.uses)).operation


def nbytes_of(value: SSAValue) -> int:
    t = value.type
    assert isinstance(t, TensorType)
    return int(np.prod(t.get_shape(), dtype=np.int64)) * np.dtype(from_xdsl(t.element_type)).itemsize


def shape_of(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def dtype_of(value: SSAValue) -> np.dtype:
    t = value.type
    assert isinstance(t, TensorType)
    return np.dtype(from_xdsl(t.element_type))


def check_static(model: Model) -> None:
    func = model.func
    values = [*func.args, *(r for op in func.body.block.ops for r in op.results)]
    for value in values:
        if isinstance(value.type, TensorType) and any(d < 0 for d in value.type.get_shape()):
            owner = value.owner.name if isinstance(value.owner, Operation) else "an input"
            raise IrforgeError(
                f"the CPU backend needs static shapes, '{owner}' has {value.type}",
                fix="set the input shapes (ir-convert --input_shape) before compiling",
                code="E841",
            )


def lowering_of(op: Operation) -> Lowerer | None:
    """The op's lowering: registered for its class, a custom layer's (its own kernel, or its
    numpy forward as a host step), or its reference kernel as a host step (`host_steps.py`;
    also ops on element types their native kernels lack)."""
    from irforge.backends.cpu.host_steps import HOST_STEP_OPS, lower_reference, needs_host_element_type

    if needs_host_element_type(op):
        return lower_reference
    found = LOWERINGS.get(type(op))
    if found is None:

        if type(op) in HOST_STEP_OPS:
            return lower_reference
        from irforge.backends.cpu.ops.custom import custom_of, lower_custom

        if custom_of(op) is not None:
            return lower_custom
    return found


RELEASE_BYTES = 32 << 20
"""Packed constants made between two `release_mapped_pages` calls during lowering: the weight
file's pages read by packing are dropped as it goes, so a cold compile holds the file and
the packed copies together for at most this much (BERT-base: peak RSS 1006 -> 5xx MiB)."""


def check_result_memory(op: Operation) -> None:
    """MemoryError (E004) for a result larger than this machine's memory, before its lowering
    builds per-element index tables for it (a Pad to 2**31 rows ran for minutes)."""
    for result in op.results:
        dims = [int(d) for d in getattr(result.type, "get_shape", lambda: ())() if int(d) >= 0]
        if not dims:
            continue
        needed = math.prod(dims) * np.dtype(dtype_of(result)).itemsize
        if needed > memory_bytes():
            raise MemoryError(f"{op.name} result of shape {dims} needs {needed / 2**30:.3g} GiB, more than this machine's memory")


def lower(model: Model, new_module: Callable[[str], ir.Module], built: Callable[[ir.Module], None] | None = None) -> Program:
    """Lower every op of the model's function; unsupported ops are reported together.
    `built(module)` is called as each kernel's IR is complete."""
    import irforge.backends.cpu.ops  # noqa: F401  (registers the lowerings)
    from irforge.backends.cpu.memory import release_mapped_pages

    func = model.func
    check_static(model)
    body = list(func.body.block.ops)
    missing = sorted({op.name for op in body if not isinstance(op, Constant | ReturnOp) and lowering_of(op) is None})
    if missing:
        raise IrforgeError(
            f"no CPU kernel for {', '.join(missing)}",
            where=f"model function @{func.sym_name.data}",
            fix="run the model with --device ref, or add the kernel to irforge/backends/cpu",
            code="E841",
        )
    ctx = Lowering(new_module, built)
    packed = 0
    for index, op in enumerate(body):
        ctx.order[op] = index
        for operand in op.operands:
            ctx.uses[operand] = ctx.uses.get(operand, 0) + 1
    inputs = []
    for name, arg in zip(input_names(func), func.args):
        buf = ctx.buffer(nbytes_of(arg), "input")
        ctx.values[arg] = buf
        inputs.append((name, buf, shape_of(arg), dtype_of(arg)))
    for op in body:
        if isinstance(op, ReturnOp):
            outputs = [
                (name, ctx.values[v], shape_of(v), dtype_of(v)) for name, v in zip(output_names(func), op.arguments)
            ]
            for _, buf, _, _ in outputs:
                buf.touch(len(ctx.phases))
            return Program(ctx.modules, ctx.phases, ctx.buffers, inputs, outputs, ctx.host_steps)
        if isinstance(op, Constant):
            array = np.ascontiguousarray(constant_value(op, model.store))
            ctx.constants[op.output] = array
            ctx.values[op.output] = ctx.const(array)
        elif op not in ctx.absorbed:
            check_result_memory(op)
            made = len(ctx.buffers)
            lowering_of(op)(ctx, op)  # type: ignore[misc]
            packed += sum(b.nbytes for b in ctx.buffers[made:] if b.kind == "const")
            if packed >= RELEASE_BYTES:  # the weights just packed were read from the file's pages
                release_mapped_pages(ctx.constants.values())
                packed = 0
    raise IrforgeError("the model function has no func.return", code="E841")
