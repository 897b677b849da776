"""Function calls of a GraphDef inlined from its function library, before importing.

Freezing a TensorFlow 2 graph keeps some `PartitionedCall` / `StatefulPartitionedCall`
nodes (Keras runs `Conv2D(groups=...)` and other `tf.function`s through them), and TF1
graphs may call a library function by its name as the node's op. Each call node becomes the
function's body, its nodes renamed `<call>/<node>`, plus an `IdentityN` named like the call
whose inputs are the function's results, so `call` and `call:1` still name them. Calls inside
function bodies are inlined the same way, to any depth.

Inside a function body a tensor is written `node:output_arg:index`; the node's output number
is the offset of `output_arg` among its op's outputs (`MULTI_OUTPUT_ARGS`, 0 for ops whose
outputs are one list) plus `index`.
"""

from __future__ import annotations

from typing import Any

from irforge.errors import IrforgeError

CALL_OPS = ("PartitionedCall", "StatefulPartitionedCall")
MULTI_OUTPUT_ARGS: dict[str, tuple[str, ...]] = {
    **{
        op: ("y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2", "reserve_space_3")
        for op in ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
    },
    "TopKV2": ("values", "indices"),
    "Unique": ("y", "idx"),
}
"""Output argument names of ops with several output arguments, in order (op_def.proto)."""
MAX_DEPTH = 64


def inline_functions(graph_def: Any) -> Any:
    """The GraphDef with every function call replaced by the function's body (a new message
    when there are calls; `graph_def` itself otherwise)."""
    library = {f.signature.name: f for f in graph_def.library.function}
    if not any(is_call(node, library) for node in graph_def.node):
        return graph_def
    flat = type(graph_def)()
    flat.versions.CopyFrom(graph_def.versions)
    for node in graph_def.node:
        _add(flat, node, library, 0)
    return flat


def is_call(node: Any, library: dict[str, Any]) -> bool:
    return node.op in CALL_OPS or node.op in library


def _add(flat: Any, node: Any, library: dict[str, Any], depth: int) -> None:
    if not is_call(node, library):
        flat.node.add().CopyFrom(node)
        return
    if depth >= MAX_DEPTH:
        raise IrforgeError(
            f"function calls nest deeper than {MAX_DEPTH} levels (recursion?)",
            where=f"TensorFlow node '{node.name}'", fix="freeze the graph with its functions inlined", code="E361",
        )
    for inner in _body(node, library):
        _add(flat, inner, library, depth + 1)


def _callee(node: Any, library: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The called FunctionDef and the attribute values the call gives its placeholders."""
    if node.op in CALL_OPS:
        name, attrs = node.attr["f"].func.name, dict(node.attr["f"].func.attr)
    else:
        name, attrs = node.op, dict(node.attr)
    if name not in library:
        raise IrforgeError(
            f"{node.op} calls function '{name}', which the graph's function library does not hold",
            where=f"TensorFlow node '{node.name}'",
            fix="freeze the graph with its function library (tf.compat.v1.graph_util / convert_variables_to_constants_v2)",
            code="E360",
        )
    return library[name], attrs


def _body(call: Any, library: dict[str, Any]) -> list[Any]:
    """The callee's nodes, renamed into the caller's scope and wired to the call's inputs,
    then the IdentityN that stands for the call's results."""
    function, attrs = _callee(call, library)
    where = f"TensorFlow node '{call.name}' calling '{function.signature.name}'"
    for arg in function.signature.input_arg:
        if arg.number_attr or arg.type_list_attr:
            raise IrforgeError(
                f"function argument '{arg.name}' is a list of tensors, which irforge does not inline",
                where=where, fix="freeze the graph with its functions inlined", code="E362",
            )
    data_inputs = [i for i in call.input if not i.startswith("^")]
    args = [a.name for a in function.signature.input_arg]
    if len(data_inputs) != len(args):
        raise IrforgeError(
            f"the call has {len(data_inputs)} inputs for the function's {len(args)} arguments",
            where=where, fix="the graph is malformed", code="E362",
        )
    scope = call.name + "/"
    ops = {n.name: n.op for n in function.node_def}
    bound = dict(zip(args, data_inputs))

    def outer(reference: str) -> str:
        """A tensor reference of the body as a name of the flat graph."""
        control = reference.startswith("^")
        name = reference.lstrip("^")
        if name in bound:
            return ("^" + name.split(":")[0]) if control else bound[name]
        parts = name.split(":")
        if parts[0] not in ops:
            raise IrforgeError(
                f"the function body reads '{name}', which is neither an argument nor a node of it",
                where=where, fix="the graph is malformed", code="E362",
            )
        if control or len(parts) == 1:
            return ("^" if control else "") + scope + parts[0]
        if len(parts) > 3 or not parts[-1].isdigit() or not parts[-1].isascii():  # 'node:output:0' or 'node:0'
            raise IrforgeError(f"the function body reads '{name}', whose output index is not a number", where=where,
                               fix="the graph is malformed", code="E362")
        position = int(parts[-1])
        if len(parts) == 3:
            names = MULTI_OUTPUT_ARGS.get(ops[parts[0]], ())
            position += names.index(parts[1]) if parts[1] in names else 0
        return scope + parts[0] + (f":{position}" if position else "")

    nodes = []
    for inner in function.node_def:
        node = type(inner)()
        node.CopyFrom(inner)
        node.name = scope + inner.name
        del node.input[:]
        node.input.extend(outer(i) for i in inner.input)
        for key in list(node.attr):
            value = node.attr[key]
            if value.WhichOneof("value") == "placeholder":
                if value.placeholder not in attrs:
                    raise IrforgeError(
                        f"attribute '{key}' of body node '{inner.name}' refers to '{value.placeholder}', which the call does not set",
                        where=where, fix="the graph is malformed", code="E362",
                    )
                value.CopyFrom(attrs[value.placeholder])
        nodes.append(node)
    rets = dict(function.ret)
    results = type(call)()
    results.name, results.op = call.name, "IdentityN"
    results.input.extend(outer(rets[arg.name]) for arg in function.signature.output_arg)
    results.input.extend(i for i in call.input if i.startswith("^"))
    nodes.append(results)
    return nodes
