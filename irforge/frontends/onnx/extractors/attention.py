"""ONNX's Attention op (opsets 23-25) as one `nn.scaled_dot_product_attention`.

torch's dynamo exporter writes `F.scaled_dot_product_attention` as this single node from
opset 23 on, so a transformer exported at opset 23 has no MatMul/Softmax chain for the
attention recognisers to find. The node maps onto the fused op with a few reshapes:

- 3-D inputs [B, L, heads * E] (with `q_num_heads` / `kv_num_heads`) become [B, heads, L, E]
  and the output goes back to [B, L, q_heads * Ev];
- `past_key` / `past_value` are concatenated before K / V along the sequence; the results
  are the `present_key` / `present_value` outputs;
- grouped-query attention (fewer K/V heads than Q heads, each K/V head serving a run of
  consecutive Q heads, ONNX's repeat-interleave) splits Q's heads into [kv_heads, group] and
  lets K / V broadcast over the group axis, so they are never copied;
- the bias: a boolean or additive `attn_mask` (one shorter than the keys is padded with
  "masked", as the spec's reference does), `is_causal` aligned bottom-right when a cache
  precedes the queries (offset = past length, or per batch nonpad_kv_seqlen - L),
  `nonpad_kv_seqlen` padding and opset 25's sliding windows all add up as in the spec;
  causal alone without a cache is the fused op's own `causal` flag;
- a row whose keys are all masked gives 0 (the spec and onnxruntime), where the fused op,
  like OpenVINO's, gives NaN: `Where(all keys of the row -inf in the bias, 0, y)` after the
  op, added only when some row can be (not `Where(IsNaN(y), 0, y)`: that also zeroed the NaN
  of NaN inputs or a +inf mask, where onnxruntime gives NaN).

`softcap` (tanh capping of the scores) has no fused form: the node is then written as its
MatMul / tanh / Softmax chain. The `qk_matmul_output` output, a `softmax_precision` other
than the input's type, and attributes outside the schema are refused by name.
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.dialects.builtin import TensorType, f32, i1
from xdsl.ir import SSAValue

from irforge.dialects.nn import Activation, Concat, Convert, Eltwise, MatMul, Pad, Permute, Reshape, Select, SoftMax, Unsqueeze
from irforge.dialects.nn.attention import ScaledDotProductAttention
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.linear import show
from irforge.dialects.nn.reduce import Reduce
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl

ATTRIBUTES = frozenset(
    {"is_causal", "kv_num_heads", "q_num_heads", "qk_matmul_output_mode", "scale", "softcap", "softmax_precision", "left_window_size",
     "right_window_size"}
)


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def _dtype(value: SSAValue) -> np.dtype:
    assert isinstance(value.type, TensorType)
    return np.dtype(from_xdsl(value.type.element_type))


class _Attention:
    """One Attention node being lowered: its inputs in [B, heads, rows, E] form."""

    def __init__(self, ctx: NodeContext) -> None:
        self.ctx = ctx
        unknown = sorted({a.name for a in ctx.node.attribute} - ATTRIBUTES)
        if unknown:
            raise ctx.fail(f"attribute {', '.join(unknown)} of Attention is not supported", fix="remove it or export at opset 23-25")
        self.rank = len(ctx.input_shape(0))
        for index in (1, 2):
            if len(ctx.input_shape(index)) != self.rank:
                raise ctx.fail(f"Q has rank {self.rank} but input #{index} has rank {len(ctx.input_shape(index))}; Q, K and V must share it")
        if self.rank not in (3, 4):
            raise ctx.fail(f"Q, K and V must be 3-D [B, L, hidden] or 4-D [B, heads, L, E], got rank {self.rank}")
        self.dtype = _dtype(ctx.input(0))
        self.q_heads, self.kv_heads = self._heads()
        q, k, v = (self._heads_first(ctx.input(i), self.q_heads if i == 0 else self.kv_heads, name) for i, name in enumerate("qkv"))
        self.past = 0
        if ctx.has_input(4) != ctx.has_input(5):
            raise ctx.fail("past_key and past_value must be given together")
        if ctx.has_input(4):
            self.past = _shape(ctx.input(4))[2] if len(_shape(ctx.input(4))) == 4 else DYN
            if self.past == DYN:
                raise ctx.fail(f"past_key must be 4-D [B, kv_heads, P, E] with P known at conversion, got {show(_shape(ctx.input(4)))}",
                               fix="give static input shapes (--input_shape)")
            k = ctx.value(Concat, [ctx.input(4), k], suffix="/present_key", axis=2)
            v = ctx.value(Concat, [ctx.input(5), v], suffix="/present_value", axis=2)
        self.q, self.k, self.v = q, k, v
        self.length, self.total = _shape(q)[2], _shape(k)[2]

    def _heads(self) -> tuple[int, int]:
        ctx = self.ctx
        q_heads, kv_heads = ctx.attr("q_num_heads", None), ctx.attr("kv_num_heads", None)
        if self.rank == 3:
            if not q_heads or not kv_heads or q_heads < 1 or kv_heads < 1:
                raise ctx.fail("3-D Q, K, V need positive q_num_heads and kv_num_heads attributes",
                               fix="set them to the heads the hidden size packs")
            return int(q_heads), int(kv_heads)
        shape_q, shape_k, shape_v = (ctx.input_shape(i) for i in range(3))
        if shape_k[1] != shape_v[1] and DYN not in (shape_k[1], shape_v[1]):
            raise ctx.fail(f"K has {shape_k[1]} heads but V has {shape_v[1]}")
        for given, actual, what in ((q_heads, shape_q[1], "q_num_heads"), (kv_heads, shape_k[1], "kv_num_heads")):
            if given is not None and actual != DYN and int(given) != actual:
                raise ctx.fail(f"{what}={given} disagrees with the input's {actual} heads (axis 1)")
        if DYN in (shape_q[1], shape_k[1]):
            raise ctx.fail(f"the head counts of Q and K must be known at conversion, got {show(shape_q)} and {show(shape_k)}",
                           fix="give static input shapes (--input_shape)")
        return shape_q[1], shape_k[1]

    def _heads_first(self, value: SSAValue, heads: int, name: str) -> SSAValue:
        """A 3-D [B, L, heads * E] operand as [B, heads, L, E]; a 4-D one as it is."""
        if self.rank == 4:
            return value
        hidden = _shape(value)[2]
        if hidden == DYN or hidden % heads:
            raise self.ctx.fail(f"{name.upper()}'s hidden size {hidden} is not a known multiple of its {heads} heads")
        split = self.ctx.value(Reshape, [value], suffix=f"/{name}_heads", shape=[0, 0, heads, hidden // heads])
        return self.ctx.value(Permute, [split], suffix=f"/{name}_heads_first", order=[0, 2, 1, 3])

    # -- the bias ----------------------------------------------------------------------
    def bias(self, causal: bool) -> tuple[SSAValue | None, bool, bool]:
        """(mask operand, use the fused causal flag, rows may be all masked)."""
        ctx = self.ctx
        parts: list[SSAValue] = []
        may_empty = False
        if ctx.has_input(3):
            mask = ctx.input(3)
            element = mask.type.element_type  # type: ignore[attr-defined]
            if element != i1 and element != ctx.input_type(0).element_type:
                raise ctx.fail(f"attn_mask must be bool or Q's type {ctx.input_type(0).element_type}, got {element}")
            parts.append(self._padded_mask(mask))
            may_empty = self._may_mask_rows(mask)
        nonpad = ctx.optional_input(6)
        if nonpad is not None and (_dtype(nonpad).kind not in "iu" or len(_shape(nonpad)) != 1):
            raise ctx.fail(f"nonpad_kv_seqlen must be a 1-D integer tensor (one length per batch), got {show(_shape(nonpad))} of {_dtype(nonpad)}")
        if nonpad is not None and self.past:
            raise ctx.fail("nonpad_kv_seqlen cannot be combined with past_key / past_value (the spec forbids it)")
        left, right = int(ctx.attr("left_window_size", -1)), int(ctx.attr("right_window_size", -1))
        if left < -1 or right < -1:
            raise ctx.fail(f"left_window_size / right_window_size must be -1 or >= 0, got {left} / {right}")
        windowed = left >= 0 or right >= 0
        if nonpad is not None:
            parts.append(self._padding(nonpad))
            may_empty = True
        if (causal or windowed) and nonpad is not None:
            parts.append(self._frontier_per_batch(nonpad, causal, left, right))
        elif windowed or (causal and (self.past or parts)):
            parts.append(self._frontier(causal, left, right))
            # a mask and a frontier can leave a row nothing between them
            may_empty = may_empty or windowed or len(parts) > 1
        elif causal:
            return None, True, False
        if not parts:
            return None, False, False
        if len(parts) == 1:
            return parts[0], False, may_empty
        total = self._additive(parts[0])
        for part in parts[1:]:
            total = ctx.value(Eltwise, [total, self._additive(part)], suffix="/bias", operation="sum")
        return total, False, may_empty

    def _additive(self, mask: SSAValue) -> SSAValue:
        if mask.type.element_type != i1:  # type: ignore[attr-defined]
            return mask
        zero = self.ctx.constant(np.array(0, self.dtype), "/zero")
        masked = self.ctx.constant(np.array(-np.inf, self.dtype), "/neg_inf")
        return self.ctx.value(Select, [mask, zero, masked], suffix="/mask_bias")

    def _padded_mask(self, mask: SSAValue) -> SSAValue:
        """The mask widened to all keys: missing columns are masked (the spec's reference)."""
        width = _shape(mask)[-1] if _shape(mask) else 1
        if DYN in (width, self.total) or width in (1, self.total):
            return mask
        if width > self.total:
            raise self.ctx.fail(f"attn_mask has {width} columns but there are {self.total} keys")
        additive = self._additive(mask)
        rank = len(_shape(mask))
        return self.ctx.value(Pad, [additive], suffix="/mask_padded", pads_begin=[0] * rank, pads_end=[0] * (rank - 1) + [self.total - width],
                              value=float("-inf"))

    def _may_mask_rows(self, mask: SSAValue) -> bool:
        """Whether some query row can have all its keys masked (False only when the mask is
        a constant that provably has none)."""
        array = self.ctx.importer.constant_value(mask)
        if array is None:
            return True
        blocked = ~array if array.dtype == np.bool_ else np.isneginf(array)
        return bool(blocked.all(axis=-1).any()) if array.ndim else bool(blocked)

    def _frontier(self, causal: bool, left: int, right: int) -> SSAValue:
        """The causal / window bias for a fixed offset (the past length): a constant."""
        if DYN in (self.length, self.total):
            raise self.ctx.fail(f"is_causal with a cache or windows needs the query and key lengths at conversion, got {self.length} and {self.total}",
                                fix="give static input shapes (--input_shape)")
        diff = np.arange(self.length)[:, None] + self.past - np.arange(self.total)[None, :]  # query position - key
        allowed = np.ones(diff.shape, bool)
        if causal:
            allowed &= diff >= 0
        if left >= 0:
            allowed &= diff <= left
        if right >= 0:
            allowed &= -diff <= right
        return self.ctx.constant(allowed, "/frontier")

    def _padding(self, nonpad: SSAValue) -> SSAValue:
        """Keys at or past nonpad_kv_seqlen[b] are masked: [B, 1, 1, S]."""
        if self.total == DYN:
            raise self.ctx.fail("nonpad_kv_seqlen needs the key length at conversion", fix="give static input shapes (--input_shape)")
        lengths = self.ctx.value(Reshape, [nonpad], suffix="/nonpad_column", shape=[-1, 1, 1, 1])
        keys = self.ctx.constant(np.arange(self.total, dtype=_dtype(nonpad)), "/key_positions")
        return self.ctx.value(Eltwise, [keys, lengths], suffix="/nonpad", operation="less")

    def _frontier_per_batch(self, nonpad: SSAValue, causal: bool, left: int, right: int) -> SSAValue:
        """Causal / window bias with the per-batch offset nonpad_kv_seqlen[b] - L: [B, 1, L, S]."""
        if DYN in (self.length, self.total):
            raise self.ctx.fail("is_causal with nonpad_kv_seqlen needs the query and key lengths at conversion",
                                fix="give static input shapes (--input_shape)")
        dtype = _dtype(nonpad)
        lengths = self.ctx.value(Reshape, [nonpad], suffix="/offset_column", shape=[-1, 1, 1, 1])
        offset = self.ctx.value(Eltwise, [lengths, self.ctx.constant(np.array(self.length, dtype), "/query_length")], suffix="/offset",
                                operation="sub")
        key_minus_query = self.ctx.constant((np.arange(self.total)[None, :] - np.arange(self.length)[:, None]).astype(dtype), "/key_minus_query")
        allowed: SSAValue | None = None

        def both(a: SSAValue | None, b: SSAValue) -> SSAValue:
            return b if a is None else self.ctx.value(Eltwise, [a, b], suffix="/window", operation="and")

        if causal:  # key - query <= offset
            allowed = both(allowed, self.ctx.value(Eltwise, [key_minus_query, offset], suffix="/causal", operation="less_equal"))
        if left >= 0:  # query + offset - key <= left
            bound = self.ctx.value(Eltwise, [offset, self.ctx.constant(np.array(-left, dtype), "/left")], suffix="/left_bound", operation="sum")
            allowed = both(allowed, self.ctx.value(Eltwise, [key_minus_query, bound], suffix="/left_window", operation="greater_equal"))
        if right >= 0:  # key - query - offset <= right
            bound = self.ctx.value(Eltwise, [offset, self.ctx.constant(np.array(right, dtype), "/right")], suffix="/right_bound", operation="sum")
            allowed = both(allowed, self.ctx.value(Eltwise, [key_minus_query, bound], suffix="/right_window", operation="less_equal"))
        assert allowed is not None
        return allowed

    # -- grouped-query attention -----------------------------------------------------------
    def grouped(self, q: SSAValue, k: SSAValue, v: SSAValue, mask: SSAValue | None) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue | None]:
        """Q as [B, kv_heads, group, L, E] and K / V / mask broadcasting over the group axis."""
        ctx, group = self.ctx, self.q_heads // self.kv_heads
        head = _shape(q)[3]
        q = ctx.value(Reshape, [q], suffix="/q_groups", shape=[0, self.kv_heads, group, -1, head])
        k = ctx.value(Unsqueeze, [k], suffix="/k_groups", axes=[2])
        v = ctx.value(Unsqueeze, [v], suffix="/v_groups", axes=[2])
        if mask is not None:
            shape = _shape(mask)
            if len(shape) > 4 or DYN in shape[1:]:
                raise ctx.fail(f"attn_mask of shape {show(shape)} must have rank <= 4 and known dims after the first for grouped-query attention",
                               fix="give static input shapes (--input_shape)")
            if len(shape) < 4:
                mask = ctx.value(Unsqueeze, [mask], suffix="/mask_rank4", axes=list(range(4 - len(shape))))
                shape = _shape(mask)
            if shape[1] == self.q_heads and self.q_heads > 1:
                mask = ctx.value(Reshape, [mask], suffix="/mask_groups", shape=[0, self.kv_heads, group, -1, shape[3]])
            elif shape[1] == 1:
                mask = ctx.value(Unsqueeze, [mask], suffix="/mask_groups", axes=[2])
            else:
                raise ctx.fail(f"attn_mask's axis 1 ({shape[1]}) is neither 1 nor the {self.q_heads} query heads")
        return q, k, v, mask

    def output(self, y: SSAValue, ev: int) -> SSAValue:
        """[B, q_heads, L, Ev] from the grouped form, and back to 3-D for 3-D inputs."""
        ctx = self.ctx
        if len(_shape(y)) == 5:
            y = ctx.value(Reshape, [y], suffix="/heads", shape=[0, self.q_heads, -1, ev])
        if self.rank == 3:
            y = ctx.value(Permute, [y], suffix="/rows_first", order=[0, 2, 1, 3])
            y = ctx.value(Reshape, [y], suffix="/merged", shape=[0, 0, self.q_heads * ev])
        return y


