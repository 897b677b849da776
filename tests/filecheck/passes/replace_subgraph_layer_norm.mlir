// RUN: ir-opt %s --split-input-file -p replace-subgraph | filecheck %s

// Keras 3's LayerNormalization: x * inv + (-mean * inv + beta), inv = rsqrt(var + eps) * gamma.
func.func @keras_layer_norm(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %m = nn.reduce %x {operation = "mean", axes = array<i64: 2>} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %n = nn.activation %m {kind = "neg"} : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %s = nn.eltwise %x, %m {operation = "squared_diff"} : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
  %v = nn.reduce %s {operation = "mean", axes = array<i64: 2>} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %eps = nn.constant dense<1.0e-03> : tensor<f32>
  %a = nn.eltwise %v, %eps {operation = "sum"} : (tensor<1x4x1xf32>, tensor<f32>) -> tensor<1x4x1xf32>
  %r = nn.power %a {power = -5.000000e-01 : f32} : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %gamma = nn.constant dense<[[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]]]> : tensor<1x1x8xf32>
  %inv = nn.eltwise %r, %gamma {operation = "mul"} : (tensor<1x4x1xf32>, tensor<1x1x8xf32>) -> tensor<1x4x8xf32>
  %shift = nn.eltwise %n, %inv {operation = "mul"} : (tensor<1x4x1xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %beta = nn.constant dense<[[[0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.5]]]> : tensor<1x1x8xf32>
  %shift_b = nn.eltwise %shift, %beta {operation = "sum"} : (tensor<1x4x8xf32>, tensor<1x1x8xf32>) -> tensor<1x4x8xf32>
  %scaled = nn.eltwise %x, %inv {operation = "mul"} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %y = nn.eltwise %scaled, %shift_b {operation = "sum", name = "ln"} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  func.return %y : tensor<1x4x8xf32>
}
// CHECK-LABEL: func.func @keras_layer_norm
// CHECK-NEXT:    %gamma = nn.constant
// CHECK-NEXT:    %beta = nn.constant
// CHECK-NEXT:    %[[N:.*]] = nn.mvn %x {axes = array<i64: 2>, eps = 1.000000e-03 : f32, name = "ln/mvn"}
// CHECK-NEXT:    %[[G:.*]] = nn.eltwise %[[N]], %gamma {operation = "mul", name = "ln/gamma"}
// CHECK-NEXT:    %[[Y:.*]] = nn.eltwise %[[G]], %beta {operation = "sum", name = "ln"}
// CHECK-NEXT:    func.return %[[Y]]

// -----

// tf.nn.batch_normalization's form, no gamma: x * inv + (beta - mean * inv), inv = (var + eps) ^ -0.5.
func.func @batch_normalization_form(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %m = nn.reduce %x {operation = "mean", axes = array<i64: 1>} : (tensor<2x6xf32>) -> tensor<2x1xf32>
  %s = nn.eltwise %x, %m {operation = "squared_diff"} : (tensor<2x6xf32>, tensor<2x1xf32>) -> tensor<2x6xf32>
  %v = nn.reduce %s {operation = "mean", axes = array<i64: 1>} : (tensor<2x6xf32>) -> tensor<2x1xf32>
  %eps = nn.constant dense<1.0e-05> : tensor<f32>
  %a = nn.eltwise %v, %eps {operation = "sum"} : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %half = nn.constant dense<-0.5> : tensor<f32>
  %inv = nn.eltwise %a, %half {operation = "pow"} : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %mi = nn.eltwise %m, %inv {operation = "mul"} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %beta = nn.constant dense<[0.5, 0.0, 0.0, 0.0, 0.0, -0.5]> : tensor<6xf32>
  %shift = nn.eltwise %beta, %mi {operation = "sub"} : (tensor<6xf32>, tensor<2x1xf32>) -> tensor<2x6xf32>
  %scaled = nn.eltwise %x, %inv {operation = "mul"} : (tensor<2x6xf32>, tensor<2x1xf32>) -> tensor<2x6xf32>
  %y = nn.eltwise %scaled, %shift {operation = "sum", name = "bn"} : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
  func.return %y : tensor<2x6xf32>
}
// CHECK-LABEL: func.func @batch_normalization_form
// CHECK-NEXT:    %beta = nn.constant
// CHECK-NEXT:    %[[N:.*]] = nn.mvn %x {axes = array<i64: 1>, eps = 1.000000e-05 : f32, name = "bn/mvn"}
// CHECK-NEXT:    %[[Y:.*]] = nn.eltwise %[[N]], %beta {operation = "sum", name = "bn"}
// CHECK-NEXT:    func.return %[[Y]]

// -----

// The shift uses a different scale than x does: no normalisation, nothing fused.
func.func @not_layer_norm(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %m = nn.reduce %x {operation = "mean", axes = array<i64: 2>} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %n = nn.activation %m {kind = "neg"} : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %s = nn.eltwise %x, %m {operation = "squared_diff"} : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
  %v = nn.reduce %s {operation = "mean", axes = array<i64: 2>} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %eps = nn.constant dense<1.0e-03> : tensor<f32>
  %a = nn.eltwise %v, %eps {operation = "sum"} : (tensor<1x4x1xf32>, tensor<f32>) -> tensor<1x4x1xf32>
  %r = nn.power %a {power = -5.000000e-01 : f32} : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %shift = nn.eltwise %n, %a {operation = "mul"} : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %scaled = nn.eltwise %x, %r {operation = "mul"} : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
  %y = nn.eltwise %scaled, %shift {operation = "sum", name = "ln"} : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
  func.return %y : tensor<1x4x8xf32>
}
// CHECK-LABEL: func.func @not_layer_norm
// CHECK-NOT:     nn.mvn
// CHECK:         %y = nn.eltwise %scaled, %shift {operation = "sum", name = "ln"}
