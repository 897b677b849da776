"""Vector expressions of the element-wise ops: name -> IR for 16-lane float vectors.

Each entry takes the builder, the operand vectors and the op's float parameters. Functions
LLVM has intrinsics for (exp, log, sqrt, tanh, sin, cos, floor, ...) use them; erf is a
rational polynomial in registers (GELU layers). LLVM lowers a vector exp to one
libm call per lane; `vector_exp` is a polynomial in registers for the kernels where exp is
the hot loop (softmax rows, Exp, Sigmoid and the Swish built on it).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from llvmlite import ir

from irforge.backends.cpu.codegen.epilogue import activate
from irforge.backends.cpu.codegen.irutil import F32, I32, KernelBuilder

Expr = Callable[[KernelBuilder, list[ir.Value], tuple[float, ...]], ir.Value]


def _c(kb: KernelBuilder, value: float, like: ir.Value) -> ir.Value:
    return kb.vconst(value, like.type.count)


def _select(kb: KernelBuilder, cond_op: str, x: ir.Value, y: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    return kb.b.select(kb.b.fcmp_ordered(cond_op, x, y), a, b)


def _sigmoid(kb: KernelBuilder, x: ir.Value) -> ir.Value:
    """exp of -|x| only, so neither side overflows (as the reference does), and one division
    (1 / (1 + e), times e for x < 0); the exp in registers (LLVM's vector exp is one libm call
    per lane: EfficientNet-B0's Swish layers took 20 of its 34 ms)."""
    b = kb.b
    e = vector_exp(kb, b.fneg(kb.call_unary("fabs", x)))
    s = b.fdiv(_c(kb, 1.0, x), b.fadd(_c(kb, 1.0, x), e))
    return _select(kb, ">=", x, _c(kb, 0.0, x), s, b.fmul(e, s))


LEAN_SWISH = True
"""Swish through `_exp_inside` (A/B switch for `bench/cpu_conv_layers.py --ab`)."""


def _swish(kb: KernelBuilder, x: ir.Value, alpha: float) -> ir.Value:
    """x / (1 + exp(-alpha x)): one exp and one division (a fused epilogue runs it on every
    output of the convolution); exp's limits kept: -inf / (1 + inf) is the reference's NaN."""
    b = kb.b
    t = b.fmul(x, _c(kb, -alpha, x))
    if not LEAN_SWISH:
        return b.fdiv(x, b.fadd(_c(kb, 1.0, x), vector_exp(kb, t)))
    # t clamped into exp's normal range with plain compares (vminps/vmaxps: a NaN t becomes a
    # bound, and x's NaN still propagates through the numerator); below it exp is < 2e-38,
    # which 1 + e loses anyway; above it the reference's exp is inf (x / inf: -0, or NaN at
    # x = -inf), kept by one select
    below = _select(kb, "<", t, _c(kb, EXP_TOP, t), t, _c(kb, EXP_TOP, t))
    e = _exp_inside(kb, _select(kb, ">", below, _c(kb, EXP_LOW, t), below, _c(kb, EXP_LOW, t)))
    e = _select(kb, ">", t, _c(kb, EXP_HIGH, t), _c(kb, math.inf, t), e)
    return b.fdiv(x, b.fadd(_c(kb, 1.0, x), e))


def _softplus(kb: KernelBuilder, x: ir.Value) -> ir.Value:
    b = kb.b
    e = kb.call_unary("exp", b.fneg(kb.call_unary("fabs", x)))
    relu = activate(kb, "relu", (0.0,), x)
    return b.fadd(relu, kb.call_unary("log", b.fadd(_c(kb, 1.0, x), e)))


def _expm1(kb: KernelBuilder, x: ir.Value) -> ir.Value:
    return kb.b.fsub(kb.call_unary("exp", x), _c(kb, 1.0, x))


EXP_LOW, EXP_HIGH = -86.9, 88.72
"""exp is 0 below EXP_LOW (true values < 2e-38) and inf above EXP_HIGH."""
LN2_HIGH, LN2_LOW = 0.693359375, -2.12194440e-4
EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
"""Cephes expf: exp(r) ~ 1 + r + r^2 * poly(r) for |r| <= ln 2 / 2."""


def vector_exp(kb: KernelBuilder, x: ir.Value) -> ir.Value:
    """exp(x) = 2^n * exp(r), n = round(x / ln 2), r = x - n ln 2 (two-part ln 2); scaled
    as 2^(n-1) * 2 so n = 128 stays finite until the product. NaN stays NaN."""
    b = kb.b
    clamped = kb.call_binary("maxnum", kb.call_binary("minnum", x, _c(kb, EXP_HIGH, x)), _c(kb, EXP_LOW, x))
    value = b.fmul(_exp_scaled(kb, clamped, 126), _c(kb, 2.0, x))
    value = _select(kb, "<", x, _c(kb, EXP_LOW, x), _c(kb, 0.0, x), value)
    value = _select(kb, ">", x, _c(kb, EXP_HIGH, x), _c(kb, math.inf, x), value)
    return _select(kb, "uno", x, x, x, value)


def exp_nonpositive(kb: KernelBuilder, x: ir.Value) -> ir.Value:
    """exp(x) for x <= 0 or -inf and no NaN (a softmax row minus its finite maximum): the lower
    clamp and its select alone, 2^n built directly (n in [-125, 0]): `vector_exp` without its
    upper clamp, its inf and NaN selects and one scaling (ViT's attention spent 0.35 of 2.05 ms
    in vector_exp)."""
    value = _exp_scaled(kb, kb.call_binary("maxnum", x, _c(kb, EXP_LOW, x)), 127)
    return _select(kb, "<", x, _c(kb, EXP_LOW, x), _c(kb, 0.0, x), value)


EXP_TOP = 88.0
"""`_exp_inside`'s upper bound: round(88 / ln 2) = 127, so 2^n is a normal float."""


def _exp_inside(kb: KernelBuilder, t: ir.Value) -> ir.Value:
    """exp(t) for t already in [EXP_LOW, EXP_TOP] (no limit selects; 2^n built directly, n in
    [-126, 127]): `vector_exp` without its three compares and one of its two scalings."""
    return _exp_scaled(kb, t, 127)


def _exp_scaled(kb: KernelBuilder, t: ir.Value, bias: int) -> ir.Value:
    """exp(r) * 2^(n + bias - 127) for t = n ln 2 + r (two-part ln 2), t inside the range
    where n + bias is a normal float's biased exponent."""
    b = kb.b
    n = kb.call_unary("roundeven", b.fmul(t, _c(kb, 1 / math.log(2), t)))
    r = kb.fma(n, _c(kb, -LN2_HIGH, t), t)
    r = kb.fma(n, _c(kb, -LN2_LOW, t), r)
    poly = _c(kb, EXP_POLY[0], t)
    for coefficient in EXP_POLY[1:]:
        poly = kb.fma(poly, r, _c(kb, coefficient, t))
    value = b.fadd(kb.fma(poly, b.fmul(r, r), r), _c(kb, 1.0, t))
    ints = ir.VectorType(I32, t.type.count)
    exponent = b.shl(b.add(b.fptosi(n, ints), kb.vconst(bias, t.type.count, I32)), kb.vconst(23, t.type.count, I32))
    return b.fmul(value, b.bitcast(exponent, t.type))


ERF_NUMERATOR = (-1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04, -5.69250639462346e-05,
                 -2.10102402082508e-06, 2.77068142495902e-08, -2.72614225801306e-10)
ERF_DENOMINATOR = (-1.42647390514189e-02, -7.37332916720468e-03, -1.68282697438203e-03, -2.13374055278905e-04,
                   -1.45660718464996e-05)
"""erf(x) ~ x p(x^2) / q(x^2) on [-4, 4] (Eigen's float erf; |error| <= 4.2e-7 against
math.erf on [-6, 6]); beyond 4 erf is +-1 in f32."""


def _erf(kb: KernelBuilder, x: ir.Value) -> ir.Value:
    """A rational polynomial in registers: libm's erff lane by lane made BERT's GELU layers
    1.8 ms each ([128, 3072]) where onnxruntime's take 0.5. NaN stays NaN."""
    if not isinstance(x.type, ir.VectorType):
        return kb.b.call(kb.intrinsic("erff", F32, [F32]), [x])
    b = kb.b
    clamped = kb.call_binary("maxnum", kb.call_binary("minnum", x, _c(kb, 4.0, x)), _c(kb, -4.0, x))
    x2 = b.fmul(clamped, clamped)
    p = _c(kb, ERF_NUMERATOR[-1], x)
    for coefficient in reversed(ERF_NUMERATOR[:-1]):
        p = kb.fma(p, x2, _c(kb, coefficient, x))
    q = _c(kb, ERF_DENOMINATOR[-1], x)
    for coefficient in reversed(ERF_DENOMINATOR[:-1]):
        q = kb.fma(q, x2, _c(kb, coefficient, x))
    return _select(kb, "uno", x, x, x, b.fdiv(b.fmul(clamped, p), q))


def _clip(kb: KernelBuilder, x: ir.Value, low: float, high: float) -> ir.Value:
    return activate(kb, "clamp", (low, high), x)


def _sign(kb: KernelBuilder, x: ir.Value) -> ir.Value:
    zero = _c(kb, 0.0, x)
    pos = _select(kb, ">", x, zero, _c(kb, 1.0, x), zero)
    return _select(kb, "<", x, zero, _c(kb, -1.0, x), pos)


def _gelu(kb: KernelBuilder, x: ir.Value) -> ir.Value:
    b = kb.b
    inner = _erf(kb, b.fmul(x, _c(kb, float(1 / math.sqrt(2)), x)))
    return b.fmul(b.fmul(_c(kb, 0.5, x), x), b.fadd(_c(kb, 1.0, x), inner))


def _gelu_tanh(kb: KernelBuilder, x: ir.Value) -> ir.Value:
    """0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3): one exp in
    registers and one division (LLVM's vector tanh is one libm call per lane, and a fused
    GEMM epilogue runs this on every output). The limits match the tanh form: x -> -inf
    gives -inf / inf = NaN as -inf * 0 does, x -> +inf gives inf."""
    b = kb.b
    cube = b.fmul(b.fmul(x, x), x)
    inner = b.fmul(_c(kb, math.sqrt(2 / math.pi), x), b.fadd(x, b.fmul(_c(kb, 0.044715, x), cube)))
    e = vector_exp(kb, b.fmul(inner, _c(kb, -2.0, x)))
    return b.fdiv(x, b.fadd(_c(kb, 1.0, x), e))


def _elu(kb: KernelBuilder, x: ir.Value, alpha: float) -> ir.Value:
    neg = kb.b.fmul(_c(kb, alpha, x), _expm1(kb, x))
    return _select(kb, ">", x, _c(kb, 0.0, x), x, neg)


def _power(kb: KernelBuilder, x: ir.Value, p: tuple[float, ...]) -> ir.Value:
    """Power: scale * x ** power + shift."""
    b = kb.b
    power, scale, shift = p
    y = x if power == 1.0 else b.fmul(x, x) if power == 2.0 else kb.call_binary("pow", x, _c(kb, power, x))
    return b.fadd(b.fmul(y, _c(kb, scale, x)), _c(kb, shift, x))


def _libm(kb: KernelBuilder, name: str, x: ir.Value) -> ir.Value:
    """The C library's float function `name` on each lane of x (or on the scalar x)."""
    fn = kb.intrinsic(name, F32, [F32])
    if not isinstance(x.type, ir.VectorType):
        return kb.b.call(fn, [x])
    out = x
    for lane in range(x.type.count):
        index = ir.Constant(I32, lane)
        out = kb.b.insert_element(out, kb.b.call(fn, [kb.b.extract_element(x, index)]), index)
    return out


UNARY: dict[str, Callable[[KernelBuilder, ir.Value, float, float], ir.Value]] = {
    "sigmoid": lambda kb, x, a, c: _sigmoid(kb, x),
    "tanh": lambda kb, x, a, c: kb.call_unary("tanh", x),
    "elu": lambda kb, x, a, c: _elu(kb, x, a),
    "selu": lambda kb, x, a, c: kb.b.fmul(_c(kb, c, x), _elu(kb, x, a)),
    "exp": lambda kb, x, a, c: vector_exp(kb, x),
    "log": lambda kb, x, a, c: kb.call_unary("log", x),
    "abs": lambda kb, x, a, c: kb.call_unary("fabs", x),
    "sqrt": lambda kb, x, a, c: kb.call_unary("sqrt", x),
    "erf": lambda kb, x, a, c: _erf(kb, x),
    "gelu": lambda kb, x, a, c: _gelu(kb, x),
    "gelu_tanh": lambda kb, x, a, c: _gelu_tanh(kb, x),
    "swish": lambda kb, x, a, c: _swish(kb, x, a),
    # x * clip(x + 3, 0, 6) / 6 with the division as a product (1 ulp; a division per lane otherwise)
    "hswish": lambda kb, x, a, c: kb.b.fmul(kb.b.fmul(x, _clip(kb, kb.b.fadd(x, _c(kb, 3.0, x)), 0.0, 6.0)), _c(kb, 1 / 6, x)),
    "hsigmoid": lambda kb, x, a, c: _clip(kb, kb.b.fadd(kb.b.fmul(x, _c(kb, a, x)), _c(kb, c, x)), 0.0, 1.0),
    "softplus": lambda kb, x, a, c: _softplus(kb, x),
    "softsign": lambda kb, x, a, c: kb.b.fdiv(x, kb.b.fadd(_c(kb, 1.0, x), kb.call_unary("fabs", x))),
    "mish": lambda kb, x, a, c: kb.b.fmul(x, kb.call_unary("tanh", _softplus(kb, x))),
    "relu6": lambda kb, x, a, c: _clip(kb, x, 0.0, 6.0),
    "neg": lambda kb, x, a, c: kb.b.fneg(x),
    "reciprocal": lambda kb, x, a, c: kb.b.fdiv(_c(kb, 1.0, x), x),
    "floor": lambda kb, x, a, c: kb.call_unary("floor", x),
    "ceil": lambda kb, x, a, c: kb.call_unary("ceil", x),
    "round": lambda kb, x, a, c: kb.call_unary("roundeven", x),
    "sign": lambda kb, x, a, c: _sign(kb, x),
    "sin": lambda kb, x, a, c: kb.call_unary("sin", x),
    "cos": lambda kb, x, a, c: kb.call_unary("cos", x),
    "asin": lambda kb, x, a, c: kb.call_unary("asin", x),
    "acos": lambda kb, x, a, c: kb.call_unary("acos", x),
    "atan": lambda kb, x, a, c: kb.call_unary("atan", x),
    # no LLVM intrinsics: the C library's, lane by lane (exact near 0, where log forms are not)
    "asinh": lambda kb, x, a, c: _libm(kb, "asinhf", x),
    "acosh": lambda kb, x, a, c: _libm(kb, "acoshf", x),
    "atanh": lambda kb, x, a, c: _libm(kb, "atanhf", x),
}


def _floor_mod(kb: KernelBuilder, a: ir.Value, b_: ir.Value) -> ir.Value:
    """Python's %: fmod, then shifted by b where the signs differ and the result is not 0."""
    b = kb.b
    r = b.frem(a, b_)
    zero = _c(kb, 0.0, a)
    fix = b.and_(b.fcmp_ordered("!=", r, zero), b.xor(b.fcmp_ordered("<", r, zero), b.fcmp_ordered("<", b_, zero)))
    return b.select(fix, b.fadd(r, b_), r)


BINARY: dict[str, Callable[[KernelBuilder, ir.Value, ir.Value], ir.Value]] = {
    "sum": lambda kb, a, b: kb.b.fadd(a, b),
    "sub": lambda kb, a, b: kb.b.fsub(a, b),
    "mul": lambda kb, a, b: kb.b.fmul(a, b),
    "div": lambda kb, a, b: kb.b.fdiv(a, b),
    "max": lambda kb, a, b: _select(kb, "uno", a, b, kb.b.fadd(a, b), _select(kb, ">=", a, b, a, b)),
    "min": lambda kb, a, b: _select(kb, "uno", a, b, kb.b.fadd(a, b), _select(kb, "<=", a, b, a, b)),
    "pow": lambda kb, a, b: kb.call_binary("pow", a, b),
    "squared_diff": lambda kb, a, b: kb.b.fmul(kb.b.fsub(a, b), kb.b.fsub(a, b)),
    "mod": lambda kb, a, b: kb.b.frem(a, b),
    "floor_mod": _floor_mod,
}


def _lrn(kb: KernelBuilder, xs: list[ir.Value], p: tuple[float, ...]) -> ir.Value:
    """x / (bias + alpha * sums) ** beta, params (alpha, beta, bias); beta 0.75 (the usual
    value) as a square root of a square root's cube, which is exact and needs no pow."""
    b = kb.b
    x, sums = xs
    alpha, beta, bias = p
    base = kb.fma(sums, _c(kb, alpha, x), _c(kb, bias, x))
    if beta == 0.75:
        root = kb.call_unary("sqrt", base)
        denominator = b.fmul(root, kb.call_unary("sqrt", root))
    else:
        denominator = kb.call_binary("pow", base, _c(kb, beta, x))
    return b.fdiv(x, denominator)


def _batch_norm(kb: KernelBuilder, xs: list[ir.Value], p: tuple[float, ...]) -> ir.Value:
    """gamma * (x - mean) / sqrt(variance + eps) + beta; operands x, gamma, beta, mean, variance."""
    b = kb.b
    x, gamma, beta, mean, variance = xs
    scale = b.fdiv(gamma, kb.call_unary("sqrt", b.fadd(variance, _c(kb, p[0], x))))
    return kb.fma(b.fsub(x, mean), scale, beta)


def _expressions() -> dict[str, Expr]:
    table: dict[str, Expr] = {}
    for kind, fn in UNARY.items():
        table[f"act.{kind}"] = lambda kb, xs, p, fn=fn: fn(kb, xs[0], *p)
    for kind, fn in BINARY.items():
        table[f"bin.{kind}"] = lambda kb, xs, p, fn=fn: fn(kb, xs[0], xs[1])
    table["relu"] = lambda kb, xs, p: activate(kb, "relu", p, xs[0])
    table["clamp"] = lambda kb, xs, p: activate(kb, "clamp", p, xs[0])
    table["power"] = lambda kb, xs, p: _power(kb, xs[0], p)
    table["prelu"] = lambda kb, xs, p: _select(kb, ">=", xs[0], _c(kb, 0.0, xs[0]), xs[0], kb.b.fmul(xs[0], xs[1]))
    table["scale_shift"] = lambda kb, xs, p: kb.fma(xs[0], xs[1], xs[2])
    table["copy"] = lambda kb, xs, p: xs[0]
    table["lrn"] = _lrn
    table["batch_norm"] = _batch_norm
    return table


EXPRESSIONS: dict[str, Expr] = _expressions()


def evaluate(kb: KernelBuilder, expr: str, xs: list[ir.Value], params: tuple[float, ...]) -> ir.Value:
    """`expr` of `xs`: a name in EXPRESSIONS, or `head>act` (a binary expression whose result an
    epilogue activation `act` takes, with `params` the activation's: `ops/elementwise.py`'s
    `ELTWISE_ACTIVATION`)."""
    head, _, act = expr.partition(">")
    if not act:
        return EXPRESSIONS[expr](kb, xs, params)
    return activate(kb, act, params, EXPRESSIONS[head](kb, xs, ()))