def _guarded(ctx: NodeContext, att: _Attention, y: SSAValue, mask: SSAValue, dtype: np.dtype) -> SSAValue:
    """Rows whose keys the mask blocks all (max of the bias is -inf) give 0 (the spec's reference);
    only those: a NaN of the inputs or of a +inf mask stays NaN, as onnxruntime gives it."""
    bias = att._additive(mask)
    # min over keys of (bias == -inf) as 0/1, not max(bias) == -inf: OpenVINO's ReduceMax starts from the lowest finite float
    shut = ctx.value(Eltwise, [bias, ctx.constant(np.array(-np.inf, dtype), "/row_neg_inf")], suffix="/key_blocked", operation="equal")
    shut = ctx.value(Convert, [shut], suffix="/key_blocked_f32", destination_type=f32)
    every = ctx.value(Reduce, [shut], suffix="/row_all_blocked", operation="min", axes=[len(_shape(bias)) - 1], keep_dims=True)
    blocked = ctx.value(Eltwise, [every, ctx.constant(np.array(0.5, np.float32), "/half")], suffix="/row_blocked", operation="greater")
    return ctx.value(Select, [blocked, ctx.constant(np.array(0, dtype), "/zero_row"), y], suffix="/masked_rows")


def _check_precision(ctx: NodeContext, dtype: np.dtype) -> None:
    precision = ctx.attr("softmax_precision", None)
    if precision is None:
        return
    wanted = onnx.helper.tensor_dtype_to_np_dtype(int(precision)) if int(precision) in onnx.TensorProto.DataType.values() else None
    if wanted != dtype:
        raise ctx.fail(f"softmax_precision={precision} differs from the inputs' {dtype}: irforge computes the softmax in the inputs' type",
                       fix="drop softmax_precision or export with inputs of that type")


