"""The TensorFlow importer: frozen GraphDef (.pb / .pbtxt) -> `nn` dialect, without TensorFlow."""

from irforge.frontends.tf.importer import import_tf
from irforge.frontends.tf.registry import EXTRACTORS, NodeContext, tf_extractor

__all__ = ["EXTRACTORS", "NodeContext", "import_tf", "tf_extractor"]
