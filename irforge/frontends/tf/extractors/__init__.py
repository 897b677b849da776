"""TensorFlow extractors, one module per op family; importing this registers them all."""

from irforge.frontends.tf.extractors import array_ops, math_ops, nn_ops, recurrent, space_batch, while_loops

FAMILIES = (array_ops, math_ops, nn_ops, recurrent, space_batch, while_loops)
