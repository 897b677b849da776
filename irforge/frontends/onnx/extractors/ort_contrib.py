"""onnxruntime's fused contrib ops as compositions of nn ops: what onnxruntime's transformer
optimizer (`onnxruntime.transformers.optimizer`, optimum's `--optimize`), its offline graph
optimisations and its 4-bit weight quantizer write into a model a user then brings here.

    Gelu(x)                             erf GELU               (com.microsoft)
    BiasGelu(x, bias)                   Gelu(x + bias)         (com.microsoft)
    FastGelu(x, bias?)                  tanh GELU of x + bias  (com.microsoft)
    QuickGelu(x; alpha=1.702)           x * sigmoid(alpha x)   (com.microsoft)
    BiasAdd(x, bias, skip)              x + bias + skip        (com.microsoft)
    SkipLayerNormalization(x, skip, gamma, beta?, bias?; epsilon)
                                        s = x + skip + bias; LayerNorm(s) * gamma + beta over
                                        the last axis; outputs y, mean, inv_std_var, s
    SkipSimplifiedLayerNormalization(x, skip, gamma, bias?; epsilon)
                                        the same with RMSNorm (no centring, no beta)
    SimplifiedLayerNormalization(x, scale; axis, epsilon)   RMSNorm (ONNX domain, opset 1)
    FusedMatMul(a, b; alpha, transA, transB, transBatchA, transBatchB)
                                        alpha * a' @ b'; transBatch moves the first axis to
                                        the row axis first (perm [1, .., r-2, 0, r-1]: the
                                        Transpose of torch's `view(L, B*H, D).transpose(0, 1)`
                                        that onnxruntime's level-2 optimisation folds in)
    FusedConv(x, w, b?, z?; activation, ...)                act(Conv + z)
    FusedGemm(a, b, c; activation, ...)                     act(Gemm)
    MatMulNBits(a, packed b, scales, zero points?, g_idx?, bias?; K, N, bits, block_size)
                                        a @ dequantize(b)^T + bias, b's blocks of
                                        `block_size` values along K kept compressed
                                        (u4 when 4-bit, else u8; `compressed_weights.py`):
                                        (q - zero point) * scale, the zero point 2^(bits-1)
                                        when absent: the same f32 weights onnxruntime
                                        multiplies by at accuracy_level 0/1; at level 4 it
                                        quantizes the activations to int8 per block as well,
                                        an approximation irforge does not make (its numbers are
                                        those of the f32 weights)

Attributes outside these lists, and activations FusedConv/FusedGemm name that have no nn
form here, are refused by name (E179, as for the QOperator contrib ops).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import MVN, Activation, Clamp, Eltwise, FullyConnected, MatMul, Permute, Power, Reduce, ReLU
from irforge.frontends.onnx.extractors.compressed_weights import decompressed_weights
from irforge.frontends.onnx.extractors.conv import conv
from irforge.frontends.onnx.extractors.linear import gemm
from irforge.frontends.onnx.extractors.quantize_contrib import MS, check_attributes
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl


def _dtype(ctx: NodeContext, index: int = 0) -> np.dtype:
    return np.dtype(from_xdsl(ctx.input_type(index).element_type))


def _sum(ctx: NodeContext, values: list[SSAValue], suffix: str) -> SSAValue:
    total = values[0]
    for index, value in enumerate(values[1:]):
        total = ctx.value(Eltwise, [total, value], suffix=f"{suffix}{index}" if index < len(values) - 2 else suffix, operation="sum")
    return total


@onnx_extractor("Gelu", domain=MS)
def gelu(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, set())
    return ctx.value(Activation, [ctx.input(0)], kind="gelu")


@onnx_extractor("BiasGelu", domain=MS)
def bias_gelu(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, set())
    return ctx.value(Activation, [_sum(ctx, [ctx.input(0), ctx.input(1)], "/biased")], kind="gelu")


@onnx_extractor("FastGelu", domain=MS)
def fast_gelu(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, set())
    x = _sum(ctx, [ctx.input(0), ctx.input(1)], "/biased") if ctx.has_input(1) else ctx.input(0)
    return ctx.value(Activation, [x], kind="gelu_tanh")


@onnx_extractor("QuickGelu", domain=MS)
def quick_gelu(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, {"alpha"})
    return ctx.value(Activation, [ctx.input(0)], kind="swish", alpha=float(ctx.attr("alpha", 1.702)))


@onnx_extractor("BiasAdd", domain=MS)
def bias_add(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, set())
    return _sum(ctx, [ctx.input(0), ctx.input(1), ctx.input(2)], "")


def _statistics(ctx: NodeContext, x: SSAValue, axes: list[int], eps: float, centred: bool) -> tuple[SSAValue, SSAValue]:
    """The mean (0 for RMSNorm, which does not centre) and 1 / sqrt(var + eps) over `axes`."""
    mean = ctx.value(Reduce, [x], suffix="/mean", operation="mean", axes=axes, keep_dims=True)
    centre = ctx.value(Eltwise, [x, mean], suffix="/centered", operation="sub") if centred else x
    square = ctx.value(Eltwise, [centre, centre], suffix="/square", operation="mul")
    variance = ctx.value(Reduce, [square], suffix="/variance", operation="mean", axes=axes, keep_dims=True)
    shifted = ctx.value(Power, [variance], suffix="/variance_eps", shift=eps)
    inv_std = ctx.value(Power, [shifted], suffix="/inv_std_var", power=-0.5)
    if not centred:
        mean = ctx.constant(np.zeros((), _dtype(ctx)), "/no_mean")
    return mean, inv_std


def _normalized(ctx: NodeContext, x: SSAValue, axes: list[int], eps: float, centred: bool) -> SSAValue:
    if centred:
        return ctx.value(MVN, [x], suffix="/mvn", axes=axes, eps=eps, normalize_variance=True, eps_mode="inside_sqrt")
    _, inv = _statistics(ctx, x, axes, eps, centred=False)
    return ctx.value(Eltwise, [x, inv], suffix="/normalized", operation="mul")


def _skip_norm(ctx: NodeContext, centred: bool) -> list[SSAValue | None]:
    check_attributes(ctx, {"epsilon"})
    eps = float(ctx.attr("epsilon", 1e-12 if centred else 1e-5))
    bias_index = 4 if centred else 3
    parts = [ctx.input(0), ctx.input(1)] + ([ctx.input(bias_index)] if ctx.has_input(bias_index) else [])
    total = _sum(ctx, parts, "/input_skip_bias_sum")
    axes = [len(ctx.input_shape(0)) - 1]
    y = ctx.value(Eltwise, [_normalized(ctx, total, axes, eps, centred), ctx.input(2)], suffix="/scaled" if centred and ctx.has_input(3) else "",
                  operation="mul")
    if centred and ctx.has_input(3):
        y = ctx.value(Eltwise, [y, ctx.input(3)], operation="sum")
    mean = inv_std = None
    if ctx.output_used(1) or ctx.output_used(2):
        mean, inv_std = _statistics(ctx, total, axes, eps, centred)
    return [y, mean, inv_std, total]


@onnx_extractor("SkipLayerNormalization", domain=MS)
def skip_layer_norm(ctx: NodeContext) -> list[SSAValue | None]:
    return _skip_norm(ctx, centred=True)


@onnx_extractor("SkipSimplifiedLayerNormalization", domain=MS)
def skip_simplified_layer_norm(ctx: NodeContext) -> list[SSAValue | None]:
    return _skip_norm(ctx, centred=False)


@onnx_extractor("SimplifiedLayerNormalization")
def simplified_layer_norm(ctx: NodeContext) -> list[SSAValue | None]:
    check_attributes(ctx, {"axis", "epsilon", "stash_type"})
    if int(ctx.attr("stash_type", 1)) != 1:
        raise ctx.fail("stash_type other than float32 is not supported", fix="export with stash_type=1 (float32)")
    rank = len(ctx.input_shape(0))
    axes = list(range(int(ctx.attr("axis", -1)) % rank, rank))
    eps = float(ctx.attr("epsilon", 1e-5))
    y = ctx.value(Eltwise, [_normalized(ctx, ctx.input(0), axes, eps, centred=False), ctx.input(1)], operation="mul")
    inv_std = _statistics(ctx, ctx.input(0), axes, eps, centred=False)[1] if ctx.output_used(1) else None
    return [y, inv_std]


@onnx_extractor("FusedMatMul", domain=MS)
def fused_matmul(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, {"alpha", "transA", "transB", "transBatchA", "transBatchB"})
    ranks = [len(ctx.input_shape(i)) for i in (0, 1)]
    if (int(ctx.attr("transBatchA", 0)) or int(ctx.attr("transBatchB", 0))) and ranks[0] != ranks[1]:  # onnxruntime's kernel refuses it
        raise ctx.fail(f"transBatchA / transBatchB need inputs of one rank, got ranks {ranks[0]} and {ranks[1]}",
                       fix="give A and B the same rank (3 or more), or drop transBatchA / transBatchB")
    a, b = (_batch_transposed(ctx, i, "AB"[i]) for i in (0, 1))
    y = ctx.value(MatMul, [a, b], suffix="/matmul", transpose_a=bool(ctx.attr("transA", 0)), transpose_b=bool(ctx.attr("transB", 0)))
    alpha = float(ctx.attr("alpha", 1.0))
    return ctx.value(Eltwise, [y, ctx.constant(np.array(alpha, _dtype(ctx)), "/alpha")], operation="mul")


def _batch_transposed(ctx: NodeContext, index: int, which: str) -> SSAValue:
    """FusedMatMul's input `index`, its first axis moved before the last where transBatch<which>
    is set (onnxruntime's matmul_transpose_fusion: [d0, .., d_{r-2}, d_{r-1}] ->
    [d1, .., d_{r-2}, d0, d_{r-1}]; transA/transB then swap the last two as usual)."""
    x = ctx.input(index)
    if not int(ctx.attr(f"transBatch{which}", 0)):
        return x
    rank = len(ctx.input_shape(index))
    if rank < 3:  # no batch axes: onnxruntime's fusion never writes it, its kernel refuses it
        raise ctx.fail(f"transBatch{which}=1 needs an input of rank 3 or more, got rank {rank}", fix=f"drop transBatch{which}")
    return ctx.value(Permute, [x], suffix=f"/batch_transposed_{which.lower()}", order=[*range(1, rank - 1), 0, rank - 1])


def _activated(ctx: NodeContext, y: SSAValue) -> SSAValue:
    """FusedConv / FusedGemm's `activation` (with `activation_params`) applied to y."""
    name = ctx.attr("activation", "")
    params = [float(p) for p in ctx.attr("activation_params", [])]
    if name == "":
        return y
    if name == "Relu":
        return ctx.value(ReLU, [y])
    if name == "LeakyRelu":
        return ctx.value(ReLU, [y], negative_slope=params[0] if params else 0.01)
    if name in ("Sigmoid", "Tanh"):
        return ctx.value(Activation, [y], kind=name.lower())
    if name == "Clip" and len(params) == 2:
        return ctx.value(Clamp, [y], min=params[0], max=params[1])
    if name == "HardSigmoid":
        alpha, beta = (params + [0.2, 0.5][len(params):])[:2]
        return ctx.value(Activation, [y], kind="hsigmoid", alpha=alpha, beta=beta)
    raise ctx.fail(f"activation '{name}' with parameters {params} of {ctx.node.op_type} is not supported",
                   fix="use Relu, LeakyRelu, Sigmoid, Tanh, Clip(min, max) or HardSigmoid")


