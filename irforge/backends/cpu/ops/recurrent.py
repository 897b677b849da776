"""The recurrent Sequence ops and FakeQuantize on the CPU backend: their reference kernels as
host steps (`host_steps.py`; FakeQuantize until it gets a vectorised kernel).

A recurrence is T dependent small GEMMs; the reference kernel runs each step as one numpy
matrix product for the whole batch, as a phase of the native program.
"""

from __future__ import annotations

from irforge.backends.cpu.host_steps import host_step_op
from irforge.dialects.nn.quantize import FakeQuantize
from irforge.dialects.nn.recurrent import GRUSequence, LSTMSequence, RNNSequence

host_step_op(LSTMSequence, GRUSequence, RNNSequence, FakeQuantize)
