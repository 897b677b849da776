"""The ONNX importer: `.onnx` -> `nn` dialect, one extractor per ONNX op type."""

from irforge.frontends.onnx.importer import import_onnx
from irforge.frontends.onnx.registry import EXTRACTORS, NodeContext, onnx_extractor

__all__ = ["EXTRACTORS", "NodeContext", "import_onnx", "onnx_extractor"]
