"""nnet1's LstmProjected, unrolled over the utterance's frames.

A whole-utterance graph has a static frame count, so the recurrence becomes T steps: the
input projections of all frames are one FullyConnected, then per frame (state zero at the
first, as nnet-forward resets it per utterance)

    g, i, f, o = x W_gifo_x^T + b + r(t-1) W_gifo_r^T        (column blocks of cell_dim)
    i = sigmoid(i + c(t-1) * peephole_i);  f = sigmoid(f + c(t-1) * peephole_f)
    c = clip(tanh(g) * i + c(t-1) * f, +-cell_clip)            (no clip when cell_clip <= 0)
    m = tanh(c) * sigmoid(o + c * peephole_o);  r = m W_r_m^T   (the output)

The graph grows with T (about 20 ops per frame)."""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.dialects.nn import Activation, Clamp, Concat, Eltwise, FullyConnected, Slice
from irforge.frontends.kaldi.registry import ComponentContext, kaldi_extractor


@kaldi_extractor("<LstmProjected>")
def lstm_projected(ctx: ComponentContext) -> SSAValue:
    c = ctx.component
    cell = c.int("<CellDim>")
    w_x, w_r = c.array("<GifoX>", 2), c.array("<GifoR>", 2)
    bias, w_rm = c.array("<Bias>", 1), c.array("<RM>", 2)
    peepholes = [c.array(key, 1) for key in ("<PeepholeI>", "<PeepholeF>", "<PeepholeO>")]
    proj = w_rm.shape[0]
    if w_x.shape[0] != 4 * cell or w_r.shape != (4 * cell, proj) or bias.shape != (4 * cell,) or w_rm.shape[1] != cell or any(p.shape != (cell,) for p in peepholes):
        raise c.error(f"parameters do not fit cell dim {cell} and projection dim {proj}", code="E508")
    ctx.check_dim(w_x.shape[1])
    clip = c.float("<CellClip>", 50.0)
    frames = ctx.shape[0]
    gifo_x = ctx.value(FullyConnected, [ctx.input, ctx.constant(w_x, "/w_gifo_x"), ctx.constant(bias, "/bias")], suffix="/gifo_x")
    w_r_value, w_rm_value = ctx.constant(w_r, "/w_gifo_r"), ctx.constant(w_rm, "/w_r_m")
    peephole_i, peephole_f, peephole_o = (ctx.constant(p.reshape(1, cell), f"/peephole_{n}") for p, n in zip(peepholes, "ifo"))

    def op(kind: str, operands: list[SSAValue], suffix: str) -> SSAValue:
        if kind in ("sigmoid", "tanh"):
            return ctx.value(Activation, operands, suffix=suffix, kind=kind)
        return ctx.value(Eltwise, operands, suffix=suffix, operation=kind)

    outputs = []
    r_prev: SSAValue | None = None
    c_prev: SSAValue | None = None
    for t in range(frames):
        s = f"/t{t}"
        gifo = ctx.value(Slice, [gifo_x], suffix=s + "/x", begins=[t], ends=[t + 1], axes=[0])
        if r_prev is not None:
            gifo = op("sum", [gifo, ctx.value(FullyConnected, [r_prev, w_r_value], suffix=s + "/r")], s + "/gifo")
        def gate(k: int, n: str) -> SSAValue:
            return ctx.value(Slice, [gifo], suffix=f"{s}/{n}", begins=[k * cell], ends=[(k + 1) * cell], axes=[1])

        g, i, o = gate(0, "g"), gate(1, "i"), gate(3, "o")
        if c_prev is not None:
            i = op("sum", [i, op("mul", [c_prev, peephole_i], s + "/pi")], s + "/i+")
        cell_value = op("mul", [op("tanh", [g], s + "/tanh_g"), op("sigmoid", [i], s + "/sig_i")], s + "/gi")
        if c_prev is not None:  # the forget gate acts on the previous cell only
            f = op("sum", [gate(2, "f"), op("mul", [c_prev, peephole_f], s + "/pf")], s + "/f+")
            cell_value = op("sum", [cell_value, op("mul", [c_prev, op("sigmoid", [f], s + "/sig_f")], s + "/cf")], s + "/c")
        if clip > 0:
            cell_value = ctx.value(Clamp, [cell_value], suffix=s + "/clip", min=-clip, max=clip)
        gate_o = op("sigmoid", [op("sum", [o, op("mul", [cell_value, peephole_o], s + "/po")], s + "/o+")], s + "/sig_o")
        m = op("mul", [op("tanh", [cell_value], s + "/tanh_c"), gate_o], s + "/m")
        r_prev, c_prev = ctx.value(FullyConnected, [m, w_rm_value], suffix=s + "/proj"), cell_value
        outputs.append(r_prev)
    return outputs[0] if len(outputs) == 1 else ctx.value(Concat, outputs, axis=0)


@kaldi_extractor("<LstmNonlinearityComponent>")
def lstm_nonlinearity(ctx: ComponentContext) -> SSAValue:
    """nnet3's LSTM cell: input [i, f, g, o, c(t-1)] blocks of C, output [c(t), m(t)]:
    i, f = sigmoid(i|f + w_ic|w_fc * c(t-1)); c = f c(t-1) + i tanh(g);
    m = sigmoid(o + w_oc * c) tanh(c)."""
    params = ctx.component.array("<Params>", 2)
    cell = params.shape[1]
    if params.shape[0] != 3:
        raise ctx.component.error(f"Params should be 3 x C, found {params.shape[0]} x {cell}", code="E508")
    if ctx.shape[1] == 5 * cell + 3:
        raise ctx.component.error("takes dropout masks (5C + 3 inputs), which are not supported", fix="remove the LSTM dropout for inference")
    ctx.check_dim(5 * cell)

    def block(k: int, n: str) -> SSAValue:
        return ctx.value(Slice, [ctx.input], suffix=f"/{n}", begins=[k * cell], ends=[(k + 1) * cell], axes=[1])

    def op(kind: str, operands: list[SSAValue], suffix: str) -> SSAValue:
        if kind in ("sigmoid", "tanh"):
            return ctx.value(Activation, operands, suffix=suffix, kind=kind)
        return ctx.value(Eltwise, operands, suffix=suffix, operation=kind)

    w_ic, w_fc, w_oc = (ctx.constant(params[k].reshape(1, cell), f"/w_{n}c") for k, n in enumerate("ifo"))
    c_prev = block(4, "c_prev")
    i = op("sigmoid", [op("sum", [block(0, "i"), op("mul", [c_prev, w_ic], "/ic")], "/i+")], "/sig_i")
    f = op("sigmoid", [op("sum", [block(1, "f"), op("mul", [c_prev, w_fc], "/fc")], "/f+")], "/sig_f")
    c = op("sum", [op("mul", [f, c_prev], "/fc_prev"), op("mul", [i, op("tanh", [block(2, "g")], "/tanh_g")], "/ig")], "/c")
    o = op("sigmoid", [op("sum", [block(3, "o"), op("mul", [c, w_oc], "/oc")], "/o+")], "/sig_o")
    m = op("mul", [o, op("tanh", [c], "/tanh_c")], "/m")
    return ctx.value(Concat, [c, m], axis=1)
