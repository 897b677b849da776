"""Recurrent layers: LSTMSequence, GRUSequence, RNNSequence (OpenVINO opset5), framework-neutral.

Each op runs a whole sequence through one cell per direction. Shapes, with N the batch, T the
sequence length, I the input size, H `hidden_size`, D the number of directions (1, or 2 for
`bidirectional`) and G the gates of the cell (LSTM 4, GRU 3, RNN 1):

    x                 [N, T, I]     batch first
    initial_h (_c)    [N, D, H]
    sequence_lengths  [N]           i32 or i64; steps at or past a row's length are not run
    w                 [D, G*H, I]   gate blocks stacked along axis 1
    r                 [D, G*H, H]
    b                 [D, G*H]      input and recurrence biases already summed (GRU with
                                    `linear_before_reset`: [D, 4*H], see below)
    -> y [N, D, T, H], ho [N, D, H] (and LSTM's co [N, D, H])

Row n of the batch runs steps 0 .. len_n - 1 (`reverse`: len_n - 1 down to 0, as ONNX and
OpenVINO do with ReverseSequence semantics); y is zero at steps >= len_n and ho/co are the
states after the last step run. With `bidirectional`, direction 0 is forward and 1 reverse.

The cells, with Xt the step's input, Ht-1/Ct-1 the previous states, `.` the element-wise
product and f, g, h the activations in the order listed in `activations`:

    LSTM (gates in OpenVINO's order f, i, c, o; ONNX's is i, o, f, c; Keras' i, f, c, o):
        ft = f(Xt Wf^T + Ht-1 Rf^T + bf)      it = f(Xt Wi^T + Ht-1 Ri^T + bi)
        ct = g(Xt Wc^T + Ht-1 Rc^T + bc)      ot = f(Xt Wo^T + Ht-1 Ro^T + bo)
        Ct = ft . Ct-1 + it . ct              Ht = ot . h(Ct)
    GRU (gates z, r, h, as ONNX; Keras' GRU with reset_after=True is linear_before_reset):
        zt = f(Xt Wz^T + Ht-1 Rz^T + bz)      rt = f(Xt Wr^T + Ht-1 Rr^T + br)
        ht = g(Xt Wh^T + (rt . Ht-1) Rh^T + bh)                       (linear_before_reset=0)
        ht = g(Xt Wh^T + bwh + rt . (Ht-1 Rh^T + brh))   b = [bz, br, bwh, brh] (=1)
        Ht = (1 - zt) . ht + zt . Ht-1
    RNN:
        Ht = f(Xt W^T + Ht-1 R^T + b)

`clip` > 0 clamps every gate's pre-activation to [-clip, clip] (0: no clipping). Activations
are named in lower case: sigmoid, tanh, relu, and with parameters hardsigmoid (max(0, min(1,
alpha x + beta))), affine (alpha x + beta), leakyrelu (alpha), thresholdedrelu (alpha),
scaledtanh (alpha tanh(beta x)), elu (alpha), and softsign, softplus. `activations_alpha` and
`activations_beta` give one value per activation, in the same order (empty: all 0), so the
op needs no per-function defaults; OpenVINO reads them the same way. Peepholes and ONNX's
`input_forget` have no place here: OpenVINO's Sequence ops cannot express them.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, FloatAttr, IntegerAttr, StringAttr, TensorType, f32, i32, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def

from irforge.dialects.nn.base import FloatArrayAttr, NNOp, Shape, known, tensor
from irforge.dialects.nn.linear import show

DIRECTIONS = frozenset({"forward", "reverse", "bidirectional"})
RECURRENT_ACTIVATIONS = frozenset(
    {"sigmoid", "tanh", "relu", "hardsigmoid", "affine", "leakyrelu", "thresholdedrelu", "scaledtanh", "elu", "softsign", "softplus"}
)
"""Activation names a recurrent cell takes (see the module docstring for their formulas)."""


class RecurrentSequence(NNOp):
    """What the three Sequence ops share: properties, operand checks, result shapes."""

    hidden_size = prop_def(IntegerAttr)
    direction = opt_prop_def(StringAttr, default_value=StringAttr("forward"))
    activations = prop_def(StringAttr)
    """Comma-separated activation names, as many as the cell has (f[, g[, h]])."""
    activations_alpha = opt_prop_def(FloatArrayAttr)
    activations_beta = opt_prop_def(FloatArrayAttr)
    clip = opt_prop_def(FloatAttr, default_value=FloatAttr(0.0, f32))

    STRING_CHOICES: ClassVar = {"direction": DIRECTIONS}
    GATES: ClassVar[int]
    ACTIVATION_COUNT: ClassVar[int]
    STATES: ClassVar[int]
    """How many initial states (h, c) come after x; the results are y and one per state."""

    def activation_names(self) -> list[str]:
        return self.str_prop("activations").split(",")

    def num_directions(self) -> int:
        return 2 if self.str_prop("direction") == "bidirectional" else 1

    def bias_gates(self) -> int:
        return self.GATES

    def verify_attributes(self) -> None:
        if self.int_prop("hidden_size") <= 0:
            raise self.error(f"hidden_size must be positive, got {self.int_prop('hidden_size')}")
        names = self.activation_names()
        if len(names) != self.ACTIVATION_COUNT:
            raise self.error(f"activations must name {self.ACTIVATION_COUNT} functions, got {len(names)} ('{self.str_prop('activations')}')")
        for name in names:
            if name not in RECURRENT_ACTIVATIONS:
                raise self.error(f"activation '{name}' is not one of {', '.join(sorted(RECURRENT_ACTIVATIONS))}")
        for prop in ("activations_alpha", "activations_beta"):
            count = len(self.floats(prop))
            if count not in (0, len(names)):
                raise self.error(f"{prop} must have one value per activation ({len(names)}) or none, got {count}")
        if self.float_prop("clip") < 0:
            raise self.error(f"clip must be >= 0 (0: no clipping), got {self.float_prop('clip'):g}")

    def expect(self, what: str, shape: Shape, expected: tuple[int, ...]) -> None:
        if len(shape) != len(expected) or any(known(a, b) and a != b for a, b in zip(shape, expected)):
            raise self.error(f"{what} must have shape {show(expected)}, got {show(shape)}")

    def infer_shapes(self) -> list[TensorType]:
        x = self.operand_shape(0)
        if len(x) != 3:
            raise self.error(f"x must have rank 3 ([batch, seq_len, input_size]), got {len(x)}")
        element = self.operand_type(0).element_type
        n, t, i = x
        d, h = self.num_directions(), self.int_prop("hidden_size")
        for k in range(self.STATES):
            self.expect("initial_h" if k == 0 else "initial_c", self.operand_shape(1 + k), (n, d, h))
        lengths = 1 + self.STATES
        self.expect("sequence_lengths", self.operand_shape(lengths), (n,))
        if self.operand_type(lengths).element_type not in (i32, i64):
            raise self.error(f"sequence_lengths must be i32 or i64, got {self.operand_type(lengths).element_type}")
        self.expect("w", self.operand_shape(lengths + 1), (d, self.GATES * h, i))
        self.expect("r", self.operand_shape(lengths + 2), (d, self.GATES * h, h))
        self.expect("b", self.operand_shape(lengths + 3), (d, self.bias_gates() * h))
        for index in (*range(1, 1 + self.STATES), lengths + 1, lengths + 2, lengths + 3):
            if self.operand_type(index).element_type != element:
                raise self.error(f"operand #{index} has element type {self.operand_type(index).element_type}, x {element}")
        return [tensor((n, d, t, h), element), *(tensor((n, d, h), element) for _ in range(self.STATES))]


@irdl_op_definition
class LSTMSequence(RecurrentSequence):
    """LSTM over a sequence, gates f, i, c, o (OpenVINO's LSTMSequence-5; module docstring)."""

    name = "nn.lstm_sequence"
    x = operand_def(TensorType)
    initial_h = operand_def(TensorType)
    initial_c = operand_def(TensorType)
    sequence_lengths = operand_def(TensorType)
    w = operand_def(TensorType)
    r = operand_def(TensorType)
    b = operand_def(TensorType)
    y = result_def(TensorType)
    ho = result_def(TensorType)
    co = result_def(TensorType)

    GATES: ClassVar[int] = 4
    ACTIVATION_COUNT: ClassVar[int] = 3
    STATES: ClassVar[int] = 2


@irdl_op_definition
class GRUSequence(RecurrentSequence):
    """GRU over a sequence, gates z, r, h (OpenVINO's GRUSequence-5; module docstring)."""

    name = "nn.gru_sequence"
    x = operand_def(TensorType)
    initial_h = operand_def(TensorType)
    sequence_lengths = operand_def(TensorType)
    w = operand_def(TensorType)
    r = operand_def(TensorType)
    b = operand_def(TensorType)
    y = result_def(TensorType)
    ho = result_def(TensorType)
    linear_before_reset = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))

    GATES: ClassVar[int] = 3
    ACTIVATION_COUNT: ClassVar[int] = 2
    STATES: ClassVar[int] = 1

    def bias_gates(self) -> int:
        return 4 if self.bool_prop("linear_before_reset") else 3


@irdl_op_definition
class RNNSequence(RecurrentSequence):
    """Plain RNN over a sequence (OpenVINO's RNNSequence-5; module docstring)."""

    name = "nn.rnn_sequence"
    x = operand_def(TensorType)
    initial_h = operand_def(TensorType)
    sequence_lengths = operand_def(TensorType)
    w = operand_def(TensorType)
    r = operand_def(TensorType)
    b = operand_def(TensorType)
    y = result_def(TensorType)
    ho = result_def(TensorType)

    GATES: ClassVar[int] = 1
    ACTIVATION_COUNT: ClassVar[int] = 1
    STATES: ClassVar[int] = 1


RECURRENT_OPS = (LSTMSequence, GRUSequence, RNNSequence)
