"""The shared Einsum lowering against numpy.einsum, through the TensorFlow and ONNX importers."""

import numpy as np
import pytest

from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.tf import import_tf
from irforge.frontends.tf.schema import DT_FLOAT
from irforge.testing.tf_models import DualBuilder

CASES = [
    ("abc,cde->abde", [(2, 3, 4), (4, 5, 6)]),  # EinsumDense query projection
    ("abcd,cde->abe", [(2, 3, 4, 5), (4, 5, 6)]),  # EinsumDense output projection
    ("aecd,abcd->acbe", [(2, 5, 3, 4), (2, 6, 3, 4)]),  # MultiHeadAttention scores
    ("acbe,aecd->abcd", [(2, 3, 6, 5), (2, 5, 3, 4)]),  # MultiHeadAttention combine
    ("ij,jk", [(3, 4), (4, 5)]),  # implicit output
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 6)]),  # ellipsis, broadcast batch
    ("ii->i", [(4, 4)]),  # diagonal
    ("bii,bj->bij", [(2, 3, 3), (2, 4)]),  # diagonal then outer product
    ("ij->", [(3, 4)]),  # full sum
    ("ij->ji", [(3, 4)]),  # transpose
    ("i,i->", [(5,), (5,)]),  # inner product
    ("i,j->ij", [(3,), (4,)]),  # outer product
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 6)]),  # three operands
    ("bij,bjk->bik", [(1, 3, 4), (2, 4, 5)]),  # batch label broadcast 1 against 2
    ("ijk,k->i", [(2, 3, 4), (4,)]),  # a label summed alone (j) and one contracted (k)
]


def tf_einsum(equation: str, shapes: list[tuple[int, ...]], feeds: list[np.ndarray]) -> np.ndarray:
    b = DualBuilder()
    names = []
    for i, shape in enumerate(shapes):
        names.append(b.placeholder(f"x{i}", list(shape))[0])
    node = b.tf_node("Einsum", names, "y", equation=equation)
    b.graph.node[-1].attr["T"].type = DT_FLOAT
    model = import_tf(b.graph, outputs=[node])
    return run(model, {n: f for n, f in zip(names, feeds)})["y"]


@pytest.mark.parametrize("equation, shapes", CASES, ids=[c[0] for c in CASES])
def test_tensorflow_einsum_matches_numpy(equation, shapes):
    rng = np.random.default_rng(0)
    feeds = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    want = np.einsum(equation, *feeds)
    got = tf_einsum(equation, shapes, feeds)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "equation, shapes, message",
    [
        ("ij,jk->iz", [(2, 3), (3, 4)], r"output labels \['z'\] appear in no operand"),
        ("ij,kj->ik", [(2, 3), (4, 1)], "contracted label 'j' has sizes 3 and 1"),
        ("ij,jk", [(2, 3)], "has 2 operands, the node 1"),
        ("i1,1k", [(2, 3), (3, 4)], "is not letters"),
    ],
)
def test_what_einsum_cannot_express_is_refused(equation, shapes, message):
    feeds = [np.zeros(s, np.float32) for s in shapes]
    with pytest.raises(IrforgeError, match=message) as info:
        tf_einsum(equation, shapes, feeds)
    assert "Transpose/Reshape/MatMul" in str(info.value)


@pytest.mark.parametrize("equation, shapes", [CASES[0], CASES[1], CASES[2], CASES[3]], ids=["dense_in", "dense_out", "scores", "combine"])
def test_keras_attention_einsums_need_the_fewest_permutes(equation, shapes):
    """MatMul's transpose flags and operand order absorb what would be transposes (the
    attention forms need two: their batch labels are not leading in an operand)."""
    from irforge.passes import apply_pipeline

    b = DualBuilder()
    names = [b.placeholder(f"x{i}", list(s))[0] for i, s in enumerate(shapes)]
    b.tf_node("Einsum", names, "y", equation=equation)
    model = import_tf(b.graph, outputs=["y"])
    apply_pipeline(model.module, "infer-shapes,canonicalize")
    permutes = [op for op in model.func.body.block.ops if op.name == "nn.permute"]
    assert len(permutes) == (2 if equation in ("aecd,abcd->acbe", "acbe,aecd->abcd") else 0), equation
