"""f64 tensors through ops whose native kernels compute in f32 only: their reference kernels
(numpy, in f64) as host steps.

TensorFlow graphs Cast to float64 in places (Keras' positional encodings and some losses
kept in inference graphs); narrowing those ops to f32 would change the numbers, so an op of
these classes with an f64 operand or result runs exactly as the reference interpreter does,
as one host step of the native program. f64 element-wise arithmetic, comparisons, Select and
Convert have native kernels (`elementwise.py`); f32 tensors keep the native kernels below.
"""

from __future__ import annotations

from irforge.backends.cpu.host_steps import is_f64, is_small_integer, on_host_for
from irforge.dialects.nn import (
    GRN, MVN, Activation, BatchNormalization, Clamp, Convolution, Deconvolution, FullyConnected, MatMul, Norm, Normalize, Pooling, Power, PReLU,
    ReLU, Reduce, ScaleShift, SoftMax,
)

on_host_for(
    is_f64,
    Activation, ReLU, Clamp, Power, PReLU, ScaleShift, BatchNormalization, Norm, Convolution, Deconvolution, FullyConnected, MatMul,
    Pooling, SoftMax, Reduce, MVN, GRN, Normalize,
)

# onnxruntime's QOperator models keep MaxPool on the uint8 tensors between QLinearConvs
on_host_for(is_small_integer, Pooling)
