"""CPU lowerings by op family; importing this package registers them all."""

from irforge.backends.cpu.ops import attention, elementwise, interpolate, linear, movement, recurrent, reduce  # noqa: F401
