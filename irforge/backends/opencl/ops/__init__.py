"""OpenCL lowerings by op family; importing this package registers them all, and the
table of ops that have no OpenCL kernel (`CPU_ONLY` in `lower.py`)."""

from irforge.backends.opencl.ops import elementwise, linear, movement, reduce, window  # noqa: F401
