"""set-shapes: a model reshaped by the pass computes what the model built at that shape does."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import BatchNormalization, Convolution, Flatten, FullyConnected, Pooling, ReLU, Reshape
from irforge.errors import IrforgeError
from irforge.model import Model
from irforge.passes import apply_pipeline


def classifier(shape: list[int], seed: int = 0) -> Model:
    """conv -> bn -> relu -> strided conv -> global pool -> flatten -> fc, same constants for
    any input shape [N, 3, H, W]."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    y = b.input("data", shape)
    y = b.add(Convolution, [y, b.constant(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))], pads_begin=[1, 1], pads_end=[1, 1]).output
    stats = [rng.uniform(0.5, 1.5, 4).astype(np.float32) for _ in range(4)]
    y = b.add(BatchNormalization, [y, *(b.constant(s) for s in stats)], name="bn").output
    y = b.add(ReLU, [y]).output
    y = b.add(Convolution, [y, b.constant(rng.standard_normal((6, 4, 3, 3)).astype(np.float32))], strides=[2, 2]).output
    y = b.add(Pooling, [y], method="avg", global_pool=True).output
    y = b.add(Flatten, [y], axis=1).output
    y = b.add(FullyConnected, [y, b.constant(rng.standard_normal((5, 6)).astype(np.float32))]).output
    b.output(y, "prob")
    return b.finish()


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 3), st.integers(3, 12), st.integers(3, 12))
def test_new_shape_computes_like_a_model_built_at_it(n, h, w):
    model = classifier([1, 3, 8, 8])
    apply_pipeline(model.module, f'set-shapes{{shapes="data[{n},3,{h},{w}]"}}')
    expected = classifier([n, 3, h, w])
    feed = {"data": np.random.default_rng(h * w).standard_normal((n, 3, h, w)).astype(np.float32)}
    assert model.func.function_type == expected.func.function_type
    np.testing.assert_allclose(run(model, feed)["prob"], run(expected, feed)["prob"], rtol=1e-5, atol=1e-6)


def test_dynamic_batch_is_kept_dynamic():
    model = classifier([1, 3, 8, 8])
    apply_pipeline(model.module, 'set-shapes{shapes="data[-1,3,8,8]"}')
    assert str(model.func.function_type) == "(tensor<?x3x8x8xf32>) -> tensor<?x5xf32>"


def test_reshape_that_cannot_hold_names_the_op():
    b = ModelBuilder()
    x = b.input("data", [1, 2, 4])
    y = b.add(ReLU, [x], name="act").output
    b.output(b.add(Reshape, [y], shape=[1, 8], name="fixed").output, "y")
    model = b.finish()
    with pytest.raises(IrforgeError, match="stopped shape propagation at node nn.reshape 'fixed'"):
        apply_pipeline(model.module, 'set-shapes{shapes="data[1,3,4]"}')