@onnx_extractor("FusedConv", domain=MS)
def fused_conv(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, {"activation", "activation_params", "auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
    y = conv(ctx)
    if ctx.has_input(3):  # the sum input Z, added before the activation
        y = ctx.value(Eltwise, [y, ctx.input(3)], suffix="/sum", operation="sum")
    return _activated(ctx, y)


@onnx_extractor("FusedGemm", domain=MS)
def fused_gemm(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, {"activation", "activation_params", "alpha", "beta", "transA", "transB", "activation_alpha", "activation_beta",
                           "activation_gamma"})
    if any(ctx.attr(a, None) is not None for a in ("activation_alpha", "activation_beta", "activation_gamma")):
        raise ctx.fail("activation_alpha / activation_beta / activation_gamma are not supported", fix="give activation_params instead")
    return _activated(ctx, gemm(ctx))


def _unpacked(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """[N, blocks, bytes] of `bits`-bit values, least significant first -> [N, blocks, count]."""
    per_byte = 8 // bits
    shifts = (np.arange(per_byte, dtype=np.uint8) * bits).astype(np.uint8)
    values = (packed[..., None] >> shifts) & np.uint8((1 << bits) - 1)
    return values.reshape(*packed.shape[:-1], -1)[..., :count]


@onnx_extractor("MatMulNBits", domain=MS)
def matmul_nbits(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, {"K", "N", "bits", "block_size", "accuracy_level"})
    missing = [a for a in ("K", "N", "bits", "block_size") if ctx.attr(a) is None]
    if missing:  # com.microsoft ops have no schema in onnx: their required attributes are checked here
        raise ctx.fail(f"MatMulNBits needs the attribute(s) {', '.join(missing)}")
    k, n, bits, block = (int(ctx.attr(a)) for a in ("K", "N", "bits", "block_size"))
    if bits not in (2, 4, 8) or block < 16 or block & (block - 1):
        raise ctx.fail(f"bits={bits} / block_size={block} is not a MatMulNBits form irforge reads", fix="use 2, 4 or 8 bits and a power-of-2 block >= 16")
    if ctx.has_input(4) and ctx.constant_input(4) is not None and ctx.constant_input(4).size:
        raise ctx.fail("g_idx (act-order groups) is not supported", fix="quantize without act-order")
    if k <= 0 or n <= 0:
        raise ctx.fail(f"K={k} / N={n} must be positive", fix="give the weight's input and output sizes")
    packed = ctx.required_constant(1, "the packed weights")
    scales = ctx.required_constant(2, "the scales")
    blocks = -(-k // block)
    if packed.dtype != np.uint8 or packed.shape != (n, blocks, block * bits // 8) or scales.size != n * blocks or scales.dtype.kind != "f":
        raise ctx.fail(f"packed weights {list(packed.shape)} ({packed.dtype}) / scales {list(scales.shape)} ({scales.dtype}) do not fit "
                       f"K={k}, N={n}, bits={bits}, block_size={block}")
    q = _unpacked(packed.reshape(n, blocks, -1), bits, block)
    zero: np.ndarray = np.full((1, 1, 1), 1 << (bits - 1), np.uint8)
    if ctx.has_input(3):
        zp = ctx.required_constant(3, "the zero points")
        # packed: ceil(blocks * bits / 8) bytes per row; else one value of a float type per block
        want = n * -(-blocks * bits // 8) if zp.dtype == np.uint8 else n * blocks
        if zp.dtype != np.uint8 and zp.dtype.kind != "f" or zp.size != want:
            raise ctx.fail(f"zero points {list(zp.shape)} ({zp.dtype}) do not fit K={k}, N={n}, bits={bits}, block_size={block} "
                           f"({want} {'packed uint8' if zp.dtype == np.uint8 else 'float'} values)",
                           fix="give packed uint8 zero points or one float per block")
        if zp.dtype == np.uint8:
            zero = _unpacked(zp.reshape(n, -1), bits, blocks)[..., None]
        else:  # zero points of the scales' type, one per block
            zero = zp.astype(np.float32).reshape(n, blocks, 1)
    # kept compressed ([N, blocks, block] u4 / u8 + the decompression chain), as ovc writes it
    weights = decompressed_weights(ctx, q, scales.reshape(n, blocks, 1), zero, axis=1, length=k, bits=bits, dtype=_dtype(ctx), suffix="/weights")
    operands = [ctx.input(0), weights]
    if ctx.has_input(5):
        operands.append(ctx.input(5))
    return ctx.value(FullyConnected, operands)
