// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @weights(%x: tensor<2x5x3xf32>, %h: tensor<2x1x4xf32>, %len: tensor<2xi32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>, %b: tensor<1x12xf32>) -> tensor<2x1x4xf32> {
  %y, %ho = nn.rnn_sequence %x, %h, %len, %w, %r, %b {hidden_size = 4 : i64, activations = "tanh", name = "rnn"} : (tensor<2x5x3xf32>, tensor<2x1x4xf32>, tensor<2xi32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x12xf32>) -> (tensor<2x1x5x4xf32>, tensor<2x1x4xf32>)
  func.return %ho : tensor<2x1x4xf32>
}
// CHECK: nn.rnn_sequence 'rnn': w must have shape [1, 4, 3], got [1, 12, 3]

// -----
func.func @directions(%x: tensor<2x5x3xf32>, %h: tensor<2x1x4xf32>, %len: tensor<2xi32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>, %b: tensor<1x12xf32>) -> tensor<2x1x4xf32> {
  %y, %ho = nn.gru_sequence %x, %h, %len, %w, %r, %b {hidden_size = 4 : i64, direction = "bidirectional", activations = "sigmoid,tanh"} : (tensor<2x5x3xf32>, tensor<2x1x4xf32>, tensor<2xi32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x12xf32>) -> (tensor<2x1x5x4xf32>, tensor<2x1x4xf32>)
  func.return %ho : tensor<2x1x4xf32>
}
// CHECK: nn.gru_sequence: initial_h must have shape [2, 2, 4], got [2, 1, 4]

// -----
func.func @reset_bias(%x: tensor<2x5x3xf32>, %h: tensor<2x1x4xf32>, %len: tensor<2xi32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>, %b: tensor<1x12xf32>) -> tensor<2x1x4xf32> {
  %y, %ho = nn.gru_sequence %x, %h, %len, %w, %r, %b {hidden_size = 4 : i64, activations = "sigmoid,tanh", linear_before_reset = true} : (tensor<2x5x3xf32>, tensor<2x1x4xf32>, tensor<2xi32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x12xf32>) -> (tensor<2x1x5x4xf32>, tensor<2x1x4xf32>)
  func.return %ho : tensor<2x1x4xf32>
}
// CHECK: nn.gru_sequence: b must have shape [1, 16], got [1, 12]

// -----
func.func @activation_count(%x: tensor<2x5x3xf32>, %h: tensor<2x1x4xf32>, %len: tensor<2xi32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %b: tensor<1x4xf32>) -> tensor<2x1x4xf32> {
  %y, %ho = nn.rnn_sequence %x, %h, %len, %w, %r, %b {hidden_size = 4 : i64, activations = "tanh,tanh"} : (tensor<2x5x3xf32>, tensor<2x1x4xf32>, tensor<2xi32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>) -> (tensor<2x1x5x4xf32>, tensor<2x1x4xf32>)
  func.return %ho : tensor<2x1x4xf32>
}
// CHECK: nn.rnn_sequence: activations must name 1 functions, got 2 ('tanh,tanh')

// -----
func.func @unknown_activation(%x: tensor<2x5x3xf32>, %h: tensor<2x1x4xf32>, %len: tensor<2xi32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %b: tensor<1x4xf32>) -> tensor<2x1x4xf32> {
  %y, %ho = nn.rnn_sequence %x, %h, %len, %w, %r, %b {hidden_size = 4 : i64, activations = "gelu"} : (tensor<2x5x3xf32>, tensor<2x1x4xf32>, tensor<2xi32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>) -> (tensor<2x1x5x4xf32>, tensor<2x1x4xf32>)
  func.return %ho : tensor<2x1x4xf32>
}
// CHECK: nn.rnn_sequence: activation 'gelu' is not one of affine, elu, hardsigmoid, leakyrelu, relu, scaledtanh, sigmoid, softplus, softsign, tanh, thresholdedrelu

// -----
func.func @alpha_count(%x: tensor<2x5x3xf32>, %h: tensor<2x1x4xf32>, %len: tensor<2xi32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %b: tensor<1x4xf32>) -> tensor<2x1x4xf32> {
  %y, %ho = nn.rnn_sequence %x, %h, %len, %w, %r, %b {hidden_size = 4 : i64, activations = "affine", activations_alpha = array<f32: 1.0, 2.0>} : (tensor<2x5x3xf32>, tensor<2x1x4xf32>, tensor<2xi32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>) -> (tensor<2x1x5x4xf32>, tensor<2x1x4xf32>)
  func.return %ho : tensor<2x1x4xf32>
}
// CHECK: nn.rnn_sequence: activations_alpha must have one value per activation (1) or none, got 2

// -----
func.func @lengths_type(%x: tensor<2x5x3xf32>, %h: tensor<2x1x4xf32>, %len: tensor<2xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %b: tensor<1x4xf32>) -> tensor<2x1x4xf32> {
  %y, %ho = nn.rnn_sequence %x, %h, %len, %w, %r, %b {hidden_size = 4 : i64, activations = "tanh"} : (tensor<2x5x3xf32>, tensor<2x1x4xf32>, tensor<2xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>) -> (tensor<2x1x5x4xf32>, tensor<2x1x4xf32>)
  func.return %ho : tensor<2x1x4xf32>
}
// CHECK: nn.rnn_sequence: sequence_lengths must be i32 or i64, got f32

// -----
func.func @clip(%x: tensor<2x5x3xf32>, %h: tensor<2x1x4xf32>, %c: tensor<2x1x4xf32>, %len: tensor<2xi32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>, %b: tensor<1x16xf32>) -> tensor<2x1x4xf32> {
  %y, %ho, %co = nn.lstm_sequence %x, %h, %c, %len, %w, %r, %b {hidden_size = 4 : i64, activations = "sigmoid,tanh,tanh", clip = -1.0 : f32} : (tensor<2x5x3xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<2xi32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>) -> (tensor<2x1x5x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>)
  func.return %ho : tensor<2x1x4xf32>
}
// CHECK: nn.lstm_sequence: clip must be >= 0 (0: no clipping), got -1

// -----
func.func @result(%x: tensor<2x5x3xf32>, %h: tensor<2x1x4xf32>, %len: tensor<2xi32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %b: tensor<1x4xf32>) -> tensor<2x1x4xf32> {
  %y, %ho = nn.rnn_sequence %x, %h, %len, %w, %r, %b {hidden_size = 4 : i64, activations = "tanh"} : (tensor<2x5x3xf32>, tensor<2x1x4xf32>, tensor<2xi32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<2x1x4xf32>)
  func.return %ho : tensor<2x1x4xf32>
}
// CHECK: nn.rnn_sequence: result #0 has type tensor<5x1x2x4xf32> but the operands imply tensor<2x1x5x4xf32>
