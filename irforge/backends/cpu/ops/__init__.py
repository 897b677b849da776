"""CPU lowerings by op family; importing this package registers them all."""

from irforge.backends.cpu.ops import elementwise, linear, reduce  # noqa: F401
