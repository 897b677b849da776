"""CPU lowerings by op family; importing this package registers them all."""

from irforge.backends.cpu.ops import attention, bitwise, control_flow, detection, elementwise, f64_host, indexing, integer_host, interpolate, linear, movement, predicates, recurrent, reduce, unpool  # noqa: F401
