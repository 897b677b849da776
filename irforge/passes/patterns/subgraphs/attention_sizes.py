"""Which shapes an attention chain (`attention_chains.py`) may hold, sizes known only at run
time (DYN) included, and the views it builds for them. Shapes are tuples of ints, DYN for a
run-time size, the last two axes [rows, columns].

- `static_but_keys`: everything static but the number of keys S (a KV cache): the attention's
  result is static and each view it builds infers at most one size (`inferred`);
- `one_view`: run-time sizes anywhere, where no view is built at all;
- `fits`: a mask that broadcasts to the scores without growing them.
"""

from __future__ import annotations

from irforge.dialects.nn.base import DYN

Shape = tuple[int, ...]


def static(shape: Shape) -> bool:
    return all(d != DYN for d in shape)


def shared(shape: tuple[int, ...], lead: tuple[int, ...]) -> bool:
    """k or v whose leading dims broadcast to the attention's (unit where it has heads: one
    key and value for all query heads), at the same rank."""
    return len(shape) - 2 == len(lead) and all(d in (1, n) for d, n in zip(shape[:-2], lead))


def fits(mask: tuple[int, ...], view: tuple[int, ...]) -> bool:
    """mask broadcasts to view without growing it. A mask size known only at run time (DYN)
    fits a static view size: the op that adds the mask has that static size as its result,
    so the run-time size is 1 or it (else the model fails at run time either way)
    (Emformer's padding mask through dynamo: [B, 1, 1, ?] from Range(max(lengths)))."""
    if len(mask) > len(view):
        return False
    return all(m in (1, v) or (m == DYN and v != DYN) for m, v in zip(reversed(mask), reversed(view)))


def inferred(shape: list[int]) -> list[int]:
    """A Reshape's target with the run-time size (at most one: `static_but_keys`) as -1."""
    return [-1 if d == DYN else d for d in shape]


def static_but_keys(q: Shape, kt: Shape, v: Shape, views: list[Shape], out: Shape) -> bool:
    """Every size known but the number of keys S: k^T's last two axes ([E, S] or k's [S, E])
    hold at most one run-time size, v's keys axis and the score views' last axis may be one
    (a KV cache, keys up to a run-time length); q, the result and the leading axes are
    static, so the attention's result is too and its views need at most one inferred size."""
    return (static(q) and static(out) and static(kt[:-2]) and sum(d == DYN for d in kt) <= 1
            and static((*v[:-2], v[-1])) and all(static(w[:-1]) for w in views)
            and all(static(w) for w in views if w[-2:] != views[0][-2:]))  # (grid views: static)


def one_view(q: Shape, kt: Shape, v: Shape, views: list[Shape], terms: list[Shape]) -> bool:
    """Run-time sizes anywhere, where nothing needs a view: the scores, their masks and q
    have one shape's leading dims ([B, H] with B, L and S run-time: FastSpeech2-Conformer's
    decoder after its length regulator), k and v the same or shared by the heads. The
    attention then takes every operand as it is and its result has the product's type."""
    view = views[0]
    lead = view[:-2]
    return (all(w == view for w in views) and all(t == view for t in terms) and q[:-2] == lead
            and all(x[:-2] == lead or shared(x, lead) for x in (kt, v)))
