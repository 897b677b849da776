// RUN: ir-opt %s --split-input-file -p convert-layout | filecheck %s

// The transpose back to NHWC after a convolution sinks through the activation and cancels
// against the next convolution's transpose to NCHW; the input keeps its one transpose.
func.func @conv_relu_conv(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x1x1xf32>, %w2: tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32> {
  %a = nn.permute %x {order = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x3x8x8xf32>
  %c = nn.convolution %a, %w : (tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x8x8xf32>
  %b = nn.permute %c {order = array<i64: 0, 2, 3, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  %r = nn.relu %b : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %d = nn.permute %r {order = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %e = nn.convolution %d, %w2 : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  func.return %e : tensor<1x4x8x8xf32>
}
// CHECK-LABEL: func.func @conv_relu_conv
// CHECK-NEXT:    %a = nn.permute %x {order = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    %c = nn.convolution %a, %w
// CHECK-NEXT:    %{{.*}} = nn.relu %c
// CHECK-NEXT:    %e = nn.convolution
// CHECK-NEXT:    func.return %e

// -----

// A per-channel constant of an NHWC element-wise op is permuted with it: [4] on the last
// axis becomes [1, 4, 1, 1].
func.func @eltwise_constant(%c: tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32> {
  %b = nn.permute %c {order = array<i64: 0, 2, 3, 1>} : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32>
  %k = nn.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %m = nn.eltwise %b, %k {operation = "mul"} : (tensor<1x2x2x4xf32>, tensor<4xf32>) -> tensor<1x2x2x4xf32>
  func.return %m : tensor<1x2x2x4xf32>
}
// CHECK-LABEL: func.func @eltwise_constant
// CHECK-NEXT:    %{{.*}} = nn.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]], {{\[\[}}3.000000e+00]], {{\[\[}}4.000000e+00]]]]> : tensor<1x4x1x1xf32>
// CHECK-NEXT:    %[[M:.*]] = nn.eltwise %c, %{{.*}} {operation = "mul"} : (tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x2x2xf32>
// CHECK-NEXT:    %[[P:.*]] = nn.permute %[[M]] {order = array<i64: 0, 2, 3, 1>}
// CHECK-NEXT:    func.return %[[P]]

// -----

// A residual add of two NHWC branches, then the global mean over H and W: the reduction
// runs on NCHW axes 2 and 3 and needs no transpose after it.
func.func @residual_mean(%c1: tensor<1x4x2x2xf32>, %c2: tensor<1x4x2x2xf32>) -> tensor<1x4xf32> {
  %a = nn.permute %c1 {order = array<i64: 0, 2, 3, 1>} : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32>
  %b = nn.permute %c2 {order = array<i64: 0, 2, 3, 1>} : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32>
  %s = nn.eltwise %a, %b {operation = "sum"} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %m = nn.reduce %s {operation = "mean", axes = array<i64: 1, 2>, keep_dims = false} : (tensor<1x2x2x4xf32>) -> tensor<1x4xf32>
  func.return %m : tensor<1x4xf32>
}
// CHECK-LABEL: func.func @residual_mean
// CHECK-NEXT:    %[[S:.*]] = nn.eltwise %c1, %c2 {operation = "sum"} : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
// CHECK-NEXT:    %[[M:.*]] = nn.reduce %[[S]] {operation = "mean", axes = array<i64: 2, 3>, keep_dims = false}
// CHECK-NEXT:    func.return %[[M]]

// -----

// Concat along NHWC channels is a concat along NCHW axis 1 (the default, not printed).
func.func @concat(%c1: tensor<1x4x2x2xf32>, %c2: tensor<1x3x2x2xf32>) -> tensor<1x2x2x7xf32> {
  %a = nn.permute %c1 {order = array<i64: 0, 2, 3, 1>} : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32>
  %b = nn.permute %c2 {order = array<i64: 0, 2, 3, 1>} : (tensor<1x3x2x2xf32>) -> tensor<1x2x2x3xf32>
  %j = nn.concat %a, %b {axis = 3 : i64} : (tensor<1x2x2x4xf32>, tensor<1x2x2x3xf32>) -> tensor<1x2x2x7xf32>
  func.return %j : tensor<1x2x2x7xf32>
}
// CHECK-LABEL: func.func @concat
// CHECK-NEXT:    %[[J:.*]] = nn.concat %c1, %c2 : (tensor<1x4x2x2xf32>, tensor<1x3x2x2xf32>) -> tensor<1x7x2x2xf32>
// CHECK-NEXT:    %[[P:.*]] = nn.permute %[[J]] {order = array<i64: 0, 2, 3, 1>}
// CHECK-NEXT:    func.return %[[P]]

// -----

// Flattening an NHWC tensor into a FullyConnected: the weights' columns are reordered
// instead (column h*4+w*2+c of the NHWC order reads NCHW element c*4+h*2+w).
func.func @flatten_fc(%c: tensor<1x2x2x2xf32>) -> tensor<1x1xf32> {
  %a = nn.permute %c {order = array<i64: 0, 2, 3, 1>} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %f = nn.reshape %a {shape = array<i64: 1, 8>} : (tensor<1x2x2x2xf32>) -> tensor<1x8xf32>
  %w = nn.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]]> : tensor<1x8xf32>
  %y = nn.fully_connected %f, %w : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x1xf32>
  func.return %y : tensor<1x1xf32>
}
// CHECK-LABEL: func.func @flatten_fc
// CHECK-NEXT:    %{{.*}} = nn.constant dense<{{\[\[}}0.000000e+00, 2.000000e+00, 4.000000e+00, 6.000000e+00, 1.000000e+00, 3.000000e+00, 5.000000e+00, 7.000000e+00]]> : tensor<1x8xf32>
// CHECK-NEXT:    %[[F:.*]] = nn.reshape %c {shape = array<i64: 1, 8>
// CHECK-NEXT:    %{{.*}} = nn.fully_connected %[[F]]
// CHECK-NOT:     nn.permute

// -----

// Negative: the other operand is neither a constant nor a transpose of the same order, so
// sinking would only move the transpose onto it: nothing changes.
func.func @mixed_operands(%c: tensor<1x4x2x2xf32>, %y: tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %b = nn.permute %c {order = array<i64: 0, 2, 3, 1>} : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32>
  %s = nn.eltwise %b, %y {operation = "sum"} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  func.return %s : tensor<1x2x2x4xf32>
}
// CHECK-LABEL: func.func @mixed_operands
// CHECK-NEXT:    %b = nn.permute %c {order = array<i64: 0, 2, 3, 1>}
// CHECK-NEXT:    %s = nn.eltwise %b, %y {operation = "sum"}
// CHECK-NEXT:    func.return %s

// -----

// Negative: a transpose feeding a layout-sensitive op stays where it is.
func.func @before_pooling(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32> {
  %a = nn.permute %x {order = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
  %p = nn.pooling %a {method = "max", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  func.return %p : tensor<1x2x2x2xf32>
}
// CHECK-LABEL: func.func @before_pooling
// CHECK-NEXT:    %a = nn.permute %x
// CHECK-NEXT:    %p = nn.pooling %a
