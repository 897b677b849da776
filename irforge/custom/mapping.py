"""Mapping framework ops to custom (or existing) ops: OpenVINO's OpExtension and
ConversionExtension, the Model Optimizer's FrontReplacementOp, for ONNX, Caffe and TensorFlow.

    op_extension("onnx", "MyRelu", nn.ReLU)                          # one to one
    op_extension("caffe", "Python:rpn.proposal_layer.ProposalLayer", Proposal,
                 attrs=python_param_dict)                             # a Caffe Python layer

    @conversion_extension("onnx", "ThresholdedRelu")                  # one to many
    def thresholded_relu(node):
        x = node.get_input(0)
        alpha = node.constant(np.float32(node.get_attribute("alpha", 1.0)))
        mask = node.make(nn.Convert, [node.make(nn.Eltwise, [x, alpha], operation="greater")],
                         destination_type=f32)
        return node.make(nn.Eltwise, [x, mask], operation="mul")
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from irforge.custom.op import CustomOp
from irforge.dialects.nn.base import NNOp
from irforge.errors import IrforgeError

FRAMEWORKS = ("onnx", "caffe", "tf")
Target = type[CustomOp] | type[NNOp]
AttrReader = Callable[["ConversionNode"], Mapping[str, Any]]


class ConversionNode:
    """One framework node as a conversion function sees it, whatever the framework."""

    def __init__(self, framework: str, ctx: Any) -> None:
        self.framework = framework
        self.ctx = ctx

    @property
    def name(self) -> str:
        return str(self.ctx.name)

    @property
    def num_inputs(self) -> int:
        return int(self.ctx.num_bottoms if self.framework == "caffe" else self.ctx.num_inputs)

    def get_input(self, index: int) -> SSAValue:
        return self.ctx.bottom(index) if self.framework == "caffe" else self.ctx.input(index)

    def inputs(self) -> list[SSAValue]:
        return [self.get_input(i) for i in range(self.num_inputs)]

    def get_attribute(self, name: str, default: Any = None) -> Any:
        """A node attribute (ONNX, TensorFlow); for Caffe a parameter field named
        `message.field` ("interp_param.height"), or a key of a Python layer's param_str."""
        if self.framework != "caffe":
            return self.ctx.attr(name, default)
        if "." in name:  # a field of one of the layer's parameter messages: "interp_param.height"
            message, _, field = name.partition(".")
            return getattr(self.ctx.param(message), field, default)
        return python_param_dict(self).get(name, default)

    def constant(self, array: np.ndarray | float, suffix: str = "/const") -> SSAValue:
        return self.ctx.constant(np.asarray(array), suffix)

    def make(self, target: Target, inputs: Sequence[SSAValue], *, outputs: int | None = None, suffix: str | None = None, **attrs: Any) -> SSAValue | list[SSAValue]:
        """Add `target` (a custom op class or an `nn` op class); its result, or results. Ops
        are named after the node, plus `/1`, `/2`, ... unless `suffix` is given."""
        custom = isinstance(target, type) and issubclass(target, CustomOp)
        cls = target.op_class if custom else target  # type: ignore[union-attr]
        count = outputs if outputs is not None else (target.num_outputs if custom else 1)  # type: ignore[union-attr]
        if suffix is None:
            self._made = getattr(self, "_made", 0) + 1
            suffix = f"/{self._made}"
        results = self.ctx.add(cls, list(inputs), num_results=count, suffix=suffix, **attrs)
        return results[0] if count == 1 else results

    def fail(self, message: str, fix: str | None = None) -> IrforgeError:
        return self.ctx.fail(message, fix)


def python_param_dict(node: ConversionNode) -> dict[str, Any]:
    """A Caffe Python layer's `param_str` as a dict: a Python dict literal, with or without
    its braces (`'feat_stride': 16`), as py-faster-rcnn writes it."""
    layer = node.ctx.layer
    if not layer.HasField("python_param"):
        return {}
    return parse_param_str(layer.python_param.param_str, node.fail)


def parse_param_str(text: str, fail: Callable[..., IrforgeError]) -> dict[str, Any]:
    """A param_str (a Python dict literal, braces optional) as a dict; `fail(message, fix)`
    makes the error for one that is not."""
    text = text.strip()
    if not text:
        return {}
    try:
        value = ast.literal_eval(text if text.startswith("{") else "{" + text + "}")
    except (ValueError, SyntaxError):
        raise fail(f"param_str is not a Python dict literal: {text!r}", "write it as 'key': value, ...") from None
    if not isinstance(value, dict):
        raise fail(f"param_str is not a dict: {text!r}", None)
    return value


def _register(framework: str, op_type: str, domain: str, fn: Callable[[Any], Any]) -> None:
    """Add `fn` to the framework's extractor table, after its built-in extractors, so that an
    extension replaces a built-in one rather than being replaced by it."""
    if framework == "onnx":
        import irforge.frontends.onnx.extractors  # noqa: F401
        from irforge.frontends.onnx.registry import onnx_extractor

        onnx_extractor(op_type, domain=domain)(fn)
    elif framework == "caffe":
        import irforge.frontends.caffe.extractors  # noqa: F401
        from irforge.frontends.caffe.registry import caffe_extractor

        caffe_extractor(op_type)(fn)
    elif framework == "tf":
        import irforge.frontends.tf.extractors  # noqa: F401
        from irforge.frontends.tf.registry import tf_extractor

        tf_extractor(op_type)(fn)
    else:
        raise IrforgeError(f"unknown framework '{framework}'", fix=f"use one of {', '.join(FRAMEWORKS)}", code="E940")


def op_extension(
    framework: str,
    op_type: str,
    target: Target,
    *,
    domain: str = "",
    attr_map: Mapping[str, str] | None = None,
    const_attrs: Mapping[str, Any] | None = None,
    attrs: AttrReader | None = None,
) -> None:
    """A framework op becomes one `target` op with the node's inputs: attributes renamed by
    `attr_map` (framework name -> target name; all of the target's attributes the node has,
    by the same name, when None), fixed ones from `const_attrs`, or computed by `attrs`.
    Caffe Python layers are named `Python:module.layer`."""

    def convert(ctx: Any) -> Any:
        node = ConversionNode(framework, ctx)
        values = dict(attrs(node)) if attrs is not None else _mapped_attrs(node, target, attr_map)
        values.update(const_attrs or {})
        return node.make(target, node.inputs(), suffix="", **values)

    _register(framework, op_type, domain, convert)


def _mapped_attrs(node: ConversionNode, target: Target, attr_map: Mapping[str, str] | None) -> dict[str, Any]:
    if attr_map is None:
        names = target.attrs if isinstance(target, type) and issubclass(target, CustomOp) else {}
        attr_map = {name: name for name in names}
    values = {}
    for source, dest in attr_map.items():
        value = node.get_attribute(source)
        if value is not None:
            values[dest] = value
    return values


def conversion_extension(framework: str, op_type: str, *, domain: str = "") -> Callable[[Callable[[ConversionNode], Any]], Callable[[ConversionNode], Any]]:
    """Register the decorated function `(node: ConversionNode) -> value(s)` as the converter
    of `op_type`: it builds any sub-graph of `nn` and custom ops with `node.make`."""

    def register(fn: Callable[[ConversionNode], Any]) -> Callable[[ConversionNode], Any]:
        _register(framework, op_type, domain, lambda ctx: fn(ConversionNode(framework, ctx)))
        return fn

    return register
