"""Einsum lowered to `nn` ops, for every framework's importer (TensorFlow's and ONNX's Einsum).

    lower_einsum(ctx, "abc,cde->abde", [x, w])

builds, on a frontend's `BuildContext`, Transposes, Reshapes, MatMuls, ReduceSums and
Gathers that compute the equation (numpy's semantics):

1. The equation is parsed into one list of labels per operand; `...` becomes as many fresh
   labels as the operand has dims beyond its letters (right-aligned across operands, so
   ellipsis dims broadcast). Without `->` the output is the ellipsis, then the labels seen
   exactly once, in alphabetical order.
2. A label repeated within one operand takes the diagonal: the repeated axes are moved last,
   merged by a Reshape and read by a Gather of the diagonal's flat positions.
3. A label only one operand has and the output lacks is summed out at once (ReduceSum).
4. The operands are contracted left to right, two at a time, as one batched MatMul: labels of
   both that are still needed later are batch dims (kept apart, so MatMul broadcasts size-1
   ones), labels of both that are not are the contraction K, the others are M (left) and N
   (right); each side is transposed to [batch, M, K] / [batch, K, N] and its M, K, N groups
   merged by a Reshape, and the product is split back into its labels. The last contraction
   picks MatMul's transpose flags and operand order that need the fewest Permutes.
5. The result is transposed into the output's order.

What it cannot express it refuses with one error saying why: a label of the output no input
has, a contracted label whose sizes differ (1 against n), dynamic sizes where a Reshape or a
diagonal needs them.
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irforge.dialects.nn import Gather, MatMul, Permute, Reduce, Reshape
from irforge.dialects.nn.base import DYN
from irforge.errors import IrforgeError
from irforge.frontends.context import BuildContext

FIT = "irforge lowers Einsum to Transpose/Reshape/MatMul/ReduceSum/Gather; rewrite the equation in a form numpy accepts with static shapes"


@dataclass
class Term:
    """A tensor and the label of each of its dims."""

    value: SSAValue
    labels: list[str]

    @property
    def shape(self) -> list[int]:
        t = self.value.type
        assert isinstance(t, TensorType)
        return list(t.get_shape())

    def size(self, label: str) -> int:
        return self.shape[self.labels.index(label)]


def parse_equation(equation: str, ranks: Sequence[int]) -> tuple[list[list[str]], list[str]]:
    """Labels of each operand and of the output, ellipses expanded to '.0', '.1', ..."""
    text = equation.replace(" ", "")
    inputs_text, arrow, output_text = text.partition("->")
    terms = inputs_text.split(",")
    if len(terms) != len(ranks):
        raise IrforgeError(f"Einsum equation '{equation}' has {len(terms)} operands, the node {len(ranks)}", fix=FIT, code="E041")
    ellipsis = max((rank - len(t.replace("...", "")) for t, rank in zip(terms, ranks) if "..." in t), default=0)
    labels = [_expand(t, rank, ellipsis, equation) for t, rank in zip(terms, ranks)]
    if arrow:
        output = _expand(output_text, None, ellipsis, equation)
    else:
        counts = Counter(label for term in labels for label in term if not label.startswith("."))
        output = [f".{i}" for i in range(ellipsis)] + sorted(label for label, n in counts.items() if n == 1)
    return labels, output


def _expand(term: str, rank: int | None, ellipsis: int, equation: str) -> list[str]:
    letters = term.replace("...", "")
    if term.count("...") > 1 or any(c not in string.ascii_letters for c in letters):
        raise IrforgeError(f"Einsum term '{term}' of '{equation}' is not letters with at most one '...'", fix=FIT, code="E041")
    width = ellipsis if rank is None else rank - len(letters)
    if "..." not in term:
        if rank is not None and width != 0:
            raise IrforgeError(f"Einsum term '{term}' of '{equation}' has {len(letters)} labels for a rank-{rank} operand", fix=FIT, code="E041")
        return list(letters)
    if width < 0:
        raise IrforgeError(f"Einsum term '{term}' of '{equation}' has more labels than its operand's rank {rank}", fix=FIT, code="E041")
    head, _, tail = term.partition("...")
    # right-aligned: an operand with fewer ellipsis dims has the last ones
    return list(head) + [f".{i}" for i in range(ellipsis - width, ellipsis)] + list(tail)


def lower_einsum(ctx: BuildContext, equation: str, operands: Sequence[SSAValue]) -> SSAValue:
    """The value of `equation` over `operands`, built with `ctx` (last op named after the node)."""
    ranks = [len(_shape(v)) for v in operands]
    labels, output = parse_equation(equation, ranks)
    known = {label for term in labels for label in term}
    missing = [label for label in output if label not in known]
    if missing or len(set(output)) != len(output):
        what = f"output labels {missing} appear in no operand" if missing else "an output label is repeated"
        raise IrforgeError(f"Einsum equation '{equation}': {what}", where=ctx.where, fix=FIT, code="E041")
    lowering = _Lowering(ctx, equation)
    terms = [lowering.diagonal(Term(v, list(t)), i) for i, (v, t) in enumerate(zip(operands, labels))]
    for i, term in enumerate(terms):
        others = {label for j, t in enumerate(terms) if j != i for label in t.labels}
        terms[i] = lowering.reduce(term, [lb for lb in term.labels if lb not in output and lb not in others], f"/sum{i}")
    acc = terms[0]
    for i, term in enumerate(terms[1:], start=1):
        later = set(output) | {label for t in terms[i + 1 :] for label in t.labels}
        acc = lowering.contract(acc, term, later, i, list(output) if i == len(terms) - 1 else None)
    acc = lowering.reduce(acc, [lb for lb in acc.labels if lb not in output], "/sum")
    order = [acc.labels.index(label) for label in output]
    return ctx.value(Permute, [acc.value], order=order) if order != list(range(len(order))) else acc.value


def _shape(value: SSAValue) -> list[int]:
    t = value.type
    assert isinstance(t, TensorType)
    return list(t.get_shape())


class _Lowering:
    def __init__(self, ctx: BuildContext, equation: str) -> None:
        self.ctx = ctx
        self.equation = equation

    def fail(self, what: str) -> IrforgeError:
        return IrforgeError(f"Einsum '{self.equation}': {what}", where=self.ctx.where, fix=FIT, code="E041")

    def static(self, term: Term, why: str) -> list[int]:
        if DYN in term.shape:
            raise self.fail(f"{why} needs static sizes, got {term.shape}")
        return term.shape

    def permute(self, term: Term, labels: list[str], suffix: str) -> Term:
        if labels == term.labels:
            return term
        order = [term.labels.index(label) for label in labels]
        return Term(self.ctx.value(Permute, [term.value], suffix=suffix, order=order), labels)

    def reshape(self, value: SSAValue, shape: list[int], suffix: str) -> SSAValue:
        if _shape(value) == shape:
            return value
        return self.ctx.value(Reshape, [value], suffix=suffix, shape=shape, special_zero=False)

    def reduce(self, term: Term, labels: list[str], suffix: str) -> Term:
        if not labels:
            return term
        axes = sorted(term.labels.index(label) for label in labels)
        value = self.ctx.value(Reduce, [term.value], suffix=suffix, operation="sum", axes=axes, keep_dims=False)
        return Term(value, [label for label in term.labels if label not in labels])

    def diagonal(self, term: Term, index: int) -> Term:
        """The term with each label repeated in it reduced to its diagonal."""
        for label, count in Counter(term.labels).items():
            if count == 1:
                continue
            shape = self.static(term, "a diagonal (repeated label)")
            sizes = {shape[i] for i, lb in enumerate(term.labels) if lb == label}
            if len(sizes) != 1:
                raise self.fail(f"label '{label}' repeats with sizes {sorted(sizes)}")
            n = sizes.pop()
            rest = [lb for lb in term.labels if lb != label]
            moved = self.permute(term, rest + [label] * count, f"/diag{index}{label}/move")
            flat = self.reshape(moved.value, moved.shape[: len(rest)] + [n**count], f"/diag{index}{label}/flat")
            stride = sum(n**k for k in range(count))  # flat position of (i, i, ..., i) is i * stride
            indices = self.ctx.constant(np.arange(n, dtype=np.int64) * stride, f"/diag{index}{label}/indices")
            value = self.ctx.value(Gather, [flat, indices], suffix=f"/diag{index}{label}", axis=len(rest))
            term = Term(value, rest + [label])
        return term

    def contract(self, a: Term, b: Term, later: set[str], index: int, final: list[str] | None) -> Term:
        """a and b as one batched MatMul over their shared labels not needed `later`; with
        `final` (the output, for the last contraction) the layout is chosen among MatMul's
        transpose flags and operand order to need the fewest Permutes, as ovc's does."""
        shared = [label for label in a.labels if label in b.labels]
        batch = [label for label in shared if label in later]
        k = [label for label in shared if label not in later]
        m = [label for label in a.labels if label not in b.labels]
        n = [label for label in b.labels if label not in a.labels]
        for label in k:
            if a.size(label) != b.size(label):
                raise self.fail(f"contracted label '{label}' has sizes {a.size(label)} and {b.size(label)}")
        if final is not None:  # batch, M and N in the output's order
            batch, m, n = ([lb for lb in final if lb in group] for group in (batch, m, n))
        ta, tb, swap = min(
            ((ta, tb, swap) for ta in (False, True) for tb in (False, True) for swap in (False, True)),
            key=lambda flags: self._permutes(a, b, batch, m, k, n, final, *flags),
        )
        suffix = f"/contract{index}"
        a = self.permute(a, batch + (k + m if ta else m + k), suffix + "/a")
        b = self.permute(b, batch + (n + k if tb else k + n), suffix + "/b")
        group = lambda t, labels: int(np.prod([t.size(lb) for lb in labels], dtype=np.int64))  # noqa: E731
        if len(m) != 1 or len(k) != 1 or len(n) != 1:
            self.static(a, "merging labels for a MatMul")
            self.static(b, "merging labels for a MatMul")
        nb = len(batch)
        a_groups, b_groups = (k, m) if ta else (m, k), (n, k) if tb else (k, n)
        av = self.reshape(a.value, a.shape[:nb] + [group(a, g) for g in a_groups], suffix + "/a_flat")
        bv = self.reshape(b.value, b.shape[:nb] + [group(b, g) for g in b_groups], suffix + "/b_flat")
        if swap:  # (A B)^T = B^T A^T: the product comes out as [batch, N, M]
            product = self.ctx.value(MatMul, [bv, av], suffix=suffix, transpose_a=not tb, transpose_b=not ta)
            first, second = n, m
        else:
            product = self.ctx.value(MatMul, [av, bv], suffix=suffix, transpose_a=ta, transpose_b=tb)
            first, second = m, n
        sizes = {lb: (a.size(lb) if lb in a.labels else b.size(lb)) for lb in first + second}
        batch_shape = [max(a.size(lb), b.size(lb)) for lb in batch]
        value = self.reshape(product, batch_shape + [sizes[lb] for lb in first + second], suffix + "/split")
        return Term(value, batch + first + second)

    @staticmethod
    def _permutes(a: Term, b: Term, batch: list[str], m: list[str], k: list[str], n: list[str], final: list[str] | None, ta: bool, tb: bool, swap: bool) -> tuple[int, bool, bool, bool]:
        """How many Permutes a layout needs (then: prefer no flags, no swap)."""
        count = int(a.labels != batch + (k + m if ta else m + k)) + int(b.labels != batch + (n + k if tb else k + n))
        result = batch + (n + m if swap else m + n)
        if final is not None:
            count += int([lb for lb in final if lb in result] != result or len(result) != len(final))
        return count, ta or tb, swap, False
