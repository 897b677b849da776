"""Max pooling's indices and max unpooling on the CPU backend: index bookkeeping of SegNet /
ENet decoders, a few passes over a feature map next to the convolutions around them; they run
their numpy reference kernels as host steps (see host_steps.py)."""

from irforge.backends.cpu.host_steps import host_step_op
from irforge.dialects.nn.unpool import MaxPoolIndices, MaxUnpool

host_step_op(MaxPoolIndices, MaxUnpool)
