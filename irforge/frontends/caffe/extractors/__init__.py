"""Caffe extractors, one module per layer family; importing this registers them all."""

from irforge.frontends.caffe.extractors import activation, conv, detection, forks, normalization, shape

FAMILIES = (activation, conv, detection, forks, normalization, shape)
