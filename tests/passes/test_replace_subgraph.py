"""replace-subgraph: decomposed layers become one op with the same outputs (reference
interpreter and onnxruntime), extensions add replacements, points replacements from a config."""

import json
import math
import subprocess
import sys
import textwrap

import numpy as np
import onnx
import pytest

from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Activation, Clamp, Eltwise, Reduce
from irforge.dialects.nn.base import build
from irforge.errors import IrforgeError
from irforge.extensions import load_extension
from irforge.frontends.onnx import import_onnx
from irforge.model import Model, input_names, load_model, save_model
from irforge.passes import apply_pipeline, replace_subgraph
from irforge.passes.patterns.affine import add_constant
from irforge.passes.patterns.dag import Any, Match, P, Same
from irforge.passes.patterns.subgraphs.base import DagReplacement
from irforge.testing.onnx_models import GraphBuilder
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.helpers import ort_session_run


def ops(model: Model) -> list[str]:
    names = [op.name for op in model.func.body.block.ops if op.name not in ("nn.constant", "func.return")]
    kinds = [op.str_prop("kind") for op in model.func.body.block.ops if isinstance(op, Activation)]
    return names + kinds


def rel_err(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-12))


def replaced(model: Model, feeds: dict[str, np.ndarray], spec: str = "replace-subgraph") -> Model:
    """`model` after `spec`, checked to give the outputs it gave before within 1e-5."""
    before = run(model, feeds)
    after = Model(model.module.clone(), model.store)
    apply_pipeline(after.module, spec)
    got = run(after, feeds)
    for key in before:
        assert rel_err(got[key], before[key]) <= 1e-5, key
    return after


# -- ModelBuilder graphs --------------------------------------------------------------
def scalar(b: ModelBuilder, value: float) -> object:
    return b.constant(np.array(value, np.float32))


def eltwise(b: ModelBuilder, operation: str, lhs: object, rhs: object, name: str | None = None) -> object:
    return b.add(Eltwise, [lhs, rhs], operation=operation, name=name).output


def gelu_tanh(b: ModelBuilder, x: object) -> object:
    cube = eltwise(b, "mul", x, eltwise(b, "mul", x, x))
    inner = eltwise(b, "sum", x, eltwise(b, "mul", cube, scalar(b, 0.044715)))
    t = b.add(Activation, [eltwise(b, "mul", scalar(b, math.sqrt(2 / math.pi)), inner)], kind="tanh").output
    one_plus = eltwise(b, "sum", t, scalar(b, 1.0))
    return eltwise(b, "mul", eltwise(b, "mul", x, one_plus), scalar(b, 0.5), name="gelu")


def hswish(b: ModelBuilder, x: object) -> object:
    relu6 = b.add(Clamp, [eltwise(b, "sum", x, scalar(b, 3.0))], min=0.0, max=6.0).output
    return eltwise(b, "mul", x, eltwise(b, "div", relu6, scalar(b, 6.0)), name="hswish")


def hsigmoid(b: ModelBuilder, x: object) -> object:
    affine = eltwise(b, "sum", eltwise(b, "mul", x, scalar(b, 0.2)), scalar(b, 0.5))
    return b.add(Clamp, [affine], min=0.0, max=1.0, name="hsigmoid").output


def squared_diff(b: ModelBuilder, x: object) -> object:
    return eltwise(b, "squared_diff", x, b.constant(np.linspace(-1, 1, 8, dtype=np.float32)), name="sq")


@pytest.mark.parametrize(
    "make, kind",
    [(gelu_tanh, "gelu_tanh"), (hswish, "hswish"), (hsigmoid, "hsigmoid"), (squared_diff, None)],
)
def test_builder_graphs_keep_their_outputs(make, kind):
    b = ModelBuilder()
    b.output(make(b, b.input("x", [2, 8])), "y")
    model = b.finish()
    x = np.random.default_rng(0).uniform(-5, 5, (2, 8)).astype(np.float32)
    after = replaced(model, {"x": x})
    if kind is not None:
        assert ops(after) == ["nn.activation", kind]
    else:
        assert ops(after) == ["nn.eltwise", "nn.eltwise"]  # squared_diff -> sub, mul


