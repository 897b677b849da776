"""MXNet extractors by family; importing this package registers them all."""

from irforge.frontends.mxnet.extractors import activation, conv, detection, elementwise, linear, normalization, shape  # noqa: F401
