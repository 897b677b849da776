"""merge-pad, cse, permute-to-reshape, flatten-concats, unflatten-matmul, convert-layout
through Resample and MVN, heads-in-weights, flip-layout-regions: each FileCheck case's outputs are
unchanged by its pass (reference interpreter, random inputs), and the pass changed the IR."""

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType

from irforge.backends.reference import run
from irforge.model import Model, input_names, parse_module, print_module
from irforge.passes import apply_pipeline
from irforge.weights.dtypes import from_xdsl
from irforge.weights.store import WeightStore

FILECHECK = Path(__file__).parents[1] / "filecheck" / "passes"
PASSES = {"convert_layout_resample": "convert-layout", "merge_pad": "merge-pad", "cse": "cse", "permute_to_reshape": "permute-to-reshape", "flatten_concats": "flatten-concats",
          "unflatten_matmul": "unflatten-matmul", "convert_layout_mvn": "convert-layout",
          "heads_in_weights": "heads-in-weights", "flip_layout_regions": "flip-layout-regions",
          "canonicalize_reshape_sandwich": "canonicalize"}


def cases() -> list[tuple[str, str, str]]:
    found = []
    for stem, spec in PASSES.items():
        text = (FILECHECK / f"{stem}.mlir").read_text()
        for index, part in enumerate(text.split("// -----")):
            code = "\n".join(line for line in part.splitlines() if not line.lstrip().startswith("//"))
            found.append((f"{stem}{index}", spec, code))
    return found


@pytest.mark.parametrize("name, spec, code", cases(), ids=[c[0] for c in cases()])
def test_pass_keeps_the_outputs(name, spec, code):
    before = Model(parse_module(code), WeightStore())
    after = Model(parse_module(code), WeightStore())
    apply_pipeline(after.module, spec)
    rng = np.random.default_rng(0)
    feeds = {}
    for arg, arg_name in zip(before.func.args, input_names(before.func)):
        t = arg.type
        assert isinstance(t, TensorType)
        feeds[arg_name] = rng.standard_normal(t.get_shape()).astype(from_xdsl(t.element_type))
    want, got = run(before, feeds), run(after, feeds)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-6)
    if name not in ("merge_pad3", "heads_in_weights1", "flip_layout_regions1", "canonicalize_reshape_sandwich1"):  # the negative cases
        assert print_module(after.module) != print_module(before.module)


def test_nhwc_style_onnx_model_keeps_at_most_one_transpose():
    """An ONNX model exported from NHWC code (a Transpose around every Conv) loses them in
    ir-convert's default pipeline, as TensorFlow graphs do."""
    from irforge.frontends.onnx import import_onnx
    from irforge.testing.tf_models import keras_resnet
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
    from tests.helpers import ort_session_run

    _, twin = keras_resnet()
    assert sum(node.op_type == "Transpose" for node in twin.graph.node) >= 6
    model = import_onnx(twin)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    assert [op.name for op in model.func.body.block.ops].count("nn.permute") <= 1
    x = np.random.default_rng(3).standard_normal((1, 16, 16, 3)).astype(np.float32)
    (want,) = ort_session_run(twin, {"input_1": x})
    (got,) = run(model, {"input_1": x}).values()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