# -- ONNX models as exporters write them -----------------------------------------------
def const(g: GraphBuilder, value: float, name: str) -> str:
    return g.tensor(np.array(value, np.float32), name)


def onnx_layer_norm(g: GraphBuilder, x: str, dim: int) -> str:
    mean = g.node("ReduceMean", [x], axes=[-1])
    d = g.node("Sub", [x, mean])
    var = g.node("ReduceMean", [g.node("Pow", [d, const(g, 2, "two")])], axes=[-1])
    std = g.node("Sqrt", [g.node("Add", [var, const(g, 1e-5, "eps")])])
    normed = g.node("Div", [d, std])
    gamma = g.tensor(g.rng.uniform(0.5, 1.5, dim).astype(np.float32), "gamma")
    beta = g.tensor(g.rng.uniform(-0.1, 0.1, dim).astype(np.float32), "beta")
    return g.node("Add", [g.node("Mul", [normed, gamma]), beta])  # type: ignore[list-item,return-value]


def onnx_gelu(g: GraphBuilder, x: str) -> str:
    erf = g.node("Erf", [g.node("Div", [x, const(g, math.sqrt(2), "sqrt2")])])
    one_plus = g.node("Add", [erf, const(g, 1, "one")])
    return g.node("Mul", [g.node("Mul", [x, one_plus]), const(g, 0.5, "half")])  # type: ignore[list-item,return-value]


def encoder_mlp(dim: int = 16) -> onnx.ModelProto:
    """LayerNorm -> MatMul -> Gelu -> MatMul -> SiLU, all decomposed."""
    g = GraphBuilder(seed=1)
    h = onnx_layer_norm(g, "tokens", dim)
    h = g.node("MatMul", [h, g.tensor(g.rng.standard_normal((dim, 2 * dim)).astype(np.float32) / 4, "w1")])
    h = onnx_gelu(g, h)  # type: ignore[arg-type]
    h = g.node("MatMul", [h, g.tensor(g.rng.standard_normal((2 * dim, dim)).astype(np.float32) / 4, "w2")])
    out = g.node("Mul", [h, g.node("Sigmoid", [h])])  # type: ignore[list-item]
    x = onnx.helper.make_tensor_value_info("tokens", onnx.TensorProto.FLOAT, [1, 6, dim])
    return g.model([x], out, "encoder_mlp")  # type: ignore[arg-type]


def instance_norm_net() -> onnx.ModelProto:
    """MVN over the spatial axes, x - mean computed twice, and a HardSwish written as
    x * Clip(x + 3, 0, 6) / 6."""
    g = GraphBuilder(seed=2)
    mean = g.node("ReduceMean", ["image"], axes=[2, 3])
    square = g.node("Pow", [g.node("Sub", ["image", mean]), const(g, 2, "two")])
    var = g.node("ReduceMean", [square], axes=[2, 3])
    centred = g.node("Sub", ["image", mean])
    std = g.node("Sqrt", [g.node("Add", [var, const(g, 1e-3, "eps")])])
    y = g.node("Div", [centred, std])
    clip = g.node("Clip", [g.node("Add", [y, const(g, 3, "three")]), const(g, 0, "lo"), const(g, 6, "hi")])  # type: ignore[list-item]
    out = g.node("Div", [g.node("Mul", [y, clip]), const(g, 6, "six")])  # type: ignore[list-item]
    x = onnx.helper.make_tensor_value_info("image", onnx.TensorProto.FLOAT, [1, 3, 5, 5])
    return g.model([x], out, "instance_norm")  # type: ignore[arg-type]


def test_decomposed_layer_norm_gelu_and_silu_from_onnx():
    proto = encoder_mlp()
    model = import_onnx(proto)
    apply_pipeline(model.module, "infer-shapes,canonicalize")
    x = np.random.default_rng(0).standard_normal((1, 6, 16)).astype(np.float32)
    after = replaced(model, {"tokens": x})
    assert ops(after) == [
        "nn.mvn", "nn.eltwise", "nn.eltwise", "nn.matmul", "nn.activation", "nn.matmul", "nn.activation", "gelu", "swish",
    ]  # fmt: skip
    (want,) = ort_session_run(proto, {"tokens": x})
    (got,) = run(after, {"tokens": x}).values()
    assert rel_err(got, want) <= 1e-5


