"""A model: an xDSL module of `nn` ops plus the weight store its constants refer to.

The module is a `builtin.module` holding one `func.func`; the function's arguments are the
model inputs and its returned values the outputs. Input and output names are kept as
`nn.name` argument/result attributes. On disk a model is `NAME.mlir` plus `NAME.weights`.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import Func, FuncOp, ReturnOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from irforge.dialects.nn import NN
from irforge.dialects.nn.constant import Constant
from irforge.errors import IrforgeError
from irforge.mlir_text import check_mlir_text
from irforge.weights import WeightStore

_STORES: weakref.WeakKeyDictionary[ModuleOp, WeightStore] = weakref.WeakKeyDictionary()


def make_context() -> Context:
    """A context with exactly the dialects irforge understands (and extensions' ones)."""
    ctx = Context()
    for dialect in (Builtin, Func, NN):
        ctx.load_dialect(dialect)
    from irforge.extensions import loaded_dialects

    for dialect in loaded_dialects():
        if dialect.name not in ctx.registered_dialect_names:
            ctx.load_dialect(dialect)
    return ctx


def attach_store(module: ModuleOp, store: WeightStore) -> None:
    _STORES[module] = store


def store_of(op: Operation) -> WeightStore:
    """The weight store of the module `op` belongs to (an empty one is created if needed)."""
    top = op
    while top.parent_op() is not None:
        top = top.parent_op()  # type: ignore[assignment]
    assert isinstance(top, ModuleOp), "nn ops live inside a builtin.module"
    store = _STORES.get(top)
    if store is None:
        store = _STORES[top] = WeightStore()
    return store


def main_function(module: ModuleOp) -> FuncOp:
    funcs = [op for op in module.ops if isinstance(op, FuncOp)]
    if len(funcs) != 1:
        raise IrforgeError(
            f"a model module must hold exactly one func.func, found {len(funcs)}",
            fix="put the whole network in one function",
            code="E643",
        )
    return funcs[0]


def input_names(func: FuncOp) -> list[str]:
    return _names(func.arg_attrs, "input", len(func.args))


def output_names(func: FuncOp) -> list[str]:
    return _names(func.res_attrs, "output", len(func.function_type.outputs))


def _names(attrs, prefix: str, count: int) -> list[str]:  # type: ignore[no-untyped-def]
    names = []
    for i in range(count):
        entry = attrs.data[i].data if attrs is not None else {}
        name = entry.get("nn.name")
        names.append(name.data if isinstance(name, StringAttr) else f"{prefix}{i}")
    return names


def referenced_weights(module: ModuleOp) -> Iterator[str]:
    for op in module.walk():
        if isinstance(op, Constant) and op.weight_name is not None:
            yield op.weight_name


def check_weights(module: ModuleOp, store: WeightStore, where: str) -> None:
    """Every `@name` exists in the store with the element type and shape the IR says."""
    from irforge.weights.dtypes import from_xdsl

    for op in module.walk():
        if not isinstance(op, Constant) or op.weight_name is None:
            continue
        name = op.weight_name
        if name not in store:
            raise IrforgeError(
                f"weight '@{name}' is not in the weights file",
                where=where,
                fix="pass the .weights file written with this .mlir (--weights PATH)",
                code="E694",
            )
        spec = store.spec(name)
        t = op.output.type
        assert isinstance(t, TensorType)
        if tuple(t.get_shape()) != spec.shape or from_xdsl(t.element_type) != spec.dtype:
            raise IrforgeError(
                f"weight '@{name}' is {spec.dtype}{list(spec.shape)} in the weights file but "
                f"the IR declares {t}",
                where=where,
                fix="regenerate the .mlir and .weights together",
                code="E694",
            )


@dataclass
class Model:
    module: ModuleOp
    store: WeightStore

    def __post_init__(self) -> None:
        attach_store(self.module, self.store)

    @property
    def func(self) -> FuncOp:
        return main_function(self.module)

    @property
    def inputs(self) -> list:  # type: ignore[type-arg]
        """The inputs as ports (name, shape, dtype), as OpenVINO's Model.inputs lists them."""
        from irforge.compiled import ports

        return ports(input_names(self.func), self.func.args)

    @property
    def outputs(self) -> list:  # type: ignore[type-arg]
        from irforge.compiled import ports

        return ports(output_names(self.func), returned_values(self.func))


def parse_module(text: str | bytes, ctx: Context | None = None, source: str = "<input>") -> ModuleOp:
    """Parse and verify textual IR; errors become one-line `IrforgeError`s."""
    ctx = ctx or make_context()
    text = check_mlir_text(text, source)
    try:
        module = Parser(ctx, text, source).parse_module()
    except ParseError as e:
        raise IrforgeError(parse_error_line(e, source), code="E695") from None
    except NotImplementedError as e:  # xDSL: a type it cannot hold data of (i4294967296)
        raise IrforgeError(f"unsupported element type: {first_line(str(e))}", where=source,
                           fix="use f16, f32, f64, i8, i32, i64, u8 or i1 tensors", code="E644") from None
    except VerifyException as e:  # an op's declared format checks its types while parsing (`-> i32`)
        raise IrforgeError(f"invalid IR: {first_line(str(e))}", where=source, code="E695") from None
    except OverflowError as e:  # xDSL computing the bounds of `array<i99999999999999999999: 1>`
        raise IrforgeError(f"invalid IR: a number or integer width too large to use ({first_line(str(e))})", where=source,
                           fix="element types are i1 to i64; check the .mlir text", code="E695") from None
    except ValueError as e:  # xDSL's dense<8> : tensor<i1>: "Integer value 8 is out of range for type i1 ..."
        raise IrforgeError(f"invalid IR: {first_line(str(e))}", where=source, fix="give each constant values its element type holds",
                           code="E695") from None
    try:
        module.verify()
    except VerifyException as e:
        raise IrforgeError(f"invalid IR: {first_line(str(e))}", where=source, code="E695") from None
    for func in module.walk():
        # func.func may hold several blocks (xDSL verifies it); irforge's models are one block
        if isinstance(func, FuncOp) and len(func.body.blocks) > 1:
            raise IrforgeError(f"invalid IR: function @{func.sym_name.data} has {len(func.body.blocks)} blocks", where=source,
                               fix="irforge's IR has one block per function, ending in func.return; check the .mlir text",
                               code="E695")
    return module


def parse_error_line(e: ParseError, source: str) -> str:
    location = e.span.get_location()
    return f"{source}:{location.line}:{location.col}: {first_line(e.msg)}"


def first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0].strip() if lines else text


