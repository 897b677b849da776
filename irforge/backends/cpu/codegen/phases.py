"""The polyphase planes of a stride-2 convolution's zero-padded input, 16 plane columns per
vector (`ops/shifted.py` holds the layout: plane (py, px) of a channel has rows 2 i + py and
columns 2 j + px of the padded input).

Each input row is copied once into a zero-padded stack row (stored at multiples of a vector,
with loads of constant masks at the row's ends), and both phases' plane rows are taken from
it as two plain loads and an even- or odd-lane shuffle per vector. A plane row's last vector
is stored whole where its spill lands on later rows of its own plane (written after it); the
rows whose spill would leave the plane store it masked (the last one, and on planes with rows
shorter than half a vector the last few: a 4x4 input's rows of 4 spill over three rows, and
a whole store there zeroed the next plane's first rows, already written). The table-driven element copy this replaces moved ResNet-50's
128-channel 56x56 input in 0.26-0.30 ms.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import F32, I1, I32, VW, KernelBuilder, i64, vec, vector_constant


INPUT_ORDER = True
"""Plane row i of both row phases (input rows 2 i - pad and 2 i + 1 - pad) is made in one
step, so the input is read once front to back; False: all even-phase plane rows, then all
odd ones (two passes over every other input row, each a run of rows 2 w apart that the
hardware prefetcher follows poorly from memory: the stem's 224x224 input, cold from the
caller, took 0.105-0.135 ms, 0.053 ms when called again hot)."""


@dataclass(frozen=True)
class PhaseSpec:
    channels: int
    """samples x channels: the planes' sets, one per input plane"""
    h: int
    w: int
    pad: tuple[int, int]
    """pads_begin (top, left) of the padded input"""
    rows: int
    row: int
    """rows of a plane, and its row length"""

    @property
    def plane(self) -> int:
        return self.rows * self.row

    def stack_floats(self) -> int:
        """The stack row: the vectors holding the left pad and the input row, and every lane
        the last plane vector reads (two vectors from twice its first column)."""
        return max(self.copy_vectors() * VW, 2 * -(-self.row // VW) * VW)

    def copy_vectors(self) -> int:
        return -(-(self.pad[1] + self.w) // VW)


def phase_planes_kernel(module: ir.Module, spec: PhaseSpec, name: str) -> None:
    """args: X [channels][h][w], planes [channels][4][rows][row] and a zero row; threads
    split the channels."""
    kb = KernelBuilder(module, name)
    x, out = kb.slot(0), kb.slot(1)
    b = kb.b
    length = spec.stack_floats()
    with b.goto_block(kb.fn.entry_basic_block):
        stack, zeros = (b.bitcast(b.alloca(ir.ArrayType(F32, length)), ir.PointerType(F32)) for _ in range(2))
    for row in (stack, zeros):
        with kb.loop(0, length, VW, name="zero") as i:  # length is a multiple of VW
            kb.vstore(kb.vconst(0.0), kb.at(row, i))
    q0, q1 = kb.partition(spec.channels)
    with kb.loop(q0, q1, name="channel") as q:
        src = kb.at(x, b.mul(q, i64(spec.h * spec.w)))
        dst = kb.at(out, b.mul(q, i64(4 * spec.plane)))

        def plane_rows(i, py: int) -> None:  # type: ignore[no-untyped-def]
            iy = b.sub(b.add(b.mul(i, i64(2)), i64(py)), i64(spec.pad[0]))
            inside = b.icmp_unsigned("<", iy, i64(spec.h))
            with kb.if_(inside):
                _copy_row(kb, spec, kb.at(src, b.mul(iy, i64(spec.w))), stack)
            padded = b.select(inside, stack, zeros)
            for px in range(2):
                _plane_row(kb, spec, padded, kb.at(dst, b.add(i64((2 * py + px) * spec.plane), b.mul(i, i64(spec.row)))), px, i)

        if INPUT_ORDER:
            with kb.loop(0, spec.rows, name="i") as i:
                for py in range(2):
                    plane_rows(i, py)
        else:
            for py in range(2):
                with kb.loop(0, spec.rows, name="i") as i:
                    plane_rows(i, py)
    # the row past the last plane, which the GEMM's last tiles read into (see `Planes.moves`;
    # the buffer has a vector of slack past it): zeroed by the thread of the last channel
    with kb.if_(b.icmp_signed("==", q1, i64(spec.channels))):
        end = kb.at(out, i64(spec.channels * 4 * spec.plane))
        for j0 in range(0, spec.row, VW):
            kb.vstore(kb.vconst(0.0), kb.at(end, i64(j0)))
    kb.finish()


def _copy_row(kb: KernelBuilder, spec: PhaseSpec, src, stack) -> None:  # type: ignore[no-untyped-def]
    """stack[p] = src[p - pad] over the vectors holding the row (lanes outside it zero)."""
    b = kb.b
    for v in range(spec.copy_vectors()):
        first = v * VW - spec.pad[1]
        lanes = [0 <= first + lane < spec.w for lane in range(VW)]
        mask = None if all(lanes) else vector_constant(vec(VW, I1), lanes)
        kb.vstore(kb.vload(b.gep(src, [i64(first)]), mask=mask), kb.at(stack, i64(v * VW)))


def _plane_row(kb: KernelBuilder, spec: PhaseSpec, padded, dst, px: int, i) -> None:  # type: ignore[no-untyped-def]
    """dst[j] = padded[2 j + px] for plane row i's j; the last vector spills onto the rows
    after it where they are rows of this plane, else it is stored masked."""
    b = kb.b
    pick = vector_constant(vec(VW, I32), [2 * lane + px for lane in range(VW)])
    for j0 in range(0, spec.row, VW):
        lo, hi = kb.vload(kb.at(padded, i64(2 * j0))), kb.vload(kb.at(padded, i64(2 * j0 + VW)))
        value = b.shuffle_vector(lo, hi, pick)
        if j0 + VW <= spec.row:
            kb.vstore(value, kb.at(dst, i64(j0)))
            continue
        spilled_rows = -(-(j0 + VW - spec.row) // spec.row)
        # rows from rows - spilled_rows on would spill past the plane's last row
        last = b.icmp_signed(">=", i, i64(spec.rows - spilled_rows))
        with b.if_else(last) as (final, inner):
            with final:
                kb.vstore(value, kb.at(dst, i64(j0)), kb.mask(spec.row - j0))
            with inner:
                kb.vstore(value, kb.at(dst, i64(j0)))