def test_default_pipeline_replaces_before_fusing():
    proto = encoder_mlp()
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    assert "erf" not in ops(model) and "nn.mvn" in ops(model)
    x = np.random.default_rng(1).standard_normal((1, 6, 16)).astype(np.float32)
    (want,) = ort_session_run(proto, {"tokens": x})
    (got,) = run(model, {"tokens": x}).values()
    assert rel_err(got, want) <= 1e-5


def test_instance_norm_with_a_recomputed_centre_and_hswish_from_onnx():
    """x - mean computed twice (no common-subexpression elimination) is still an MVN."""
    proto = instance_norm_net()
    model = import_onnx(proto)
    apply_pipeline(model.module, "infer-shapes,canonicalize")
    x = np.random.default_rng(0).standard_normal((1, 3, 5, 5)).astype(np.float32)
    after = replaced(model, {"image": x})
    assert ops(after) == ["nn.mvn", "nn.activation", "hswish"]
    (want,) = ort_session_run(proto, {"image": x})
    (got,) = run(after, {"image": x}).values()
    assert rel_err(got, want) <= 1e-5


# -- extensions ---------------------------------------------------------------------------
class DoubleAdd(DagReplacement):
    """x + x -> x * 2, an extension's replacement."""

    pattern = P("eltwise", operation="sum", operands=[Any("x"), Same("x")])

    def build(self, m: Match, name: str) -> list:
        two = add_constant(np.array(2.0), np.dtype(np.float32), m.root, f"{name}/two")
        return [two, build(Eltwise, [m["x"], two.output], operation="mul", name=name)]


def test_registered_replacements_run_first(monkeypatch):
    monkeypatch.setattr(replace_subgraph, "_registered", [])
    b = ModelBuilder()
    x = b.input("x", [4])
    b.output(eltwise(b, "sum", x, x, name="twice"), "y")
    model = b.finish()
    assert ops(replaced(model, {"x": np.arange(4, dtype=np.float32)})) == ["nn.eltwise"]
    replace_subgraph.register_replacement(DoubleAdd)
    after = replaced(model, {"x": np.arange(4, dtype=np.float32)})
    (op,) = [o for o in after.func.body.block.ops if isinstance(o, Eltwise)]
    assert op.str_prop("operation") == "mul" and op.layer_name.data == "twice"


# -- points replacements from a transformations config -----------------------------------
EXTENSION = textwrap.dedent(
    '''
    """rsx.scaled_silu: x * sigmoid(beta * x), a block a config replaces a sub-graph with."""
    import numpy as np
    from xdsl.dialects.builtin import FloatAttr, TensorType
    from xdsl.ir import Dialect
    from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def

    from irforge.backends.reference import kernel
    from irforge.dialects.nn.base import NNOp
    from irforge.extensions import register_dialect


    @irdl_op_definition
    class ScaledSilu(NNOp):
        name = "rsx.scaled_silu"
        input = operand_def(TensorType)
        output = result_def(TensorType)
        beta = prop_def(FloatAttr)

        def infer_shapes(self):
            return [self.operand_type(0)]


    register_dialect(Dialect("rsx", [ScaledSilu], []))


    @kernel(ScaledSilu)
    def scaled_silu(op, x):
        return x / (1 + np.exp(-op.float_prop("beta") * x))
    '''
)


def points_model() -> Model:
    b = ModelBuilder()
    r1 = b.add(Activation, [b.input("data", [1, 6])], kind="tanh", name="tanh").output
    scaled = eltwise(b, "mul", r1, scalar(b, 1.5), name="scale")
    s = b.add(Activation, [scaled], kind="sigmoid", name="sig").output
    m = eltwise(b, "mul", r1, s, name="mul")
    b.output(b.add(Reduce, [m], operation="sum", axes=[1], name="total").output, "out")
    b.output(r1, "side")
    return b.finish()


def config(tmp_path, **changes: object) -> str:
    entry = {
        "id": "ScaledSilu", "match_kind": "points", "op": "rsx.scaled_silu", "custom_attributes": {"beta": 1.5},
        "instances": {"start_points": ["scale", "mul"], "end_points": ["mul"]},
    }  # fmt: skip
    entry.update(changes)
    path = tmp_path / "replacements.json"
    path.write_text(json.dumps([entry]))
    return str(path)


