"""Element-wise kernels with numpy broadcasting, vectorised along the innermost axis.

The output shape is collapsed (adjacent axes merged wherever every operand allows), so
the innermost run is contiguous in each operand or broadcast (stride 0, a splat). Threads
split (outer index, chunk of the inner run) units; each unit is a 16-lane vector loop with a
masked tail. The arithmetic is a named expression from `mathfn.EXPRESSIONS` on f32 lanes, or
from `typedfn` on other element types (bool tensors are bytes in memory, i1 lanes in
registers).
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import I8, I64, VW, KernelBuilder, i64, vec
from irforge.backends.cpu.codegen.mathfn import evaluate
from irforge.backends.cpu.codegen.typedfn import ELEMENT, typed_expression

CHUNK = 4096


@dataclass(frozen=True)
class PointwiseSpec:
    shape: tuple[int, ...]
    strides: tuple[tuple[int, ...], ...]
    """per input, the element stride of each output axis (0 where broadcast)."""
    expr: str
    params: tuple[float, ...] = ()
    types: tuple[str, ...] = ()
    """element types of the inputs and then the output (see `typedfn`); empty: all f32."""
    leading_arg: bool = False
    """`shape` and `strides` are collapsed already and the first axis's size (0 here) is
    read at run time from the kernel's last slot (one i64, see `runtime_leading`)."""


def runtime_leading(spec: PointwiseSpec) -> tuple[PointwiseSpec, list[int]]:
    """`spec` collapsed, with the size of its first axis taken at run time, and the values of
    the kernel's extra slot (an i64 constant buffer appended to the phase's arguments): one
    kernel serves the shapes that differ in that size only (DenseNet's BatchNorm and ReLU
    over a dense block's growing channel count, one kernel per channel count before). The
    first axis's size enters only the threads' split and (a single axis) the chunk count."""
    shape, strides = collapse(spec.shape, spec.strides)
    return PointwiseSpec((0, *shape[1:]), strides, spec.expr, spec.params, spec.types, True), [shape[0]]


def broadcast_strides(shape: tuple[int, ...], out: tuple[int, ...]) -> tuple[int, ...]:
    padded = (1,) * (len(out) - len(shape)) + tuple(shape)
    strides, step = [], 1
    for size in reversed(padded):
        strides.append(step if size > 1 else 0)
        step *= size
    return tuple(reversed(strides))


def collapse(shape: tuple[int, ...], strides: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """Merge axis i into i+1 when every operand steps through them as one axis."""
    dims = [1] + list(shape)
    st = [[0] + list(s) for s in strides]
    out_dims, out_st = [dims[-1]], [[s[-1]] for s in st]
    for i in range(len(dims) - 2, -1, -1):
        size = dims[i]
        if size == 1:
            continue
        if all(s[i] == o[0] * out_dims[0] for s, o in zip(st, out_st)):
            out_dims[0] *= size
            continue
        out_dims.insert(0, size)
        for s, o in zip(st, out_st):
            o.insert(0, s[i])
    return tuple(out_dims), tuple(tuple(o) for o in out_st)


def pointwise_kernel(module: ir.Module, spec: PointwiseSpec, name: str) -> None:
    """args: inputs..., out."""
    shape, strides = (spec.shape, spec.strides) if spec.leading_arg else collapse(spec.shape, spec.strides)
    kb = KernelBuilder(module, name)
    b = kb.b
    types = spec.types or ("f32",) * (len(strides) + 1)
    ins = [kb.slot(i, ELEMENT[t]) for i, t in enumerate(types[:-1])]
    out = kb.slot(len(strides), ELEMENT[types[-1]])
    # the first axis's size: a constant, or (leading_arg) the run-time value
    leading = b.load(kb.slot(len(strides) + 1, I64)) if spec.leading_arg else shape[0]
    inner = leading if len(shape) == 1 else shape[-1]
    outer_dims = shape[:-1]
    outer = kb.mul(leading, _product(outer_dims[1:])) if outer_dims else 1
    chunk = CHUNK if isinstance(inner, ir.Value) else min(inner, CHUNK)
    chunks = b.udiv(b.add(inner, i64(chunk - 1)), i64(chunk)) if isinstance(inner, ir.Value) else -(-inner // chunk)
    u0, u1 = _partition(kb, kb.mul(outer, chunks))
    with kb.loop(u0, u1, name="unit") as u:
        o, j0 = b.udiv(u, kb._v(chunks)), b.mul(b.urem(u, kb._v(chunks)), i64(chunk))
        j1 = kb.min(b.add(j0, i64(chunk)), inner)
        offsets = _outer_offsets(kb, o, outer_dims, strides)
        bases = [kb.at(p, off) for p, off in zip(ins, offsets)]
        dst = kb.at(out, b.add(kb.mul(o, inner), j0))
        full_end = b.sub(j1, b.urem(b.sub(j1, j0), i64(VW)))
        for lo, hi, masked in ((j0, full_end, False), (full_end, j1, True)):
            with kb.loop(lo, hi, VW, name="j") as j:
                mask = kb.mask(b.sub(j1, j)) if masked else None
                args = [_operand(kb, base, j, s[-1], mask, t == "bool") for base, s, t in zip(bases, strides, types)]
                if spec.types:
                    value = typed_expression(spec.expr, kb, args)
                else:
                    value = evaluate(kb, spec.expr, args, spec.params)
                if types[-1] == "bool":
                    value = b.zext(value, vec(VW, I8))
                kb.vstore(value, kb.at(dst, b.sub(j, j0)), mask)
    kb.finish()


def _product(dims) -> int:  # type: ignore[no-untyped-def]
    out = 1
    for d in dims:
        out *= d
    return out


def _partition(kb: KernelBuilder, total):  # type: ignore[no-untyped-def]
    """`KernelBuilder.partition` of a count that may be a run-time value."""
    if isinstance(total, int):
        return kb.partition(total)
    b = kb.b
    return b.sdiv(b.mul(total, kb.tid), kb.nth), b.sdiv(b.mul(total, b.add(kb.tid, i64(1))), kb.nth)


def _operand(kb: KernelBuilder, base, j, stride: int, mask, boolean: bool):  # type: ignore[no-untyped-def]
    """16 lanes of an operand along the inner axis: contiguous, broadcast, or strided (a
    permuted input: gathered); bool bytes become i1 lanes."""
    b = kb.b
    if stride == 0:
        value = kb.splat(b.load(base))
    elif stride == 1:
        value = kb.vload(kb.at(base, j), mask=mask)
    else:
        lanes = ir.Constant(ir.VectorType(I64, VW), [i * stride for i in range(VW)])
        ok = mask if mask is not None else kb.mask(VW)
        value = kb.gather(kb.at(base, b.mul(j, i64(stride))), lanes, ok)
    return b.icmp_unsigned("!=", value, kb.vconst(0, VW, I8)) if boolean else value


def _outer_offsets(kb: KernelBuilder, o, dims, strides):  # type: ignore[no-untyped-def]
    b = kb.b
    offsets = [i64(0)] * len(strides)
    rest = o
    for axis in range(len(dims) - 1, -1, -1):
        index = b.urem(rest, i64(dims[axis])) if axis else rest
        if axis:  # the first axis's size may be 0 (a run-time size, `leading_arg`)
            rest = b.udiv(rest, i64(dims[axis]))
        offsets = [b.add(off, b.mul(index, i64(s[axis]))) for off, s in zip(offsets, strides)]
    return offsets
