"""The lowering's function for a GEMM specification: every lowering that runs a GEMM asks for
it here, so the kernel's key, its generator and its per-chunk workspace
(`GemmSpec.workspace_bytes`, appended by `Lowering.phase`) are named in one place."""

from __future__ import annotations

from irforge.backends.cpu.codegen.gemm import GemmSpec, gemm_kernel
from irforge.backends.cpu.lower import Lowering


def gemm_function(ctx: Lowering, spec: GemmSpec) -> str:
    """The function generated for `spec` (once per distinct spec in the program)."""
    return ctx.kernel(("gemm", spec), lambda module, name: gemm_kernel(module, spec, name), spec.workspace_bytes())
