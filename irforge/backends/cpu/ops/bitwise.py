"""nn.bitwise on the CPU backend: integer bit operations appear on small index / mask /
hash tensors, so they run their numpy reference kernel as a host step (host_steps.py)."""

from irforge.backends.cpu.host_steps import host_step_op
from irforge.dialects.nn.bitwise import Bitwise

host_step_op(Bitwise)
