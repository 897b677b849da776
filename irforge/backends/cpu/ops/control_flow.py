"""nn.if / nn.loop on the CPU backend: host steps running the reference kernel, which runs
the bodies op by op with numpy (an If or Loop is control flow around its body, and bodies
are usually small; compiling each body into a program of its own is not done yet). With
dynamic result dims (a scan output, branches of different shapes) they run in host
segments (`backends/segments.py`) like the other data-dependent ops."""

from irforge.backends.cpu.host_steps import host_step_op
from irforge.dialects.nn.control_flow import If, Loop

host_step_op(If, Loop)
