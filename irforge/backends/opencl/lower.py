"""Lowering an `nn` function to OpenCL launches and HETERO host steps over planned buffers.

The context extends the CPU backend's `Lowering` (buffers, views, constants, epilogue
absorption and the liveness the shared arena planner reads): a CPU phase becomes either a
kernel launch or, for an op without an OpenCL kernel, a host step with explicit transfers
(`hetero.py`). Kernel sources are deduplicated by text, so ResNet's repeated layers share
one kernel, and all of a model's kernels go into one program, built once per device.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import TensorType, f32
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Operation, SSAValue

from irforge.backends.cpu.lower import Buffer, Lowering, dtype_of, nbytes_of, shape_of
from irforge.backends.opencl.codegen.common import Param, kernel_text
from irforge.backends.opencl.device import DeviceInfo
from irforge.backends.reference import constant_value
from irforge.dialects.nn.constant import Constant
from irforge.errors import IrforgeError
from irforge.model import Model, input_names, output_names

Check = Callable[[Operation], "str | None"]
Lowerer = Callable[["OclLowering", Operation], None]


@dataclass(frozen=True)
class Entry:
    lower: Lowerer
    check: Check


LOWERINGS: dict[type[Operation], Entry] = {}
"""Op class -> its OpenCL lowering and the check of what that lowering handles."""

CPU_ONLY: dict[type[Operation], str] = {}
"""Op class -> why it has no OpenCL kernel (it runs through the HETERO fallback)."""


def f32_only(op: Operation) -> str | None:
    """The arithmetic kernels compute in f32: other element types fall back, by name."""
    for value in (*op.operands, *op.results):
        t = value.type
        if isinstance(t, TensorType) and t.element_type != f32:
            return f"OpenCL kernel is f32 only, this op has {t.element_type}"
    return None


def opencl_lowering(*classes: type[Operation], check: Check = f32_only) -> Callable[[Lowerer], Lowerer]:
    """Register the decorated function as the OpenCL lowering of `classes`."""

    def register(fn: Lowerer) -> Lowerer:
        for cls in classes:
            LOWERINGS[cls] = Entry(fn, check)
        return fn

    return register


@dataclass
class Launch:
    kernel: str
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    args: list[Buffer]
    tag: str = ""
    """The op (or fused group's producer) it computes, for profiles."""
    flops: int = 0
    plain: tuple[float | int, ...] | None = None
    """A custom layer's kernel: whole-buffer pointers (no offsets), then these scalars."""


@dataclass
class HostStep:
    """An op run on the host: inputs are read back, outputs written to the device."""

    label: str
    inputs: list[tuple[Buffer, tuple[int, ...], np.dtype]]
    outputs: list[tuple[Buffer, tuple[int, ...], np.dtype]]
    run: Callable[[list[np.ndarray]], list[np.ndarray]]


@dataclass(frozen=True)
class Fallback:
    op: str
    reason: str
    executor: str
    """'cpu' (the native CPU backend) or 'reference' (the numpy reference kernel)."""

    def describe(self) -> str:
        where = "CPU backend" if self.executor == "cpu" else "numpy reference kernel"
        return f"{self.op} -> {where} ({self.reason})"


def _no_llvm_module(name: str, spec: str) -> None:
    raise AssertionError("the OpenCL lowering makes no LLVM modules")


@dataclass
class OclLowering(Lowering):
    info: DeviceInfo | None = None
    cpu_ops: Collection[str] = ()
    sources: dict[str, str] = field(default_factory=dict)
    steps: list[Launch | HostStep] = field(default_factory=list)
    fallbacks: list[Fallback] = field(default_factory=list)
    current: str = ""

    @property
    def device(self) -> DeviceInfo:
        assert self.info is not None
        return self.info

    def add_kernel(self, prefix: str, params: list[Param], body: str, attributes: str = "") -> str:
        """The name of the kernel with this text (printed once however often it is used)."""
        text = kernel_text("KERNEL_NAME", params, body, attributes)
        name = f"{prefix}_{hashlib.sha1(text.encode()).hexdigest()[:12]}"
        self.sources.setdefault(name, text.replace("KERNEL_NAME", name))
        return name

    def launch(
        self, kernel: str, global_size: tuple[int, ...], local_size: tuple[int, ...] | None, args: list[Buffer], flops: int = 0
    ) -> None:
        if any(g == 0 for g in global_size):
            return  # an empty tensor: nothing to compute
        self.steps.append(Launch(kernel, global_size, local_size, args, self.current, flops))
        self.phase(kernel, args)

    def host(self, step: HostStep, fallback: Fallback) -> None:
        self.steps.append(step)
        self.fallbacks.append(fallback)
        self.phase(step.label, [b for b, _, _ in step.inputs] + [b for b, _, _ in step.outputs])

    def single_use(self, value: SSAValue) -> Operation | None:
        """As the CPU's, but an op placed on the CPU is never absorbed into a GPU kernel."""
        user = super().single_use(value)
        return None if user is not None and unsupported_reason(user, self.cpu_ops) else user


@dataclass
class OclProgram:
    source: str
    steps: list[Launch | HostStep]
    buffers: list[Buffer]
    inputs: list[tuple[str, Buffer, tuple[int, ...], np.dtype]]
    outputs: list[tuple[str, Buffer, tuple[int, ...], np.dtype]]
    fallbacks: list[Fallback]


def unsupported_reason(op: Operation, cpu_ops: Collection[str] = ()) -> str | None:
    """Why `op` cannot run as an OpenCL kernel, or None if it can."""
    if op.name in cpu_ops:
        return "placed on the CPU by the caller"
    if type(op) in CPU_ONLY:
        return CPU_ONLY[type(op)]
    entry = LOWERINGS.get(type(op))
    if entry is None:
        return f32_only(op) if custom_kernel(op) is not None else f"no OpenCL kernel for {op.name}"
    return entry.check(op)


def custom_kernel(op: Operation):  # type: ignore[no-untyped-def]
    """The OpenCL kernel a custom layer (`irforge.custom.CustomOp`) declares, or None."""
    from irforge.custom.op import CUSTOM_OPS

    custom = CUSTOM_OPS.get(op.name)
    return None if custom is None else custom.opencl


def check_static(model: Model) -> None:
    func = model.func
    for value in [*func.args, *(r for op in func.body.block.ops for r in op.results)]:
        if isinstance(value.type, TensorType) and any(d < 0 for d in value.type.get_shape()):
            raise IrforgeError(
                f"the OpenCL backend needs static shapes, {value.type} is not",
                fix="set the input shapes (ir-convert --input_shape) before compiling",
                code="E854",
            )


def lower(model: Model, info: DeviceInfo, cpu_ops: Collection[str] = ()) -> OclProgram:
    """Lower every op of the model's function to launches, or host steps where it must."""
    import irforge.backends.opencl.ops  # noqa: F401  (registers the lowerings)
    from irforge.backends.opencl.hetero import fallback

    check_static(model)
    func = model.func
    ctx = OclLowering(_no_llvm_module, info=info, cpu_ops=frozenset(cpu_ops))
    body = list(func.body.block.ops)
    for op in body:
        for operand in op.operands:
            ctx.uses[operand] = ctx.uses.get(operand, 0) + 1
    inputs = []
    for name, arg in zip(input_names(func), func.args):
        ctx.values[arg] = ctx.buffer(nbytes_of(arg), "input")
        inputs.append((name, ctx.values[arg], shape_of(arg), dtype_of(arg)))
    for op in body:
        if isinstance(op, ReturnOp):
            outputs = [(n, ctx.values[v], shape_of(v), dtype_of(v)) for n, v in zip(output_names(func), op.arguments)]
            for _, buf, _, _ in outputs:
                buf.touch(len(ctx.phases))
            source = "\n".join(ctx.sources.values())
            return OclProgram(source, ctx.steps, ctx.buffers, inputs, outputs, ctx.fallbacks)
        if isinstance(op, Constant):
            array = np.ascontiguousarray(constant_value(op, model.store))
            ctx.constants[op.output] = array
            ctx.values[op.output] = ctx.const(array)
        elif op not in ctx.absorbed:
            reason = unsupported_reason(op, ctx.cpu_ops)
            ctx.current = op.name
            if reason is None and type(op) in LOWERINGS:
                LOWERINGS[type(op)].lower(ctx, op)
            elif reason is None:
                from irforge.backends.opencl.ops.custom import custom_layer

                custom_layer(ctx, op)
            else:
                fallback(ctx, op, reason)
    raise IrforgeError("the model function has no func.return", code="E854")


def _register_cpu_only() -> None:
    from irforge.dialects.nn import OPS

    by_name = {cls.name: cls for cls in OPS}
    for name, reason in CPU_ONLY_REASONS.items():
        if name in by_name:
            CPU_ONLY[by_name[name]] = f"CPU-only op: {reason}"


# prior boxes depend only on shapes, so canonicalize folds them to constants before a backend
# sees them; the detection post-processing ops sort and suppress a few hundred boxes
# sequentially, where a device round trip costs more than the CPU work (issue 9 leaves
# their OpenCL kernels for later); fused attention runs as the CPU backend's GEMM, softmax and
# pointwise kernels, which a HETERO step reaches with one transfer each way
CPU_ONLY_REASONS = {
    "nn.prior_box": "prior boxes are shape constants, folded when shapes are static",
    "nn.prior_box_clustered": "prior boxes are shape constants, folded when shapes are static",
    "nn.detection_output": "sequential non-maximum suppression",
    "nn.proposal": "sequential non-maximum suppression",
    "nn.roi_pooling": "per-box pooling of detection post-processing",
    "nn.psroi_pooling": "per-box pooling of detection post-processing",
    "nn.region_yolo": "YOLO output decoding, once on the final small feature map",
    "nn.reorg_yolo": "YOLO reorganisation, once on a small feature map",
    "nn.scaled_dot_product_attention": "fused attention has no OpenCL kernel; the CPU backend's runs it",
    # the indexing family (issue 14): index-driven gathers and scatters run once on small
    # tensors in the models that have them (positions, masks, detection heads)
    "nn.gather_elements": "indexing op without an OpenCL kernel yet (runs on its reference kernel)",
    "nn.gather_nd": "indexing op without an OpenCL kernel yet (runs on its reference kernel)",
    "nn.scatter_nd": "sequential scatter (later updates win) without an OpenCL kernel",
    "nn.scatter_elements": "sequential scatter (later updates win) without an OpenCL kernel",
    "nn.one_hot": "indexing op without an OpenCL kernel yet (runs on its reference kernel)",
    "nn.non_zero": "output size known only at run time",
    "nn.unique": "output size known only at run time",
    "nn.bitwise": "integer bit operation without an OpenCL kernel (runs on its reference kernel)",
    "nn.shape_of": "dims known only at run time (it is a constant where they are known)",
    "nn.broadcast_to": "dims known only at run time (a constant target is a Tile)",
    "nn.reshape_to": "dims known only at run time (a constant target is nn.reshape)",
    "nn.slice_to": "dims known only at run time (constant bounds are nn.slice)",
    "nn.pad_by": "dims known only at run time (constant pads are nn.pad)",
    "nn.resample_to": "dims known only at run time (constant sizes are nn.resample)",
    "nn.resample_by": "dims known only at run time (constant scales are nn.resample)",
    "nn.top_k": "sorting op without an OpenCL kernel yet (runs on its reference kernel)",
    "nn.cum_sum": "sequential scan without an OpenCL kernel yet (runs on its reference kernel)",
    "nn.range": "output size known only at run time",
    "nn.is_nan": "predicate without an OpenCL kernel yet (runs on its reference kernel)",
    "nn.is_inf": "predicate without an OpenCL kernel yet (runs on its reference kernel)",
    "nn.roi_align": "per-box pooling of detection post-processing",
    "nn.deformable_convolution": "bilinear sampling at data-dependent offsets without an OpenCL kernel yet (runs on its reference kernel)",
    "nn.grid_sample": "gather at data-dependent grid coordinates without an OpenCL kernel yet (runs on its reference kernel)",
    "nn.non_max_suppression": "sequential non-maximum suppression; output size known only at run time",
    "nn.lstm_sequence": "a recurrence of T dependent small GEMMs; the CPU backend runs it",
    "nn.gru_sequence": "a recurrence of T dependent small GEMMs; the CPU backend runs it",
    "nn.rnn_sequence": "a recurrence of T dependent small GEMMs; the CPU backend runs it",
    "nn.fake_quantize": "no OpenCL kernel yet; the CPU backend runs it",
    # SegNet / ENet decoders (issue 16): an argmax per window and a scatter by those indices
    "nn.max_pool_indices": "max pooling's argmax without an OpenCL kernel yet (runs on its reference kernel)",
    "nn.max_unpool": "scatter by pooling indices without an OpenCL kernel yet (runs on its reference kernel)",
    # control flow (issue 14): the bodies run op by op on the host (the CPU backend's host step)
    "nn.if": "control flow: the branch taken runs on the host (reference kernels of its body)",
    "nn.loop": "control flow: the body runs on the host once per iteration (reference kernels)",
}
_register_cpu_only()
