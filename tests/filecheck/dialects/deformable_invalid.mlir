// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @deformable_offsets(%x: tensor<1x4x5x5xf32>, %off: tensor<1x9x3x3xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %y = nn.deformable_convolution %x, %off, %w {name = "dcn"} : (tensor<1x4x5x5xf32>, tensor<1x9x3x3xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x3x3xf32>
  func.return %y : tensor<1x6x3x3xf32>
}
// CHECK: nn.deformable_convolution 'dcn': offsets must have shape [N, 2 * deformable_group * kH * kW, H_out, W_out] = [1, 18, 3, 3], got [1, 9, 3, 3]

// -----
func.func @deformable_group(%x: tensor<1x4x5x5xf32>, %off: tensor<1x54x3x3xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %y = nn.deformable_convolution %x, %off, %w {deformable_group = 3 : i64} : (tensor<1x4x5x5xf32>, tensor<1x54x3x3xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x3x3xf32>
  func.return %y : tensor<1x6x3x3xf32>
}
// CHECK: nn.deformable_convolution: 4 input channels are not divisible by deformable_group 3

// -----
func.func @deformable_result(%x: tensor<1x4x5x5xf32>, %off: tensor<1x18x3x3xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x5x5xf32> {
  %y = nn.deformable_convolution %x, %off, %w : (tensor<1x4x5x5xf32>, tensor<1x18x3x3xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x5x5xf32>
  func.return %y : tensor<1x6x5x5xf32>
}
// CHECK: nn.deformable_convolution: result #0 has type tensor<1x6x5x5xf32> but the operands imply tensor<1x6x3x3xf32>
