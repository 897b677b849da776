// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

// A bidirectional LSTM, batch 2, 5 steps, 3 inputs, hidden 4: gates f, i, c, o.
func.func @lstm(%x: tensor<2x5x3xf32>, %h: tensor<2x2x4xf32>, %c: tensor<2x2x4xf32>, %len: tensor<2xi32>, %w: tensor<2x16x3xf32>, %r: tensor<2x16x4xf32>, %b: tensor<2x16xf32>) -> tensor<2x2x5x4xf32> {
  %y, %ho, %co = nn.lstm_sequence %x, %h, %c, %len, %w, %r, %b {hidden_size = 4 : i64, direction = "bidirectional", activations = "sigmoid,tanh,relu", clip = 0.5 : f32, name = "lstm"} : (tensor<2x5x3xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>, tensor<2xi32>, tensor<2x16x3xf32>, tensor<2x16x4xf32>, tensor<2x16xf32>) -> (tensor<2x2x5x4xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>)
  func.return %y : tensor<2x2x5x4xf32>
}
// CHECK: %y, %ho, %co = nn.lstm_sequence %x, %h, %c, %len, %w, %r, %b {hidden_size = 4 : i64, direction = "bidirectional", activations = "sigmoid,tanh,relu", clip = 5.000000e-01 : f32, name = "lstm"} : (tensor<2x5x3xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>, tensor<2xi32>, tensor<2x16x3xf32>, tensor<2x16x4xf32>, tensor<2x16xf32>) -> (tensor<2x2x5x4xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>)

// -----
// GRU with linear_before_reset: b holds [bz, br, bwh, brh]; a dynamic batch.
func.func @gru(%x: tensor<?x7x3xf32>, %h: tensor<?x1x4xf32>, %len: tensor<?xi64>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>, %b: tensor<1x16xf32>) -> tensor<?x1x7x4xf32> {
  %y, %ho = nn.gru_sequence %x, %h, %len, %w, %r, %b {hidden_size = 4 : i64, direction = "reverse", activations = "sigmoid,tanh", linear_before_reset = true} : (tensor<?x7x3xf32>, tensor<?x1x4xf32>, tensor<?xi64>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x16xf32>) -> (tensor<?x1x7x4xf32>, tensor<?x1x4xf32>)
  func.return %y : tensor<?x1x7x4xf32>
}
// CHECK: %y, %ho = nn.gru_sequence %x, %h, %len, %w, %r, %b {hidden_size = 4 : i64, direction = "reverse", activations = "sigmoid,tanh", linear_before_reset = true} : (tensor<?x7x3xf32>, tensor<?x1x4xf32>, tensor<?xi64>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x16xf32>) -> (tensor<?x1x7x4xf32>, tensor<?x1x4xf32>)

// -----
// RNN with a parameterised activation: one alpha and beta per activation.
func.func @rnn(%x: tensor<1x2x3xf32>, %h: tensor<1x1x5xf32>, %len: tensor<1xi32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>, %b: tensor<1x5xf32>) -> tensor<1x1x5xf32> {
  %y, %ho = nn.rnn_sequence %x, %h, %len, %w, %r, %b {hidden_size = 5 : i64, activations = "affine", activations_alpha = array<f32: 0.5>, activations_beta = array<f32: 0.25>} : (tensor<1x2x3xf32>, tensor<1x1x5xf32>, tensor<1xi32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>, tensor<1x5xf32>) -> (tensor<1x1x2x5xf32>, tensor<1x1x5xf32>)
  func.return %ho : tensor<1x1x5xf32>
}
// CHECK: %y, %ho = nn.rnn_sequence %x, %h, %len, %w, %r, %b {hidden_size = 5 : i64, activations = "affine", activations_alpha = array<f32: 5.000000e-01>, activations_beta = array<f32: 2.500000e-01>} : (tensor<1x2x3xf32>, tensor<1x1x5xf32>, tensor<1xi32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>, tensor<1x5xf32>) -> (tensor<1x1x2x5xf32>, tensor<1x1x5xf32>)
