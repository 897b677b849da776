"""flip-layout-regions with a stored constant in the region: its trial copy must read the
model's weights (an LLaMA export failed with "weight '@permuted' is not in the weight store")
and leave the real store without the trial's additions."""

import numpy as np

from irforge.backends.reference import run
from irforge.model import Model, attach_store, input_names, parse_module
from irforge.passes import apply_pipeline
from irforge.weights.store import WeightStore

CODE = """
func.func @flip_with_weight(%x: tensor<1x2x4x4xf32>, %y: tensor<1x4x4x2xf32>, %w: tensor<2x2x1x1xf32>, %m: tensor<2x2xf32>) -> tensor<1x2x4x4xf32> {
  %c = nn.convolution %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = nn.permute %c {order = array<i64: 0, 2, 3, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
  %f = nn.matmul %y, %m : (tensor<1x4x4x2xf32>, tensor<2x2xf32>) -> tensor<1x4x4x2xf32>
  %a = nn.eltwise %f, %s {operation = "sum", name = "add"} : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %b = "nn.constant"() <{weight = @bias}> : () -> tensor<1x4x4x2xf32>
  %e = nn.eltwise %a, %b {operation = "sum", name = "bias_add"} : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %r = nn.relu %e : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %t = nn.permute %r {order = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
  %d = nn.convolution %t, %w {name = "d"} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %d : tensor<1x2x4x4xf32>
}
"""


def model() -> Model:
    store = WeightStore()
    store.add(np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2) / 7, "bias")
    module = parse_module(CODE)
    attach_store(module, store)
    return Model(module, store)


def test_flip_reads_stored_constants_and_keeps_the_outputs():
    before, after = model(), model()
    apply_pipeline(after.module, "flip-layout-regions")
    names = [op.name for op in after.func.body.block.ops]
    assert names.count("nn.permute") == 1  # flipped: the stream runs in NCHW
    assert len(after.store) == 2  # the bias and the permuted bias, no trial leftovers
    rng = np.random.default_rng(0)
    shapes = [(1, 2, 4, 4), (1, 4, 4, 2), (2, 2, 1, 1), (2, 2)]
    feeds = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in zip(input_names(before.func), shapes)}
    (want,), (got,) = run(before, feeds).values(), run(after, feeds).values()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
