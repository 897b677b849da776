"""TensorFlow extractors, one module per op family; importing this registers them all."""

from irforge.frontends.tf.extractors import array_ops, control_flow, math_ops, nn_ops, recurrent, space_batch

FAMILIES = (array_ops, control_flow, math_ops, nn_ops, recurrent, space_batch)
