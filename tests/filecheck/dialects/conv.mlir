// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @conv(%x: tensor<1x4x9x9xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x5x5xf32> {
  %y = nn.convolution %x, %w, %b {strides = array<i64: 2, 2>, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, group = 2 : i64, name = "conv1"} : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>) -> tensor<1x8x5x5xf32>
  func.return %y : tensor<1x8x5x5xf32>
}
// CHECK:      %y = nn.convolution %x, %w, %b {strides = array<i64: 2, 2>, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, group = 2 : i64, name = "conv1"} : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>) -> tensor<1x8x5x5xf32>

// -----
func.func @same(%x: tensor<1x3x10x10xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x5x5xf32> {
  %y = nn.convolution %x, %w {strides = array<i64: 2, 2>, auto_pad = "same_upper"} : (tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x5x5xf32>
  func.return %y : tensor<1x4x5x5xf32>
}
// CHECK: nn.convolution %x, %w {strides = array<i64: 2, 2>, auto_pad = "same_upper"}

// -----
func.func @dynamic_batch(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32> {
  %y = nn.convolution %x, %w : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  func.return %y : tensor<?x4x6x6xf32>
}
// CHECK: nn.convolution %x, %w : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
