"""The built-in sub-graph replacements of `replace-subgraph`, in the order they are tried."""

from __future__ import annotations

from xdsl.pattern_rewriter import RewritePattern


def builtin_replacements() -> list[RewritePattern]:
    from irforge.passes.patterns.subgraphs.activations import Gelu, GeluErfc, GeluTanh, HSigmoid, HSwish, Swish
    from irforge.passes.patterns.subgraphs.attention import ScaledDotProductAttentionPattern
    from irforge.passes.patterns.subgraphs.attention_chains import ChainedAttention
    from irforge.passes.patterns.subgraphs.attention_exports import ExportedAttention
    from irforge.passes.patterns.subgraphs.attention_heads_in_batch import HeadsInBatchAttention
    from irforge.passes.patterns.subgraphs.attention_shared import SharedAttentionProbs
    from irforge.passes.patterns.subgraphs.attention_split_keys import SplitKeyAttention
    from irforge.passes.patterns.subgraphs.attention_relative import ScatteredRelativePositions, SplitScatterPermute
    from irforge.passes.patterns.subgraphs.attention_transposed import TransposedAttention
    from irforge.passes.patterns.subgraphs.decompositions import DecomposeSquaredDifference
    from irforge.passes.patterns.subgraphs.layer_norm import KerasLayerNormalization
    from irforge.passes.patterns.subgraphs.moments import BatchNormOfMoments
    from irforge.passes.patterns.subgraphs.normalization import MeanVarianceNormalization
    from irforge.passes.patterns.subgraphs.runtime_transpose import RunTimeTranspose

    # pattern -> op replacements before the op -> sub-graph ones; HSwish before HSigmoid,
    # whose pattern is a part of HSwish's
    return [
        RunTimeTranspose(),  # (k^T of dynamic axes, before the attention patterns read it)
        ScaledDotProductAttentionPattern(),
        ExportedAttention(),
        SharedAttentionProbs(),
        HeadsInBatchAttention(),
        ChainedAttention(),
        SplitKeyAttention(),
        TransposedAttention(),
        ScatteredRelativePositions(),
        SplitScatterPermute(),
        MeanVarianceNormalization(),
        KerasLayerNormalization(),
        BatchNormOfMoments(),
        Gelu(),
        GeluErfc(),
        GeluTanh(),
        HSwish(),
        HSigmoid(),
        Swish(),
        DecomposeSquaredDifference(),
    ]
