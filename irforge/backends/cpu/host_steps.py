"""Host steps: a Python callback as one phase of the native CPU program.

Some ops are sequential, data-dependent and cheap next to the convolutions around them
(SSD's DetectionOutput, Faster R-CNN's Proposal and ROI pooling, YOLO's region layer; ONNX's
NonZero/TopK/NMS); they run on the host instead of in generated code. A host step is a
ctypes callback bound to the phase's symbol in the JIT: the driver calls it like any kernel,
with the phase's argument table; the thread that runs chunk 0 (the caller's thread, or a
worker: see `runtime.py`) views the phase's buffers (operands, then results: explicit buffers
planned like any other) as numpy arrays, calls the step's function and copies its results
into the result buffers, while the other threads wait for the phase. The GIL is taken in
the callback. An exception is kept and raised by the executable after the run.

API:
- `host_step_op(*classes)`: run these op classes' numpy reference kernels as host steps
  (`HOST_STEP_OPS`, consulted by `lower.lowering_of` after the native lowerings).
- `on_host_for(element_type, *classes)`: the same for ops of these classes that touch a
  tensor of an element type their native kernels lack (f64, 8/16-bit integers;
  `HOST_ELEMENT_TYPES`, consulted by `lower.lowering_of` first).
- `host_phase(ctx, op, forward, tag)`: append a host step calling `forward(*operands)` for
  `op` (a list or tuple of arrays, or one array, per result); custom layers use it for their
  numpy forward.

A reference-kernel step (`lower_reference`) carries a recipe: its op alone as a module's
text (operands as the function's arguments), and its symbol is named by a hash of the recipe
and the step's place in the program, so the driver that calls it is the same object in every
compile (cached) and a cached program rebuilds the step from its recipe (`rebuild`). A custom
layer's forward has no recipe: its program is not cached.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import llvmlite.binding as llvm
import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType, f64
from xdsl.ir import Attribute, Operation

from irforge.backends.common import view_at
from irforge.backends.cpu.lower import Lowering, dtype_of, shape_of
from irforge.errors import IrforgeError

HOST_STEP = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64, ctypes.c_int64)
_KEEP_ALIVE: list[object] = []  # compiled code holds the callbacks' addresses for good
_SERIAL = itertools.count()

HOST_STEP_OPS: set[type[Operation]] = set()
"""Op classes the CPU backend runs with their reference kernel as host steps."""


HOST_ELEMENT_TYPES: dict[type[Operation], list[Callable[[Attribute], bool]]] = {}
"""Op classes whose native kernels lack some element types, with a test per such type: an op
with an operand or result of one of them runs its reference kernel as a host step (f64 for
the f32-only kernels and 8/16-bit integers for Pooling: `ops/f64_host.py`)."""


def on_host_for(element_type: Callable[[Attribute], bool], *classes: type[Operation]) -> None:
    """Run `classes` as host steps of their reference kernels when they touch a tensor whose
    element type passes `element_type`."""
    for cls in classes:
        HOST_ELEMENT_TYPES.setdefault(cls, []).append(element_type)


def is_f64(element_type: Attribute) -> bool:
    return element_type == f64


def is_small_integer(element_type: Attribute) -> bool:
    """(u)int8 / (u)int16: quantised data."""
    return isinstance(element_type, IntegerType) and element_type.width.data in (8, 16)


def needs_host_element_type(op: Operation) -> bool:
    """An op of `HOST_ELEMENT_TYPES` touching one of its class's element types."""
    tests = HOST_ELEMENT_TYPES.get(type(op))
    return bool(tests) and any(isinstance(v.type, TensorType) and any(test(v.type.element_type) for test in tests)
                               for v in (*op.operands, *op.results))  # fmt: skip


def host_step_op(*classes: type[Operation]) -> None:
    """Run `classes` on the CPU backend as host steps calling their reference kernels."""
    HOST_STEP_OPS.update(classes)


