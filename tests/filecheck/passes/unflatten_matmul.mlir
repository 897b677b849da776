// RUN: ir-opt %s --split-input-file -p unflatten-matmul | filecheck %s

// Tensordot: flatten the leading axes, MatMul, restore them -> one broadcasting MatMul.
func.func @tensordot(%x: tensor<1x4x5x6xf32>, %w: tensor<6x3xf32>) -> tensor<1x4x5x3xf32> {
  %f = nn.reshape %x {shape = array<i64: 20, 6>, special_zero = false} : (tensor<1x4x5x6xf32>) -> tensor<20x6xf32>
  %m = nn.matmul %f, %w : (tensor<20x6xf32>, tensor<6x3xf32>) -> tensor<20x3xf32>
  %y = nn.reshape %m {shape = array<i64: 1, 4, 5, 3>, special_zero = false, name = "dense"} : (tensor<20x3xf32>) -> tensor<1x4x5x3xf32>
  func.return %y : tensor<1x4x5x3xf32>
}
// CHECK-LABEL: func.func @tensordot
// CHECK-NEXT:    %y = nn.matmul %x, %w {name = "dense"} : (tensor<1x4x5x6xf32>, tensor<6x3xf32>) -> tensor<1x4x5x3xf32>
// CHECK-NEXT:    func.return %y

// -----

// transpose_b carries over; a restore to other leading axes is left alone.
func.func @transposed_and_other(%x: tensor<2x3x4xf32>, %w: tensor<5x4xf32>) -> (tensor<2x3x5xf32>, tensor<3x2x5xf32>) {
  %f = nn.reshape %x {shape = array<i64: 6, 4>, special_zero = false} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %m = nn.matmul %f, %w {transpose_b = true} : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
  %y = nn.reshape %m {shape = array<i64: 2, 3, 5>, special_zero = false} : (tensor<6x5xf32>) -> tensor<2x3x5xf32>
  %m2 = nn.matmul %f, %w {transpose_b = true} : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
  %z = nn.reshape %m2 {shape = array<i64: 3, 2, 5>, special_zero = false} : (tensor<6x5xf32>) -> tensor<3x2x5xf32>
  func.return %y, %z : tensor<2x3x5xf32>, tensor<3x2x5xf32>
}
// CHECK-LABEL: func.func @transposed_and_other
// CHECK:         %y = nn.matmul %x, %w {transpose_b = true} : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
// CHECK:         %m2 = nn.matmul %f, %w {transpose_b = true}
// CHECK-NEXT:    %z = nn.reshape %m2
