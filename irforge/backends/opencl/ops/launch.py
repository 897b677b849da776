"""Launch geometry shared by the simple (one work-item per element) kernels."""

from __future__ import annotations

from irforge.backends.cpu.lower import Buffer
from irforge.backends.opencl.codegen.common import round_up
from irforge.backends.opencl.lower import OclLowering

SIMPLE_GROUP = 256
"""Work-group size of element-wise kernels: a multiple of every GPU's SIMD width."""


def launch_1d(ctx: OclLowering, kernel: str, total: int, args: list[Buffer], flops: int = 0) -> None:
    """`total` work-items in groups of up to SIMPLE_GROUP (the kernel checks its bound)."""
    local = min(SIMPLE_GROUP, ctx.device.max_work_group_size, max(total, 1))
    ctx.launch(kernel, (round_up(total, local),), (local,), args, flops)