@dataclass
class HostStep:
    """A Python function as a phase of the native program (see the module docstring)."""

    op_name: str
    forward: Callable[..., object]
    inputs: list[tuple[tuple[int, ...], np.dtype]]
    outputs: list[tuple[tuple[int, ...], np.dtype]]
    errors: list[BaseException] = field(default_factory=list)
    symbol: str = ""
    """the JIT symbol the driver calls"""
    recipe: str | None = None
    """the op alone as module text, for the program cache (see the module docstring)"""

    def __call__(self, slots, tid: int, nthreads: int) -> None:  # type: ignore[no-untyped-def]
        if tid != 0:
            return
        try:
            arrays = [view_at(slots[i], s, d) for i, (s, d) in enumerate(self.inputs + self.outputs)]
            produced = self.forward(*arrays[: len(self.inputs)])
            results = produced if isinstance(produced, list | tuple) else [produced]
            for out, value in zip(arrays[len(self.inputs) :], results, strict=True):
                np.copyto(out, np.asarray(value).reshape(out.shape), casting="unsafe")
        except BaseException as e:  # noqa: BLE001  (raised again by the executable, in Python)
            self.errors.append(e)

    def raise_pending(self) -> None:
        if self.errors:
            error = self.errors.pop()
            self.errors.clear()
            if isinstance(error, IrforgeError | KeyboardInterrupt):  # Ctrl-C stays Ctrl-C (E002), not a failed step
                raise error
            raise IrforgeError(f"the forward of {self.op_name} failed: {type(error).__name__}: {error}", code="E843") from error


def host_phase(ctx: Lowering, op: Operation, forward: Callable[..., object], tag: str = "host", recipe: str | None = None) -> None:
    """Append a phase running `forward` on `op`'s operand buffers into fresh result buffers."""
    args = [ctx.input(op, i) for i in range(len(op.operands))] + [ctx.output(op, i) for i in range(len(op.results))]
    step = HostStep(
        op.name,
        forward,
        [(shape_of(v), dtype_of(v)) for v in op.operands],
        [(shape_of(v), dtype_of(v)) for v in op.results],
        recipe=recipe,
    )
    if recipe is not None:  # the same name in every compile of this program (see the module docstring)
        digest = hashlib.sha1(f"{recipe}\0{len(ctx.host_steps)}".encode()).hexdigest()[:16]
    else:
        digest = hashlib.sha1(f"{op.name}{next(_SERIAL)}{id(step)}".encode()).hexdigest()[:12]
    bind(step, f"irforge_host_{digest}")
    ctx.host_steps.append(step)
    ctx.phase(step.symbol, args, tag=tag)


def bind(step: HostStep, symbol: str) -> None:
    """Make `step` the JIT's symbol `symbol`. Engines resolve it when they are finalized: one
    finalized before a later compile binds the same name again keeps the step it had."""
    callback = HOST_STEP(step)
    _KEEP_ALIVE.append(callback)
    step.symbol = symbol
    llvm.add_symbol(symbol, ctypes.cast(callback, ctypes.c_void_p).value)


def _reference_forward(op: Operation) -> Callable[..., object]:
    from irforge.backends.reference import evaluate

    return lambda *arrays: evaluate(op, [np.array(a) for a in arrays])


def lower_reference(ctx: Lowering, op: Operation) -> None:
    """An op of `HOST_STEP_OPS`: its reference kernel as a host step."""
    host_phase(ctx, op, _reference_forward(op), tag="host", recipe=recipe_of(op))


def recipe_of(op: Operation) -> str | None:
    """`op` alone in a function whose arguments are its operands, as module text (None when
    it has regions or does not print and parse back: its program is then not cached)."""
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.dialects.func import FuncOp, ReturnOp
    from xdsl.ir import Block, Region

    if op.regions:
        return None
    try:
        block = Block(arg_types=[v.type for v in op.operands])
        clone = op.clone(value_mapper=dict(zip(op.operands, block.args)))
        block.add_ops([clone, ReturnOp(*clone.results)])
        func = FuncOp("host_step", ([v.type for v in op.operands], [v.type for v in op.results]), Region(block))
        text = str(ModuleOp([func]))
        _op_of(text)  # it must parse back
    except Exception:  # noqa: BLE001  (an op that cannot stand alone: not cached, nothing else)
        return None
    return text


def _op_of(recipe: str) -> Operation:
    from irforge.model import parse_module

    module = parse_module(recipe, source="<host step>")
    func = next(iter(module.body.block.ops))
    return next(iter(func.regions[0].block.ops))  # type: ignore[union-attr]


def rebuild(symbol: str, recipe: str) -> HostStep:
    """A cached program's host step: its op parsed from `recipe`, bound to `symbol`."""
    op = _op_of(recipe)
    step = HostStep(
        op.name,
        _reference_forward(op),
        [(shape_of(v), dtype_of(v)) for v in op.operands],
        [(shape_of(v), dtype_of(v)) for v in op.results],
        recipe=recipe,
    )
    bind(step, symbol)
    return step
