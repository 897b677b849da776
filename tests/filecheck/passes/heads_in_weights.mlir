// RUN: ir-opt %s --split-input-file -p heads-in-weights | filecheck %s

// Project, add the bias, split into 2 heads, move the heads first; then merge them back
// and project out: the transposes go into the weights.
func.func @split_and_merge(%x: tensor<1x3x4xf32>) -> tensor<1x3x3xf32> {
  %w = nn.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [-1.0, -2.0, -3.0, -4.0], [0.5, 0.25, 0.125, 1.5]]> : tensor<4x4xf32>
  %m = nn.matmul %x, %w : (tensor<1x3x4xf32>, tensor<4x4xf32>) -> tensor<1x3x4xf32>
  %bias = nn.constant dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>
  %mb = nn.eltwise %m, %bias {operation = "sum"} : (tensor<1x3x4xf32>, tensor<4xf32>) -> tensor<1x3x4xf32>
  %r = nn.reshape %mb {shape = array<i64: 1, 3, 2, 2>, special_zero = false} : (tensor<1x3x4xf32>) -> tensor<1x3x2x2xf32>
  %q = nn.permute %r {order = array<i64: 0, 2, 1, 3>, name = "q"} : (tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  %a = nn.activation %q {kind = "tanh"} : (tensor<1x2x3x2xf32>) -> tensor<1x2x3x2xf32>
  %t = nn.permute %a {order = array<i64: 0, 2, 1, 3>} : (tensor<1x2x3x2xf32>) -> tensor<1x3x2x2xf32>
  %f = nn.reshape %t {shape = array<i64: 1, 3, 4>, special_zero = false} : (tensor<1x3x2x2xf32>) -> tensor<1x3x4xf32>
  %wo = nn.constant dense<[[1.0, 0.0, -1.0], [2.0, 1.0, 0.0], [0.0, 3.0, 1.0], [-2.0, 1.0, 1.0]]> : tensor<4x3xf32>
  %y = nn.matmul %f, %wo {name = "out"} : (tensor<1x3x4xf32>, tensor<4x3xf32>) -> tensor<1x3x3xf32>
  func.return %y : tensor<1x3x3xf32>
}
// CHECK-LABEL: func.func @split_and_merge
// CHECK-NOT:     nn.permute
// CHECK:         %[[U:.*]] = nn.reshape %x {shape = array<i64: 1, 1, 3, 4>, special_zero = false, name = "q/heads_input"}
// CHECK-NEXT:    %[[P:.*]] = nn.matmul %[[U]], %{{.*}} {name = "q"} : (tensor<1x1x3x4xf32>, tensor<2x4x2xf32>) -> tensor<1x2x3x2xf32>
// CHECK-NEXT:    %[[C:.*]] = nn.constant dense<{{\[\[\[}}1.000000e-01, 2.000000e-01]], {{\[\[}}3.000000e-01, 4.000000e-01]]]> : tensor<2x1x2xf32>
// CHECK-NEXT:    %[[B:.*]] = nn.eltwise %[[P]], %[[C]] {operation = "sum", name = "q/bias"} : (tensor<1x2x3x2xf32>, tensor<2x1x2xf32>) -> tensor<1x2x3x2xf32>
// CHECK-NEXT:    %[[A:.*]] = nn.activation %[[B]] {kind = "tanh"}
// CHECK:         %[[H:.*]] = nn.matmul %[[A]], %{{.*}} {name = "out/heads"} : (tensor<1x2x3x2xf32>, tensor<2x2x3xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.reduce %[[H]] {operation = "sum", axes = array<i64: 1>, keep_dims = false, name = "out"}
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:     nn.permute

// -----

// Another order, or a projection by a non-constant: left alone.
func.func @not_heads(%x: tensor<1x3x4xf32>, %w: tensor<4x4xf32>) -> (tensor<1x2x3x2xf32>, tensor<1x3x2x2xf32>) {
  %m = nn.matmul %x, %w : (tensor<1x3x4xf32>, tensor<4x4xf32>) -> tensor<1x3x4xf32>
  %r = nn.reshape %m {shape = array<i64: 1, 3, 2, 2>, special_zero = false} : (tensor<1x3x4xf32>) -> tensor<1x3x2x2xf32>
  %q = nn.permute %r {order = array<i64: 0, 2, 1, 3>, name = "q"} : (tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  %c = nn.constant dense<1.0> : tensor<4x4xf32>
  %m2 = nn.matmul %x, %c : (tensor<1x3x4xf32>, tensor<4x4xf32>) -> tensor<1x3x4xf32>
  %r2 = nn.reshape %m2 {shape = array<i64: 1, 3, 2, 2>, special_zero = false} : (tensor<1x3x4xf32>) -> tensor<1x3x2x2xf32>
  %k = nn.permute %r2 {order = array<i64: 0, 1, 3, 2>, name = "k"} : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  func.return %q, %k : tensor<1x2x3x2xf32>, tensor<1x3x2x2xf32>
}
// CHECK-LABEL: func.func @not_heads
// CHECK:         %q = nn.permute %r {order = array<i64: 0, 2, 1, 3>, name = "q"}
// CHECK:         %k = nn.permute %r2 {order = array<i64: 0, 1, 3, 2>, name = "k"}
