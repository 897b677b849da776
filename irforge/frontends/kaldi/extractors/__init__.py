"""The built-in Kaldi component extractors, one module per family; importing this package
registers them all in `irforge.frontends.kaldi.registry.EXTRACTORS`."""

from irforge.frontends.kaldi.extractors import affine, conv, lstm, nonlinear, splice  # noqa: F401
