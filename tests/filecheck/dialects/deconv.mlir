// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @deconv(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x11x9xf32> {
  %y = nn.deconvolution %x, %w, %b {strides = array<i64: 2, 2>, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 0, 1>, output_padding = array<i64: 1, 0>, group = 2 : i64, name = "up1"} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x11x9xf32>
  func.return %y : tensor<1x6x11x9xf32>
}
// CHECK:      %y = nn.deconvolution %x, %w, %b {strides = array<i64: 2, 2>, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 0, 1>, output_padding = array<i64: 1, 0>, group = 2 : i64, name = "up1"} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x11x9xf32>

// -----
func.func @same(%x: tensor<1x3x5x7xf32>, %w: tensor<3x2x4x4xf32>) -> tensor<1x2x10x14xf32> {
  %y = nn.deconvolution %x, %w {strides = array<i64: 2, 2>, auto_pad = "same_lower"} : (tensor<1x3x5x7xf32>, tensor<3x2x4x4xf32>) -> tensor<1x2x10x14xf32>
  func.return %y : tensor<1x2x10x14xf32>
}
// CHECK: nn.deconvolution %x, %w {strides = array<i64: 2, 2>, auto_pad = "same_lower"}

// -----
func.func @dynamic(%x: tensor<?x3x?xf32>, %w: tensor<3x2x3xf32>) -> tensor<?x2x?xf32> {
  %y = nn.deconvolution %x, %w {dilations = array<i64: 2>} : (tensor<?x3x?xf32>, tensor<3x2x3xf32>) -> tensor<?x2x?xf32>
  func.return %y : tensor<?x2x?xf32>
}
// CHECK: nn.deconvolution %x, %w {dilations = array<i64: 2>} : (tensor<?x3x?xf32>, tensor<3x2x3xf32>) -> tensor<?x2x?xf32>