def _explicit(ctx: NodeContext, att: _Attention, q: SSAValue, k: SSAValue, v: SSAValue, mask: SSAValue | None, causal: bool,
              scale: float | None, softcap: float) -> SSAValue:
    """softmax(softcap(q k^T * scale) + bias) v as separate ops (the softcap form)."""
    head = _shape(q)[-1]
    if scale is None:
        if head == DYN:
            raise ctx.fail("the default scale needs Q's head size at conversion", fix="give static input shapes (--input_shape)")
        scale = 1.0 / float(np.sqrt(head))
    dtype = att.dtype
    scaled = ctx.value(Eltwise, [q, ctx.constant(np.array(scale, dtype), "/scale")], suffix="/q_scaled", operation="mul")
    scores = ctx.value(MatMul, [scaled, k], suffix="/scores", transpose_b=True)
    cap = ctx.constant(np.array(softcap, dtype), "/softcap")
    capped = ctx.value(Eltwise, [scores, cap], suffix="/capped", operation="div")
    capped = ctx.value(Activation, [capped], suffix="/tanh", kind="tanh")
    scores = ctx.value(Eltwise, [capped, cap], suffix="/softcapped", operation="mul")
    if causal:  # the fused op's flag alone: top-left causal, no cache
        mask = att._frontier(True, -1, -1)
    if mask is not None:
        scores = ctx.value(Eltwise, [scores, att._additive(mask)], suffix="/biased", operation="sum")
    probs = ctx.value(SoftMax, [scores], suffix="/probs", axis=-1)
    return ctx.value(MatMul, [probs, v], suffix="/context")


