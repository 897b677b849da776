"""fuse-grouped-conv: Split -> Convolutions -> Concat blocks become one grouped convolution
computing the same outputs."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Concat, Convolution, Split
from irforge.model import Model
from irforge.passes import apply_pipeline


def split_conv_concat(parts: int, cin: int, cout: int, inner_group: int, k: int, stride: int, pad: int, bias: bool, seed: int) -> Model:
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.input("x", [1, parts * cin, 7, 7])
    split = b.add(Split, [x], num_results=parts, axis=1, split_lengths=[cin] * parts)
    outs = []
    for part in split.results:
        operands = [part, b.constant(rng.standard_normal((cout, cin // inner_group, k, k)).astype(np.float32), "w")]
        if bias:
            operands.append(b.constant(rng.standard_normal(cout).astype(np.float32), "b"))
        conv = b.add(Convolution, operands, group=inner_group, strides=[stride] * 2, pads_begin=[pad] * 2, pads_end=[pad] * 2)
        outs.append(conv.output)
    b.output(b.add(Concat, outs, axis=1).output, "y")
    return b.finish()


@settings(max_examples=40, deadline=None)
@given(
    parts=st.integers(2, 4),
    inner=st.sampled_from([1, 2]),
    cin_per_group=st.integers(1, 2),
    cout_per_group=st.integers(1, 2),
    k=st.sampled_from([1, 3]),
    stride=st.integers(1, 2),
    pad=st.integers(0, 1),
    bias=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_grouped_convolution_computes_the_same(parts, inner, cin_per_group, cout_per_group, k, stride, pad, bias, seed):
    model = split_conv_concat(parts, inner * cin_per_group, inner * cout_per_group, inner, k, stride, pad, bias, seed)
    after = Model(model.module.clone(), model.store)
    apply_pipeline(after.module, "fuse-grouped-conv")
    ops = [op for op in after.func.body.block.ops if not op.name == "nn.constant"]
    assert [op.name for op in ops] == ["nn.convolution", "func.return"]
    assert ops[0].int_prop("group") == parts * inner
    feed = {"x": np.random.default_rng(seed).standard_normal((1, parts * inner * cin_per_group, 7, 7)).astype(np.float32)}
    np.testing.assert_allclose(run(after, feed)["y"], run(model, feed)["y"], rtol=1e-5, atol=1e-5)
