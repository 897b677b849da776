// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

// Every kind but `not` (on i1, below), on dynamic sizes; alpha and beta where the kind has them.
func.func @kinds(%x: tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32> {
  %abs = nn.activation %x {kind = "abs"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %ceil = nn.activation %x {kind = "ceil"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %cos = nn.activation %x {kind = "cos"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %elu = nn.activation %x {kind = "elu", alpha = 7.000000e-01 : f32} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %erf = nn.activation %x {kind = "erf"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %exp = nn.activation %x {kind = "exp"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %floor = nn.activation %x {kind = "floor"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %gelu = nn.activation %x {kind = "gelu"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %gelu_tanh = nn.activation %x {kind = "gelu_tanh"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %hsigmoid = nn.activation %x {kind = "hsigmoid", alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %hswish = nn.activation %x {kind = "hswish"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %log = nn.activation %x {kind = "log"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %mish = nn.activation %x {kind = "mish"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %neg = nn.activation %x {kind = "neg"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %reciprocal = nn.activation %x {kind = "reciprocal"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %relu6 = nn.activation %x {kind = "relu6"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %round = nn.activation %x {kind = "round"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %selu = nn.activation %x {kind = "selu", alpha = 1.67326319 : f32, beta = 1.05070102 : f32} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %sigmoid = nn.activation %x {kind = "sigmoid"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %sign = nn.activation %x {kind = "sign"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %sin = nn.activation %x {kind = "sin"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %softplus = nn.activation %x {kind = "softplus"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %softsign = nn.activation %x {kind = "softsign"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %sqrt = nn.activation %x {kind = "sqrt"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %swish = nn.activation %x {kind = "swish", alpha = 1.702000e+00 : f32} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %tanh = nn.activation %x {kind = "tanh"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  func.return %x : tensor<1x3x?x?xf32>
}
// CHECK:      func.func @kinds(%x: tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32> {
// CHECK-NEXT: %abs = nn.activation %x {kind = "abs"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %ceil = nn.activation %x {kind = "ceil"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %cos = nn.activation %x {kind = "cos"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %elu = nn.activation %x {kind = "elu", alpha = 7.000000e-01 : f32} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %erf = nn.activation %x {kind = "erf"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %exp = nn.activation %x {kind = "exp"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %floor = nn.activation %x {kind = "floor"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %gelu = nn.activation %x {kind = "gelu"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %gelu_tanh = nn.activation %x {kind = "gelu_tanh"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %hsigmoid = nn.activation %x {kind = "hsigmoid", alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %hswish = nn.activation %x {kind = "hswish"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %log = nn.activation %x {kind = "log"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %mish = nn.activation %x {kind = "mish"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %neg = nn.activation %x {kind = "neg"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %reciprocal = nn.activation %x {kind = "reciprocal"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %relu6 = nn.activation %x {kind = "relu6"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %round = nn.activation %x {kind = "round"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %selu = nn.activation %x {kind = "selu", alpha = 1.67326319 : f32, beta = 1.05070102 : f32} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %sigmoid = nn.activation %x {kind = "sigmoid"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %sign = nn.activation %x {kind = "sign"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %sin = nn.activation %x {kind = "sin"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %softplus = nn.activation %x {kind = "softplus"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %softsign = nn.activation %x {kind = "softsign"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %sqrt = nn.activation %x {kind = "sqrt"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %swish = nn.activation %x {kind = "swish", alpha = 1.702000e+00 : f32} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT: %tanh = nn.activation %x {kind = "tanh"} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>

// -----
func.func @not(%b: tensor<2x?xi1>) -> tensor<2x?xi1> {
  %y = nn.activation %b {kind = "not", name = "not1"} : (tensor<2x?xi1>) -> tensor<2x?xi1>
  func.return %y : tensor<2x?xi1>
}
// CHECK: %y = nn.activation %b {kind = "not", name = "not1"} : (tensor<2x?xi1>) -> tensor<2x?xi1>

// -----
// Parameters equal to their defaults (alpha 1, beta 0) are not printed.
func.func @f16_defaults(%x: tensor<8xf16>) -> tensor<8xf16> {
  %y = nn.activation %x {kind = "elu", alpha = 1.0 : f32, beta = 0.0 : f32} : (tensor<8xf16>) -> tensor<8xf16>
  func.return %y : tensor<8xf16>
}
// CHECK: %y = nn.activation %x {kind = "elu"} : (tensor<8xf16>) -> tensor<8xf16>

// -----
func.func @relu(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %r = nn.relu %x {name = "relu1"} : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %l = nn.relu %r {negative_slope = 0.01 : f32} : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %z = nn.relu %l {negative_slope = 0.0 : f32} : (tensor<?x16xf32>) -> tensor<?x16xf32>
  func.return %z : tensor<?x16xf32>
}
// CHECK:      %r = nn.relu %x {name = "relu1"} : (tensor<?x16xf32>) -> tensor<?x16xf32>
// CHECK-NEXT: %l = nn.relu %r {negative_slope = 1.000000e-02 : f32} : (tensor<?x16xf32>) -> tensor<?x16xf32>
// CHECK-NEXT: %z = nn.relu %l : (tensor<?x16xf32>) -> tensor<?x16xf32>

// -----
// Unbounded sides are +-inf (printed as hex) or the f32 limits, as the ONNX importer writes them.
func.func @clamp(%x: tensor<2x3xf32>, %i: tensor<4xi64>) -> (tensor<2x3xf32>, tensor<4xi64>) {
  %c = nn.clamp %x {min = 0.0 : f32, max = 6.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %d = nn.clamp %c {min = 0xFF800000 : f32, max = 0.5 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %e = nn.clamp %d {min = -1.0 : f32, max = -1.0 : f32, name = "point"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %j = nn.clamp %i {min = -3.40282347e+38 : f32, max = 3.40282347e+38 : f32} : (tensor<4xi64>) -> tensor<4xi64>
  func.return %e, %j : tensor<2x3xf32>, tensor<4xi64>
}
// CHECK:      %c = nn.clamp %x {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %d = nn.clamp %c {min = 0xff800000 : f32, max = 5.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %e = nn.clamp %d {min = -1.000000e+00 : f32, max = -1.000000e+00 : f32, name = "point"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %j = nn.clamp %i {min = -3.40282347e+38 : f32, max = 3.40282347e+38 : f32} : (tensor<4xi64>) -> tensor<4xi64>

// -----
// A 1-D slope applies per channel (axis 1), also when the channels are dynamic; other slopes
// broadcast as in numpy.
func.func @prelu(%x: tensor<1x3x8x8xf32>, %s: tensor<3xf32>, %one: tensor<1xf32>, %b: tensor<3x1x8xf32>, %d: tensor<?x?x4xf32>, %t: tensor<4xf32>) -> (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>, tensor<?x?x4xf32>) {
  %p = nn.prelu %x, %s {name = "prelu1"} : (tensor<1x3x8x8xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
  %q = nn.prelu %x, %one : (tensor<1x3x8x8xf32>, tensor<1xf32>) -> tensor<1x3x8x8xf32>
  %r = nn.prelu %x, %b : (tensor<1x3x8x8xf32>, tensor<3x1x8xf32>) -> tensor<1x3x8x8xf32>
  %u = nn.prelu %d, %t : (tensor<?x?x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  func.return %p, %q, %r, %u : tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>, tensor<?x?x4xf32>
}
// CHECK:      %p = nn.prelu %x, %s {name = "prelu1"} : (tensor<1x3x8x8xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
// CHECK-NEXT: %q = nn.prelu %x, %one : (tensor<1x3x8x8xf32>, tensor<1xf32>) -> tensor<1x3x8x8xf32>
// CHECK-NEXT: %r = nn.prelu %x, %b : (tensor<1x3x8x8xf32>, tensor<3x1x8xf32>) -> tensor<1x3x8x8xf32>
// CHECK-NEXT: %u = nn.prelu %d, %t : (tensor<?x?x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
