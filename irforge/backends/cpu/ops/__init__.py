"""CPU lowerings by op family; importing this package registers them all."""

from irforge.backends.cpu.ops import linear  # noqa: F401
