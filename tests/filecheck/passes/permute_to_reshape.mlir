// RUN: ir-opt %s --split-input-file -p permute-to-reshape | filecheck %s

// Moving only size-1 axes is a Reshape; moving the 8 past the 3 is a real transpose.
func.func @unit_axes(%x: tensor<1x1x1x8xf32>, %y: tensor<1x3x1x8xf32>) -> (tensor<1x8x1x1xf32>, tensor<1x8x3x1xf32>) {
  %a = nn.permute %x {order = array<i64: 0, 3, 1, 2>, name = "t"} : (tensor<1x1x1x8xf32>) -> tensor<1x8x1x1xf32>
  %b = nn.permute %y {order = array<i64: 0, 3, 1, 2>} : (tensor<1x3x1x8xf32>) -> tensor<1x8x3x1xf32>
  func.return %a, %b : tensor<1x8x1x1xf32>, tensor<1x8x3x1xf32>
}
// CHECK-LABEL: func.func @unit_axes
// CHECK-NEXT:    %a = nn.reshape %x {shape = array<i64: 1, 8, 1, 1>, special_zero = false, name = "t"}
// CHECK-NEXT:    %b = nn.permute %y {order = array<i64: 0, 3, 1, 2>}
