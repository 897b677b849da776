// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @kind(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = nn.activation %x {kind = "silu", name = "act1"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
// CHECK: nn.activation 'act1': kind must be one of abs, acos, acosh, asin, asinh, atan, atanh, ceil, cos, elu, erf, exp, floor, gelu, gelu_tanh, hsigmoid, hswish, log, mish, neg, not, reciprocal, relu6, round, selu, sigmoid, sign, sin, softplus, softsign, sqrt, swish, tanh, got 'silu'

// -----
func.func @kind_type(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = nn.activation %x {kind = 3 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
// CHECK: 3 : i64 should be of base attribute string

// -----
func.func @not_on_float(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = nn.activation %x {kind = "not"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
// CHECK: nn.activation: kind 'not' needs an i1 input, got f32

// -----
func.func @numeric_on_bool(%x: tensor<2x3xi1>) -> tensor<2x3xi1> {
  %y = nn.activation %x {kind = "sigmoid"} : (tensor<2x3xi1>) -> tensor<2x3xi1>
  func.return %y : tensor<2x3xi1>
}
// CHECK: nn.activation: kind 'sigmoid' needs a numeric input, got i1

// -----
func.func @activation_result(%x: tensor<2x3xf32>) -> tensor<2x3xf16> {
  %y = nn.activation %x {kind = "tanh"} : (tensor<2x3xf32>) -> tensor<2x3xf16>
  func.return %y : tensor<2x3xf16>
}
// CHECK: nn.activation: result #0 has type tensor<2x3xf16> but the operands imply tensor<2x3xf32>

// -----
func.func @relu_result(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %y = nn.relu %x {name = "relu1"} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}
// CHECK: nn.relu 'relu1': result #0 has type tensor<3x2xf32> but the operands imply tensor<2x3xf32>

// -----
func.func @clamp_order(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = nn.clamp %x {min = 6.0 : f32, max = 0.0 : f32, name = "clip1"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
// CHECK: nn.clamp 'clip1': min must not exceed max, got min 6.0 and max 0.0

// -----
func.func @clamp_nan(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = nn.clamp %x {min = 0x7FC00000 : f32, max = 1.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
// CHECK: nn.clamp: min and max must not be NaN

// -----
func.func @clamp_missing_max(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = nn.clamp %x {min = 0.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
// CHECK: property 'max' expected in operation 'nn.clamp'

// -----
func.func @prelu_channels(%x: tensor<1x3x8x8xf32>, %s: tensor<4xf32>) -> tensor<1x3x8x8xf32> {
  %y = nn.prelu %x, %s {name = "prelu1"} : (tensor<1x3x8x8xf32>, tensor<4xf32>) -> tensor<1x3x8x8xf32>
  func.return %y : tensor<1x3x8x8xf32>
}
// CHECK: nn.prelu 'prelu1': slope of 4 values does not match 3 channels

// -----
func.func @prelu_broadcast(%x: tensor<1x3x8x8xf32>, %s: tensor<3x8x1x1xf32>) -> tensor<1x3x8x8xf32> {
  %y = nn.prelu %x, %s : (tensor<1x3x8x8xf32>, tensor<3x8x1x1xf32>) -> tensor<1x3x8x8xf32>
  func.return %y : tensor<1x3x8x8xf32>
}
// CHECK: nn.prelu: slope shape [3, 8, 1, 1] does not broadcast to [1, 3, 8, 8]

// -----
func.func @prelu_rank1(%x: tensor<5xf32>, %s: tensor<3xf32>) -> tensor<5xf32> {
  %y = nn.prelu %x, %s : (tensor<5xf32>, tensor<3xf32>) -> tensor<5xf32>
  func.return %y : tensor<5xf32>
}
// CHECK: nn.prelu: slope shape [3] does not broadcast to [5]

// -----
func.func @prelu_type(%x: tensor<1x3x8x8xf32>, %s: tensor<3xf16>) -> tensor<1x3x8x8xf32> {
  %y = nn.prelu %x, %s : (tensor<1x3x8x8xf32>, tensor<3xf16>) -> tensor<1x3x8x8xf32>
  func.return %y : tensor<1x3x8x8xf32>
}
// CHECK: nn.prelu: slope element type f16 differs from the input's f32
