"""What a producer kernel applies to each output vector before storing it.

Fusion folds `conv -> [add residual] -> [activation]` into the producer: the residual is
added first, then the activation, exactly the order of the unfused graph. Activations:
ReLU, Clamp, and the smooth ones of mobile networks (`act.<kind>` for the Activation kinds
in FUSED_KINDS: Swish/SiLU, HardSwish, HardSigmoid, Sigmoid), whose separate phase read and
wrote the whole tensor once more (EfficientNet-B0's Swish layers: 5.5 of ~30 ms). GELU
(GELU_KINDS) can be applied but is not fused by default (measured: it does not pay).
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import KernelBuilder


FUSED_KINDS = frozenset({"swish", "hswish", "hsigmoid", "sigmoid"})
"""Activation kinds a producer applies in its epilogue (their expressions in `mathfn.UNARY`)."""
GELU_KINDS = frozenset({"gelu", "gelu_tanh"})
"""The epilogue applies these too (tested), but they are not in FUSED_KINDS: fused into
BERT/ViT/Whisper's MLP GEMM they measured no faster than their own phase (min of 60
alternating calls 0.99-1.05x, `bench/cpu_gelu_ab.py`): the phase is compute-bound (erf's
polynomial and division), not memory-bound, and 12 tile vectors at once spill."""


@dataclass(frozen=True)
class Epilogue:
    residual: bool = False
    activation: str = "none"
    """none | relu (leaky with params[0] != 0) | clamp (params = (min, max)) | act.<kind>
    (an Activation kind of FUSED_KINDS, params = (alpha, beta))."""
    params: tuple[float, ...] = ()


def apply_epilogue(kb: KernelBuilder, ep: Epilogue, v: ir.Value, residual: ir.Value | None) -> ir.Value:
    b = kb.b
    if residual is not None:
        v = b.fadd(v, residual)
    return activate(kb, ep.activation, ep.params, v)


def activate(kb: KernelBuilder, kind: str, params: tuple[float, ...], v: ir.Value) -> ir.Value:
    """ReLU / leaky ReLU / Clamp / a FUSED_KINDS activation on a float vector (NaN propagates
    as in numpy)."""
    b = kb.b
    if kind.startswith("act."):
        from irforge.backends.cpu.codegen.mathfn import UNARY  # mathfn builds on this module

        return UNARY[kind[4:]](kb, v, *params)
    n = v.type.count
    zero = kb.vconst(0.0, n)
    if kind == "relu":
        slope = params[0] if params else 0.0
        negative = b.fmul(v, kb.vconst(slope, n)) if slope else zero
        return b.select(b.fcmp_ordered("<", v, zero), negative, v)
    if kind == "clamp":
        low, high = params
        v = b.select(b.fcmp_ordered("<", v, kb.vconst(low, n)), kb.vconst(low, n), v)
        return b.select(b.fcmp_ordered(">", v, kb.vconst(high, n)), kb.vconst(high, n), v)
    return v
