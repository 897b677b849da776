// RUN: ir-opt %s --split-input-file -p canonicalize | filecheck %s

// Swin's shifted-window mask: the scores reshaped to [B, W, H, L, S], the mask added (twice,
// as Swin v2 does) and reshaped back: the adds move onto the scores, the mask materialised
// in their shape.
func.func @window_mask(%s: tensor<4x2x3x3xf32>) -> tensor<4x2x3x3xf32> {
  %m = nn.constant dense<[[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]], [[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]], [[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]], [[[-1.0, -1.0, -1.0], [-1.0, -1.0, -1.0], [-1.0, -1.0, -1.0]]]]]> : tensor<1x4x1x3x3xf32>
  %r = nn.reshape %s {shape = array<i64: 1, 4, 2, 3, 3>} : (tensor<4x2x3x3xf32>) -> tensor<1x4x2x3x3xf32>
  %a = nn.eltwise %r, %m {operation = "sum", name = "add1"} : (tensor<1x4x2x3x3xf32>, tensor<1x4x1x3x3xf32>) -> tensor<1x4x2x3x3xf32>
  %b = nn.eltwise %m, %a {operation = "sub", name = "add2"} : (tensor<1x4x1x3x3xf32>, tensor<1x4x2x3x3xf32>) -> tensor<1x4x2x3x3xf32>
  %y = nn.reshape %b {shape = array<i64: -1, 2, 3, 3>} : (tensor<1x4x2x3x3xf32>) -> tensor<4x2x3x3xf32>
  func.return %y : tensor<4x2x3x3xf32>
}
// CHECK-LABEL: func.func @window_mask
// CHECK-NOT:     nn.reshape
// CHECK:         %[[A:.*]] = nn.eltwise %s, %{{.*}} {operation = "sum", name = "add1"} : (tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<4x2x3x3xf32>
// CHECK:         %[[B:.*]] = nn.eltwise %{{.*}}, %[[A]] {operation = "sub", name = "add2"} : (tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<4x2x3x3xf32>
// CHECK-NOT:     nn.reshape
// CHECK:         func.return %[[B]]

// -----

// The back reshape does not restore the scores' shape: nothing changes.
func.func @other_shape(%s: tensor<4x2x3x3xf32>) -> tensor<8x3x3xf32> {
  %m = nn.constant dense<1.0> : tensor<1x4x1x3x3xf32>
  %r = nn.reshape %s {shape = array<i64: 1, 4, 2, 3, 3>} : (tensor<4x2x3x3xf32>) -> tensor<1x4x2x3x3xf32>
  %a = nn.eltwise %r, %m {operation = "sum", name = "add"} : (tensor<1x4x2x3x3xf32>, tensor<1x4x1x3x3xf32>) -> tensor<1x4x2x3x3xf32>
  %y = nn.reshape %a {shape = array<i64: 8, 3, 3>} : (tensor<1x4x2x3x3xf32>) -> tensor<8x3x3xf32>
  func.return %y : tensor<8x3x3xf32>
}
// CHECK-LABEL: func.func @other_shape
// CHECK:         nn.reshape %s
// CHECK:         nn.eltwise
// CHECK:         nn.reshape
