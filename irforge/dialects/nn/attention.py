"""Attention: ScaledDotProductAttention, OpenVINO's opset13 layer (PyTorch's
`scaled_dot_product_attention` without dropout).

    y = softmax(q @ k^T * scale + bias, over the last axis) @ v

over the last two axes of q [..., L, E], k [..., S, E] and v [..., S, Ev]; the axes before
them broadcast as in numpy. The bias is, as in the opset's pseudo-code:

- with `causal`: -inf above the diagonal of the [L, S] scores (the mask, if any, is ignored);
- with an i1 mask: 0 where it is true, -inf where it is false (a row with no true value
  gives NaN, as the opset's Softmax of an all -inf row does);
- with a float mask: the mask itself (additive);
- otherwise 0.

With the `fill` property a masked key's logit is the fill itself in place of the biased
score: `fill` where an i1 mask (or the causal triangle) masks a key, the mask's value where
a float mask is at or below `fill` (nested Wheres, each with its own fill). That is the
source's Where(keep, s * scale, fill), which the attention patterns fuse: exact
where the score at a masked key is inf, NaN or beyond float32 (the additive form gives NaN or
lets the key through there); OpenVINO's layer has no such input, so the IR writer leaves it
out (the additive semantics: equal for every finite score below ~1e22).

The mask is the fourth operand and broadcasts against the [..., L, S] scores. The scale is
the `scale` property, or a fifth operand (a one-value tensor known only at run time, after a
mask, as OpenVINO's inputs are positional); without either it is 1 / sqrt(E).
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import BoolAttr, FloatAttr, TensorType, i1
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, var_operand_def

from irforge.dialects.nn.base import NNOp, broadcast_shapes, known, product, tensor
from irforge.dialects.nn.linear import show


@irdl_op_definition
class ScaledDotProductAttention(NNOp):
    """softmax(q @ k^T * scale + mask) @ v; see the module docstring."""

    name = "nn.scaled_dot_product_attention"
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    extras = var_operand_def(TensorType)
    """[] or [mask] or [mask, scale]: positional, as OpenVINO's optional inputs."""
    output = result_def(TensorType)
    causal = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    scale = opt_prop_def(FloatAttr)
    """The factor of the scores; absent: a scale operand, else 1 / sqrt(E)."""
    fill = opt_prop_def(FloatAttr)
    """The logit of a masked key, replacing its score (see the module docstring); absent: the
    mask is added."""

    @property
    def mask(self) -> SSAValue | None:
        return self.extras[0] if len(self.extras) > 0 else None

    @property
    def scale_input(self) -> SSAValue | None:
        return self.extras[1] if len(self.extras) > 1 else None

    def masked_fill(self) -> float | None:
        """The `fill` property's value (None: the mask is added)."""
        return self.float_prop("fill") if self.fill is not None else None

    def static_scale(self) -> float | None:
        """The scale known without running: the property, else 1 / sqrt(E) (None: a scale
        operand, or E unknown)."""
        if self.scale is not None:
            return self.float_prop("scale")
        head = self.operand_shape(0)[-1]
        return None if self.scale_input is not None or not known(head) else 1.0 / math.sqrt(head)

    def verify_attributes(self) -> None:
        if len(self.extras) > 2:
            raise self.error(f"expected at most 5 operands (q, k, v, mask, scale), got {3 + len(self.extras)}")
        if self.scale is not None and self.scale_input is not None:
            raise self.error("scale is given both as a property and as an operand")
        if self.scale is not None and not math.isfinite(self.float_prop("scale")):
            raise self.error(f"scale must be finite, got {self.float_prop('scale'):g}")
        if self.fill is not None and (math.isnan(self.float_prop("fill")) or self.float_prop("fill") > 0):
            raise self.error(f"fill must be a negative number or -inf (a masked key's logit), got {self.float_prop('fill'):g}")

    def check_operands(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """The q, k, v shapes, checked: rank >= 3, one float type, E and S agreeing."""
        q, k, v = (self.operand_shape(i) for i in range(3))
        for what, shape in (("query", q), ("key", k), ("value", v)):
            if len(shape) < 3:
                raise self.error(f"{what} must have rank >= 3 ([N, ..., rows, columns]), got {len(shape)}")
        element = self.operand_type(0).element_type
        for index, what in ((1, "key"), (2, "value")):
            if self.operand_type(index).element_type != element:
                raise self.error(f"{what} has element type {self.operand_type(index).element_type}, query {element}")
        if known(q[-1], k[-1]) and q[-1] != k[-1]:
            raise self.error(f"query has {q[-1]} features per row but key has {k[-1]} ({show(q)} vs {show(k)})")
        if known(k[-2], v[-2]) and k[-2] != v[-2]:
            raise self.error(f"key has {k[-2]} rows but value has {v[-2]} ({show(k)} vs {show(v)})")
        return q, k, v

    def check_extras(self, scores: tuple[int, ...]) -> tuple[int, ...]:
        """The scores' shape once the mask is added (the mask may broadcast them)."""
        element = self.operand_type(0).element_type
        if self.mask is not None:
            mask = self.operand_type(3)
            if mask.element_type not in (i1, element):
                raise self.error(f"mask must be i1 or {element}, got {mask.element_type}")
            if not self.bool_prop("causal"):  # a causal op ignores its mask
                scores = broadcast_shapes(self, scores, tuple(mask.get_shape()))
        if self.scale_input is not None:
            scale = self.operand_type(4)
            dims = tuple(scale.get_shape())
            if scale.element_type != element or len(dims) > 1 or (known(*dims) and product(dims) != 1):
                raise self.error(f"scale operand must be one {element} value (rank 0 or [1]), got {scale}")
        return scores

    def infer_shapes(self) -> list[TensorType]:
        q, k, v = self.check_operands()
        batch = broadcast_shapes(self, q[:-2], k[:-2])
        scores = self.check_extras((*batch, q[-2], k[-2]))
        batch = broadcast_shapes(self, scores[:-2], v[:-2])
        return [tensor((*batch, scores[-2], v[-1]), self.operand_type(0).element_type)]
