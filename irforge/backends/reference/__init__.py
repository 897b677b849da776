"""The numpy reference interpreter: the numerical ground truth for every `nn` op."""

from irforge.backends.reference import kernels as _kernels  # noqa: F401  (registers kernels)
from irforge.backends.reference.interpreter import constant_value, run
from irforge.backends.reference.registry import KERNELS, evaluate, kernel

__all__ = ["KERNELS", "constant_value", "evaluate", "kernel", "run"]