@pytest.fixture(scope="module")
def extension(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("ext") / "scaled_silu_ext.py"
    path.write_text(EXTENSION)
    load_extension(str(path))
    return str(path)


def test_points_replacement_by_an_extension_op(tmp_path, extension):
    model = points_model()
    x = np.random.default_rng(0).standard_normal((1, 6)).astype(np.float32)
    after = replaced(model, {"data": x}, f'replace-subgraph{{config="{config(tmp_path)}" patterns=false}}')
    assert ops(after) == ["nn.activation", "rsx.scaled_silu", "nn.reduce", "tanh"]


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"instances": {"start_points": ["nope"], "end_points": ["mul"]}}, "start point 'nope' names no layer"),
        ({"instances": {"start_points": ["scale", "mul"], "end_points": ["tanh"]}}, "end point 'tanh' is not reached"),
        ({"instances": {"start_points": ["scale"], "end_points": ["mul"]}}, "reads model input 'data' other than"),
        ({"instances": {"start_points": ["tanh"], "end_points": ["mul"]}}, "'tanh' inside the sub-graph is also used by a model output"),
        ({"instances": [{"start_points": ["scale"], "end_points": ["mul"]}]}, "must be a single dictionary"),
        ({"op": "ext.nope"}, "op 'ext.nope' is not a registered nn op"),
        ({"op": None}, "names no op"),
        ({"custom_attributes": {"beta": "high"}}, "cannot build rsx.scaled_silu"),
        ({"match_kind": "scope"}, 'match kind "scope" is not supported'),
        ({"include_outputs_to_sub_graph": False}, "include_outputs_to_sub_graph must be true"),
    ],
)
def test_points_errors(tmp_path, extension, changes, message):
    with pytest.raises(IrforgeError, match=message):
        apply_pipeline(points_model().module, f'replace-subgraph{{config="{config(tmp_path, **changes)}"}}')


def test_unreadable_configs(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    with pytest.raises(IrforgeError, match="cannot parse transformations config"):
        apply_pipeline(points_model().module, f'replace-subgraph{{config="{bad}"}}')
    bad.write_text('[{"match_kind": "points"}]')
    with pytest.raises(IrforgeError, match='has no "id"'):
        apply_pipeline(points_model().module, f'replace-subgraph{{config="{bad}"}}')


# -- ir-convert ---------------------------------------------------------------------------
def ir_convert(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "irforge.tools.ir_convert", "--emit", "mlir", *args], capture_output=True, text=True, timeout=120)


def test_ir_convert_transformations_config_and_cut_inputs(tmp_path, extension):
    model = points_model()
    apply_pipeline(model.module, "infer-shapes")
    save_model(model, tmp_path / "net.mlir")
    convert = ["--input_model", str(tmp_path / "net.mlir"), "-o", str(tmp_path), "-n", "out"]
    # `tanh:0` is no model input but a layer's result: the model is cut there, and that new
    # input gets the shape given; the config then replaces scale..mul by the extension's op
    flags = ["--extensions", extension, "--transformations_config", config(tmp_path), "--input", "tanh:0", "--input_shape", "[2,6]"]
    result = ir_convert(*convert, *flags)
    assert result.returncode == 0, result.stderr
    converted = load_model(tmp_path / "out.mlir")
    assert input_names(converted.func) == ["tanh:0"] and converted.func.args[0].type.get_shape() == (2, 6)
    assert ops(converted) == ["rsx.scaled_silu", "nn.reduce"]
    t = np.random.default_rng(0).standard_normal((2, 6)).astype(np.float32)
    got = run(converted, {"tanh:0": t})
    want = np.sum(t / (1 + np.exp(-1.5 * t)), axis=1, keepdims=True)
    assert rel_err(got["out"], want) <= 1e-5 and rel_err(got["side"], t) == 0
    shown = ir_convert(*convert, "--input", "data", "--input_shape", "[3,6]", "--pipeline")
    assert shown.returncode == 0 and "cut" not in shown.stdout and "replace-subgraph," in shown.stdout
    shown = ir_convert(*convert, "--input", "nope", "--pipeline")
    assert shown.returncode == 2 and "--input names 'nope', which the model does not have" in shown.stderr
