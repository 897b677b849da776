// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @deformable_v2(%x: tensor<2x4x7x8xf32>, %off: tensor<2x36x4x8xf32>, %w: tensor<6x2x3x3xf32>, %m: tensor<2x18x4x8xf32>) -> tensor<2x6x4x8xf32> {
  %y = nn.deformable_convolution %x, %off, %w, %m {strides = array<i64: 2, 1>, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, group = 2 : i64, deformable_group = 2 : i64, name = "dcn"} : (tensor<2x4x7x8xf32>, tensor<2x36x4x8xf32>, tensor<6x2x3x3xf32>, tensor<2x18x4x8xf32>) -> tensor<2x6x4x8xf32>
  func.return %y : tensor<2x6x4x8xf32>
}
// CHECK: nn.deformable_convolution %x, %off, %w, %m {strides = array<i64: 2, 1>, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, group = 2 : i64, deformable_group = 2 : i64, name = "dcn"} : (tensor<2x4x7x8xf32>, tensor<2x36x4x8xf32>, tensor<6x2x3x3xf32>, tensor<2x18x4x8xf32>) -> tensor<2x6x4x8xf32>

// -----
func.func @deformable_v1(%x: tensor<?x4x5x5xf32>, %off: tensor<?x18x3x3xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<?x6x3x3xf32> {
  %y = nn.deformable_convolution %x, %off, %w {bilinear_interpolation_pad = false} : (tensor<?x4x5x5xf32>, tensor<?x18x3x3xf32>, tensor<6x4x3x3xf32>) -> tensor<?x6x3x3xf32>
  func.return %y : tensor<?x6x3x3xf32>
}
// CHECK: nn.deformable_convolution %x, %off, %w {bilinear_interpolation_pad = false} : (tensor<?x4x5x5xf32>, tensor<?x18x3x3xf32>, tensor<6x4x3x3xf32>) -> tensor<?x6x3x3xf32>