def weights_path_for(mlir_path: str | os.PathLike[str]) -> Path:
    return Path(mlir_path).with_suffix(".weights")


def load_model(path: str | os.PathLike[str], weights: str | os.PathLike[str] | None = None) -> Model:
    """Read `NAME.mlir` and the `NAME.weights` beside it (or `weights`)."""
    path = Path(path)
    if not path.is_file():
        raise IrforgeError(f"model file '{path}' not found", fix="check the path", code="E643")
    module = parse_module(path.read_bytes(), source=str(path))
    weights_path = Path(weights) if weights is not None else weights_path_for(path)
    needs_weights = any(True for _ in referenced_weights(module))
    store = WeightStore.open(weights_path) if needs_weights or weights else WeightStore()
    check_weights(module, store, str(path))
    return Model(module, store)


def print_module(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(module)
    out.write("\n")
    return out.getvalue()


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    from irforge.output_files import write_text_file

    write_text_file(path, text)


def save_model(model: Model, path: str | os.PathLike[str]) -> None:
    """Write `NAME.mlir` and, when constants refer to weights, `NAME.weights` beside it,
    both or neither."""
    from irforge.output_files import write_files

    path = Path(path)
    names = list(dict.fromkeys(referenced_weights(model.module)))
    data = print_module(model.module).encode("utf-8")
    parts = [(path, lambda f: f.write(data))]
    if names:
        parts.insert(0, (weights_path_for(path), lambda f: model.store.write(f, names)))
    write_files(parts)


def returned_values(func: FuncOp):  # type: ignore[no-untyped-def]
    ret = func.body.block.last_op
    assert isinstance(ret, ReturnOp)
    return ret.arguments
