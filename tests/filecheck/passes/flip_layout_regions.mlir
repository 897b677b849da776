// RUN: ir-opt %s --split-input-file -p flip-layout-regions | filecheck %s

// An NHWC add between an NCHW convolution (through a transpose) and an NHWC MatMul, read
// back in NCHW: in NCHW it needs one transpose (of the MatMul's output) instead of two.
func.func @flip_to_nchw(%x: tensor<1x2x4x4xf32>, %y: tensor<1x4x4x2xf32>, %w: tensor<2x2x1x1xf32>, %m: tensor<2x2xf32>) -> tensor<1x2x4x4xf32> {
  %c = nn.convolution %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = nn.permute %c {order = array<i64: 0, 2, 3, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
  %f = nn.matmul %y, %m : (tensor<1x4x4x2xf32>, tensor<2x2xf32>) -> tensor<1x4x4x2xf32>
  %a = nn.eltwise %f, %s {operation = "sum", name = "add"} : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %r = nn.relu %a : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %t = nn.permute %r {order = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
  %d = nn.convolution %t, %w {name = "d"} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %d : tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @flip_to_nchw
// CHECK-NEXT:    %c = nn.convolution %x, %w
// CHECK-NEXT:    %f = nn.matmul %y, %m
// CHECK-NEXT:    %[[T:.*]] = nn.permute %f {order = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    %[[A:.*]] = nn.eltwise %[[T]], %c {operation = "sum", name = "add"} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %[[R:.*]] = nn.relu %[[A]]
// CHECK-NEXT:    %d = nn.convolution %[[R]], %w {name = "d"}
// CHECK-NEXT:    func.return %d

// -----

// The NHWC stream is also an output: flipping would not save a transpose, nothing changes.
func.func @keep(%x: tensor<1x2x4x4xf32>, %y: tensor<1x4x4x2xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x2x4x4xf32>) {
  %c = nn.convolution %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = nn.permute %c {order = array<i64: 0, 2, 3, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
  %a = nn.eltwise %y, %s {operation = "sum", name = "add"} : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %t = nn.permute %a {order = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
  %d = nn.convolution %t, %w {name = "d"} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %a, %d : tensor<1x4x4x2xf32>, tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @keep
// CHECK:         %s = nn.permute %c
// CHECK-NEXT:    %a = nn.eltwise %y, %s {operation = "sum", name = "add"}
// CHECK-NEXT:    %t = nn.permute %a