@onnx_extractor("Attention")
def attention(ctx: NodeContext) -> list[SSAValue | None]:
    att = _Attention(ctx)
    if int(ctx.attr("qk_matmul_output_mode", 0)) not in (0, 1, 2, 3):
        raise ctx.fail(f"qk_matmul_output_mode={ctx.attr('qk_matmul_output_mode')} is not one of 0-3")
    if ctx.output_used(3):
        raise ctx.fail("the qk_matmul_output output (the attention scores) is not supported", fix="do not read the node's fourth output")
    _check_precision(ctx, att.dtype)
    causal_attr = int(ctx.attr("is_causal", 0))
    if causal_attr not in (0, 1):
        raise ctx.fail(f"is_causal must be 0 or 1, got {causal_attr}")
    raw_scale = ctx.attr("scale", None)
    scale = None if raw_scale is None else float(raw_scale)
    softcap = float(ctx.attr("softcap", 0.0))
    if softcap < 0 or not np.isfinite(softcap):
        raise ctx.fail(f"softcap must be >= 0, got {softcap}")
    if att.q_heads % att.kv_heads:
        raise ctx.fail(f"{att.q_heads} query heads are not a multiple of the {att.kv_heads} key/value heads")
    q, k, v = att.q, att.k, att.v
    ev = _shape(v)[3]
    mask, causal, may_empty = att.bias(bool(causal_attr))
    grouped = att.q_heads != att.kv_heads
    if grouped:
        q, k, v, mask = att.grouped(q, k, v, mask)
    if softcap > 0:
        y = _explicit(ctx, att, q, k, v, mask, causal, scale, softcap)
    else:
        props: dict[str, object] = {"causal": causal}
        if scale is not None:
            props["scale"] = scale
        last = not may_empty and att.rank == 4 and not grouped
        y = ctx.value(ScaledDotProductAttention, [q, k, v] if mask is None else [q, k, v, mask], suffix="" if last else "/attention", **props)
    if may_empty and mask is not None:
        y = _guarded(ctx, att, y, mask, att.dtype)
    # present_key / present_value: K and V after the cache, in [B, kv_heads, S, E] form
    return [att.output(y, ev), att.k, att.v, None]
